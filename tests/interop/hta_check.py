#!/usr/bin/env python3
"""Loads `fp8scope export --perfetto` files with the real Holistic Trace Analysis (HTA) and compares its figures with
`fp8scope report --format json` on the same traces (docs/export.md, "Checked with the real tools").

  hta_check.py --fp8scope BIN [--hta-dir DIR] [--work DIR] TRACE.sqlite ... | --rank-set RANK0.sqlite,RANK1.sqlite

For each trace (or each set of rank traces of one job, exported into one folder as HTA wants them):
  1. `fp8scope report TRACE --format json` gives the analysed steps; `fp8scope export TRACE --perfetto
     DIR/rankR.json --steps FIRST:LAST` writes those steps only (without --steps HTA would also see the warm-up).
  2. `TraceAnalysis(trace_dir=DIR)` loads the folder. HTA rounds times to whole microseconds unless
     HTA_DISABLE_NS_ROUNDING=1, which this script sets: the export carries nanoseconds and the comparison is to the
     nanosecond (what rounding changes is shown separately with --rounded).
  3. Checked, per rank:
     - ranks: HTA found every rank the traces carry (distributedInfo);
     - iterations: HTA's get_profiler_steps() are the report's analysed steps less the last (HTA leaves out the last
       ProfilerStep, include_last_profiler_step=False);
     - GPU busy time: HTA's temporal breakdown (kernel_time - idle_time, the union of its GPU events) has two parts:
       what lies inside those steps' ProfilerStep slices and what lies outside them (work launched in a step that
       runs past its end or before the first step's start; HTA counts it, the report, which analyses steps, does
       not). The inside part, computed from the same rows with HTA's own merge_kernel_intervals(), must equal the
       sum of the report's busy_ns over those steps within 1 ns: the export writes nanoseconds exactly as
       microseconds with three decimals, and float64 sums of these traces' 10^5 intervals err by < 0.01 ns.
  Shown, not checked: HTA's idle time breakdown (per stream, summed over streams: with copies on a second stream a
  stream idles while the device works, so it exceeds the report's device idle time by definition) next to the
  report's causes in docs/export.md's mapping, and HTA's kernel type breakdown (get_gpu_kernel_breakdown).

Exit codes: 0 every check passed, 1 a check failed or a step failed, 2 usage error, 77 HTA or pandas could not be
imported (CTest shows the test as skipped, never as passed). HTA is looked for in --hta-dir, else $FP8SCOPE_HTA_DIR,
else htapack/ at the repository root (its `hta` package: not part of this repository, see docs/export.md).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXIT_SKIP = 77
REPO = Path(__file__).resolve().parents[2]
BUSY_TOLERANCE_NS = 1.0


def import_hta(hta_dir):
    """Imports HTA from hta_dir; returns (TraceAnalysis, merge_kernel_intervals) or a reason it cannot."""
    candidates = [hta_dir] if hta_dir else [os.environ.get("FP8SCOPE_HTA_DIR"), str(REPO / "htapack")]
    for directory in filter(None, candidates):
        if (Path(directory) / "hta" / "trace_analysis.py").is_file():
            sys.path.insert(0, directory)
            break
    else:
        return None, f"no HTA package (hta/trace_analysis.py) in {', '.join(filter(None, candidates))}"
    try:
        from hta.trace_analysis import TraceAnalysis
        from hta.utils.utils import merge_kernel_intervals
    except ImportError as e:  # pandas, numpy, plotly, ... missing in this interpreter
        return None, f"HTA in {directory} cannot be imported by {sys.executable}: {e}"
    return (TraceAnalysis, merge_kernel_intervals), None


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def report_and_export(fp8scope, trace, directory, rank):
    """The report of a trace and its export into directory/rank<R>.json for the report's analysed steps."""
    report = json.loads(run([fp8scope, "report", trace, "--format", "json"]))
    steps = [s["index"] for s in report["steps"]["steps"]]
    if len(steps) < 2:
        raise RuntimeError(f"{trace}: {len(steps)} analysed steps; HTA needs two ProfilerSteps to analyse one")
    run([fp8scope, "export", trace, "--perfetto", str(directory / f"rank{rank}.json"), "--steps",
         f"{steps[0]}:{steps[-1]}"])
    return report, steps


def clipped_busy_us(merged, windows):
    """The part of merged, disjoint intervals (ts, end columns, us) inside the disjoint windows [(start, end)]."""
    total = 0.0
    for start, end in windows:
        inside = merged[(merged.end > start) & (merged.ts < end)]
        total += (inside.end.clip(upper=end) - inside.ts.clip(lower=start)).sum()
    return total


