#!/usr/bin/env python3
"""Verifies the collector on a GPU machine in one go (issue 3) and measures its overhead.

  run_all.py --build BUILD_DIR --out OUT_DIR --scratch DIR [--budget-s S] [STAGE ...]

Stages, in this order (default: all): samples torch lifecycle signals bench stats realstats realjobs compare capture
ranks faults zoo1 zoo2 zoo-ddp2 zoo-recipes recipes zoo-markerless zoo-slowdrift zoo-compiled zoo-fusion bitwise calibrate. Every step has a
timeout, and one failing step never stops the others; steps that no longer fit in the time budget are reported as SKIP. Results
go to OUT/summary.json after every check, kept traces to OUT/trace-* and SCRATCH/extra, logs of every command to
SCRATCH/logs (pack_results.py packs SCRATCH into OUT); a table ends stdout.

Exit codes: 0 every judged check passed, 1 a check failed, 2 usage error.
"""

import argparse
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_runs  # noqa: E402
import check_bitwise  # noqa: E402
import check_calibrate  # noqa: E402
import check_capture  # noqa: E402
import check_compare  # noqa: E402
import check_ranks  # noqa: E402
import check_realjobs  # noqa: E402
import check_realstats  # noqa: E402
import check_samples  # noqa: E402
import check_stats  # noqa: E402
import check_torch  # noqa: E402
import check_zoo  # noqa: E402  (puts tests/gpu/zoo on the path)
import check_recipes  # noqa: E402  (tests/gpu/zoo/check_recipes.py)
import gpu_common as g  # noqa: E402
from lifecycle import check_faults, check_lifecycle, check_signals  # noqa: E402  (tests/gpu/lifecycle/)

STAGES = ("samples", "torch", "lifecycle", "signals", "bench", "stats", "realstats", "realjobs", "compare",
          "capture", "ranks", "faults", "zoo1", "zoo2", "zoo-ddp2", "zoo-recipes", "recipes",
          "zoo-markerless", "zoo-slowdrift", "zoo-compiled", "zoo-fusion", "bitwise", "calibrate")
# Stages that need only `fp8scope` and libfp8scope.so from the build (and PyTorch): the preflight asks for no more.
# zoo1 also runs the CUDA sample fp8scope_sample_zoo_sync_loop, which check_zoo.py looks for itself.
LIGHT_STAGES = {"realstats", "realjobs", "compare", "capture", "ranks", "faults", "zoo1", "zoo2", "zoo-ddp2", "zoo-recipes",
                "recipes", "zoo-markerless", "zoo-slowdrift", "zoo-compiled", "zoo-fusion", "bitwise", "calibrate"}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", required=True, help="build folder (holds bin/fp8scope, lib/libfp8scope.so, samples/)")
    p.add_argument("--out", default=os.environ.get("OUT"), help="output folder (default: $OUT)")
    p.add_argument("--scratch", required=True, help="folder for logs, details and the runs' own files")
    p.add_argument("--budget-s", type=float, default=float(os.environ.get("FP8SCOPE_GPU_BUDGET_S", 510)),
                   help="wall-time budget of the whole run (default 510, or $FP8SCOPE_GPU_BUDGET_S)")
    p.add_argument("--python", default=os.environ.get("FP8SCOPE_GPU_PYTHON", sys.executable),
                   help="Python with torch for the workloads (default: this interpreter)")
    p.add_argument("stages", nargs="*", metavar="STAGE", help=f"any of: {' '.join(STAGES)} (default: all)")
    args = p.parse_args(argv)
    unknown = [s for s in args.stages if s not in STAGES]
    if unknown:
        p.error(f"unknown stage {unknown[0]!r}; stages: {' '.join(STAGES)}")
    if not args.out:
        p.error("--out is required when $OUT is not set")
    if not Path(args.build).is_dir():
        p.error(f"build folder '{args.build}' does not exist")
    return args


