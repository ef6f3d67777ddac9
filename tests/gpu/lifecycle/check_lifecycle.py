"""Process lifecycle cases (docs/collector.md "Process lifecycle"): fork (DataLoader workers), spawn, os._exit,
torch.profiler holding CUPTI, an unwritable output path, and a process that never initializes CUDA. Each traced run is
compared with the same run untraced: exit code and (normalized) stdout must not change."""

import json

import gpu_common as g
import trace_checks as tc
from check_torch import losses_line, train

WORKLOADS = g.REPO / "tests" / "gpu" / "workloads"
UNWRITABLE = "/proc/nope/x-%p.sqlite"


def same_run(plain, traced):
    diff = g.stdout_diff(plain.stdout, traced.stdout)
    return plain.rc == traced.rc and not diff, f"rc {plain.rc} -> {traced.rc}", diff


def finished_traces(traces):
    """[(finished, kernels, dropped)] per trace."""
    out = []
    for t in traces:
        s = tc.summarize(t)
        out.append((s["meta"].get("finished"), s["kernels"], s["dropped"], tc.nvtx_count(s, "train_step")))
    return out


def fork_workers(ctx, report):
    args = ["--precision", "bf16", "--steps", "10", "--dataloader-workers", "2"]
    plain, _, _ = train(ctx, "workers-plain", args, traced=False)
    if plain.rc == 77:
        report.add("fork: DataLoader workers", "SKIP", "exit 77")
        return
    traced, traces, _ = train(ctx, "workers-traced", args, traced=True)
    same, figure, diff = same_run(plain, traced)
    states = finished_traces(traces)
    ok = same and len(states) == 1 and states[0][0] == 1 and states[0][2] == 0 and states[0][3] == 10
    report.judge("fork: DataLoader workers=2: one finished trace (parent), run unchanged", ok,
                 f"{figure}, traces (finished, kernels, dropped, steps) {states}", diff)


def spawn_children(ctx, report):
    argv = [ctx.python, WORKLOADS / "spawn_children.py"]
    plain = g.run(ctx, "spawn-plain", argv, timeout_s=180)
    directory = ctx.fresh_dir("spawn")
    traced_argv, env = ctx.traced(directory / "trace-%p.sqlite", argv)
    traced = g.run(ctx, "spawn-traced", traced_argv, env=env, timeout_s=180)
    same, figure, diff = same_run(plain, traced)
    states = finished_traces(g.traces_in(directory))
    ok = same and plain.rc == 0 and len(states) == 3 and all(f == 1 and k > 0 and d == 0 for f, k, d, _ in states)
    report.judge("spawn: parent + 2 CUDA children, one finished trace each", ok,
                 f"{figure}, traces (finished, kernels, dropped, steps) {states}", diff or plain.stderr[-200:])


def os_exit(ctx, report):
    argv = [ctx.python, WORKLOADS / "exit_after_cuda.py"]
    plain = g.run(ctx, "os_exit-plain", argv, timeout_s=120)
    directory = ctx.fresh_dir("os_exit")
    traced_argv, env = ctx.traced(directory / "trace-%p.sqlite", argv)
    traced = g.run(ctx, "os_exit-traced", traced_argv, env=env, timeout_s=120)
    same, figure, diff = same_run(plain, traced)
    traces = g.traces_in(directory)
    try:
        states = finished_traces(traces)
        readable = len(states) == 1
    except Exception as error:  # an unreadable trace is the finding
        states, readable = f"unreadable: {error}", False
    report.judge("os._exit(3) after CUDA work: exit code 3 kept, trace readable", same and plain.rc == 3 and readable,
                 f"{figure}, traces (finished, kernels, dropped, steps) {states}",
                 f"{diff} stderr {g.fp8scope_lines(traced.stderr)}")