def hta_rank_figures(analysis, merge_kernel_intervals, rank):
    """What HTA computed for one rank, and the split of its GPU busy time by the ProfilerStep windows."""
    t = analysis.t
    df = t.get_trace(rank)
    names = t.symbol_table.get_sym_table()
    steps = df[df["name"].map(lambda i: names[i].startswith("ProfilerStep#")) & df["stream"].eq(-1)]
    windows = sorted(zip(steps.ts, steps.ts + steps.dur))
    # The rows get_temporal_breakdown() takes as GPU work: every event with a stream.
    gpu = df[df["stream"].ne(-1)][["ts", "dur"]].copy()
    merged = merge_kernel_intervals(gpu)
    busy_us = (merged.end - merged.ts).sum()
    inside_us = clipped_busy_us(merged, windows)
    temporal = analysis.get_temporal_breakdown(visualize=False)
    temporal = temporal[temporal["rank"] == rank].iloc[0]
    idle, _ = analysis.get_idle_time_breakdown(ranks=[rank], visualize=False)
    idle_by_category = idle.groupby("idle_category").idle_time.sum().to_dict()
    return {
        "iterations": analysis.get_profiler_steps(),
        "temporal_busy_us": float(temporal["kernel_time(us)"] - temporal["idle_time(us)"]),
        "temporal_idle_us": float(temporal["idle_time(us)"]),
        "compute_us": float(temporal["compute_time(us)"]),
        "non_compute_us": float(temporal["non_compute_time(us)"]),
        "merged_busy_us": float(busy_us),
        "inside_steps_busy_us": float(inside_us),
        "streams": sorted(int(s) for s in idle.stream.unique()),
        "idle_by_category_us": {k: float(v) for k, v in idle_by_category.items()},
    }


def report_figures(report, steps):
    per_step = [p["totals"] for p in report["per_device_step"] if p["step"] in steps]
    causes = {}
    for totals in per_step:
        for cause, ns in totals["idle_by_cause_ns"].items():
            causes[cause] = causes.get(cause, 0) + ns
    return {
        "busy_ns": sum(t["busy_ns"] for t in per_step),
        "idle_ns": sum(t["idle_ns"] for t in per_step),
        "devices": sorted({p["device"] for p in report["per_device_step"]}),
        "causes_ns": causes,
    }


def check_job(name, traces, args, hta, work):
    """Exports, loads and compares one job (one trace, or the rank traces of one job); returns its rows."""
    TraceAnalysis, merge_kernel_intervals = hta
    directory = work / name.split(" ")[0]
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    reports = {}
    for position, trace in enumerate(traces):
        info = json.loads(run([args.fp8scope, "info", trace, "--format", "json"]))
        rank = info.get("process", {}).get("rank")
        rank = position if rank is None else rank
        reports[rank] = report_and_export(args.fp8scope, trace, directory, rank)
    started = time.monotonic()
    analysis = TraceAnalysis(trace_dir=str(directory))
    load_s = time.monotonic() - started
    rows = []
    found_ranks = sorted(analysis.t.get_ranks())
    for rank, (report, steps) in sorted(reports.items()):
        row = {"job": name, "rank": rank, "load_s": load_s, "problems": []}
        if found_ranks != sorted(reports):
            row["problems"].append(f"HTA found ranks {found_ranks}, the traces carry {sorted(reports)}")
            rows.append(row)
            continue
        hta_fig = hta_rank_figures(analysis, merge_kernel_intervals, rank)
        analysed = steps[:-1]
        ours = report_figures(report, analysed)
        row.update(hta=hta_fig, report=ours, steps=analysed)
        if len(ours["devices"]) != 1:
            row["problems"].append(f"{len(ours['devices'])} devices: HTA's rank figures are one GPU's")
        if hta_fig["iterations"] != analysed:
            row["problems"].append(f"HTA's iterations {hta_fig['iterations']} are not the steps {analysed}")
        if abs(hta_fig["merged_busy_us"] - hta_fig["temporal_busy_us"]) * 1e3 > BUSY_TOLERANCE_NS:
            row["problems"].append("the GPU rows do not give HTA's temporal breakdown")
        diff_ns = hta_fig["inside_steps_busy_us"] * 1e3 - ours["busy_ns"]
        row["busy_diff_ns"] = diff_ns
        if abs(diff_ns) > BUSY_TOLERANCE_NS and not args.rounded:  # rounded: shown only
            row["problems"].append(f"GPU busy time inside the steps differs by {diff_ns:.3f} ns")
        rows.append(row)
    kernel_types, _ = analysis.get_gpu_kernel_breakdown(visualize=False)
    for row in rows:
        row["kernel_types_us"] = {t: float(us) for t, us in zip(kernel_types.kernel_type, kernel_types["sum"])}
    return rows


