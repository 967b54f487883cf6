#!/usr/bin/env python3
"""HiGHS (scipy.optimize.linprog, method="highs") on the explicit LP of a bench_solvers.cpp case.

The case names, priors, grids and LP are those of bench/bench_solvers.cpp, from the same
closed-form formulas (no random generator that differs across languages):

  uniform214   k = 214 labels 25 + floor(321 i / 213), weights 0.5 + x_{i+1} / 2^32 with the LCG
               x_{i+1} = (1664525 x_i + 1013904223) mod 2^32, x_0 = 2023
  uniform214z  the same with weight 0 at every i = 3 mod 7
  lognormal401 labels 0..400, weights exp(-(ln(y+1) - 3)^2 / 2) / (y + 1)
  weeks52      labels 1..52, weights 0.2 + 0.02 y plus bumps at 26, 40, 48, 50, 52

The LP is the compact form of Badanidiyuru et al. (2023), Alg. 1 on the FeasibleOutputSet grid
(Alg. 2): variables lo_i, then s[y][i] at n + y n + i, M[y][i] = lo_i + s[y][i],
0 <= s[y][i] <= (e^eps - 1) lo_i, sum_i M[y][i] = 1, sum_i M[y][i] o_i = y (or within +-B),
minimize sum_y p_y sum_i M[y][i] (o_i - y)^2. Continuous and bias-bounded cases solve it on the
4k-point grid (the continuous optimum has no explicit LP).

Usage (Debian's python3-scipy):  /usr/bin/python3 bench/highs_solvers.py CASE [CASE...]
    e.g. grid/weeks52/n416/eps1, continuous/lognormal401/eps2, biased/weeks52/B20/eps1
Prints one JSON object per case: {"case", "seconds", "cpu_seconds", "status", "objective"};
seconds is the wall time of the linprog call (loading the LP into HiGHS and solving it; building
the matrices in Python is not timed), cpu_seconds the process CPU time of the same call (all
threads; for comparisons on a machine loaded by other work). --list prints the case names.
"""
import json
import math
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

EPS_LIST = [1, 2, 3, 4, 8, 12]
GRIDS = [("uniform214", 51), ("uniform214", 214), ("uniform214z", 51), ("lognormal401", 401),
         ("weeks52", 52), ("weeks52", 416), ("weeks52", 1664)]
BIASED = [("weeks52", 20), ("uniform214z", 5), ("lognormal401", 20)]


def all_cases():
    """The case names in bench_solvers.cpp's order."""
    cases = [f"grid/{p}/n{n}/eps{e}" for p, n in GRIDS for e in EPS_LIST]
    cases += [f"continuous/{p}/eps{e}" for p in ["uniform214", "uniform214z", "lognormal401", "weeks52"]
              for e in EPS_LIST]
    cases += [f"biased/{p}/B{b}/eps{e}" for p, b in BIASED for e in EPS_LIST]
    return cases


