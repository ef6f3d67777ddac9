"""Tensor statistics on the GPU (docs/benchmarks.md "Tensor statistics in a training job"): the statistics kernel's
bandwidth, and GEMM interception plus the Python package on the FP8 training sample: no added sync, bitwise-equal
losses, step-time overhead with statistics every step and every 10 steps, a planted overflow, and the real traces kept
for samples/traces/.

Configurations of train.py (all deterministic, same seed):
  untraced   no collector (the package is importable and must then do nothing)
  off        traced, FP8SCOPE_GEMM_STATS=0 and no package: no statistics at all
  every10    traced, interception and package, FP8SCOPE_STATS_EVERY=10 (the default)
  every1     traced, interception and package, statistics in every step
"""

import os
import re
import sqlite3
import statistics

import gpu_common as g
import trace_checks as tc

STEPS = 30
TRAIN_TIMEOUT_S = 240
OVERHEAD_ROUNDS = 4
PLANT = "2:20:1000"  # block 2's fc2 input x1000 in step 20, a sampled step with statistics every 10 steps

CONFIGS = {  # name: (traced, package importable, environment, extra train.py arguments)
    "untraced": (False, False, {}, ()),
    "off": (True, False, {"FP8SCOPE_GEMM_STATS": "0"}, ()),
    "every10": (True, True, {"FP8SCOPE_STATS_EVERY": "10"}, ()),
    "every1": (True, True, {"FP8SCOPE_STATS_EVERY": "1"}, ()),
    "every10-no-annotate": (True, True, {"FP8SCOPE_STATS_EVERY": "10"}, ("--no-annotate",)),
}


def train(ctx, name, config, precision="fp8", extra_args=()):
    traced, package, extra_env, config_args = CONFIGS[config]
    directory = ctx.fresh_dir(f"stats-{name}")
    argv = [ctx.python, ctx.train_py, "--precision", precision, "--steps", STEPS, *config_args, *extra_args]
    env_extra = dict(extra_env)
    if package:
        env_extra["PYTHONPATH"] = str(g.REPO / "probes" / "python")
    if traced:
        argv, env = ctx.traced(directory / "trace-%p.sqlite", argv, env_extra)
    else:
        env = dict(os.environ, **env_extra) if package else None
    result = g.run(ctx, f"stats-{name}", [str(a) for a in argv], env=env, timeout_s=TRAIN_TIMEOUT_S, cwd=directory)
    return result, g.traces_in(directory)


def losses(result):
    return next((line for line in result.stdout.splitlines() if line.startswith("FP8SCOPE_LOSSES ")), None)


def median_step_ms(result):
    truth = g.ground_truth(result.stdout) or {}
    return truth.get("median_step_ms")


SYNC_API = re.compile(r"^(cuda|cu)(Stream|Device|Ctx|Event|Thread)Synchronize|^cudaMemcpy(?!.*Async)|^cuMemcpy(?!.*Async)")


def sync_profile(path):
    """The trace's own sync evidence: SYNCHRONIZATION rows per type, and host-blocking API calls by name."""
    db = tc.open_ro(path)
    try:
        by_type = dict(db.execute("SELECT syncType, COUNT(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION GROUP BY 1"))
        strings = dict(db.execute("SELECT id, value FROM StringIds"))
        calls = {}
        for name_id, n in db.execute("SELECT nameId, COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1"):
            name = strings.get(name_id, "")
            if SYNC_API.search(name):
                calls[name] = n
        return {"sync_rows_by_type": by_type, "blocking_calls": calls}
    finally:
        db.close()


def stats_profile(path):
    db = tc.open_ro(path)
    try:
        one = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "samples": one("SELECT COUNT(*) FROM FP8SCOPE_TENSOR_STATS"),
            "sites": one("SELECT COUNT(*) FROM FP8SCOPE_TENSOR_SITE"),
            "gemm_sites": one("SELECT COUNT(*) FROM FP8SCOPE_TENSOR_SITE WHERE source = 0"),
            "probe_sites": one("SELECT COUNT(*) FROM FP8SCOPE_TENSOR_SITE WHERE source != 0"),
            "steps_sampled": one("SELECT COUNT(DISTINCT step) FROM FP8SCOPE_TENSOR_STATS"),
            "loss_scalars": one("SELECT COUNT(*) FROM FP8SCOPE_SCALAR AS s JOIN StringIds AS n ON n.id = s.nameId "
                                "WHERE n.value = 'loss'"),
            "step_markers": one("SELECT COUNT(*) FROM FP8SCOPE_STEP_MARKER"),
            "dropped": one("SELECT COALESCE(SUM(count), 0) FROM FP8SCOPE_DROPPED"),
            "stats_kernels": one("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS n "
                                 "ON n.id = k.demangledName WHERE n.value LIKE '%fp8scope::probes%'"),
        }
    except sqlite3.Error as error:
        return {"error": str(error)}
    finally:
        db.close()


