#!/usr/bin/python3
"""The two-stage label-DP pipeline on a Dask cluster, on the bundled CPS wages scaled up.

Ghazi et al. 2023 ("Regression with Label Differential Privacy", Algorithm 3) end to end with
labeldp.dask: a private prior of the wages (eps1, Algorithm 4: exact per-partition counts, summed,
noise added once), the optimal RR-on-Bins mechanism for it (eps2), then keyed privatization of
every row (the noise of row i a function of the secret key and i only, so a retried task cannot
release a second noisy copy), and summaries of the release.

The rows are generated ON THE WORKERS: partition p builds rows [start_p, stop_p) itself, row i
being CPS row i mod 28,155 with id i, from the 28,155-row table shipped to each worker once. No
process ever holds all rows. (Repeated rows are separate records here: a person with r records
would be protected per record, see README "Privacy and security".)

  PYTHONPATH=build/python /usr/bin/python3 examples/python/pipeline_dask.py --rows 100000000 --workers 2
  ... --key-file label.key          the release's secret key (head -c 32 /dev/urandom > label.key)
  ... --bench                       labels/s with 1 and with 2 worker processes
  ... --malloc-keep 0                Dask's default allocator settings on the workers (see worker_environ)
  ... --scheduler tcp://host:8786   an existing cluster (dask-scheduler / dask-worker) instead
"""

import argparse
import collections
import logging
import math
import os
import pathlib
import secrets
import sys
import time

import numpy as np
import pandas as pd

import dask
import dask.dataframe as dd
import distributed

# This script sits next to the package's sources (examples/python/labeldp, without the compiled
# extension): import the built package from PYTHONPATH instead.
if sys.path and pathlib.Path(sys.path[0] or ".").resolve() == pathlib.Path(__file__).resolve().parent:
    del sys.path[0]

import labeldp  # noqa: E402
import labeldp.dask as ldd  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "cps1988.csv"


def repeated(column, start, stop):
    """Elements start..stop-1 of `column` repeated without end (block copies, no per-row index)."""
    out = np.empty(stop - start, dtype=column.dtype)
    pos, i = 0, start % column.size
    while pos < out.size:
        k = min(column.size - i, out.size - pos)
        out[pos : pos + k] = column[i : i + k]
        pos, i = pos + k, 0
    return out


def cps_rows(base, start, stop):
    """Rows start..stop-1 of the CPS table repeated without end: row i is CPS row i mod n, id i.

    The frame holds the new arrays themselves (``copy=False``): by default pandas copies a dict's
    arrays into one block per dtype, here the two integer columns, 16 bytes a row of fresh memory
    (35 ms per 2^21-row partition on this machine, more than privatizing it)."""
    return pd.DataFrame(
        {
            "id": np.arange(start, stop, dtype=np.int64),
            "education": repeated(base["education"].to_numpy(), start, stop),
            "wage": repeated(base["wage"].to_numpy(), start, stop),
        },
        index=pd.RangeIndex(start, stop),
        copy=False,
    )


def summarize(df, lo, hi):
    """Per years of education: rows, sum of the (clipped) true and of the noisy wages, squared error."""
    edu = df["education"].to_numpy()
    true = np.clip(df["wage"].to_numpy(), lo, hi)
    noisy = df["noisy_wage"].to_numpy()
    size = int(edu.max()) + 1 if edu.size else 0
    return pd.DataFrame(
        {
            "n": np.bincount(edu, minlength=size),
            "true": np.bincount(edu, true, minlength=size),
            "noisy": np.bincount(edu, noisy, minlength=size),
            "sq_err": np.bincount(edu, (noisy - true) ** 2, minlength=size),
        }
    )