def preflight(ctx, report, stages=STAGES):
    """What the machine and the build are; whether `fp8scope record` works (else env injection is used)."""
    info = g.run(ctx, "nvidia-smi", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                     "--format=csv,noheader"], timeout_s=30) if _which("nvidia-smi") else None
    report.add("machine", "INFO", (info.stdout.strip() if info and info.rc == 0 else "nvidia-smi unavailable")[:120],
               f"python {sys.version.split()[0]} ({ctx.python}), {os.cpu_count()} cores")
    needed = [ctx.fp8scope, ctx.collector]
    if not set(stages) <= LIGHT_STAGES:
        needed += [ctx.build / "bench" / "libfp8scope_launch_loop.so", ctx.build / "bench" / "fp8scope_launch_overhead",
                   ctx.train_py] + [ctx.sample(s) for s in g.SAMPLES]
    missing = [str(p) for p in needed if not Path(p).exists()]
    report.judge("build complete", not missing, f"{len(needed) - len(missing)}/{len(needed)} files", missing)
    for path in (ctx.collector, ctx.sample("syncs")):
        if Path(path).exists() and _which("ldd"):
            g.run(ctx, f"ldd-{Path(path).name}", ["ldd", path], timeout_s=20)
    probe = "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available())"
    torch = g.run(ctx, "torch-version", [ctx.python, "-c", probe], timeout_s=90)
    words = torch.stdout.split()
    ctx.torch = " ".join(words[:4]) if torch.rc == 0 and words[-1:] == ["True"] else None
    report.add("torch", "INFO", ctx.torch or "unavailable: torch steps are skipped",
               torch.stdout.strip()[:200] if torch.rc == 0 else torch.stderr.strip()[-200:])
    version = g.run(ctx, "fp8scope-version", [ctx.fp8scope, "--version"], timeout_s=20)
    # record must run a command and pass its exit code through; else the steps trace by environment injection.
    smoke_dir = ctx.fresh_dir("record-smoke")
    smoke = g.run(ctx, "fp8scope-record-smoke", [ctx.fp8scope, "record", "-o", smoke_dir / "t-%p.sqlite", "--",
                                                 ctx.python, "-c", "raise SystemExit(5)"], timeout_s=30)
    ctx.use_record = smoke.rc == 5
    report.add("tracing through", "INFO", "fp8scope record" if ctx.use_record else "environment injection",
               f"{version.stdout.strip()}; record smoke test rc {smoke.rc} (5 expected) {smoke.stderr.strip()[:200]}")
    # Where CUPTI is, should the collector not find it (docs/collector.md: FP8SCOPE_CUPTI_PATH).
    roots = ["/usr/local/cuda*/extras/CUPTI/lib64", "/usr/local/cuda*/lib64", "/usr/lib/x86_64-linux-gnu"]
    roots += [f"{p}/nvidia/*/lib" for p in sys.path if p.endswith("-packages")]
    found = sorted({str(p) for root in roots for p in Path("/").glob(root.lstrip("/") + "/libcupti.so*")})
    report.add("libcupti", "INFO", f"{len(found)} found; FP8SCOPE_CUPTI_PATH={os.environ.get('FP8SCOPE_CUPTI_PATH')}",
               " ".join(found)[:500])