def uniform_prior(k, zeros):
    values, weights, x = [], [], 2023
    for i in range(k):
        x = (1664525 * x + 1013904223) % 4294967296
        values.append(25.0 + float((i * 321) // (k - 1)))
        weights.append(0.0 if zeros and i % 7 == 3 else 0.5 + x / 4294967296.0)
    return np.array(values), np.array(weights)


def lognormal_prior(k):
    values = np.arange(k, dtype=float)
    weights = np.array([math.exp(-(math.log(y + 1.0) - 3.0) ** 2 / 2) / (y + 1.0) for y in range(k)])
    return values, weights


def weeks_prior():
    values, weights = [], []
    for y in range(1, 53):
        p = 0.2 + 0.02 * y
        p += {52: 30.0, 50: 2.0, 48: 1.5, 40: 3.0, 26: 2.0}.get(y, 0.0)
        values.append(float(y))
        weights.append(p)
    return np.array(values), np.array(weights)


def prior_named(name):
    if name == "uniform214":
        v, w = uniform_prior(214, False)
    elif name == "uniform214z":
        v, w = uniform_prior(214, True)
    elif name == "lognormal401":
        v, w = lognormal_prior(401)
    else:
        v, w = weeks_prior()
    return v, w / w.sum()


def parse_case(case):
    """(kind, prior, grid size or 0, B, eps) of a case name."""
    parts = case.split("/")
    kind, prior, eps = parts[0], parts[1], float(parts[-1][3:])
    grid = int(parts[2][1:]) if kind == "grid" else 0
    bias = float(parts[2][1:]) if kind == "biased" else 0.0
    return kind, prior, grid, bias, eps


def feasible_output_set(values, eps, n):
    """Alg. 2 as labeldp::feasible_output_set: n evenly spaced points from Phi(min) to Phi(max)."""
    k, w, total = len(values), math.expm1(eps), float(values.sum())
    lo = values[0] + (k * values[0] - total) / w
    hi = values[-1] + (k * values[-1] - total) / w
    grid = np.array([lo + (hi - lo) * i / (n - 1) for i in range(n)])
    grid[-1] = hi
    return grid


def compact_lp(values, probs, eps, outputs, bias):
    """c, A_ub, b_ub, A_eq, b_eq of the compact LP (variables lo_i, then s[y][i] at n + y n + i)."""
    k, n = len(values), len(outputs)
    cost = probs[:, None] * (outputs[None, :] - values[:, None]) ** 2  # k x n
    c = np.concatenate([cost.sum(axis=0), cost.ravel()])
    yy, ii = np.meshgrid(np.arange(k), np.arange(n), indexing="ij")
    yy, ii = yy.ravel(), ii.ravel()
    s_col = n + yy * n + ii
    o = outputs[ii]
    ones = np.ones(k * n)
    # Row sums (rows 0..k-1) and means (rows k..2k-1), each M[y][i] = lo_i + s[y][i].
    mean_rows = sp.csr_matrix((np.concatenate([o, o]), (np.concatenate([k + yy, k + yy]), np.concatenate([ii, s_col]))),
                              shape=(2 * k, n + k * n))
    sum_rows = sp.csr_matrix((np.concatenate([ones, ones]), (np.concatenate([yy, yy]), np.concatenate([ii, s_col]))),
                             shape=(2 * k, n + k * n))
    privacy = sp.csr_matrix((np.concatenate([ones, np.full(k * n, -math.expm1(eps))]),
                             (np.concatenate([np.arange(k * n), np.arange(k * n)]), np.concatenate([s_col, ii]))),
                            shape=(k * n, n + k * n))
    if bias > 0:
        A_eq, b_eq = sum_rows[:k], np.ones(k)
        means = mean_rows[k:]
        A_ub = sp.vstack([means, -means, privacy]).tocsr()
        b_ub = np.concatenate([values + bias, -(values - bias), np.zeros(k * n)])
    else:
        A_eq = (sum_rows + mean_rows).tocsr()
        b_eq = np.concatenate([np.ones(k), values])
        A_ub, b_ub = privacy, np.zeros(k * n)
    return c, A_ub, b_ub, A_eq, b_eq


def solve_case(case):
    kind, prior, grid, bias, eps = parse_case(case)
    values, probs = prior_named(prior)
    n = grid if kind == "grid" else 4 * len(values)
    outputs = feasible_output_set(values, eps, n)
    c, A_ub, b_ub, A_eq, b_eq = compact_lp(values, probs, eps, outputs, bias)
    t0, c0 = time.perf_counter(), time.process_time()
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    t1, c1 = time.perf_counter(), time.process_time()
    return {"case": case, "seconds": t1 - t0, "cpu_seconds": c1 - c0,
            "status": "optimal" if res.status == 0 else f"status {res.status}",
            "objective": float(res.fun) if res.fun is not None else None}


def main():
    if "--list" in sys.argv[1:]:
        print("\n".join(all_cases()))
        return
    for case in sys.argv[1:]:
        print(json.dumps(solve_case(case)), flush=True)


if __name__ == "__main__":
    main()