def print_table(rows):
    print(f"{'job':28} {'rank':>4} {'load':>6} {'iters':>5}  {'HTA busy':>13} {'outside':>11} {'inside':>13}"
          f" {'report busy':>13} {'diff':>7}  {'HTA idle':>12} {'report idle':>12}  result")
    for r in rows:
        if "hta" not in r:
            print(f"{r['job']:28} {r['rank']:>4}  FAIL: {'; '.join(r['problems'])}")
            continue
        h, o = r["hta"], r["report"]
        print(f"{r['job']:28} {r['rank']:>4} {r['load_s']:5.1f}s {len(h['iterations']):>5}"
              f"  {h['temporal_busy_us']:10.3f} us {h['merged_busy_us'] - h['inside_steps_busy_us']:8.3f} us"
              f" {h['inside_steps_busy_us']:10.3f} us {o['busy_ns'] / 1e3:10.3f} us {r['busy_diff_ns']:4.1f} ns"
              f"  {h['temporal_idle_us']:9.1f} us {o['idle_ns'] / 1e3:9.1f} us"
              f"  {'ok' if not r['problems'] else 'FAIL: ' + '; '.join(r['problems'])}")
    print("\nHTA's idle time breakdown (per stream, summed over streams) and kernel type breakdown (all ranks of the"
          " job), shown, not checked, us:")
    for r in rows:
        if "hta" not in r:
            continue
        h, c = r["hta"]["idle_by_category_us"], r["report"]["causes_ns"]
        print(f"  {r['job']:28} rank {r['rank']}: HTA {len(r['hta']['streams'])} streams: host_wait"
              f" {h.get('host_wait', 0):.1f} kernel_wait {h.get('kernel_wait', 0):.1f} other {h.get('other', 0):.1f}"
              f" | report sync+launch+host {(c['sync'] + c['launch'] + c['host']) / 1e3:.1f}"
              f" dependency {c['dependency'] / 1e3:.1f} comm {c['comm'] / 1e3:.1f}"
              f" | HTA kernel types {', '.join(f'{t} {us:.0f}' for t, us in r.get('kernel_types_us', {}).items())}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fp8scope", required=True, help="the fp8scope binary")
    p.add_argument("--hta-dir", help="folder holding HTA's `hta` package")
    p.add_argument("--work", help="folder for the exports (default: a temporary one, removed)")
    p.add_argument("--rank-set", action="append", default=[], help="comma-separated rank traces of one job")
    p.add_argument("--rounded", action="store_true", help="leave HTA's rounding to whole us on (figures only)")
    p.add_argument("traces", nargs="*")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    jobs = [(Path(t).stem, [t]) for t in args.traces]
    for rank_set in args.rank_set:
        traces = rank_set.split(",")
        prefix = re.sub(r"[-_]?rank$", "", os.path.commonprefix([Path(t).stem for t in traces]))
        jobs.append((f"{prefix} ({len(traces)} ranks)",
                     traces))
    if not jobs:
        p.print_usage(sys.stderr)
        print("hta_check: give at least one trace", file=sys.stderr)
        return 2
    for _, traces in jobs:
        for trace in traces:
            if not Path(trace).is_file():
                # Traces are stored as <name>.sqlite.pack or .xz, unpacked by CMake (samples/traces/README.md).
                hint = f" (configure with cmake first, or python3 scripts/trace_pack.py unpack {trace}.pack)" \
                    if Path(trace + ".pack").is_file() or Path(trace + ".xz").is_file() else ""
                print(f"hta_check: no such trace: {trace}{hint}", file=sys.stderr)
                return 2
    if not args.rounded:
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    hta, why = import_hta(args.hta_dir)
    if hta is None:
        print(f"hta_check: skipped: {why}", file=sys.stderr)
        return EXIT_SKIP
    import logging
    logging.getLogger("hta").setLevel(logging.ERROR)  # HTA logs each parse step at INFO/WARNING

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="fp8scope-hta-"))
    rows = []
    try:
        for name, traces in jobs:
            try:
                rows += check_job(name, traces, args, hta, work)
            except Exception as e:  # a failure of one job is a row of the table, not the end of the run
                rows.append({"job": name, "rank": "-", "problems": [f"{type(e).__name__}: {e}"]})
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print_table(rows)
    failed = [r for r in rows if r["problems"]]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} rank traces agree with the report"
          + (" (--rounded: busy time shown, not checked)" if args.rounded else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
