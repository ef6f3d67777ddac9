"""Overhead benchmarks (docs/benchmarks.md "Collector overhead"), measured side by side in one run:

(a) tiny-kernel launch loop, host us per launch: untraced, under `fp8scope record`, and inside torch.profiler
    (CPU + CUDA activities), from Python (bench/launch_overhead.py) and from C++ (fp8scope_launch_overhead);
    the modes alternate over K rounds (rotating order) and each mode's figure is the median of its runs' medians.
(b) step time of the FP8 training sample, untraced and traced (bench/step_overhead.py, ABBA order)."""

import json
import shutil
import statistics

import gpu_common as g
import trace_checks as tc

LAUNCHES = 20000
REPS = 3
GOAL_ADDED_US = 1.0  # docs/benchmarks.md "Collector overhead"
GOAL_STEP_SLOWDOWN_PCT = 2.0


def last_json(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def launch_modes(ctx):
    lib = ctx.build / "bench" / "libfp8scope_launch_loop.so"
    py = [ctx.python, g.REPO / "bench" / "launch_overhead.py", "--lib", lib, "--launches", LAUNCHES, "--reps", REPS]
    cpp_exe = ctx.build / "bench" / "fp8scope_launch_overhead"
    cpp = [cpp_exe, "--launches", LAUNCHES, "--reps", REPS]
    return {  # mode: (argv, traced, the built file it needs)
        "py plain": (py, False, lib),
        "py fp8scope": (py, True, lib),
        "py torch.profiler": ([*py, "--mode", "torch-profiler"], False, lib),
        "cpp plain": (cpp, False, cpp_exe),
        "cpp fp8scope": (cpp, True, cpp_exe),
    }


def check_loop_trace(report, mode, directory, measured, checked):
    """The first traced run of each kind: every launched kernel is in the trace, nothing dropped."""
    traces = g.traces_in(directory)
    if mode in checked or not measured:
        return
    checked.add(mode)
    if len(traces) != 1:
        report.add(f"launch loop ({mode}): trace complete", "FAIL", f"{len(traces)} traces")
        return
    s = tc.summarize(traces[0])
    got = tc.kernel_count_by_name(s, "fp8scope_bench_empty")
    expected = measured["kernels_launched"]
    report.judge(f"launch loop ({mode}): every kernel recorded, none dropped",
                 got == expected and s["dropped"] == 0 and s["meta"].get("finished") == 1,
                 f"{got}/{expected} kernels, dropped {s['dropped']}, finished {s['meta'].get('finished')}",
                 f"{traces[0].stat().st_size / 1e6:.1f} MB, {s['runtime_rows']} API rows {s['api_calls']}"[:400])


def launch_overhead(ctx, report, rounds):
    modes = launch_modes(ctx)
    if not ctx.torch:
        del modes["py torch.profiler"]
        report.add("launch loop py torch.profiler", "SKIP", "no PyTorch with a CUDA device")
    for mode, (_, _, needed) in list(modes.items()):
        if not needed.exists():
            report.add(f"launch loop {mode}", "FAIL", f"missing {needed}")
            del modes[mode]
    if not modes:
        return
    runs = {mode: [] for mode in modes}
    checked = set()
    names = list(modes)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for mode in order:
            if mode not in modes:
                continue  # dropped after a failure
            argv, traced, _ = modes[mode]
            if mode == "py torch.profiler" and r == 0:
                argv = [*argv, "--count-profiled"]
            directory = ctx.fresh_dir(f"launch-{mode.replace(' ', '-').replace('.', '')}")
            env = None
            if traced:
                argv, env = ctx.traced(directory / "trace-%p.sqlite", argv)
            result = g.run(ctx, f"launch-{mode}", argv, env=env, timeout_s=120)
            measured = last_json(result.stdout) if result.rc == 0 else None
            if result.rc == 77:
                report.add("launch overhead", "SKIP", f"{mode}: exit 77 (no CUDA device)", result.stderr.strip()[-200:])
                return
            if measured is None:
                report.add(f"launch loop {mode} round {r}", "FAIL", result.brief(), result.stderr.strip()[-300:])
                del modes[mode]  # one failure is enough to report; the time goes to the other modes
                continue
            runs[mode].append(measured)
            if traced:
                check_loop_trace(report, mode, directory, measured, checked)
            if "profiled" in measured:
                p = measured["profiled"]
                report.judge("launch loop: torch.profiler recorded the loop", p["kernels"] == measured["kernels_launched"],
                             f"{p['kernels']}/{measured['kernels_launched']} kernels, {p['launch_calls']} launch calls")
            shutil.rmtree(directory, ignore_errors=True)  # traces of 100k kernels: checked once, not kept
    medians = {m: statistics.median(x["median_us_per_launch"] for x in v) for m, v in runs.items() if v}
    report.extra["launch_overhead"] = {"launches": LAUNCHES, "reps": REPS, "rounds": rounds,
                                       "median_us_per_launch": medians, "runs": runs}
    for lang in ("py", "cpp"):
        base = medians.get(f"{lang} plain")
        for tool in ("fp8scope", "torch.profiler"):
            value = medians.get(f"{lang} {tool}")
            if base is None or value is None:
                continue
            report.add(f"launch us/launch {lang}: {tool}", "INFO", f"{value:.3f} us vs {base:.3f} plain = "
                       f"+{value - base:.3f} us", f"medians of {len(runs[f'{lang} {tool}'])} runs")
    base, ours, theirs = medians.get("py plain"), medians.get("py fp8scope"), medians.get("py torch.profiler")
    if base is not None and ours is not None:
        added = ours - base
        report.judge("goal: fp8scope adds <= 1 us per launch (py)", added <= GOAL_ADDED_US, f"+{added:.3f} us")
        if theirs is not None:
            report.judge("goal: fp8scope below torch.profiler (same run)", ours < theirs,
                         f"+{added:.3f} us vs +{theirs - base:.3f} us")
    cpp_base, cpp_ours = medians.get("cpp plain"), medians.get("cpp fp8scope")
    if cpp_base is not None and cpp_ours is not None:
        report.judge("goal: fp8scope adds <= 1 us per launch (cpp)", cpp_ours - cpp_base <= GOAL_ADDED_US,
                     f"+{cpp_ours - cpp_base:.3f} us")


def step_overhead(ctx, report, runs, precision):
    """FP8 unless the torch stage found FP8 failing here; the rows name the precision measured."""
    argv = [ctx.python, g.REPO / "bench" / "step_overhead.py", "--python", ctx.python, "--train", ctx.train_py,
            "--runs", runs, "--steps", 30, "--precision", precision, "--work-dir", ctx.fresh_dir("step-overhead"),
            "--timeout", 200]
    argv += ["--fp8scope", ctx.fp8scope] if ctx.use_record else ["--inject", ctx.collector]
    result = g.run(ctx, "step-overhead", argv, timeout_s=2 * runs * 200 + 30)
    measured = last_json(result.stdout)
    if result.rc == 77:
        report.add(f"step time {precision} traced vs plain", "SKIP", "exit 77")
        return
    if measured is None or measured.get("slowdown_pct") is None:
        report.add(f"step time {precision} traced vs plain", "FAIL", result.brief(), result.stderr.strip()[-400:])
        return
    report.extra["step_overhead"] = measured
    report.add(f"step time {precision} traced vs plain", "INFO",
               f"{measured['traced_median_step_ms']:.3f} ms vs {measured['plain_median_step_ms']:.3f} ms = "
               f"{measured['slowdown_pct']:+.2f}%", f"wall {measured['traced_median_wall_s']} s vs "
               f"{measured['plain_median_wall_s']} s, {runs} runs each, losses equal in all runs "
               f"{measured['losses_equal_in_all_runs']}")
    report.judge(f"goal: {precision} step time <= 2% slower traced", measured["slowdown_pct"] <= GOAL_STEP_SLOWDOWN_PCT,
                 f"{measured['slowdown_pct']:+.2f}%")


def run_all(ctx, report, state):
    rounds = 4 if ctx.time_left() > 300 else 3
    g.guarded(report, "launch overhead", 40, launch_overhead, ctx, report, rounds)
    # Each train.py run takes some 15-25 s; take as many runs per mode as the time left allows (at least 2).
    runs = 3 if ctx.time_left() > 180 else 2
    g.guarded(report, "step overhead", 100, step_overhead, ctx, report, runs, state.get("precision", "fp8"),
              torch=True)