def _which(name):
    return any(os.access(os.path.join(d, name), os.X_OK) for d in os.environ.get("PATH", "").split(os.pathsep))


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    stages = args.stages or list(STAGES)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, g.kill_live_groups)
    ctx = g.Ctx(args.build, args.out, args.scratch, args.budget_s, python=args.python)
    report = g.Report(ctx)
    report.extra.update(build=str(ctx.build), stages=stages)
    g.guarded(report, "preflight", 0, preflight, ctx, report, stages)
    state = {}
    if "samples" in stages:
        check_samples.run_all(ctx, report)
    if "torch" in stages:
        check_torch.run_all(ctx, report, state)
    if "lifecycle" in stages:
        check_lifecycle.run_all(ctx, report, state)
    if "signals" in stages:
        check_signals.run_all(ctx, report)
    if "bench" in stages:
        bench_runs.run_all(ctx, report, state)
    if "stats" in stages:
        check_stats.run_all(ctx, report, state)
    if "realstats" in stages:
        check_realstats.run_all(ctx, report, state)
    if "realjobs" in stages:
        check_realjobs.run_all(ctx, report, state)
    if "compare" in stages:
        check_compare.run_all(ctx, report, state)
    if "capture" in stages:
        check_capture.run_all(ctx, report, state)
    if "ranks" in stages:
        check_ranks.run_all(ctx, report, state)
    if "faults" in stages:
        check_faults.run_all(ctx, report)
    for zoo_stage in ("zoo1", "zoo2", "zoo-ddp2", "zoo-recipes"):
        if zoo_stage in stages:
            check_zoo.run_all(ctx, report, state, zoo_stage)
    if "recipes" in stages:
        check_recipes.run_recipes(ctx, report, state)
        run_recipe_tools(ctx, report)
    if "zoo-markerless" in stages:
        check_zoo.run_all(ctx, report, state, "zoo-markerless")
    for zoo_stage in ("zoo-slowdrift", "zoo-compiled", "zoo-fusion"):
        if zoo_stage in stages:
            check_zoo.run_all(ctx, report, state, zoo_stage)
    if "bitwise" in stages:
        check_bitwise.run_all(ctx, report, state)
    if "calibrate" in stages:
        check_calibrate.run_all(ctx, report)
    report.write()
    print("\n" + report.table(), flush=True)
    return 1 if any(r["result"] == "FAIL" for r in report.rows) else 0


def _sampled_ok(r):
    steps = r["block_rows_per_step"]
    return r["losses_equal"] and len(steps) == 4 and steps == r["rowwise_samples_per_step"]


def _grouped_ok(r):
    ab = [s for s in r["samples"] if s[2] in (0, 1)]  # (step, name, role, recipe, count) of A and B
    return (r["outputs_equal"] and len(ab) == 2 * r["truth"]["steps"] and len(r["block_rows"]) == len(ab)
            and all(s[1].startswith("grouped gemm G4 ") and s[3] == 1 for s in ab))


def run_recipe_tools(ctx, report):
    """The recipes stage's two tool checks (tests/gpu/tools, each printing one RESULT line): per-block statistics with
    statistics every 5th step (torchao's rowwise job: each sampled step's rowwise samples have their block rows, and
    the losses equal untraced), and torch._scaled_grouped_mm (every step's grouped GEMM with its rowwise A and B and
    their block rows, outputs equal untraced)."""
    import json
    for name, script, judge in (("recipes: per-block statistics every 5th step", "recipes_sampled.sh", _sampled_ok),
                                ("recipes: torch._scaled_grouped_mm", "grouped_mm_check.sh", _grouped_ok)):
        def check(name=name, script=script, judge=judge):
            torchao = Path(os.environ.get("FP8SCOPE_TORCHAO_DIR", g.REPO / ".torchao"))
            if script == "recipes_sampled.sh" and not torchao.is_dir():
                report.add(name, "SKIP", f"no torchao in {torchao}: run tests/gpu/tools/make_torchao.sh and carry .torchao")
                return
            tool = Path(__file__).resolve().parent / "tools" / script
            r = g.run(ctx, script.split(".")[0], ["bash", str(tool), str(ctx.build)], timeout_s=240)
            line = next((x for x in r.stdout.splitlines() if x.startswith("RESULT ")), None)
            result = json.loads(line[len("RESULT "):]) if line else None
            report.judge(name, r.rc == 0 and result is not None and judge(result), r.brief(), (line or r.stderr)[-700:])

        g.guarded(report, name, 90, check, torch=True)


if __name__ == "__main__":
    sys.exit(main())