def under_torch_profiler(ctx, report, state):
    """train.py --profile-torch traced by fp8scope: one of the two loses CUPTI; the job must not notice. FP8 unless
    the torch stage found that FP8 runs fail here (then BF16, so that the lifecycle case is still tested)."""
    precision = state.get("precision", "fp8")
    args = ["--precision", precision, "--steps", "30", "--profile-torch", "torch_kernels.json"]
    plain = state.get(f"{precision}-profiled", (None, None))[0]
    if plain is None:
        plain, _, _ = train(ctx, f"{precision}-profiled-again", args, traced=False)
    if plain.rc == 77:
        report.add("torch.profiler under fp8scope", "SKIP", "exit 77")
        return
    traced, traces, directory = train(ctx, f"{precision}-profiled-traced", args, traced=True)
    same_losses = losses_line(plain.stdout) is not None and losses_line(plain.stdout) == losses_line(traced.stdout)
    diff = g.stdout_diff(plain.stdout, traced.stdout)
    report.judge("torch.profiler under fp8scope: exit code and losses unchanged", plain.rc == traced.rc == 0 and same_losses,
                 f"{precision}: rc {plain.rc} -> {traced.rc}, losses {'equal' if same_losses else 'differ'}", diff)
    # Whoever subscribes to CUPTI first keeps it. If fp8scope loses, it says so in one line; if it wins (it
    # subscribes at cuInit), PyTorch warns instead and fp8scope's trace must then be complete.
    lines = g.fp8scope_lines(traced.stderr)
    ours = [line for line in lines if "CUPTI" in line]
    theirs = [line for line in traced.stderr.splitlines() if "CUPTI" in line and not line.startswith("fp8scope")]
    try:
        states = finished_traces(traces)
    except Exception as error:  # an unreadable trace is the finding
        states = f"unreadable: {error}"
    complete = isinstance(states, list) and len(states) == 1 and states[0][0] == 1 and states[0][1] > 0
    ok = len(ours) == 1 or (not ours and bool(theirs) and complete)
    report.judge("torch.profiler under fp8scope: one clear line names CUPTI being taken", ok,
                 (ours[0] if ours else f"PyTorch: {theirs[0]}" if theirs else "none")[:200],
                 f"fp8scope lines {lines}; other CUPTI lines {theirs[:3]}")
    profile = directory / "torch_kernels.json"
    produced = "not produced"
    if profile.exists():
        produced = f"produced, {json.loads(profile.read_text()).get('kernels')} kernels"
    untraced = next((line for line in plain.stdout.splitlines() if line.startswith("torch.profiler:")), "")
    report.add("torch.profiler under fp8scope: profiler output", "INFO", produced, f"untraced run: {untraced}")
    report.add("torch.profiler under fp8scope: fp8scope trace", "INFO",
               f"traces (finished, kernels, dropped, steps) {states}")
    profiled = state.get(f"{precision}-profiled", (None, None))[1]
    if complete and profiled is not None and profiled.exists():
        # fp8scope kept CUPTI: its trace of this run should hold what torch.profiler counted in the untraced run.
        expected = json.loads(profiled.read_text()).get("kernels")
        report.add("torch.profiler under fp8scope: trace kernels vs untraced profiler count", "INFO",
                   f"{states[0][1]} vs {expected}")


def unwritable_output(ctx, report):
    sample = ctx.sample("syncs")
    plain = g.run(ctx, "unwritable-plain", [sample], timeout_s=60)
    if plain.rc == 77:
        report.add("unwritable output path", "SKIP", "exit 77")
        return
    variants = []
    if ctx.use_record:
        variants.append(("fp8scope record -o", [ctx.fp8scope, "record", "-o", UNWRITABLE, "--", sample], None))
    variants.append(("FP8SCOPE_OUTPUT", [sample], ctx.injected_env(UNWRITABLE)))
    for label, argv, env in variants:
        traced = g.run(ctx, f"unwritable-{label}", argv, env=env, timeout_s=60)
        same, figure, diff = same_run(plain, traced)
        warnings = [line for line in traced.stderr.splitlines() if line.startswith("fp8scope: warning")]
        report.judge(f"unwritable path via {label}: run unchanged, one warning line", same and len(warnings) == 1,
                     f"{figure}, {len(warnings)} warning lines: {warnings[:1]}"[:300],
                     f"{diff} fp8scope lines {g.fp8scope_lines(traced.stderr)}")


