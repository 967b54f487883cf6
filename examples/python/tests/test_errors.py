"""Bad input: one ValueError naming the argument and the rule; never a label's value."""

import numpy as np
import pytest

import labeldp

V, P = [0.0, 1.0, 2.0], [0.5, 0.3, 0.2]


@pytest.mark.parametrize(
    "call,pattern",
    [
        (lambda: labeldp.rr_on_bins(V, P, 0.0), "'eps'"),
        (lambda: labeldp.rr_on_bins(V, P, float("nan")), "'eps'"),
        (lambda: labeldp.rr_on_bins(V, [0.5, 0.3, 0.3], 1.0), "'probs' sum to 1.1"),
        (lambda: labeldp.rr_on_bins(V, [0.5, 0.5], 1.0), "'probs' must have one entry per value"),
        (lambda: labeldp.rr_on_bins(V, [1.2, -0.2, 0.0], 1.0), r"'probs'\[1\] = -0.2"),
        (lambda: labeldp.rr_on_bins([0.0, float("inf"), 2.0], P, 1.0), r"'values'\[1\] = inf is not finite"),
        (lambda: labeldp.rr_on_bins([0.0, 0.0, 2.0], P, 1.0), "duplicate value 0"),
        (lambda: labeldp.rr_on_bins([], [], 1.0), "'values' must hold at least one value"),
        (lambda: labeldp.rr_on_bins(V, P, 1.0, loss="huber"), "'loss' must be"),
        (lambda: labeldp.rr_on_bins([-1.0, 1.0, 2.0], P, 1.0, loss="poisson"), "Poisson"),
        (lambda: labeldp.optimal(V, P, 1.0, []), "'outputs' must hold at least one value"),
        (lambda: labeldp.optimal(V, P, 1.0, [0.0, float("nan")]), r"'outputs'\[1\] = nan"),
        (lambda: labeldp.unbiased(V, P, 1.0), "exactly one of 'grid'"),
        (lambda: labeldp.unbiased(V, P, 1.0, grid=8, continuous=True), "exactly one of 'grid'"),
        (lambda: labeldp.unbiased(V, P, 1.0, grid=1), "'grid' must be at least 2"),
        (lambda: labeldp.unbiased(V, P, 1.0, grid=8, max_bias=-1.0), "'max_bias'"),
        (lambda: labeldp.interval([0, 1], [1, 2], [0.5, 0.5], 1.0, 0.0), "'zeta'"),
        (lambda: labeldp.interval([0, 2], [1, 3], [0.5, 0.5], 1.0, 0.5), "'lo'"),
        (lambda: labeldp.baseline("cauchy", 1.0, 0, 1), "'kind' must be one of"),
        (lambda: labeldp.baseline("laplace", 1.0, 1, 0), "'lo' must be below 'hi'"),
        (lambda: labeldp.baseline("gaussian", 1.0, 0, 1), "'delta' must be in \\(0, 1\\)"),
        (lambda: labeldp.baseline("laplace", 1.0, 0, 1, delta=0.1), "'delta' must be 0"),
        (lambda: labeldp.baseline("discrete-laplace", 1.0, 0, 1), "needs 'resolution'"),
        (lambda: labeldp.baseline("discrete-laplace", 1.0, 0, 1, resolution=0.3), "'resolution' must divide"),
        (lambda: labeldp.baseline("staircase", 1.0, 0, 1, resolution=0.5), "'resolution' does not apply"),
        (lambda: labeldp.baseline("rr", 1.0, 0, 1), "needs the prior"),
        (lambda: labeldp.baseline("rr", 1.0, 0, 1, values=V, probs=P), "outside \\[lo, hi\\]"),
        (lambda: labeldp.histogram_counts([1.0], 0, 1, 0.0), "'resolution'"),
        (lambda: labeldp.histogram_counts([1.0], 1, 0, 0.5), "'hi'"),
        (lambda: labeldp.private_prior([1.0], 1e-14, 0, 1, 0.5), "'eps' 1e-14 is too small"),
        (lambda: labeldp.private_prior_from_counts([1, 2], 1.0, 0, 1, 0.5), "'counts' has 2 entries but the grid"),
        (lambda: labeldp.private_prior_from_counts([1, -2, 0], 1.0, 0, 1, 0.5), r"'counts'\[1\] = -2 is negative"),
        (lambda: labeldp.private_prior_from_counts([1.0, 2.0, 0.0], 1.0, 0, 1, 0.5), "'counts' must be an integer"),
        (lambda: labeldp.private_prior([1.0], 1.0, 0, 1, 0.5, key=b"short"), "'key' must be 32 bytes"),
        (lambda: labeldp.loads("{}"), "format"),
        (lambda: labeldp.loads("not json"), "<string>:1"),
        (lambda: labeldp.load("/nonexistent/m.json"), "/nonexistent/m.json: cannot open file"),
    ],
)
def test_value_errors(call, pattern):
    with pytest.raises(ValueError, match=pattern) as e:
        call()
    assert "\n" not in str(e.value)


