#!/usr/bin/env python3
"""Runs every bench_solvers case, one solver at a time under a timeout, and prints ONE table:

    case | labeldp s | CLP s | HiGHS s | GLPK s | min(CLP, HiGHS) / labeldp | objective check

then the WORST ratio over all cases (not the best). Each solver runs as its own process
(bench_solvers --benchmark_filter='^<solver>:<case>/' for labeldp, CLP and GLPK;
bench/highs_solvers.py for HiGHS), so a stalled solve costs its timeout and nothing more.

Times: ">T" = killed at the timeout T; "FAIL" = finished without an optimum (status shown below
the table). A ratio computed with a timed-out solver is a bound, marked "<" or ">". Objectives:
grid cases compare every finished solver's optimum (max relative difference |a - b| / max(|a|, |b|),
FLAG above 1e-7, naming the solvers more than 1e-7 from the median);
continuous and bias-bounded cases compare CLP / HiGHS / GLPK with each other on the 4k-point
grid, and labeldp's continuous optimum must not exceed theirs (FLAG if it does by more than 1e-7
relative; the column shows (grid - continuous) / continuous, the gain from leaving the grid).

--cpu reports CPU time instead of real time for every solver (Google Benchmark's cpu_time for
labeldp, CLP and GLPK; process CPU time of the linprog call for HiGHS): on a machine loaded by
other work, real times of single runs vary 3x between identical runs while CPU times vary far
less. All four solvers are single-threaded (HiGHS's process CPU time counts any helper threads).

GLPK runs only where the explicit LP has at most --glpk-max-size k*n entries of M (it takes
minutes on larger ones).

Usage (from the repository, after building bench_solvers; Debian's python3-scipy):
    /usr/bin/python3 bench/run_solver_table.py --bench build/bin/bench_solvers \
        [--timeout 60] [--timeout-external 60] [--timeout-glpk 30] [--glpk-max-size 12000] [--filter REGEX] [--cpu]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import highs_solvers  # noqa: E402

SIZES = {"uniform214": 214, "uniform214z": 214, "lognormal401": 401, "weeks52": 52}


def run_bench(bench, solver, case, timeout, cpu=False):
    """(seconds or None, status, objective or None, wall) of one Google Benchmark case (seconds:
    its real time, or its CPU time with cpu)."""
    cmd = [bench, f"--benchmark_filter=^{solver}:{re.escape(case)}/", "--benchmark_format=json"]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return None, "timeout", None, timeout
    wall = time.perf_counter() - t0
    try:
        runs = json.loads(out)["benchmarks"]
    except (ValueError, KeyError):
        return None, "crashed", None, wall
    if not runs:
        return None, "no such case", None, wall
    b = runs[0]
    m = re.search(r"status=(\S+) objective=(\S+)", b.get("label", ""))
    status = m.group(1) if m else "?"
    objective = float(m.group(2)) if m else None
    if b.get("error_occurred"):
        return None, status, None, wall
    return b["cpu_time" if cpu else "real_time"] / 1e3, status, objective, wall  # ms -> s


def run_highs(case, timeout, cpu=False):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "highs_solvers.py")
    try:
        out = subprocess.run([sys.executable, script, case], capture_output=True, text=True, timeout=timeout).stdout
        r = json.loads(out.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return None, "timeout", None, timeout
    except (ValueError, IndexError):
        return None, "crashed", None, timeout
    if r["status"] != "optimal":
        return None, r["status"], None, r["seconds"]
    return r["cpu_seconds" if cpu else "seconds"], "optimal", r["objective"], r["seconds"]


def fmt_time(t, status, limit):
    if t is not None:
        return f"{t:.3g}"
    return f">{limit:g}" if status == "timeout" else ("-" if status == "skipped" else "FAIL")


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def outliers(named):
    """Names of the objectives more than 1e-7 (relative) from the median of all of them."""
    vals = sorted(v for _, v in named)
    med = vals[len(vals) // 2]
    return [name for name, v in named if rel(v, med) > 1e-7]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/bin/bench_solvers")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per labeldp case")
    ap.add_argument("--timeout-external", type=float, default=60, help="seconds per CLP / HiGHS case")
    ap.add_argument("--timeout-glpk", type=float, default=30, help="seconds per GLPK case")
    ap.add_argument("--glpk-max-size", type=int, default=12000, help="largest k*n GLPK is run on")
    ap.add_argument("--filter", default="", help="regular expression on the case names")
    ap.add_argument("--cpu", action="store_true", help="CPU time instead of real time (loaded machine)")
    args = ap.parse_args()

    cases = [c for c in highs_solvers.all_cases() if re.search(args.filter, c)]
    head = f"{'case':34} {'labeldp':>8} {'CLP':>8} {'HiGHS':>8} {'GLPK':>8} {'ratio':>9}  objective check"
    print(head)
    print("-" * len(head), flush=True)
    worst, worst_case, failures, flags = None, None, [], []
    for case in cases:
        kind, prior, grid, _, _ = highs_solvers.parse_case(case)
        k = SIZES[prior]
        n = grid if kind == "grid" else 4 * k
        lab = run_bench(args.bench, "labeldp", case, args.timeout, args.cpu)
        clp = run_bench(args.bench, "clp", case, args.timeout_external, args.cpu)
        hig = run_highs(case, args.timeout_external, args.cpu)
        glp = (run_bench(args.bench, "glpk", case, args.timeout_glpk, args.cpu) if k * n <= args.glpk_max_size
               else (None, "skipped", None, 0))
        for solver, r in (("labeldp", lab), ("CLP", clp), ("HiGHS", hig), ("GLPK", glp)):
            if r[0] is None and r[1] not in ("timeout", "skipped"):
                failures.append(f"{case}: {solver} {r[1]} after {r[3]:.3g} s")
        # Ratio min(CLP, HiGHS) / labeldp, or a bound on it when a solver timed out.
        ext = [r[0] for r in (clp, hig) if r[0] is not None]
        ext_lo = min(ext) if ext else None
        if lab[0] is not None and ext_lo is not None:
            ratio, mark = ext_lo / lab[0], ""
        elif lab[0] is None and lab[1] != "timeout":
            ratio, mark = 0.0, "FAIL "  # labeldp finished without an optimum: the worst case
        elif lab[0] is None and ext_lo is not None:
            ratio, mark = ext_lo / args.timeout, "<"  # labeldp took longer than its timeout (or failed)
        elif lab[0] is not None:
            ratio, mark = args.timeout_external / lab[0], ">"
        else:
            ratio, mark = None, ""
        ratio_s = "FAIL" if mark == "FAIL " else (f"{mark}{ratio:.3g}" if ratio is not None else "?")
        if ratio is not None and (worst is None or ratio < worst[0]):
            worst, worst_case = (ratio, mark), case
        # Objectives.
        ext_named = [(name, r[2]) for name, r in (("CLP", clp), ("HiGHS", hig), ("GLPK", glp)) if r[2] is not None]
        ext_obj = [v for _, v in ext_named]
        check = ""
        if kind == "grid":
            named = ext_named + ([("labeldp", lab[2])] if lab[2] is not None else [])
            objs = [v for _, v in named]
            if len(objs) >= 2:
                d = max(rel(a, b) for a in objs for b in objs)
                check = f"max rel diff {d:.1e}" + (f"  FLAG (off: {', '.join(outliers(named))})" if d > 1e-7 else "")
                if d > 1e-7:
                    flags.append(case)
        else:
            parts = []
            if len(ext_obj) >= 2:
                d = max(rel(a, b) for a in ext_obj for b in ext_obj)
                parts.append(f"grid solvers agree to {d:.1e}" +
                             (f"  FLAG (off: {', '.join(outliers(ext_named))})" if d > 1e-7 else ""))
                if d > 1e-7:
                    flags.append(case)
            if ext_obj and lab[2] is not None:
                g = min(ext_obj)
                gain = (g - lab[2]) / abs(lab[2])
                parts.append(f"(4k grid - cont.)/cont. {gain:.1e}" + ("  FLAG" if gain < -1e-7 else ""))
                if gain < -1e-7:
                    flags.append(case)
            check = "; ".join(parts)
        print(f"{case:34} {fmt_time(lab[0], lab[1], args.timeout):>8} {fmt_time(clp[0], clp[1], args.timeout_external):>8} "
              f"{fmt_time(hig[0], hig[1], args.timeout_external):>8} {fmt_time(glp[0], glp[1], args.timeout_glpk):>8} "
              f"{ratio_s:>9}  {check}", flush=True)
    print()
    if worst is not None:
        print(f"WORST ratio min(CLP, HiGHS) / labeldp: {worst[1]}{worst[0]:.3g} ({worst_case})")
    print(f"objective flags: {len(flags)}" + (f" ({', '.join(flags)})" if flags else ""))
    for f in failures:
        print("failed:", f)


if __name__ == "__main__":
    main()
