"""privatize: shapes and types, keyed determinism (any split, any order), and goodness of fit of
the noisy labels against the mechanism's own probabilities, with under-noised mutants that the
same test rejects."""

import numpy as np
import pytest

import labeldp
from conftest import chi2_pvalue, chi2_table, fit_pvalue

VALUES = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
PROBS = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
KEY = bytes(range(32))
ALPHA = 1e-4  # a correct sampler fails a test with probability about 1e-4


def inputs_repeated(m, per_input):
    return np.repeat(m.inputs, per_input)


def test_shapes_types_and_fresh_arrays():
    m = labeldp.rr_on_bins(VALUES, PROBS, 1.0)
    labels = np.arange(12, dtype=np.int32).reshape(3, 4) % 5
    out = m.privatize(labels)
    assert out.dtype == np.float64 and out.shape == (3, 4) and out is not labels
    assert np.isin(out, m.outputs).all()
    assert m.privatize([0.0, 1.0]).shape == (2,)
    assert m.privatize(np.array([], dtype=float)).shape == (0,)
    strided = np.linspace(0, 4, 20)[::3]
    ids = np.arange(strided.size, dtype=np.int64)
    assert np.array_equal(
        m.privatize(strided, key=KEY, ids=ids), m.privatize(np.ascontiguousarray(strided), key=KEY, ids=ids)
    )


def test_unkeyed_draws_fresh_noise():
    m = labeldp.rr_on_bins(VALUES, PROBS, 0.5)
    labels = np.tile(VALUES, 200)
    assert not np.array_equal(m.privatize(labels), m.privatize(labels))


@pytest.mark.parametrize(
    "make",
    [
        lambda: labeldp.rr_on_bins(VALUES, PROBS, 1.0),
        lambda: labeldp.unbiased(VALUES, PROBS, 1.0, grid=12),
        lambda: labeldp.baseline("laplace", 1.0, 0, 4),
        lambda: labeldp.baseline("discrete-staircase", 1.0, 0, 4, resolution=0.25),
        lambda: labeldp.interval([0, 2], [2, 4], [0.6, 0.4], 1.0, 0.5),
    ],
)
def test_keyed_is_a_function_of_key_and_id(make):
    m = make()
    rng = np.random.default_rng(5)
    n = 40000  # over two of the 2^14-label chunks privatize samples at a time
    labels = rng.uniform(-1, 5, n)
    ids = rng.choice(2**40, n, replace=False).astype(np.int64)
    whole = m.privatize(labels, key=KEY, ids=ids)
    assert np.array_equal(whole, m.privatize(labels, key=KEY, ids=ids))  # re-run
    # Any partitioning: chunks of odd sizes, in any order, give the same per-record output.
    parts = np.split(np.arange(n), [1, 17, 1000, 1001, 3333, 16385, 20000])
    pieced = np.empty(n)
    for p in reversed(parts):
        pieced[p] = m.privatize(labels[p], key=KEY, ids=ids[p])
    assert np.array_equal(pieced, whole)
    perm = rng.permutation(n)
    assert np.array_equal(m.privatize(labels[perm], key=KEY, ids=ids[perm]), whole[perm])
    # int64 and uint64 ids are the same ids.
    assert np.array_equal(m.privatize(labels, key=KEY, ids=ids.astype(np.uint64)), whole)
    # Another key, other noise.
    other = m.privatize(labels, key=bytes(32), ids=ids)
    assert np.mean(other != whole) > 0.2


def test_keyed_noise_of_a_record_ignores_the_other_records():
    m = labeldp.rr_on_bins(VALUES, PROBS, 1.0)
    labels = np.tile(VALUES, 100)
    ids = np.arange(labels.size)
    a = m.privatize(labels, key=KEY, ids=ids)
    changed = labels.copy()
    changed[::2] = 4.0 - changed[::2]  # other records' labels change
    b = m.privatize(changed, key=KEY, ids=ids)
    assert np.array_equal(a[1::2], b[1::2])


def fit_of(m, noisy_for):
    labels = inputs_repeated(m, 20000)
    return fit_pvalue(m.probabilities, m.inputs, m.outputs, labels, noisy_for(labels))


