"""`fp8scope calibrate` on the GPU (docs/cli.md "calibrate"): the standard sweep twice, the second run's FP8/BF16
speed-ups against the first (the what-if reads speed-ups: per row, and as its lookup takes them, the median of the
rows within a factor of 2 of a BF16 time), and a calibration on a BF16 trace's own GEMM shapes.

The goal (issue 30): the second run within 10%. Judged on the lookup at every BF16 time from 2 us to 4 ms, and on
at least 95% of the rows; the rows outside 10% are listed."""

import json
import math
import statistics

import gpu_common as g
from sample_traces import sample_trace

TRACE = "whatif/mlp_large_bf16.sqlite"  # the large MLP: 7 GEMM shapes its statistics name
TRACE_SHAPES = {(512, 8192, 4096), (4096, 512, 8192), (4096, 8192, 512), (4096, 8192, 16384), (4096, 16384, 8192),
                (16384, 4096, 8192), (16384, 8192, 4096)}


def speedup(row, column):
    return row["bf16_ns"] / row[column] if row.get(column) else None


def lookup(rows, bf16_ns, column):
    """The what-if's lookup (analyzer/src/whatif/gemm_speedup.cpp): median speed-up of the rows within a factor 2."""
    near = [speedup(r, column) for r in rows
            if r.get(column) and abs(math.log2(r["bf16_ns"]) - math.log2(bf16_ns)) <= 1]
    return statistics.median(near) if near else None


def sweep_twice(ctx, report):
    tables = []
    for i in (1, 2):
        path = ctx.work / f"calibrate-{i}.json"
        r = g.run(ctx, f"calibrate-sweep-{i}", [ctx.fp8scope, "calibrate", "--sweep", "--no-progress", "-o", path],
                  timeout_s=240)
        ok = r.rc == 0 and path.exists()
        table = json.loads(path.read_text()) if ok else None
        rows = len(table["rows"]) if table else 0
        report.judge(f"calibrate --sweep, run {i}", ok and rows == 252, f"{rows} shapes in {r.wall_s:.0f} s",
                     next((line for line in r.stdout.splitlines() if "measured" in line), "")[:200] if ok
                     else r.stderr.strip()[-300:])
        if not ok:
            return
        tables.append(table)
    first, second = (t["rows"] for t in tables)
    for column in ("fp8_tensorwise_ns", "fp8_rowwise_ns"):
        changes = [abs(speedup(b, column) / speedup(a, column) - 1) for a, b in zip(first, second)
                   if speedup(a, column) and speedup(b, column)]
        outside = [f"{a['m']}x{a['n']}x{a['k']}" for a, b in zip(first, second)
                   if speedup(a, column) and speedup(b, column) and abs(speedup(b, column) / speedup(a, column) - 1) > 0.1]
        worst_lookup = 0.0
        for e in range(11, 22):
            for f in (1.0, 2 ** 0.5):
                x, y = lookup(first, 2 ** e * f, column), lookup(second, 2 ** e * f, column)
                if x and y:
                    worst_lookup = max(worst_lookup, abs(y / x - 1))
        within = 1 - len(outside) / max(1, len(changes))
        report.judge(f"calibrate: second run's {column[4:-3]} speed-ups within 10%",
                     worst_lookup <= 0.10 and within >= 0.95,
                     f"lookup within {100 * worst_lookup:.1f}%; rows: median {100 * statistics.median(changes):.2f}%, "
                     f"{100 * within:.1f}% within 10%", "outside 10%: " + " ".join(outside[:20]))


def on_trace(ctx, report):
    path = ctx.work / "calibrate-trace.json"
    r = g.run(ctx, "calibrate-trace", [ctx.fp8scope, "calibrate", sample_trace(TRACE), "--no-progress", "-o", path],
              timeout_s=120)
    shapes = {(row["m"], row["n"], row["k"]) for row in json.loads(path.read_text())["rows"]} if r.rc == 0 else set()
    report.judge("calibrate TRACE: the trace's GEMM shapes", shapes == TRACE_SHAPES,
                 f"{len(shapes)} shapes, rc {r.rc}", r.stderr.strip()[-300:] if r.rc else "")


def run_all(ctx, report):
    g.guarded(report, "calibrate sweeps", 120, sweep_twice, ctx, report)
    g.guarded(report, "calibrate on a trace", 30, on_trace, ctx, report)
