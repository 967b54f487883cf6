"""Every constructor, against the labeldp program: the same arguments give the same mechanism
file, byte for byte (both call the same library functions), and the Python object's fields
agree with the file."""

import json
import math

import numpy as np
import pytest

import labeldp

VALUES = [0.0, 1.0, 2.0, 5.0]
PROBS = [0.4, 0.3, 0.2, 0.1]


def write_prior(tmp_path, values=VALUES, probs=PROBS):
    path = tmp_path / "prior.csv"
    path.write_text("value,prob\n" + "".join(f"{v!r},{p!r}\n" for v, p in zip(values, probs)))
    return path


def check_fields(m, kind, eps):
    doc = json.loads(m.to_json())
    assert doc["format"] == "labeldp-mechanism" and doc["version"] == 1
    assert doc["mechanism"] == kind == m.kind
    assert doc["eps"] == eps == m.eps
    if "expected_loss" in doc:
        assert m.expected_loss == doc["expected_loss"]
    else:
        assert m.expected_loss is None
    if m.is_finite:
        assert np.array_equal(m.inputs, doc["inputs"])
        assert np.array_equal(m.outputs, doc["outputs"])
        P = m.probabilities
        assert np.array_equal(P, np.array(doc["probabilities"]))
        assert np.allclose(P.sum(axis=1), 1, atol=1e-9)
        # The exact audit: within eps, and the brute-force max log ratio agrees with it.
        brute = max(
            math.log(P[a, j] / P[b, j]) for j in range(P.shape[1]) for a in range(P.shape[0]) for b in range(P.shape[0])
        )
        assert m.audit() <= eps
        assert abs(m.audit() - min(brute, eps)) <= 1e-9 * max(1.0, eps)
    return doc


def test_rr_on_bins_matches_cli(tmp_path, cli):
    prior = write_prior(tmp_path)
    for loss in ("squared", "absolute"):
        m = labeldp.rr_on_bins(VALUES, PROBS, 1.0, loss=loss)
        check_fields(m, "rr-on-bins", 1.0)
        out = cli("bins", "--prior", prior, "--eps", 1, "--loss", loss, "--json").stdout
        assert m.to_json() == out.strip()


def test_rr_on_bins_expected_loss_is_the_table_s():
    m = labeldp.rr_on_bins(VALUES, PROBS, 2.0)
    P, outs = m.probabilities, m.outputs
    expected = sum(p * float(P[i] @ (outs - v) ** 2) for i, (v, p) in enumerate(zip(VALUES, PROBS)))
    assert m.expected_loss == pytest.approx(expected, rel=1e-9)
    # More budget, less loss.
    assert labeldp.rr_on_bins(VALUES, PROBS, 4.0).expected_loss < m.expected_loss


def test_optimal_matches_cli(tmp_path, cli):
    prior = write_prior(tmp_path)
    outputs = tmp_path / "outputs.csv"
    outputs.write_text("output\n0\n1\n2\n3\n5\n")
    m = labeldp.optimal(VALUES, PROBS, 1.0, [0, 1, 2, 3, 5])
    doc = check_fields(m, "optimal-lp", 1.0)
    assert doc["status"] == "optimal"
    out = cli("optimal", "--prior", prior, "--eps", 1, "--outputs", outputs, "--json").stdout
    assert m.to_json() == out.strip()
    # The optimum over all mechanisms onto these outputs is at most RR-on-Bins' loss when the
    # bins' outputs are among them; always at least the certified lower bound.
    assert doc["lower_bound"] <= m.expected_loss * (1 + 1e-9)


def test_unbiased_matches_cli(tmp_path, cli):
    prior = write_prior(tmp_path)
    m = labeldp.unbiased(VALUES, PROBS, 2.0, grid=16)
    doc = check_fields(m, "unbiased", 2.0)
    assert doc["max_bias"] <= 1e-9 * 5
    out = cli("unbiased", "--prior", prior, "--eps", 2, "--grid", 16, "--json").stdout
    assert m.to_json() == out.strip()
    # Unbiased: every row's mean is its input.
    assert np.allclose(m.probabilities @ m.outputs, m.inputs, atol=1e-7)
    c = labeldp.unbiased(VALUES, PROBS, 2.0, continuous=True)
    out = cli("unbiased", "--prior", prior, "--eps", 2, "--continuous", "--json").stdout
    assert c.to_json() == out.strip()
    b = labeldp.unbiased(VALUES, PROBS, 2.0, continuous=True, max_bias=0.5)
    assert json.loads(b.to_json())["max_bias"] <= 0.5 + 1e-9
    assert b.expected_loss <= c.expected_loss * (1 + 1e-9)


def test_interval_matches_cli(tmp_path, cli):
    hist = tmp_path / "hist.csv"
    lo, hi, mass = [0, 1, 2, 4], [1, 2, 4, 8], [0.1, 0.5, 0.3, 0.1]
    hist.write_text("lo,hi,mass\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(lo, hi, mass)))
    m = labeldp.interval(lo, hi, mass, 1.0, 0.5)
    doc = check_fields(m, "rpwithprior", 1.0)
    assert doc["A1"] <= doc["A2"] and doc["zeta"] == 0.5
    out = cli("interval", "--hist", hist, "--eps", 1, "--zeta", 0.5, "--json").stdout
    assert m.to_json() == out.strip()
    assert not m.is_finite and m.inputs is None and m.audit() == 1.0


@pytest.mark.parametrize(
    "kind,extra,cli_extra",
    [
        ("laplace", {}, []),
        ("discrete-laplace", {"resolution": 0.5}, ["--resolution", 0.5]),
        ("gaussian", {"delta": 1e-5}, ["--delta", 1e-5]),
        ("discrete-gaussian", {"delta": 1e-5, "resolution": 0.5}, ["--delta", 1e-5, "--resolution", 0.5]),
        ("staircase", {}, []),
        ("discrete-staircase", {"resolution": 0.5}, ["--resolution", 0.5]),
        ("exponential", {}, []),
        ("laplace", {"clip": True}, ["--clip"]),
    ],
)
def test_baseline_matches_cli(tmp_path, cli, kind, extra, cli_extra):
    m = labeldp.baseline(kind, 1.0, 0.0, 8.0, **extra)
    check_fields(m, kind, 1.0)
    out = cli("baseline", "--kind", kind, "--eps", 1, "--lo", 0, "--hi", 8, *cli_extra, "--json").stdout
    assert m.to_json() == out.strip()


@pytest.mark.parametrize("kind", ["rr", "rr-with-prior"])
def test_finite_baselines_match_cli(tmp_path, cli, kind):
    prior = write_prior(tmp_path)
    m = labeldp.baseline(kind, 1.0, 0.0, 8.0, values=VALUES, probs=PROBS)
    check_fields(m, kind, 1.0)
    out = cli("baseline", "--kind", kind, "--eps", 1, "--lo", 0, "--hi", 8, "--prior", prior, "--json").stdout
    assert m.to_json() == out.strip()


def test_baseline_with_prior_has_expected_loss(tmp_path, cli):
    prior = write_prior(tmp_path)
    m = labeldp.baseline("laplace", 1.0, 0.0, 8.0, values=VALUES, probs=PROBS)
    out = cli("baseline", "--kind", "laplace", "--eps", 1, "--lo", 0, "--hi", 8, "--prior", prior, "--json").stdout
    assert m.to_json() == out.strip()
    assert m.expected_loss > 0
