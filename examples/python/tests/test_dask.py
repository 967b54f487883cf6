"""labeldp.dask on a dask.distributed LocalCluster with two worker processes (issue 15).

Oracles: the single-process module (``m.privatize`` with the same key and ids,
``labeldp.private_prior`` with the same key) and numpy's histogram. Run with the Debian
interpreter: PYTHONPATH=<build>/python /usr/bin/python3 -m pytest examples/python/tests/test_dask.py
"""

import logging
import os
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import dask
import dask.dataframe as dd
import distributed

import labeldp
import labeldp.dask as ldd

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "cps1988.csv"
LO, HI, RES = 0.0, 5000.0, 100.0  # public bounds; 15 CPS wages lie above HI and are clipped
KEY = bytes.fromhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
OTHER_KEY = bytes(reversed(KEY))


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each; they import labeldp through PYTHONPATH."""
    package_root = str(pathlib.Path(labeldp.__file__).resolve().parents[1])
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = package_root + (os.pathsep + old if old else "")
    try:
        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster, distributed.Client(cluster, set_as_default=False) as c:
            yield c
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def table():
    """The CPS wages with sparse, unique, non-sequential record ids (as a real table has)."""
    wages = pd.read_csv(DATA)["wage"].to_numpy(dtype=np.float64)
    rng = np.random.default_rng(15)
    ids = rng.choice(np.int64(1) << 40, size=wages.size, replace=False).astype(np.int64)
    return pd.DataFrame({"rid": ids, "wage": wages, "row": np.arange(wages.size)})


def prior_arrays(prior):
    """(values, probs) of a labeldp.PrivatePrior."""
    return np.asarray(prior.values, dtype=np.float64), np.asarray(prior.probs, dtype=np.float64)


@pytest.fixture(scope="module")
def mechanisms(table):
    values, probs = prior_arrays(labeldp.private_prior(table["wage"].to_numpy(), 0.5, LO, HI, RES, key=KEY))
    return {
        "rr_on_bins": labeldp.rr_on_bins(values, probs, 1.0),
        "discrete_laplace": labeldp.baseline("discrete-laplace", 1.0, LO, HI, resolution=RES),
    }


def frame(table, npartitions, shuffled):
    df = table.sample(frac=1.0, random_state=7).reset_index(drop=True) if shuffled else table
    return dd.from_pandas(df, npartitions=npartitions, sort=True)


def by_id(df, column):
    return df.set_index("rid")[column].sort_index()


def test_cluster_has_two_worker_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2
    assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()


@pytest.mark.parametrize("name", ["rr_on_bins", "discrete_laplace"])
@pytest.mark.parametrize("npartitions,shuffled", [(3, False), (7, False), (7, True)])
def test_distributed_equals_single_process(client, table, mechanisms, name, npartitions, shuffled):
    m = mechanisms[name]
    single = m.privatize(table["wage"].to_numpy(), key=KEY, ids=table["rid"].to_numpy())
    expected = pd.Series(single, index=table["rid"]).sort_index()
    ddf = frame(table, npartitions, shuffled)
    assert ddf.npartitions == npartitions
    out = client.compute(ldd.privatize(ddf, "wage", m, KEY, "rid")).result()
    assert list(out.columns) == ["rid", "wage", "row"]  # the label replaced in place
    assert out["wage"].dtype == np.float64 and len(out) == len(table)
    got = by_id(out, "wage")
    assert got.index.equals(expected.index)
    np.testing.assert_array_equal(got.to_numpy(), expected.to_numpy())
    # The comparison has teeth: the labels did change, and another key gives other noise.
    assert np.mean(single != table["wage"].to_numpy()) > 0.2
    other = m.privatize(table["wage"].to_numpy(), key=OTHER_KEY, ids=table["rid"].to_numpy())
    assert np.mean(other != single) > 0.2


def test_output_beside_and_mechanism_loaded_once_per_worker(client, table, mechanisms):
    m = mechanisms["rr_on_bins"]

    def reset():
        ldd._MECHANISMS.clear()
        ldd._load_count = 0

    client.run(reset)
    ddf = frame(table, 7, True)
    out = client.compute(ldd.privatize(ddf, "wage", m.to_json(), KEY, "rid", output_column="noisy")).result()
    assert list(out.columns) == ["rid", "wage", "row", "noisy"]
    np.testing.assert_array_equal(out["wage"].to_numpy(), ddf["wage"].compute().to_numpy())
    expected = m.privatize(out["wage"].to_numpy(), key=KEY, ids=out["rid"].to_numpy())
    np.testing.assert_array_equal(out["noisy"].to_numpy(), expected)
    loads = client.run(lambda: ldd._load_count)
    assert sum(loads.values()) >= 1 and all(n <= 1 for n in loads.values()), loads  # 7 partitions


def test_module_refuses_a_negative_id_in_any_chunk(mechanisms):
    # The module checks the ids chunk by chunk (2^14 at a time) as it samples: a negative id far
    # from the start, in int64 or int32, is still found and named by its index.
    m = mechanisms["rr_on_bins"]
    n = 100_000
    for dtype in (np.int64, np.int32):
        ids = np.arange(n, dtype=dtype)
        ids[70_001] = -3
        with pytest.raises(ValueError, match=r"'ids'\[70001\] = -3 is negative"):
            m.privatize(np.full(n, 100.0), key=KEY, ids=ids)
    ids = np.arange(n, dtype=np.int64)
    labels = np.full(n, 100.0)
    np.testing.assert_array_equal(  # the same ids as uint64: the same noise
        m.privatize(labels, key=KEY, ids=ids), m.privatize(labels, key=KEY, ids=ids.astype(np.uint64))
    )


def test_partition_output_shares_its_columns():
    # Oracle: pandas' own assignment on a shallow copy. The output shares the input's other columns
    # and the noisy array (no copy), keeps the columns' Index (name, order), dtypes and the index.
    n = 1000
    df = pd.DataFrame(
        {
            "id": np.arange(n) * 3,
            "n": pd.array(np.arange(n), dtype="Int64"),
            "wage": np.ones(n),
            "c": ["a", "b"] * (n // 2),
        },
        index=pd.Index(np.arange(n) + 7, name="ix"),
    ).astype({"c": "category"})
    df.columns.name = "fields"
    noisy = np.random.default_rng(1).random(n)
    for target in ("wage", "id", "new"):
        out = ldd._with_column(df, target, noisy)
        expected = df.copy(deep=False)
        expected[target] = noisy
        pd.testing.assert_frame_equal(out, expected)
        assert np.shares_memory(out[target].to_numpy(), noisy)
        assert target == "id" or np.shares_memory(out["id"].to_numpy(), df["id"].to_numpy())
    assert df["wage"].eq(1.0).all() and list(df.columns) == ["id", "n", "wage", "c"]  # input unchanged
    twice = pd.DataFrame([[1, 2.0, 3]], columns=["a", "wage", "a"])  # repeated names: pandas' assignment
    pd.testing.assert_frame_equal(
        ldd._with_column(twice, "wage", np.array([5.0])), pd.DataFrame([[1, 5.0, 3]], columns=["a", "wage", "a"])
    )


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_local_schedulers(table, mechanisms, scheduler):
    m = mechanisms["discrete_laplace"]
    before = table.copy()
    source = dd.from_pandas(table, npartitions=5)
    out = ldd.privatize(source, "wage", m, KEY, "rid").compute(scheduler=scheduler)
    pd.testing.assert_frame_equal(table, before)  # the input frame's partitions are not written to
    pd.testing.assert_frame_equal(source.compute(scheduler=scheduler), before)
    expected = m.privatize(table["wage"].to_numpy(), key=KEY, ids=table["rid"].to_numpy())
    np.testing.assert_array_equal(by_id(out, "wage").to_numpy(), pd.Series(expected, index=table["rid"]).sort_index())


@pytest.mark.parametrize("npartitions,shuffled", [(3, False), (7, True)])
def test_counts_equal_numpy_histogram(client, table, npartitions, shuffled):
    wages = table["wage"].to_numpy()
    clipped = np.clip(wages, LO, HI)
    # numpy's oracle: round to the nearest grid point, i.e. bins split at the midpoints. No CPS
    # wage lies on a midpoint at this resolution (checked), so rounding ties cannot matter.
    grid = np.arange(LO, HI + RES / 2, RES)
    mids = (grid[:-1] + grid[1:]) / 2
    assert not np.isin(clipped, mids).any()
    expected, _ = np.histogram(clipped, bins=np.concatenate([[-np.inf], mids, [np.inf]]))
    with dask.config.set(scheduler=client):
        got = ldd.histogram_counts(frame(table, npartitions, shuffled), "wage", LO, HI, RES)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, labeldp.histogram_counts(wages, LO, HI, RES))
    assert got.sum() == len(wages)


def test_split_every_does_not_change_counts(table):
    ddf = frame(table, 20, True)
    a = ldd.histogram_counts(ddf, "wage", LO, HI, RES, split_every=2)
    b = ldd.histogram_counts(ddf, "wage", LO, HI, RES, split_every=20)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("npartitions", [3, 7])
def test_private_prior_equals_single_process(client, table, npartitions):
    single_prior = labeldp.private_prior(table["wage"].to_numpy(), 0.25, LO, HI, RES, key=KEY)
    with dask.config.set(scheduler=client):
        merged_prior = ldd.private_prior(frame(table, npartitions, True), "wage", 0.25, LO, HI, RES, key=KEY)
    np.testing.assert_array_equal(merged_prior.noisy_counts, single_prior.noisy_counts)
    assert merged_prior.eps == 0.25 and merged_prior.n == len(table)
    single, merged = prior_arrays(single_prior), prior_arrays(merged_prior)
    np.testing.assert_array_equal(merged[0], single[0])
    np.testing.assert_array_equal(merged[1], single[1])
    # Teeth: the noise is there (not the exact histogram) and depends on the key.
    counts = labeldp.histogram_counts(table["wage"].to_numpy(), LO, HI, RES)
    assert not np.array_equal(merged[1], counts / counts.sum())
    other = prior_arrays(ldd.private_prior(frame(table, npartitions, True), "wage", 0.25, LO, HI, RES, key=OTHER_KEY))
    assert not np.array_equal(other[1], merged[1])


def expect_error(match, fn, *args, **kwargs):
    with pytest.raises(ValueError, match=match) as info:
        result = fn(*args, **kwargs)
        if isinstance(result, dd.DataFrame):
            result.compute(scheduler="sync")
    assert "\n" not in str(info.value)
    assert KEY.hex() not in str(info.value)
    return info


def test_bad_arguments(table, mechanisms):
    m = mechanisms["rr_on_bins"]
    ddf = frame(table, 3, False)
    expect_error("'ddf'", ldd.privatize, table, "wage", m, KEY, "rid")
    expect_error("'column' 'salary'", ldd.privatize, ddf, "salary", m, KEY, "rid")
    expect_error("'id_column' 'id'", ldd.privatize, ddf, "wage", m, KEY, "id")
    expect_error("'id_column' must differ", ldd.privatize, ddf, "wage", m, KEY, "wage")
    expect_error("'key' is required", ldd.privatize, ddf, "wage", m, None, "rid")
    expect_error("'key' must be exactly 32 bytes, got 31", ldd.privatize, ddf, "wage", m, KEY[:31], "rid")
    expect_error("'key' must be bytes", ldd.privatize, ddf, "wage", m, KEY.hex(), "rid")
    expect_error("'mechanism'", ldd.privatize, ddf, "wage", 42, KEY, "rid")
    expect_error("'output_column' 'row'", ldd.privatize, ddf, "wage", m, KEY, "rid", output_column="row")
    with pytest.raises(ValueError):  # the module's own check of a bad mechanism file
        ldd.privatize(ddf, "wage", '{"format":"labeldp-mechanism"}', KEY, "rid")

    float_ids = dd.from_pandas(table.assign(rid=table["rid"].astype(np.float64)), npartitions=3)
    expect_error("'id_column' 'rid' must hold integers", ldd.privatize, float_ids, "wage", m, KEY, "rid")
    text = dd.from_pandas(table.assign(wage=table["wage"].astype(str)), npartitions=3)
    expect_error("'column' 'wage' must be numeric", ldd.privatize, text, "wage", m, KEY, "rid")
    negative = dd.from_pandas(table.assign(rid=table["rid"] - table["rid"].iloc[100]), npartitions=3)
    expect_error("'id_column' 'rid' has a negative id", ldd.privatize, negative, "wage", m, KEY, "rid")
    # Increasing ids (checked in one pass, the smallest first): a negative first id, a repeated one.
    row = table["row"].to_numpy()
    expect_error("'id_column' 'row' has a negative id", ldd.privatize,
                 dd.from_pandas(table.assign(row=row - 5), npartitions=3), "wage", m, KEY, "row")
    expect_error("duplicated id", ldd.privatize,
                 dd.from_pandas(table.assign(row=np.where(row == 9, 8, row)), npartitions=3), "wage", m, KEY, "row")
    shuffled = table.sample(frac=1.0, random_state=3).reset_index(drop=True)
    dup = shuffled.assign(rid=shuffled["rid"].where(shuffled.index != 5, shuffled["rid"].iloc[6]))
    expect_error("duplicated id", ldd.privatize, dd.from_pandas(dup, npartitions=3), "wage", m, KEY, "rid")
    # Without the check the same frame runs (the two records then share their noise).
    ldd.privatize(dd.from_pandas(dup, npartitions=3), "wage", m, KEY, "rid", check_unique_ids=False).compute(
        scheduler="sync"
    )

    # A label the module refuses: named by its partition and index, never by its value.
    nan = table.assign(wage=table["wage"].where(table.index != 20000, np.nan))
    info = expect_error(r"privatize: partition 2: 'labels'\[\d+\] is not finite", ldd.privatize,
                        dd.from_pandas(nan, npartitions=3), "wage", m, KEY, "rid")
    assert "nan" not in str(info.value).lower().replace("not finite", "")
    with pytest.raises(ValueError, match=r"histogram_counts: partition 2: 'labels'\[\d+\] is not finite"):
        ldd.private_prior(dd.from_pandas(nan, npartitions=3), "wage", 1.0, LO, HI, RES)

    expect_error("'eps'", ldd.private_prior, ddf, "wage", 0.0, LO, HI, RES)
    expect_error("'eps'", ldd.private_prior, ddf, "wage", float("nan"), LO, HI, RES)
    expect_error("'column' 'salary'", ldd.private_prior, ddf, "salary", 1.0, LO, HI, RES)
    expect_error("'key' must be exactly 32 bytes", ldd.private_prior, ddf, "wage", 1.0, LO, HI, RES, key=b"short")
    expect_error("'split_every'", ldd.histogram_counts, ddf, "wage", LO, HI, RES, split_every=1)
    with pytest.raises(ValueError):  # the module's own checks of the grid
        ldd.private_prior(ddf, "wage", 1.0, HI, LO, RES)
    with pytest.raises(ValueError):
        ldd.private_prior(ddf, "wage", 1.0, LO, HI, -RES)


def test_pipeline_example_rerun_gives_the_same_release(tmp_path):
    """examples/python/pipeline_dask.py twice with one key file, on 1 worker in 3 partitions and on
    2 workers in 7: the same prior, mechanism and noisy labels, so the same summaries."""
    script = pathlib.Path(__file__).resolve().parents[1] / "pipeline_dask.py"
    key_file = tmp_path / "label.key"
    key_file.write_bytes(KEY)
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(labeldp.__file__).resolve().parents[1]))

    def release(workers, partition_rows):
        args = ["--rows", "70000", "--workers", str(workers), "--partition-rows", str(partition_rows)]
        r = subprocess.run([sys.executable, str(script), *args, "--key-file", str(key_file)],
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        assert f"70,000 rows in {-(-70000 // partition_rows)} partitions on {workers} worker processes" in r.stdout
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("stage 2", "mean wage", "total eps", "  "))]
        assert len(lines) == 9, r.stdout  # stage 2, eps, means, the heading and 5 education groups
        return lines

    first = release(1, 30000)
    assert release(2, 10000) == first


def test_pipeline_example_bench_reports_every_measurement(tmp_path):
    """pipeline_dask.py --bench on a small table: both clusters, every run and the paired
    speed-ups are reported (the figures themselves are benchmarks, not checked here)."""
    script = pathlib.Path(__file__).resolve().parents[1] / "pipeline_dask.py"
    key_file = tmp_path / "label.key"
    key_file.write_bytes(KEY)
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(labeldp.__file__).resolve().parents[1]))
    args = ["--rows", "40000", "--partition-rows", "10000", "--bench", "--repeat", "3", "--key-file", str(key_file)]
    r = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=180, env=env)
    assert r.returncode == 0, r.stderr
    assert "1 worker(s), partitions in memory per worker [4];" in r.stdout, r.stdout
    assert "2 worker(s), partitions in memory per worker [2, 2];" in r.stdout, r.stdout
    for name in ("without Dask", "in memory", "end to end"):
        assert f"speed-up with 2 workers, {name}: " in r.stdout, r.stdout
        assert "median of the 3 alternating pairs" in r.stdout, r.stdout
