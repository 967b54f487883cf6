#!/usr/bin/env python3
"""Reference timing of HiGHS (scipy.optimize.linprog, method='highs-ds') on the explicit
optimal-mechanism LP that bench_optimal_lp.cpp solves (Ghazi et al. 2023, LP (2)): the 52-value
CPS 1988 wage prior (52 buckets of $50, value = bucket mean wage), eps = 1, squared loss,
|O| evenly spaced outputs between the smallest and largest value.

Run by hand (not part of the build or CI):  python3 bench/highs_optimal_lp.py 52 416 1664
Prints, per size, HiGHS's wall time and optimum next to which bench_optimal_lp's
`expected_loss` counter can be compared (same LP, same optimum within 1e-9 relative).
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


def main():
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