def worst_overflow(path):
    """The sample with the most overflows: (nvtx path, site name, role, step, overflows, numel)."""
    db = tc.open_ro(path)
    try:
        return db.execute(
            "SELECT p.value, n.value, s.role, t.step, t.overflows, t.numel FROM FP8SCOPE_TENSOR_STATS AS t "
            "JOIN FP8SCOPE_TENSOR_SITE AS s ON s.id = t.siteId JOIN StringIds AS n ON n.id = s.nameId "
            "LEFT JOIN StringIds AS p ON p.id = s.nvtxPathId ORDER BY t.overflows DESC, t.step LIMIT 1").fetchone()
    finally:
        db.close()


def check_bandwidth(ctx, report):
    exe = ctx.build / "bench" / "fp8scope_stats_bandwidth"
    if not exe.exists():
        report.add("stats kernel bandwidth", "SKIP", f"{exe.name} not built")
        return
    result = g.run(ctx, "stats-bandwidth", [str(exe)], timeout_s=240)
    (ctx.details / "stats-bandwidth.txt").write_text(result.stdout)
    report.judge("stats kernel bandwidth runs", result.rc == 0, result.brief(), result.stdout.strip()[-600:])
    print(result.stdout, flush=True)
    block = ctx.build / "bench" / "fp8scope_block_stats_bandwidth"  # the per-block kernel (issue 31)
    if block.exists():
        for label, extra in (("", []), (" (no code at max: slow path)", ["--unscaled"])):
            result = g.run(ctx, "block-stats-bandwidth", [str(block), *extra], timeout_s=240)
            (ctx.details / f"block-stats-bandwidth{'-unscaled' if extra else ''}.txt").write_text(result.stdout)
            report.judge(f"per-block statistics bandwidth runs{label}", result.rc == 0, result.brief(),
                         result.stdout.strip()[-700:])
            print(result.stdout, flush=True)


def run_configs(ctx, report):
    """Correctness: losses and sync evidence per configuration; the real traces kept."""
    runs = {}
    for config in ("untraced", "off", "every10", "every1"):
        runs[config] = train(ctx, config, config)
        result, traces = runs[config]
        if result.rc == 77:
            report.add("stats: train fp8", "SKIP", "exit 77 (no device or no FP8)")
            return None
        report.judge(f"stats: train fp8 {config} runs", result.rc == 0 and (traces or config == "untraced"),
                     f"{result.brief()}, {len(traces)} traces", result.stderr.strip()[-400:])
    reference = losses(runs["untraced"][0])
    for config in ("off", "every10", "every1"):
        same = reference is not None and losses(runs[config][0]) == reference
        report.judge(f"stats: losses bitwise equal, {config} vs untraced", same, "equal" if same else "differ",
                     (losses(runs[config][0]) or "no losses")[:160])
    profiles = {c: sync_profile(runs[c][1][0]) for c in ("off", "every10", "every1") if runs[c][1]}
    for config in ("every10", "every1"):
        if "off" in profiles and config in profiles:
            same = profiles[config] == profiles["off"]
            report.judge(f"stats: sync records {config} = off (no added sync)", same,
                         f"{profiles[config]}", f"off: {profiles['off']}")
    for config in ("every10", "every1"):
        if runs[config][1]:
            p = stats_profile(runs[config][1][0])
            ok = p.get("samples", 0) > 0 and p.get("gemm_sites", 0) > 0 and p.get("loss_scalars") == STEPS \
                and p.get("step_markers") == STEPS
            report.judge(f"stats: {config} trace has statistics, loss scalars, step markers", ok, str(p))
    if runs["every10"][1]:
        report.add("stats: fp8 trace kept", "INFO", "",
                   ctx.keep(f"train-fp8-stats-{STEPS}steps.sqlite", runs["every10"][1][0], top=True))
    return runs


