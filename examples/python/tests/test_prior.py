"""The private prior: exact counts on the grid (an independent numpy oracle), the split into
counts + one noise draw equals the one-shot prior exactly, keyed reproducibility, the noise's
distribution, and the files the labeldp program reads."""

import json
import pickle

import numpy as np
import pytest

import labeldp
from conftest import chi2_pvalue, chi2_table

KEY = bytes(range(32))


def numpy_counts(labels, lo, hi, r):
    """Clip to [lo, hi], round to the nearest grid point (ties up): an independent oracle."""
    k = int(round((hi - lo) / r))
    y = np.clip(labels, lo, hi)
    idx = np.floor((y - lo) / r + 0.5).astype(np.int64)
    return np.bincount(np.clip(idx, 0, k), minlength=k + 1)


def test_histogram_counts_match_numpy():
    rng = np.random.default_rng(1)
    labels = np.concatenate([rng.normal(50, 30, 20000), [-5.0, 0.0, 100.0, 250.0, 12.5, 17.5]])
    counts = labeldp.histogram_counts(labels, 0, 100, 5)
    assert counts.dtype == np.int64 and counts.size == 21 and counts.sum() == labels.size
    assert np.array_equal(counts, numpy_counts(labels, 0, 100, 5))


def nearest_counts(labels, lo, hi, r):
    """Clip to [lo, hi], then the nearest of the points lo + i r below hi, and hi itself (the
    grid's documented points), ties to the larger: an oracle by search on the points."""
    m = int(np.floor((hi - lo) / r * (1 + 1e-9)))
    points = [p for p in (lo + i * float(r) for i in range(m + 1)) if p < hi]
    if hi - points[-1] <= 1e-9 * r:
        points.pop()
    points = np.array(points + [hi], dtype=np.float64)
    y = np.clip(labels, points[0], points[-1])
    low = np.clip(np.searchsorted(points, y, side="right") - 1, 0, points.size - 2)
    idx = low + ~((y - points[low]) < (points[low + 1] - y))
    return np.bincount(idx, minlength=points.size)


@pytest.mark.parametrize("lo,hi,r", [(0, 100, 5), (0, 10, 0.3), (-50, 50, 0.001), (0, 5000, 50)])
def test_histogram_counts_match_a_search_on_the_points(lo, hi, r):
    # Grids with and without hi as an extra point, and one of 100,001 points (past the bucket
    # table's 2^16, counted by binary search); runs of equal labels and a length that is not a
    # multiple of 4 or of the 2^14-label chunks.
    rng = np.random.default_rng(7)
    labels = np.concatenate(
        [rng.uniform(lo - 1, hi + 1, 50001), np.full(1000, (lo + hi) / 2), lo + r * (rng.integers(0, 20, 999) + 0.5)]
    )
    counts = labeldp.histogram_counts(labels, lo, hi, r)
    expected = nearest_counts(labels, lo, hi, r)
    assert counts.size == expected.size and np.array_equal(counts, expected)


def test_split_counts_equal_one_shot_prior():
    rng = np.random.default_rng(2)
    labels = rng.uniform(0, 10, 30000)
    one = labeldp.private_prior(labels, 0.5, 0, 10, 0.5, key=KEY)
    shards = np.array_split(labels, 7)
    merged = sum(labeldp.histogram_counts(s, 0, 10, 0.5) for s in shards)
    two = labeldp.private_prior_from_counts(merged, 0.5, 0, 10, 0.5, key=KEY)
    assert one == two
    assert np.array_equal(one.noisy_counts, two.noisy_counts) and np.array_equal(one.probs, two.probs)
    assert one.n == two.n == labels.size
    # Reproducible with the key, fresh without it, different with another key.
    assert labeldp.private_prior(labels, 0.5, 0, 10, 0.5, key=KEY) == one
    assert labeldp.private_prior(labels, 0.5, 0, 10, 0.5, key=bytes(32)) != one
    fresh = [labeldp.private_prior(labels, 0.5, 0, 10, 0.5).noisy_counts for _ in range(3)]
    assert not (np.array_equal(fresh[0], fresh[1]) and np.array_equal(fresh[1], fresh[2]))


def test_prior_fields_and_pickle():
    labels = np.array([1.0, 1.0, 2.0, 3.0, 9.0])
    p = labeldp.private_prior(labels, 2.0, 0, 10, 1, key=KEY)
    assert np.array_equal(p.values, np.arange(11.0))
    assert p.probs.sum() == pytest.approx(1.0) and (p.probs >= 0).all()
    positive = np.maximum(p.noisy_counts, 0)
    if positive.sum() > 0:
        assert np.allclose(p.probs, positive / positive.sum())
        assert not p.uniform_fallback
    doc = json.loads(p.to_json())
    assert set(doc) == {"eps", "n", "values", "probs", "noisy_counts", "uniform_fallback"}
    assert doc["noisy_counts"] == p.noisy_counts.tolist() and doc["n"] == 5 and doc["eps"] == 2.0
    assert pickle.loads(pickle.dumps(p)) == p
    assert np.array_equal(pickle.loads(pickle.dumps(p)).probs, p.probs)


def test_noise_is_discrete_laplace():
    """noisy - exact counts, over many keys' releases, against P(Z = z) proportional to
    alpha^|z|, alpha = e^(-eps/2) (the realized alpha is at least that and rounds to it far below
    this test's resolution); a mutant with half the noise (eps doubled) fails."""
    eps = 1.0
    counts = np.full(2000, 50, dtype=np.int64)

    def noise(e, n_keys=10):
        z = [labeldp.private_prior_from_counts(counts, e, 0, 1999, 1, key=bytes([k]) * 32).noisy_counts - 50
             for k in range(n_keys)]
        return np.concatenate(z)

    def pvalue(z):
        alpha = np.exp(-eps / 2)
        support = np.arange(-30, 31)
        pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(support)
        probs = np.append(pmf, 1 - pmf.sum())
        obs = np.append(np.array([(z == s).sum() for s in support]), (np.abs(z) > 30).sum())
        stat, df = chi2_table(obs, probs, z.size)
        return chi2_pvalue(stat, df)

    assert pvalue(noise(eps)) > 1e-4
    assert pvalue(noise(2 * eps)) < 1e-4


def test_saved_prior_is_a_cli_prior(tmp_path, cli):
    rng = np.random.default_rng(3)
    labels = rng.uniform(0, 8, 5000)
    p = labeldp.private_prior(labels, 1.0, 0, 8, 1, key=KEY)
    path = tmp_path / "prior.csv"
    p.save(str(path))
    assert path.read_text() == p.to_csv() and p.to_csv().startswith("value,prob\n")
    out = cli("bins", "--prior", path, "--eps", 1, "--json").stdout
    assert labeldp.rr_on_bins(p.values, p.probs, 1.0).to_json() == out.strip()
    # The program's prior of the same labels: the same grid and count, its own noise.
    data = tmp_path / "data.csv"
    data.write_text("y\n" + "".join(f"{v!r}\n" for v in labels))
    doc = json.loads(cli("prior", "--input", data, "--column", "y", "--eps", 1, "--lo", 0, "--hi", 8,
                         "--resolution", 1, "--json").stdout)
    assert doc["values"] == p.values.tolist() and doc["n"] == p.n
    assert set(doc) == set(json.loads(p.to_json()))