def test_tampered_file_names_the_field():
    m = labeldp.rr_on_bins(V, P, 1.0)
    text = m.to_json().replace('"eps":1,', '"eps":0.5,')
    with pytest.raises(ValueError, match="0.5-DP"):
        labeldp.loads(text)
    with pytest.raises(ValueError, match="version"):
        labeldp.loads(m.to_json().replace('"version":1', '"version":2'))
    with pytest.raises(ValueError, match="loss"):
        labeldp.loads(m.to_json().replace('"loss":"squared",', '"loss":"squared","loss":"squared",'))


SECRET = 123456.789  # a label value that must never appear in a message


@pytest.mark.parametrize(
    "call,pattern",
    [
        (lambda m: m.privatize(np.array([SECRET, np.nan])), r"'labels'\[1\] is not finite"),
        (lambda m: m.privatize(np.array([SECRET, np.inf]), key=bytes(32), ids=[0, 1]), r"'labels'\[1\]"),
        # Beyond the first chunk of labels privatize checks and samples at a time (2^14).
        (lambda m: m.privatize(np.r_[np.full(40000, SECRET), -np.inf]), r"'labels'\[40000\] is not finite"),
        (
            lambda m: m.privatize(np.r_[np.full(20000, SECRET), np.nan, 1.0], key=bytes(32), ids=np.arange(20002)),
            r"'labels'\[20000\] is not finite",
        ),
        (lambda m: m.privatize(np.array([SECRET]), key=bytes(31), ids=[0]), "'key' must be 32 bytes"),
        (lambda m: m.privatize(np.array([SECRET]), key=bytes(32)), "'key' needs 'ids'"),
        (lambda m: m.privatize(np.array([SECRET]), ids=[0]), "'ids' given without 'key'"),
        (lambda m: m.privatize(np.array([SECRET, 1.0]), key=bytes(32), ids=[0]), "'ids' has 1 entries but 'labels' has 2"),
        (lambda m: m.privatize(np.array([SECRET, 1.0]), key=bytes(32), ids=[0, -5]), r"'ids'\[1\] = -5 is negative"),
        (lambda m: m.privatize(np.array([SECRET]), key=bytes(32), ids=np.array([0.5])), "'ids' must be an integer"),
        (lambda m: labeldp.histogram_counts(np.array([SECRET, np.nan]), 0, 1, 0.5), r"'labels'\[1\]"),
        (lambda m: labeldp.private_prior(np.array([SECRET, -np.inf]), 1.0, 0, 1, 0.5), r"'labels'\[1\]"),
    ],
)
def test_label_errors_never_show_labels(call, pattern):
    for m in (labeldp.rr_on_bins(V, P, 1.0), labeldp.baseline("laplace", 1.0, 0, 2)):
        with pytest.raises(ValueError, match=pattern) as e:
            call(m)
        assert "123456" not in str(e.value) and "1.23456" not in str(e.value)