def run_overhead(ctx, report, first):
    """Step time per configuration: medians over alternating rounds (the correctness runs are round 1)."""
    times = {c: [median_step_ms(first[c][0])] if c in first else [] for c in CONFIGS}
    for round_index in range(1, OVERHEAD_ROUNDS):
        order = list(CONFIGS)[round_index % len(CONFIGS):] + list(CONFIGS)[:round_index % len(CONFIGS)]
        for config in order:
            if ctx.time_left() < 60:
                break
            result, _ = train(ctx, f"{config}-round{round_index}", config)
            times[config].append(median_step_ms(result))
    medians = {c: statistics.median([t for t in ts if t]) for c, ts in times.items() if any(t for t in ts)}
    base = medians.get("untraced")
    detail = ", ".join(f"{c} {m:.2f} ms ({(m / base - 1) * 100:+.1f}%)" for c, m in medians.items()) if base else ""
    report.add("stats: step time by configuration (median of per-run medians)", "INFO", detail,
               str({c: [round(t, 3) for t in ts if t] for c, ts in times.items()}))


def run_planted(ctx, report):
    result, traces = train(ctx, "planted", "every10", extra_args=["--plant-overflow", PLANT])
    report.judge("stats: planted-overflow run", result.rc == 0 and bool(traces), result.brief(),
                 result.stderr.strip()[-300:])
    if not traces:
        return
    worst = worst_overflow(traces[0])
    block, step, _ = PLANT.split(":")
    ok = worst is not None and worst[3] == int(step) and f"blocks.{block}.fc2" in (worst[0] or "") and worst[4] > 0
    report.judge("stats: the most overflows are at the planted site and step", ok, str(worst))
    report.add("stats: planted trace kept", "INFO", "", ctx.keep("train-fp8-planted-overflow.sqlite", traces[0]))


def run_bf16(ctx, report):
    result, traces = train(ctx, "bf16", "every10", precision="bf16")
    report.judge("stats: train bf16 every10 runs", result.rc == 0 and bool(traces), result.brief(),
                 result.stderr.strip()[-300:])
    if traces:
        p = stats_profile(traces[0])
        report.judge("stats: bf16 trace has GEMM statistics (cublasGemmEx / cublasLtMatmul)",
                     p.get("gemm_sites", 0) > 0, str(p))
        report.add("stats: bf16 trace kept", "INFO", "",
                   ctx.keep(f"train-bf16-stats-{STEPS}steps.sqlite", traces[0], top=True))


def run_lt_fp8_output(ctx, report):
    """cuBLASLt with an FP8 D, a D scale and AMAX_D_POINTER (workloads/lt_fp8_output.py): amax_D and D's scale."""
    script = g.REPO / "tests" / "gpu" / "workloads" / "lt_fp8_output.py"
    directory = ctx.fresh_dir("stats-lt-fp8-output")
    env_extra = {"FP8SCOPE_STATS_EVERY": "1", "PYTHONPATH": str(g.REPO / "probes" / "python")}
    argv, env = ctx.traced(directory / "trace-%p.sqlite", [ctx.python, script], env_extra)
    result = g.run(ctx, "stats-lt-fp8-output", [str(a) for a in argv], env=env, timeout_s=120, cwd=directory)
    traces = g.traces_in(directory)
    truth = next((line for line in result.stdout.splitlines() if line.startswith("LT_FP8_OUTPUT ")), None)
    if result.rc != 0 or not traces or truth is None:
        report.add("stats: cuBLASLt FP8 output, D scale, amax_D", "FAIL", result.brief(), result.stderr.strip()[-300:])
        return
    checked = g.run(ctx, "stats-lt-fp8-output-check", [ctx.python, str(script), "--check", str(traces[0]), truth],
                    timeout_s=60)
    report.judge("stats: cuBLASLt FP8 output: amax_D and D's scale in the trace", checked.rc == 0,
                 checked.stdout.strip()[:200])


def run_all(ctx, report, state):
    g.guarded(report, "stats bandwidth", 60, check_bandwidth, ctx, report)
    first = g.guarded(report, "stats configurations", 120, run_configs, ctx, report, torch=True)
    if first:
        g.guarded(report, "stats planted overflow", 40, run_planted, ctx, report, torch=True)
        g.guarded(report, "stats bf16", 40, run_bf16, ctx, report, torch=True)
        g.guarded(report, "stats cuBLASLt FP8 output", 30, run_lt_fp8_output, ctx, report, torch=True)
        g.guarded(report, "stats overhead", 120, run_overhead, ctx, report, first, torch=True)
