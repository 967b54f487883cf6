"""Shared fixtures of the labeldp Python tests: the labeldp program (for round trips with the
command line) and small goodness-of-fit helpers (no scipy: Wilson-Hilferty for the chi-square
tail)."""

import math
import os
import pathlib
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


def _find_cli():
    """LABELDP_CLI (set by ctest), else the program of the build the package was imported from
    (<build>/python/labeldp -> <build>/bin/labeldp): never a program from another build, whose
    files may differ in the last digits."""
    env = os.environ.get("LABELDP_CLI")
    if env and os.access(env, os.X_OK):
        return env
    import labeldp

    candidate = pathlib.Path(labeldp.__file__).resolve().parents[2] / "bin" / "labeldp"
    return str(candidate) if os.access(candidate, os.X_OK) else None


@pytest.fixture(scope="session")
def cli():
    """Runs the labeldp program: cli(*args) -> CompletedProcess (text). Skips without it."""
    path = _find_cli()
    if path is None:
        pytest.skip("the labeldp program is not built (target labeldp_cli; or set LABELDP_CLI)")

    def run(*args, check=True):
        r = subprocess.run([path, *map(str, args)], capture_output=True, text=True, timeout=120)
        if check and r.returncode != 0:
            raise AssertionError(f"labeldp {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}")
        return r

    return run


def chi2_pvalue(stat, df):
    """Upper tail P[X >= stat] of a chi-square with df degrees of freedom (Wilson-Hilferty
    normal approximation, good to a few percent in the tail for df >= 3)."""
    if df <= 0:
        raise ValueError("df must be positive")
    z = ((stat / df) ** (1.0 / 3.0) - (1.0 - 2.0 / (9.0 * df))) / math.sqrt(2.0 / (9.0 * df))
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def chi2_table(observed, expected_probs, n):
    """Pearson chi-square of observed counts against n * probs, cells with expected >= 5 kept
    (the rest pooled into one cell). Returns (statistic, degrees of freedom)."""
    observed = np.asarray(observed, dtype=float)
    expected = n * np.asarray(expected_probs, dtype=float)
    # A count where the probability is 0 is an outright failure.
    if np.any((expected == 0) & (observed > 0)):
        return math.inf, 1
    big = expected >= 5
    obs = list(observed[big])
    exp = list(expected[big])
    if np.any(~big):
        obs.append(observed[~big].sum())
        exp.append(expected[~big].sum())
    obs, exp = np.array(obs), np.array(exp)
    keep = exp > 0
    stat = float((((obs - exp) ** 2)[keep] / exp[keep]).sum())
    return stat, int(keep.sum()) - 1


def fit_pvalue(mechanism_probs, inputs, outputs, labels, noisy):
    """p-value of the noisy labels of `labels` (each an input) against the table: per input, the
    output counts against its row; the chi-squares and degrees of freedom added."""
    stat, df = 0.0, 0
    out_index = {float(o): j for j, o in enumerate(outputs)}
    for i, y in enumerate(inputs):
        mask = labels == y
        n = int(mask.sum())
        if n == 0:
            continue
        idx = np.array([out_index.get(float(v), -1) for v in np.unique(noisy[mask])])
        if np.any(idx < 0):
            return 0.0  # an output the mechanism never gives
        counts = np.zeros(len(outputs))
        vals, c = np.unique(noisy[mask], return_counts=True)
        for v, k in zip(vals, c):
            counts[out_index[float(v)]] = k
        s, d = chi2_table(counts, mechanism_probs[i], n)
        stat += s
        df += d
    if not math.isfinite(stat):
        return 0.0
    return chi2_pvalue(stat, max(df, 1))
