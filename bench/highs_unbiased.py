#!/usr/bin/env python3
"""Reference timing of HiGHS (scipy.optimize.linprog, method='highs-ds') on the explicit
optimal-unbiased-randomizer LP that bench_unbiased.cpp solves (Badanidiyuru et al. 2023, Alg. 1
on the FeasibleOutputSet grid of Alg. 2), in the compact form BM_UnbiasedGridGlpk gives GLPK
(tests/mechanisms/test_unbiased_oracle.hpp, UnbiasedLpForm::Compact):

    M[y][i] = lo_i + s[y][i],  0 <= s[y][i] <= (e^eps - 1) lo_i      (n + k n variables)
    sum_i M[y][i] = 1,  sum_i M[y][i] o_i = y                          (2k equality rows)
    minimize sum_y p_y sum_i M[y][i] (o_i - y)^2                       (k n privacy rows)

Same instance as bench_unbiased.cpp: k = 52 labels 1..52 with its synthetic weeks-worked-like
prior, eps = 1, grids of 52 / 416 / 1664 points from L = Phi(1) to U = Phi(52) (the dbRR
outputs, Def. 23).

Run by hand (not part of the build or CI) with the Python that has Debian's python3-scipy:
    /usr/bin/python3 bench/highs_unbiased.py 52 416 1664
Prints, per grid size, the wall time of the linprog call (loading the LP into HiGHS and
solving it; building the scipy matrices in Python is not timed) and the optimum as the
paper's G (objective / 2, g = (o - y)^2 / 2), to compare with the `paper_G` counter of
BM_UnbiasedGrid. Repeat a size (e.g. "52 52 52") to see the spread of the timing.
"""
import math
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def weeks_prior():
    """bench_unbiased.cpp's weeks_prior(): labels 1..52, normalized weights."""
    values, weights = [], []
    for y in range(1, 53):
        p = 0.2 + 0.02 * y
        p += {52: 30.0, 50: 2.0, 48: 1.5, 40: 3.0, 26: 2.0}.get(y, 0.0)
        values.append(float(y))
        weights.append(p)
    w = np.array(weights)
    return np.array(values), w / w.sum()


def feasible_output_set(values, eps, n):
    """Alg. 2 as labeldp::feasible_output_set: n evenly spaced points from Phi(min) to Phi(max)."""
    k, w, total = len(values), math.expm1(eps), float(values.sum())
    lo = values[0] + (k * values[0] - total) / w
    hi = values[-1] + (k * values[-1] - total) / w
    grid = np.array([lo + (hi - lo) * i / (n - 1) for i in range(n)])
    grid[-1] = hi
    return grid


def compact_lp(values, probs, eps, outputs):
    """The compact form: variables lo_i (i < n), then s[y][i] at n + y * n + i."""
    k, n = len(values), len(outputs)
    loss = probs[:, None] * (outputs[None, :] - values[:, None]) ** 2  # k x n, p_y (o_i - y)^2
    c = np.concatenate([loss.sum(axis=0), loss.ravel()])
    rows, cols, vals = [], [], []
    for y in range(k):
        for i in range(n):
            s = n + y * n + i
            rows += [y, y, k + y, k + y]
            cols += [i, s, i, s]
            vals += [1.0, 1.0, outputs[i], outputs[i]]
    A_eq = sp.csr_matrix((vals, (rows, cols)), shape=(2 * k, n + k * n))
    b_eq = np.concatenate([np.ones(k), values])
    rows, cols, vals = [], [], []
    r = 0
    for i in range(n):
        for y in range(k):
            rows += [r, r]
            cols += [n + y * n + i, i]
            vals += [1.0, -math.expm1(eps)]
            r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, n + k * n))
    return c, A_ub, np.zeros(r), A_eq, b_eq


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [52, 416]
    values, probs = weeks_prior()
    for n in sizes:
        outputs = feasible_output_set(values, 1.0, n)
        c, A_ub, b_ub, A_eq, b_eq = compact_lp(values, probs, 1.0, outputs)
        t0 = time.perf_counter()
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
        t1 = time.perf_counter()
        print(f"grid {n}: HiGHS dual simplex {1e3 * (t1 - t0):.1f} ms, status {res.status}, "
              f"paper_G {res.fun / 2:.9g}", flush=True)


if __name__ == "__main__":
    main()
