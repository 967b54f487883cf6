#!/usr/bin/python3
"""Throughput of labeldp's Python privatize on NumPy arrays (issue 15's target: >= 50 M
labels/s/core), unkeyed (SecureRandom) and keyed (key + ids).

The labels are the bundled CPS 1988 wages repeated to N (default 10^7); the mechanisms are the
two-stage pipeline's: a private prior (eps 0.1) on the public grid [0, 5000] step 50, then
RR-on-Bins or the unbiased randomizer for it, and the unclipped Laplace, staircase and Gaussian
baselines (exact additive noise on a public lattice). One thread (privatize
runs on the calling thread), best of --repeat runs.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/bench_privatize.py [--n 10000000]

Each call returns a new array; its pages are new to the process (NumPy maps arrays above 32 MB
afresh each time), and the kernel zeroes them on first touch. On this virtual machine that costs
about 5 ns per label, a quarter of the budget of 50 M labels/s: the line "numpy labels + 0.0"
shows the ceiling it sets for any operation that makes a new array. --malloc-keep reruns the
benchmark with glibc keeping freed memory for reuse (MALLOC_MMAP_THRESHOLD_ and
MALLOC_TRIM_THRESHOLD_), which removes that cost.
"""

import argparse
import csv
import os
import pathlib
import secrets
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
# This directory holds the package's sources (labeldp/ without the compiled extension): import
# the built package from PYTHONPATH instead.
sys.path = [p for p in sys.path if pathlib.Path(p or ".").resolve() != HERE]
import labeldp  # noqa: E402

DATA = HERE.parent / "data" / "cps1988.csv"


def wages():
    with open(DATA, newline="") as f:
        return np.array([float(row["wage"]) for row in csv.DictReader(f)])


CLOCK = time.perf_counter  # --cpu-time: time.thread_time (not counting waits for a busy CPU)


def best_rate(fn, n, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = CLOCK()
        fn()
        best = min(best, CLOCK() - t)
    return n / best / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10**7, help="labels per call (default 10^7)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best is reported (default 3)")
    parser.add_argument(
        "--malloc-keep",
        action="store_true",
        help="rerun with glibc keeping freed memory for reuse (no fresh pages per call)",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="rates per second of this thread's CPU time instead of wall time (for a loaded machine; "
        "page faults served outside the process are not counted)",
    )
    args = parser.parse_args()
    if args.cpu_time:
        global CLOCK
        CLOCK = time.thread_time
    if args.malloc_keep and os.environ.get("MALLOC_MMAP_THRESHOLD_") is None:
        keep = str(2**31)
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=keep, MALLOC_TRIM_THRESHOLD_=keep)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)

    base = wages()
    labels = np.resize(base, args.n)
    ids = np.arange(args.n, dtype=np.uint64)
    key = secrets.token_bytes(32)
    prior = labeldp.private_prior(base, 0.1, 0, 5000, 50)
    cases = []
    for eps in (1.0, 8.0):
        cases.append((f"rr-on-bins eps {eps:g}", labeldp.rr_on_bins(prior.values, prior.probs, eps)))
    cases.append(("unbiased eps 1 (grid 64)", labeldp.unbiased(prior.values, prior.probs, 1.0, grid=64)))
    for eps in (1.0, 8.0):
        cases.append((f"laplace eps {eps:g}", labeldp.baseline("laplace", eps, 0, 5000)))
    for eps in (1.0, 8.0):
        cases.append((f"staircase eps {eps:g}", labeldp.baseline("staircase", eps, 0, 5000)))
    for eps in (1.0, 8.0):
        cases.append((f"gaussian eps {eps:g} delta 1e-6", labeldp.baseline("gaussian", eps, 0, 5000, 1e-6)))

    pages = "reused pages (MALLOC_MMAP_THRESHOLD_ set)" if os.environ.get("MALLOC_MMAP_THRESHOLD_") else "fresh pages"
    print(
        f"labeldp {labeldp.__version__}: privatize on {args.n:,} float64 labels, one thread, best of {args.repeat}, "
        f"{pages}, {'thread CPU' if args.cpu_time else 'wall'} time; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )
    print(f"{'mechanism':28s} {'unkeyed M/s':>12s} {'keyed M/s':>12s} {'keyed/unkeyed time':>19s}")
    for name, m in cases:
        unkeyed = best_rate(lambda: m.privatize(labels), args.n, args.repeat)
        keyed = best_rate(lambda: m.privatize(labels, key=key, ids=ids), args.n, args.repeat)
        print(f"{name:28s} {unkeyed:12.1f} {keyed:12.1f} {unkeyed / keyed:19.2f}")
    counts_rate = best_rate(lambda: labeldp.histogram_counts(labels, 0, 5000, 50), args.n, args.repeat)
    print(f"{'histogram_counts (prior)':28s} {counts_rate:12.1f}")
    copy_rate = best_rate(lambda: labels + 0.0, args.n, args.repeat)
    print(f"{'numpy labels + 0.0':28s} {copy_rate:12.1f}   (a new array: the ceiling set by its pages)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