@pytest.mark.parametrize(
    "make",
    [
        lambda: labeldp.rr_on_bins(VALUES, PROBS, 1.0),
        lambda: labeldp.rr_on_bins(VALUES, PROBS, 0.3),
        lambda: labeldp.unbiased(VALUES, PROBS, 1.0, grid=10),
        lambda: labeldp.optimal(VALUES, PROBS, 1.0, [0.0, 1.0, 2.0, 3.0, 4.0]),
        lambda: labeldp.baseline("rr", 1.0, 0, 4, values=VALUES, probs=PROBS),
    ],
)
def test_goodness_of_fit(make):
    m = make()
    assert fit_of(m, m.privatize) > ALPHA
    ids_from = 10**9
    assert fit_of(m, lambda y: m.privatize(y, key=KEY, ids=np.arange(ids_from, ids_from + y.size))) > ALPHA


def test_goodness_of_fit_rejects_under_noised_mutants():
    m = labeldp.baseline("rr", 1.0, 0, 4, values=VALUES, probs=PROBS)
    # k-ary RR at eps 1.3 has the same outputs, but keeps the label more often than eps 1 allows.
    mutant = labeldp.baseline("rr", 1.3, 0, 4, values=VALUES, probs=PROBS)
    assert fit_of(m, mutant.privatize) < ALPHA
    assert fit_of(m, lambda y: y.copy()) < ALPHA  # no noise at all
    bins = labeldp.rr_on_bins(VALUES, PROBS, 1.0)
    assert fit_of(bins, lambda y: labeldp.rr_on_bins(VALUES, PROBS, 1.5).privatize(y)) < ALPHA


def test_two_keys_are_independent():
    """The joint of (noisy with key 1, noisy with key 2) for the same records is the product of
    the rows; the same key twice (a mutant) is far from it."""
    m = labeldp.rr_on_bins(VALUES, PROBS, 1.0)
    labels = inputs_repeated(m, 20000)
    ids = np.arange(labels.size, dtype=np.uint64)
    key2 = bytes(reversed(range(32)))

    def joint_pvalue(a, b):
        d = m.outputs.size
        ia, ib = np.searchsorted(m.outputs, a), np.searchsorted(m.outputs, b)
        stat, df = 0.0, 0
        for i, y in enumerate(m.inputs):
            mask = labels == y
            cells = np.bincount(ia[mask] * d + ib[mask], minlength=d * d)
            row = m.probabilities[i]
            s, f = chi2_table(cells, np.outer(row, row).ravel(), int(mask.sum()))
            stat, df = stat + s, df + f
        return chi2_pvalue(stat, df)

    first = m.privatize(labels, key=KEY, ids=ids)
    assert joint_pvalue(first, m.privatize(labels, key=key2, ids=ids)) > ALPHA
    assert joint_pvalue(first, m.privatize(labels, key=KEY, ids=ids)) < ALPHA
    # Unkeyed calls are independent too.
    assert joint_pvalue(m.privatize(labels), m.privatize(labels)) > ALPHA


def test_laplace_noise_moments():
    """Unclipped Laplace: noise mean 0 and variance 2 b^2 with b = (hi - lo) / eps (up to its
    grid, far finer than the tolerances)."""
    m = labeldp.baseline("laplace", 2.0, 0, 4)
    n = 400000
    noise = m.privatize(np.full(n, 2.0)) - 2.0
    b = 4 / 2.0
    assert abs(noise.mean()) < 5 * np.sqrt(2 * b * b / n)
    assert noise.var() == pytest.approx(2 * b * b, rel=0.03)


def test_privatize_releases_the_gil():
    """While a long privatize runs in one thread, the main thread keeps running: the longest
    pause between its steps is far shorter than the call (holding the GIL, the call would be one
    pause as long as itself)."""
    import threading
    import time

    m = labeldp.rr_on_bins(VALUES, PROBS, 1.0)
    labels = np.tile(VALUES, 4_000_000)  # 2 x 10^7 labels
    span = {}

    def work():
        span["start"] = time.perf_counter()
        m.privatize(labels)
        span["end"] = time.perf_counter()

    stamps = []
    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    inside = np.array([s for s in stamps if span["start"] <= s <= span["end"]])
    call = span["end"] - span["start"]
    gaps = np.diff(np.concatenate([[span["start"]], inside, [span["end"]]]))
    assert gaps.max() < 0.5 * call, (gaps.max(), call)