def scaled_cps(rows, partition_rows):
    """A Dask DataFrame of `rows` CPS rows, each partition built on the worker that runs it: the
    fewest partitions of at most `partition_rows` rows, of equal sizes (within one row), so that
    an even number of them splits the work evenly between workers (a last partition holding the
    remainder left one worker with 5% more rows at 4 x 10^7 rows in partitions of 2^21)."""
    base = pd.read_csv(DATA, usecols=["wage", "education"])
    base_node = dask.delayed(base, pure=True)  # one graph node: sent to each worker once
    count = max(1, -(-rows // partition_rows))
    starts = [rows * i // count for i in range(count)]
    stops = starts[1:] + [rows]
    parts = [dask.delayed(cps_rows, pure=True)(base_node, a, b) for a, b in zip(starts, stops)]
    return dd.from_delayed(parts, meta=cps_rows(base, 0, 0), divisions=starts + [rows - 1], verify_meta=False)


def fail(message):
    """Bad input: one line on stderr, exit status 2 (as the labeldp program)."""
    print(f"pipeline_dask: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_key(path):
    """The release's 32-byte key from `path`; a fresh one (not kept) without --key-file."""
    if path is None:
        print(
            "pipeline_dask: no --key-file: using a fresh key for this run only (retries within the run are safe; "
            "a re-run would be a second, independent release)",
            file=sys.stderr,
        )
        return secrets.token_bytes(32)
    try:
        with open(path, "rb") as f:
            key = f.read(33)
    except OSError as e:
        fail(f"--key-file {path}: {e.strerror}")
    if len(key) != 32:
        fail(
            f"--key-file {path}: a key is exactly 32 bytes, the file has "
            f"{'more than 32' if len(key) > 32 else len(key)} (make one: head -c 32 /dev/urandom > label.key)"
        )
    return key


def prior_arrays(prior):
    """(values, probs) of a labeldp.PrivatePrior."""
    return np.asarray(prior.values, dtype=np.float64), np.asarray(prior.probs, dtype=np.float64)


def worker_environ(args):
    """The environment the local cluster's worker processes start with.

    Dask starts workers with MALLOC_TRIM_THRESHOLD_=65536, so glibc hands freed memory back to
    the operating system at once and every partition's new arrays (a 2^21-row partition makes
    several 16 MB ones) are fresh pages, zeroed by the kernel on first touch. Where page faults
    are expensive (this virtual machine: 5-7 ns per 8-byte label, partly outside the process's
    CPU time, and they do not scale with workers) that costs as much as the privatization itself.
    --malloc-keep MB keeps up to that much freed memory in each worker's heap (and serves arrays
    below it from the heap instead of new mappings), so partitions reuse pages; 0 keeps Dask's
    default. The cost: a worker's resident memory stays near its peak.
    """
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
    if args.malloc_keep > 0:
        keep = str(args.malloc_keep * 2**20)
        environ.update(MALLOC_TRIM_THRESHOLD_=keep, MALLOC_MMAP_THRESHOLD_=keep, MALLOC_TOP_PAD_=str(2**26))
    return environ


#: Settings of the local cluster (none of them changes a result). Work stealing off: it moved whole
#: partitions (100 MB for 2^22 rows) between workers in the in-memory runs of --bench, where the
#: partitions are placed evenly on purpose; root tasks (the partitions made on the workers) are
#: still spread by the scheduler's queueing. Dask's statistical profiler off: it samples every
#: worker's stack every 10 ms for a dashboard this example does not start. Dask's housekeeping
#: less often: the event-loop watchdog (every 20 ms in every process), the system monitor (every
#: 0.5 s, for the dashboard) and the workers' memory monitor (every 0.1 s; its memory limits then
#: act within 1 s) took 7% of a core with 2 idle workers on this machine, 1% after: CPU taken
#: from the workers when they share the cores with the scheduler, as here.
LOCAL_CLUSTER_CONFIG = {
    "distributed.scheduler.work-stealing": False,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
}


def make_client(args, workers):
    if args.scheduler:
        return None, distributed.Client(args.scheduler)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": worker_environ(args), **LOCAL_CLUSTER_CONFIG}):
        cluster = distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
    return cluster, distributed.Client(cluster)


def close(cluster, client):
    client.close()
    if cluster is not None:
        cluster.close()


def run_pipeline(args, key):
    cluster, client = make_client(args, args.workers)
    try:
        n_workers = len(client.scheduler_info()["workers"])
        ddf = scaled_cps(args.rows, args.partition_rows)
        print(f"{args.rows:,} rows in {ddf.npartitions} partitions on {n_workers} worker processes")

        t0 = time.perf_counter()
        values, probs = prior_arrays(
            ldd.private_prior(ddf, "wage", args.eps1, args.lo, args.hi, args.resolution, key=key)
        )
        t1 = time.perf_counter()
        print(f"stage 1: private prior, eps1 = {args.eps1:g}, {values.size} grid points: {t1 - t0:.1f} s")

        m = labeldp.rr_on_bins(values, probs, args.eps2)
        print(f"stage 2: RR-on-Bins, eps2 = {args.eps2:g}, expected squared error {m.expected_loss:,.0f}")

        release = ldd.privatize(ddf, "wage", m, key, "id", output_column="noisy_wage")
        meta = pd.DataFrame({"n": np.empty(0, np.int64), "true": [], "noisy": [], "sq_err": []})
        t2 = time.perf_counter()
        parts = release.map_partitions(summarize, args.lo, args.hi, meta=meta).compute()
        t3 = time.perf_counter()
        groups = parts.groupby(level=0).sum()
        groups = groups[groups["n"] > 0]
        n, total = int(groups["n"].sum()), groups.sum()
        print(f"privatized {n:,} labels in {t3 - t2:.1f} s ({n / (t3 - t2) / 1e6:.1f} M labels/s, with the summaries)")
        print(f"total eps per label: {args.eps1:g} + {args.eps2:g}")
        print(
            f"mean wage (clipped to [{args.lo:g}, {args.hi:g}]): {total['true'] / n:.2f}; "
            f"mean noisy wage: {total['noisy'] / n:.2f}; noisy-label MSE: {total['sq_err'] / n:,.0f}"
        )
        print("mean wage by years of education (true, noisy), a few groups:")
        for edu in [e for e in (8, 12, 14, 16, 18) if e in groups.index]:
            g = groups.loc[edu]
            print(f"  {edu:2d}: {g['true'] / g['n']:8.2f} {g['noisy'] / g['n']:8.2f}")
        return m
    finally:
        close(cluster, client)


def same(df, *tags):
    """`df` itself (the tags only make the task's name)."""
    return df


def stored_evenly(client, ddf):
    """`ddf` computed into the workers' memory, partition i on worker i mod n (the scheduler's own
    placement, and client.rebalance(), which moves data only above a memory threshold, left 9
    and 11 of 20 partitions, or 4 and 6 of 10: the slower worker then bounds the run)."""
    workers = sorted(client.scheduler_info()["workers"])
    futures = [
        client.compute(part, workers=[workers[i % len(workers)]], allow_other_workers=False)
        for i, part in enumerate(ddf.to_delayed())
    ]
    distributed.wait(futures)
    return dd.from_delayed(futures, meta=ddf._meta, divisions=ddf.divisions, verify_meta=False)


def without_dask(text, key, labels, rows, partition_rows):
    """The in-memory runs' work without Dask, in a worker process: `rows` labels privatized with
    keyed randomness in chunks of `partition_rows` (the labels cycled from `labels`, ids 0, 1,
    ...). Run on every worker at once by Client.run, it measures how two processes of this
    machine scale when nothing but the privatization runs."""
    m = labeldp.loads(text)
    chunk = np.resize(labels, min(rows, partition_rows))
    ids = np.arange(chunk.size, dtype=np.int64)
    done = 0
    while done < rows:
        n = min(chunk.size, rows - done)
        m.privatize(chunk[:n], key=key, ids=ids[:n] + done)
        done += n
    return done


def bench(args, key, m):
    """Labels/s of keyed privatization with 1 and 2 worker processes: on rows already in the
    workers' memory (privatize + sum of the noisy column), and end to end (rows generated,
    privatized and summed).

    Both clusters run side by side (an idle one takes about 1% of a core) and the repetitions
    alternate between them, so that each 2-worker run is compared with a 1-worker run made
    moments before it: this virtual machine's speed drifts by up to 40% within minutes, which
    one cluster after the other measured as part of the speed-up."""
    print(
        f"throughput, {args.rows:,} rows in partitions of {args.partition_rows:,}, RR-on-Bins at eps2 = {args.eps2:g}, "
        f"keyed, {args.repeat} alternating repetitions; workers of 1 thread each, malloc keep {args.malloc_keep} MB, "
        "no work stealing, no statistical profiler; "
        f"load average at the start {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs:"
    )
    names = ("without Dask", "in memory", "sum only", "end to end")
    labels = pd.read_csv(DATA, usecols=["wage"])["wage"].to_numpy(dtype=np.float64)
    clusters, graphs, split = {}, {}, {}
    try:
        for workers in (1, 2):
            cluster, client = clusters[workers] = make_client(args, workers)
            threads = sorted(client.nthreads().values())
            if threads != [1] * workers:
                raise RuntimeError(f"expected {workers} worker(s) of 1 thread, got threads {threads}")
            profiling = client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
            stealing = client.run_on_scheduler(lambda dask_scheduler: "stealing" in dask_scheduler.extensions)
            if any(profiling.values()) or stealing:
                raise RuntimeError(f"expected LOCAL_CLUSTER_CONFIG, got profiling {profiling}, stealing {stealing}")
            stored = stored_evenly(client, scaled_cps(args.rows, args.partition_rows))
            split[workers] = sorted(collections.Counter(w for ws in client.who_has(stored).values() for w in ws).values())
            fresh = scaled_cps(args.rows, args.partition_rows)
            graphs[workers] = {
                "in memory": lambda f, stored=stored: ldd.privatize(f(stored), "wage", m, key, "id")["wage"].sum(),
                "sum only": lambda f, stored=stored: f(stored)["wage"].sum(),
                "end to end": lambda f, fresh=fresh: ldd.privatize(f(fresh), "wage", m, key, "id")["wage"].sum(),
            }
            warm_up = ldd.privatize(scaled_cps(10_000, 5_000), "wage", m, key, "id")["wage"].sum()
            client.compute(warm_up).result()
        times = {(w, name): [] for w in clusters for name in names}
        cpu_of_best = {}
        for rep in range(args.repeat):
            for name in names:
                for workers, (_, client) in clusters.items():
                    # New task names each time (an identity step tagged with rep), so no result
                    # of an earlier repetition still held by the workers can be reused.
                    cpu = client.run(time.process_time)
                    if name == "without Dask":
                        t = time.perf_counter()
                        client.run(without_dask, m.to_json(), key, labels, args.rows // workers, args.partition_rows)
                        wall = time.perf_counter() - t
                    else:
                        graph = graphs[workers][name](lambda ddf: ddf.map_partitions(same, rep, name, meta=ddf._meta))
                        t = time.perf_counter()
                        client.compute(graph).result()
                        wall = time.perf_counter() - t
                    cpu = sum(v - cpu[w] for w, v in client.run(time.process_time).items())
                    if wall < min(times[workers, name], default=math.inf):
                        cpu_of_best[workers, name] = cpu
                    times[workers, name].append(wall)
    finally:
        for cluster, client in clusters.values():
            close(cluster, client)
    def rate(seconds):
        return f"{args.rows / seconds / 1e6:.1f}"

    for workers in clusters:
        median = {name: sorted(times[workers, name])[args.repeat // 2] for name in names}
        best = {name: min(times[workers, name]) for name in names}
        print(
            f"  {workers} worker(s), partitions in memory per worker {split[workers]}; M labels/s, best and median: "
            + ", ".join(f"{name} {rate(best[name])} and {rate(median[name])}" for name in names if name != "sum only")
            + f" (the sum alone {best['sum only']:.2f} s); per worker CPU second in the best run: "
            f"{rate(cpu_of_best[workers, 'in memory'])} in memory, {rate(cpu_of_best[workers, 'end to end'])} end to end"
        )
    for name in ("without Dask", "in memory", "end to end"):
        paired = sorted(a / b for a, b in zip(times[1, name], times[2, name]))
        print(
            f"  speed-up with 2 workers, {name}: {min(times[1, name]) / min(times[2, name]):.2f}x best to best, "
            f"{paired[len(paired) // 2]:.2f}x median of the {len(paired)} alternating pairs "
            f"(range {paired[0]:.2f}-{paired[-1]:.2f}; target >= 1.8x)"
        )
    print(f"  load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10**8, help="rows to generate (default 10^8)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    parser.add_argument("--key-file", help="the release's secret 32-byte key (default: a fresh key, not kept)")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (default: a local cluster)")
    parser.add_argument("--eps1", type=float, default=0.01, help="budget of the private prior (default 0.01)")
    parser.add_argument("--eps2", type=float, default=1.0, help="budget of the RR-on-Bins mechanism (default 1)")
    parser.add_argument("--lo", type=float, default=0.0, help="public lower bound of the wages (default 0)")
    parser.add_argument("--hi", type=float, default=5000.0, help="public upper bound of the wages (default 5000)")
    parser.add_argument("--resolution", type=float, default=50.0, help="public grid step (default 50)")
    parser.add_argument(
        "--partition-rows", type=int, default=2**22, help="most rows per partition, all of equal sizes (default 2^22)"
    )
    parser.add_argument(
        "--malloc-keep",
        type=int,
        default=1024,
        help="MB of freed memory each local worker keeps for reuse instead of returning it to the "
        "operating system (default 1024; 0: Dask's default, which returns it at once)",
    )
    parser.add_argument("--bench", action="store_true", help="also measure labels/s with 1 and 2 worker processes")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions per measurement (default 5)")
    args = parser.parse_args()
    if args.malloc_keep < 0:
        parser.error(f"--malloc-keep must be >= 0, got {args.malloc_keep}")
    for name in ("rows", "workers", "partition_rows", "repeat"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    for name in ("eps1", "eps2"):
        if not (math.isfinite(getattr(args, name)) and getattr(args, name) > 0):
            parser.error(f"--{name} must be finite and > 0, got {getattr(args, name)}")
    if args.bench and args.scheduler:
        parser.error("--bench starts its own local clusters (1 and 2 workers): leave out --scheduler")
    key = read_key(args.key_file)
    try:
        m = run_pipeline(args, key)
        if args.bench:
            bench(args, key, m)
    except ValueError as e:
        fail(str(e))


if __name__ == "__main__":
    main()
