#!/usr/bin/python3
"""Throughput of labeldp's Python privatize on NumPy arrays (issue 15's target: >= 50 M
labels/s/core), unkeyed (SecureRandom) and keyed (key + ids).

The labels are the bundled CPS 1988 wages repeated to N (default 10^7); the mechanisms are the
two-stage pipeline's: a private prior (eps 0.1) on the public grid [0, 5000] step 50, then
RR-on-Bins or the unbiased randomizer for it, and the Laplace baseline. One thread (privatize
runs on the calling thread), best of --repeat runs.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/bench_privatize.py [--n 10000000]
"""

import argparse
import csv
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


def best_rate(fn, n, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return n / best / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10**7, help="labels per call (default 10^7)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best is reported (default 3)")
    args = parser.parse_args()

    base = wages()
    labels = np.resize(base, args.n)
    ids = np.arange(args.n, dtype=np.uint64)
    key = secrets.token_bytes(32)
    prior = labeldp.private_prior(base, 0.1, 0, 5000, 50)
    cases = []
    for eps in (1.0, 8.0):
        cases.append((f"rr-on-bins eps {eps:g}", labeldp.rr_on_bins(prior.values, prior.probs, eps)))
    cases.append(("unbiased eps 1 (grid 64)", labeldp.unbiased(prior.values, prior.probs, 1.0, grid=64)))
    cases.append(("laplace eps 1", labeldp.baseline("laplace", 1.0, 0, 5000)))

    print(f"labeldp {labeldp.__version__}: privatize on {args.n:,} float64 labels, one thread, best of {args.repeat}")
    print(f"{'mechanism':28s} {'unkeyed M/s':>12s} {'keyed M/s':>12s} {'keyed/unkeyed time':>19s}")
    for name, m in cases:
        unkeyed = best_rate(lambda: m.privatize(labels), args.n, args.repeat)
        keyed = best_rate(lambda: m.privatize(labels, key=key, ids=ids), args.n, args.repeat)
        print(f"{name:28s} {unkeyed:12.1f} {keyed:12.1f} {unkeyed / keyed:19.2f}")
    counts_rate = best_rate(lambda: labeldp.histogram_counts(labels, 0, 5000, 50), args.n, args.repeat)
    print(f"{'histogram_counts (prior)':28s} {counts_rate:12.1f}")


if __name__ == "__main__":
    main()
