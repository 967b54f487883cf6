#!/usr/bin/env python3
"""Reference timing of HiGHS (scipy.optimize.linprog, method='highs-ds') on the explicit
optimal-mechanism LP that bench_optimal_lp.cpp solves (Ghazi et al. 2023, LP (2)): the 52-value
CPS 1988 wage prior (52 buckets of $50, value = bucket mean wage), eps = 1, squared loss,
|O| evenly spaced outputs between the smallest and largest value.

Run by hand (not part of the build or CI):  python3 bench/highs_optimal_lp.py 52 416 1664
Prints, per size, HiGHS's wall time and optimum next to which bench_optimal_lp's
`expected_loss` counter can be compared (same LP, same optimum within 1e-9 relative).

`python3 bench/highs_optimal_lp.py --shapes` times HiGHS (dual simplex and interior point, each
with a time limit) on the prior shapes of bench_optimal_lp's BM_Shape cases, built from the same
formulas (see shape_prior), in the compact form of LP (2): per output o a variable t_o (the
column's smallest entry) and s_{y,o} = M[y][o] - t_o with 0 <= s_{y,o} <= (e^eps - 1) t_o, rows
sum_o (t_o + s_{y,o}) = 1. This is equivalent to the pairwise rows (M[y][o] <= e^eps M[y'][o]
for all y, y' iff max_y M[y][o] <= e^eps min_y M[y][o]) and far smaller; model building is not
timed. Prints one line per case: shape, eps, |O|, seconds, status, optimum.
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


class Mt19937_64:
    """std::mt19937_64 (Matsumoto-Nishimura 64-bit Mersenne Twister), bit-exact with C++."""

    def __init__(self, seed):
        self.mt = [0] * 312
        self.mt[0] = seed & 0xFFFFFFFFFFFFFFFF
        for i in range(1, 312):
            self.mt[i] = (6364136223846793005 * (self.mt[i - 1] ^ (self.mt[i - 1] >> 62)) + i) & 0xFFFFFFFFFFFFFFFF
        self.i = 312

    def __call__(self):
        if self.i >= 312:
            for j in range(312):
                x = (self.mt[j] & 0xFFFFFFFF80000000) | (self.mt[(j + 1) % 312] & 0x7FFFFFFF)
                xa = x >> 1
                if x & 1:
                    xa ^= 0xB5026F5AA96619E9
                self.mt[j] = self.mt[(j + 156) % 312] ^ xa
            self.i = 0
        y = self.mt[self.i]
        self.i += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y


def shape_prior(name):
    """The bench's prior shapes (bench_optimal_lp.cpp, shape_prior): values and probabilities.

    near_uniform: 214 integer labels from 25 with gaps of 1 or 2 (a gap of 2 when a 64-bit
    mt19937 draw is divisible by 3), weights uniform in [0.5, 1.5) from the same generator
    (seed 1), as std::mt19937_64 / std::uniform_real_distribution produce them.
    lognormal: labels 0..400, weight exp(-(log(y + 1) - 3)^2 / 2) / (y + 1).
    weeks: labels 1..52, weight 30 at 52, 5 at 26, 2 at multiples of 4, else 0.5.
    """
    if name == "near_uniform":
        g = Mt19937_64(1)
        values, weights, x = [], [], 25.0
        for _ in range(214):
            values.append(x)
            x += 1 + (1 if g() % 3 == 0 else 0)
            weights.append(0.5 + 1.0 * (g() / 2.0**64))  # std::uniform_real_distribution(0.5, 1.5)
        w = np.array(weights)
        return np.array(values), w / w.sum()
    if name == "lognormal":
        y = np.arange(401, dtype=float)
        w = np.exp(-((np.log(y + 1) - 3) ** 2) / 2) / (y + 1)
        return y, w / w.sum()
    if name == "weeks":
        y = np.arange(1, 53, dtype=float)
        w = np.array([30.0 if i == 52 else 5.0 if i == 26 else 2.0 if i % 4 == 0 else 0.5 for i in range(1, 53)])
        return y, w / w.sum()
    raise ValueError(name)


def compact_lp(values, probs, eps, outputs, loss="squared"):
    """LP (2) in compact form: variables t_o (o < n), then s[y][o] at n + y * n + o."""
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


def shapes(limit):
    cases = [("near_uniform", e, 2 * 214) for e in (0.05, 0.5, 1, 4, 12)]
    cases += [("lognormal", e, 2 * 401) for e in (0.05, 0.5, 1, 4, 12)]
    cases += [("weeks", 1.0, 52)]
    for name, eps, n in cases:
        values, probs = shape_prior(name)
        outputs = np.linspace(values[0], values[-1], n)
        c, A_ub, b_ub, A_eq, b_eq = compact_lp(values, probs, eps, outputs)
        for method in ("highs-ds", "highs-ipm"):
            t0 = time.perf_counter()
            res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method=method,
                          options={"time_limit": limit})
            t1 = time.perf_counter()
            print(f"{name} eps={eps:g} |O|={n} {method}: {t1 - t0:.3f} s, status {res.status}, optimum {res.fun!r}",
                  flush=True)


def main():
    if sys.argv[1:2] == ["--shapes"]:
        shapes(float(sys.argv[2]) if len(sys.argv) > 2 else 300.0)
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
