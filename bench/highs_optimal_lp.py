#!/usr/bin/env python3
"""Reference timing of HiGHS (scipy.optimize.linprog, method='highs-ds') on the explicit
optimal-mechanism LP that bench_optimal_lp.cpp solves (Ghazi et al. 2023, LP (2)): the 52-value
CPS 1988 wage prior (52 buckets of $50, value = bucket mean wage), eps = 1, squared loss,
|O| evenly spaced outputs between the smallest and largest value.

Run by hand (not part of the build or CI):  python3 bench/highs_optimal_lp.py 52 416 1664
Prints, per size, HiGHS's wall time and optimum next to which bench_optimal_lp's
`expected_loss` counter can be compared (same LP, same optimum within 1e-9 relative).

`/usr/bin/python3 bench/highs_optimal_lp.py --case FILE [TIME_LIMIT]` solves one case that
`bench_optimal_lp --table` wrote (it runs this script once per case, in the same run as labeldp and
CLP, and prints the table with the ratios): LP (2) in compact form (compact_lp), squared loss,
HiGHS through scipy.optimize.linprog(method="highs") (its defaults: presolve on, HiGHS chooses the
simplex), timing only the call into HiGHS (scipy's _highs_wrapper), not the Python model building,
in CPU time of the process (time.process_time(), all its threads: the table compares CPU times, which
the other jobs of a loaded machine do not inflate as they do wall time).
"""
import csv
import math
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def wage_prior():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "examples", "data", "cps1988.csv")
    s = [0.0] * 52
    c = [0.0] * 52
    with open(path) as f:
        for row in csv.DictReader(f):
            w = float(row["wage"])
            b = min(51, int(w / 50.0))
            s[b] += w
            c[b] += 1
    values = [s[b] / c[b] if c[b] > 0 else 50.0 * b + 25.0 for b in range(52)]
    total = sum(c)
    order = sorted(range(52), key=lambda b: values[b])
    return np.array([values[b] for b in order]), np.array([c[b] / total for b in order])


def explicit_lp(values, probs, eps, outputs):
    k, n = len(values), len(outputs)
    e = math.exp(eps)
    cost = (probs[:, None] * (outputs[None, :] - values[:, None]) ** 2).ravel()  # index y*n + o
    rows, cols, vals = [], [], []
    r = 0
    for o in range(n):
        for y in range(k):
            for z in range(k):
                if z == y:
                    continue
                rows += [r, r]
                cols += [y * n + o, z * n + o]
                vals += [1.0, -e]
                r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, k * n))
    A_eq = sp.kron(sp.identity(k), np.ones((1, n)), format="csr")
    return cost, A_ub, np.zeros(r), A_eq, np.ones(k)


def compact_lp(values, probs, eps, outputs):
    """LP (2) in compact form: variables t_o (o < n), then s[y][o] at n + y * n + o.

    Per output o, t_o is the column's smallest entry and s_{y,o} = M[y][o] - t_o with
    0 <= s_{y,o} <= (e^eps - 1) t_o; rows sum_o (t_o + s_{y,o}) = 1. Equivalent to the pairwise
    rows (M[y][o] <= e^eps M[y'][o] for all y, y' iff max_y M[y][o] <= e^eps min_y M[y][o]) and
    far smaller: the same LP as compact_mechanism_lp() of tests/oracles/glpk_oracle.hpp, which
    bench_optimal_lp gives CLP. Squared loss.
    """
    k, n = len(values), len(outputs)
    w = probs[:, None] * (outputs[None, :] - values[:, None]) ** 2  # k x n, p_y (o - y)^2
    c = np.concatenate([w.sum(axis=0), w.ravel()])
    rows = np.repeat(np.arange(k), 2 * n)
    cols = np.concatenate([np.concatenate([np.arange(n), n + y * n + np.arange(n)]) for y in range(k)])
    A_eq = sp.csr_matrix((np.ones(2 * k * n), (rows, cols)), shape=(k, n + k * n))
    r = np.arange(k * n)
    o = r % n
    A_ub = sp.csr_matrix((np.concatenate([np.ones(k * n), np.full(k * n, -math.expm1(eps))]),
                          (np.concatenate([r, r]), np.concatenate([n + r, o]))), shape=(k * n, n + k * n))
    return c, A_ub, np.zeros(k * n), A_eq, np.ones(k)


_HIGHS_SECONDS = []


def _timed_wrapper(original):
    """Wraps scipy's _highs_wrapper (the call into HiGHS: pass model, run, fetch solution) so that
    only it is timed, not linprog's Python-side input checks and sparse-matrix stacking."""

    def wrapper(*args, **kwargs):
        t0 = time.process_time()
        out = original(*args, **kwargs)
        _HIGHS_SECONDS.append(time.process_time() - t0)
        return out

    return wrapper


def solve_case_file(path, limit, min_total=0.5, max_repeats=5):
    """The case file bench_optimal_lp --table writes: eps, then values, probabilities, outputs
    (one line each, space-separated, 17 significant digits). Prints one line:
    `seconds status objective`, seconds = least HiGHS time over repeats (repeated while their
    total is under min_total seconds, at most max_repeats times), status = linprog's status
    (0 optimal, 1 iteration limit incl. the time limit, 4 numerical difficulties)."""
    import scipy.optimize._linprog_highs as lh

    if not getattr(lh._highs_wrapper, "_labeldp_timed", False):
        lh._highs_wrapper = _timed_wrapper(lh._highs_wrapper)
        lh._highs_wrapper._labeldp_timed = True
    with open(path) as f:
        lines = f.read().split("\n")
    eps = float(lines[0])
    values, probs, outputs = (np.array([float(x) for x in lines[i].split()]) for i in (1, 2, 3))
    c, A_ub, b_ub, A_eq, b_eq = compact_lp(values, probs, eps, outputs)
    best, total, res = math.inf, 0.0, None
    for _ in range(max_repeats):
        del _HIGHS_SECONDS[:]
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs",
                      options={"time_limit": limit})
        t = sum(_HIGHS_SECONDS)
        best = min(best, t)
        total += t
        if total >= min_total or res.status != 0:
            break
    print(f"{best:.6f} {res.status} {res.fun!r}", flush=True)


def main():
    if sys.argv[1:2] == ["--case"]:
        solve_case_file(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 300.0)
        return
    sizes = [int(a) for a in sys.argv[1:]] or [52, 416]
    values, probs = wage_prior()
    for n in sizes:
        outputs = np.linspace(values[0], values[-1], n)
        c, A_ub, b_ub, A_eq, b_eq = explicit_lp(values, probs, 1.0, outputs)
        t0 = time.perf_counter()
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
        t1 = time.perf_counter()
        print(f"|O| = {n}: HiGHS dual simplex {t1 - t0:.3f} s, status {res.status}, optimum {res.fun:.17g}", flush=True)


if __name__ == "__main__":
    main()