def no_cuda_process(ctx, report):
    """LD_PRELOAD into a process that never initializes CUDA: nothing changes, CUPTI is never mapped."""
    code = "print('libcupti mapped:', open('/proc/self/maps').read().count('libcupti'))"
    argv = [ctx.python, "-c", code]
    plain = g.run(ctx, "no-cuda-plain", argv, timeout_s=30)
    directory = ctx.fresh_dir("no-cuda")
    env = ctx.injected_env(directory / "trace-%p.sqlite", {"LD_PRELOAD": str(ctx.collector)})
    traced = g.run(ctx, "no-cuda-preload", argv, env=env, timeout_s=30)
    traces = g.traces_in(directory)
    ok = plain.rc == traced.rc == 0 and plain.stdout == traced.stdout and traced.stderr == plain.stderr and not traces
    report.judge("no CUDA + LD_PRELOAD: same output, no trace, CUPTI not loaded", ok,
                 f"rc {plain.rc} -> {traced.rc}, {traced.stdout.strip()}, {len(traces)} traces",
                 f"stderr {traced.stderr.strip()[:300]!r}")


def profiler_first(ctx, report):
    """torch.profiler subscribes to CUPTI before the first CUDA call; fp8scope comes second or first, and the loser
    must say so in one line while the job runs on with its exit code."""
    argv = [ctx.python, WORKLOADS / "profiler_first.py"]
    plain = g.run(ctx, "profiler_first-plain", argv, timeout_s=120)
    directory = ctx.fresh_dir("profiler_first")
    traced_argv, env = ctx.traced(directory / "trace-%p.sqlite", argv)
    traced = g.run(ctx, "profiler_first-traced", traced_argv, env=env, timeout_s=120)
    traces = g.traces_in(directory)
    ours = [line for line in traced.stderr.splitlines() if line.startswith("fp8scope: warning")]
    if traces:
        states = finished_traces(traces)
        holder = f"fp8scope kept CUPTI: traces {states}; profiler: {traced.stdout.strip()}"
        ok = plain.rc == traced.rc == 0 and states[0][0] == 1
    else:
        holder = f"torch.profiler kept CUPTI; fp8scope said: {ours[:1]}"
        ok = plain.rc == traced.rc == 0 and len(ours) == 1 and "CUPTI is already in use" in ours[0]
    report.judge("torch.profiler first: job unchanged, one clear line from the one left out", ok,
                 f"rc {plain.rc} -> {traced.rc}; {holder}"[:300], f"plain: {plain.stdout.strip()}")


def device_reset(ctx, report):
    """cudaDeviceReset flushes: after it, a SIGKILL loses nothing (periodic flush off)."""
    argv = [ctx.python, WORKLOADS / "device_reset.py"]
    directory = ctx.fresh_dir("device_reset")
    traced_argv, env = ctx.traced(directory / "trace-%p.sqlite", argv, {"FP8SCOPE_FLUSH_PERIOD_MS": "0"})
    traced = g.run(ctx, "device_reset-traced", traced_argv, env=env, timeout_s=120)
    traces = g.traces_in(directory)
    try:
        states = finished_traces(traces)
    except Exception as error:  # an unreadable trace is the finding
        states = f"unreadable: {error}"
    ok = isinstance(states, list) and len(states) == 1 and states[0][1] == 201 and states[0][2] == 0
    report.judge("cudaDeviceReset flushes: SIGKILL after it keeps all 201 kernels", ok,
                 f"rc {traced.rc}, traces (finished, kernels, dropped, steps) {states}"[:300],
                 f"stdout {traced.stdout.strip()[:200]} stderr {g.fp8scope_lines(traced.stderr)}")


def run_all(ctx, report, state):
    g.guarded(report, "no CUDA + LD_PRELOAD", 10, no_cuda_process, ctx, report)
    g.guarded(report, "unwritable output path", 10, unwritable_output, ctx, report)
    g.guarded(report, "os._exit(3) after CUDA work", 30, os_exit, ctx, report, torch=True)
    g.guarded(report, "spawn children", 40, spawn_children, ctx, report, torch=True)
    g.guarded(report, "torch.profiler under fp8scope", 40, under_torch_profiler, ctx, report, state, torch=True)
    g.guarded(report, "fork: DataLoader workers", 60, fork_workers, ctx, report, torch=True)
    g.guarded(report, "torch.profiler first", 30, profiler_first, ctx, report, torch=True)
    g.guarded(report, "cudaDeviceReset", 30, device_reset, ctx, report, torch=True)
