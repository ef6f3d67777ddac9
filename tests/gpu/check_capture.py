"""Windowed capture (docs/collector.md "Capture windows"): record the training sample (samples/torch/train.py,
fp8scope.step() markers) and a cudaProfilerStart/Stop loop with each kind of capture window, and judge the traces.

  steps     --capture-steps 20:29 over 60 steps: the report analyses exactly steps 20..29 (10 steps); one window,
            trigger STEPS, first/last step 20/29
  periodic  --capture-every 20 --capture-length 5 over 60 steps: windows 0-4, 20-24, 40-44; with --warmup 0 the
            report analyses exactly those 15 steps (with the default warm-up of 2: 13, steps 0 and 1 dropped)
  profiler  --capture-range cudaProfilerApi on tests/gpu/workloads/profiler_range.py (start before step 10's
            marker, stop after step 20's): one window, steps 10..19 analysed, steps 9 and 20 cut by its edges
  time      --delay 8 --duration 2 over 400 steps of the sample: one window starting about 8 s after CUDA's start
            (inside the training loop), at most about 2 s long
  real jobs the jobs of tests/gpu/realjobs/ (transformers Llama, JAX, torch.compile, a CUDA graph), 30 steps
            each, with --capture-every 10 --capture-length 3 or --capture-steps 10:19: exactly the windows' steps
            are analysed (report --warmup 0), and each leaves exactly one trace: torch.compile's compile worker,
            which does no GPU work, removes its own (docs/collector.md "Processes that do no GPU work")
  no markers a job with no step marker and no NVTX step range (a plain PyTorch loop) under --capture-steps 5:9
            (docs/collector.md "Capture windows"): one trace, record's summary warns "the capture window never opened:
            no step markers or NVTX step ranges; ...", `fp8scope info` says it (text and JSON), meta
            nvtx_step_ranges is 0; the same job injected through the environment (no record): the collector prints
            the sentence at its exit
  overhead  the same 200-step job untraced and traced with --capture-every 100 --capture-length 5 (windows 0-4 and
            100-104; three processes each, alternating) and traced whole once: median step times (train.py's
            CUDA-event step times, steps 5 on) inside the windows, in the 20 steps after each window (CUPTI is still
            attached for its grace and the detach), and after those (detached); the average extrapolated to
            10 steps of every 1000 as (10 inside + 20 after + 970 detached) / 1000, printed; the detached steps must
            cost less than tracing the whole run, and the losses must be bitwise those of the untraced runs; issue
            13's goals (at most 5% while capturing, at most 1% averaged) are judged as goals

For every windowed trace, "kernels only inside the windows": no kernel starts before the window that holds its
launch, and every kernel's launch call (its runtime/driver row, same correlationId) starts inside a window and is
in the trace; correlation ids are unique among kernels outside graphs and among API calls (CUPTI, detached between windows,
starts them over when attached again: the collector shifts them). The periodic run also checks that CUPTI was
detached after each window (FP8SCOPE_VERBOSE=1's "capture: CUPTI detached" lines). A kernel
may end, even start, after its window's end: a step's last kernels are still running when the next step's marker
closes the window (the in-flight kernels of the step boundary), and they were launched with tracing on. The check
reports their count.
"""

import json
import statistics
import os
import sqlite3

import gpu_common as g

MODEL = ["--layers", "2", "--d-model", "512", "--heads", "8", "--seq", "256", "--batch", "8", "--vocab", "4096"]
STEPS = 60
RUN_TIMEOUT_S = 150
PROFILER_SCRIPT = g.REPO / "tests" / "gpu" / "workloads" / "profiler_range.py"
# The FP8SCOPE_CAPTURE_* variable of each record option, for a run without `fp8scope record` (env injection).
OPTION_ENV = {"--capture-steps": "FP8SCOPE_CAPTURE_STEPS", "--capture-every": "FP8SCOPE_CAPTURE_EVERY",
              "--capture-length": "FP8SCOPE_CAPTURE_LENGTH", "--capture-range": "FP8SCOPE_CAPTURE_RANGE",
              "--delay": "FP8SCOPE_CAPTURE_DELAY", "--duration": "FP8SCOPE_CAPTURE_DURATION"}


STDERR = {}  # record()'s name -> the traced run's stderr


def kernel_rows(trace):
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*) FROM FP8SCOPE_KERNEL").fetchone()[0]


def record(ctx, report, name, capture, argv, helpers_allowed=False):
    """Runs argv traced with `capture` (record options); returns (trace path, truth) or (None, None). With
    helpers_allowed, the job may start helper processes that initialize CUDA too (torch.compile's compile workers
    write a trace with no kernel): the trace with the most kernels is the job's."""
    directory = ctx.fresh_dir(f"capture-{name}")
    env_extra = {"PYTHONPATH": str(g.REPO / "probes" / "python"), "PYTHONUNBUFFERED": "1", "FP8SCOPE_VERBOSE": "1"}
    pattern = directory / "trace-%p.sqlite"
    targv, env = ctx.traced(pattern, argv, env_extra)
    if ctx.use_record:
        targv = targv[:4] + capture + targv[4:]  # fp8scope record -o PATTERN <capture> -- argv
    else:
        env.update({OPTION_ENV[capture[i]]: capture[i + 1] for i in range(0, len(capture), 2)})
    result = g.run(ctx, f"capture-{name}", targv, env=env, timeout_s=RUN_TIMEOUT_S, cwd=directory)
    truth = g.ground_truth(result.stdout)
    STDERR[name] = result.stderr
    traces = g.traces_in(directory)
    if helpers_allowed:
        # A helper that did no GPU work (torch.compile's compile worker) removes its trace
        # (docs/collector.md "Processes that do no GPU work").
        report.judge(f"capture {name}: one trace (helpers without GPU work leave none)", len(traces) == 1,
                     " ".join(f"{t.name}: {kernel_rows(t)} kernels" for t in traces) or "no trace")
        if len(traces) > 1:
            traces = [max(traces, key=kernel_rows)]
    ok = result.rc == 0 and truth is not None and len(traces) == 1
    report.judge(f"capture: record {name} ({' '.join(capture) or 'whole run'})", ok,
                 f"median step {truth.get('median_step_ms', 0):.2f} ms" if ok and 'median_step_ms' in truth
                 else ("ok" if ok else result.brief()), "" if ok else result.stderr.strip()[-300:])
    if ok:
        ctx.keep(f"capture-{name}", traces[0])
    return (traces[0], truth) if ok else (None, None)


def report_json(ctx, trace, *extra):
    out = g.run(ctx, f"capture-report-{trace.stem}", [ctx.fp8scope, "report", trace, "--format", "json", *extra],
                timeout_s=60)
    return json.loads(out.stdout) if out.rc == 0 else None


def windows_of(trace):
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        return db.execute("SELECT id, start, end, firstStep, lastStep, trigger FROM FP8SCOPE_CAPTURE_WINDOW "
                          "ORDER BY start").fetchall()


def judge_kernels_inside(report, name, trace):
    """Kernels only inside the windows (module docstring): none before its window, every launch inside one."""
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        windows = db.execute("SELECT start, coalesce(end, 1 << 62) FROM FP8SCOPE_CAPTURE_WINDOW").fetchall()
        rows = db.execute("SELECT k.start, k.start + k.duration, min(r.start) FROM FP8SCOPE_KERNEL AS k "
                          "LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId "
                          "GROUP BY k.id").fetchall()
        # Launch calls whose kernel never reached the trace: its record lost when CUPTI was detached too early after
        # a window (the step-counted grace, docs/collector.md "Capture windows"), or a launch racing a window's switch
        # (at most one per edge).
        lost = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                          "JOIN StringIds AS s ON s.id = r.nameId WHERE (s.value LIKE 'cudaLaunchKernel%' OR s.value LIKE 'cuLaunchKernel%') AND NOT EXISTS "
                          "(SELECT 1 FROM FP8SCOPE_KERNEL AS k WHERE k.correlationId = r.correlationId)").fetchone()[0]
        # A graph launch's kernels share its correlation id; every other kernel, and every API call, has its own.
        duplicates = [db.execute(f"SELECT count(*) - count(DISTINCT correlationId) FROM {table}").fetchone()[0]
                      for table in ("(SELECT correlationId FROM FP8SCOPE_KERNEL WHERE coalesce(graphId, 0) = 0)",
                                    "CUPTI_ACTIVITY_KIND_RUNTIME")]

    def window_of(t):
        return next((w for w in windows if w[0] <= t <= w[1]), None)

    outside, in_flight, unlaunched = 0, 0, 0
    for start, end, launch in rows:
        unlaunched += launch is None
        w = window_of(launch if launch is not None else start)
        if w is None or start < w[0]:
            outside += 1
        elif end > w[1]:
            in_flight += 1
    report.judge(f"capture {name}: kernels only inside the windows", rows and outside == 0,
                 f"{len(rows)} kernels, {outside} outside, {in_flight} in flight at a window's end")
    # The API calls are switched with the kernels: every recorded kernel has its launch call in the trace.
    report.judge(f"capture {name}: every kernel's launch call recorded", rows and unlaunched == 0,
                 f"{unlaunched} of {len(rows)} kernels without their launch call")
    report.judge(f"capture {name}: every recorded launch's kernel recorded (at most one lost per window edge)",
                 lost <= 2 * len(windows), f"{lost} launch calls without their kernel, {len(windows)} windows")
    report.judge(f"capture {name}: correlation ids unique (kernels, API calls)", duplicates == [0, 0],
                 f"repeated ids: {duplicates[0]} among kernels outside graphs, {duplicates[1]} among API calls")


def judge_steps(report, name, doc, expected, edge=None):
    if doc is None:
        report.add(f"capture {name}: analysed steps", "FAIL", "fp8scope report failed")
        return
    got = [s["index"] for s in doc["steps"]["steps"]]
    edges = edge if isinstance(edge, tuple) else (edge,)
    ok = got == expected and (edge is None or doc["steps"]["window_edge_excluded"] in edges)
    report.judge(f"capture {name}: analysed steps", ok,
                 f"{len(got)} steps {got[:3]}..{got[-3:]}, expected {len(expected)}; outside "
                 f"{doc['steps']['outside_windows_excluded']}, edge {doc['steps']['window_edge_excluded']}",
                 "" if ok else f"got {got}")


def train_argv(ctx, steps=STEPS):
    return [ctx.python, ctx.train_py, "--steps", str(steps), *MODEL, "--precision", "fp8"]


def check_steps(ctx, report):
    trace, _ = record(ctx, report, "steps", ["--capture-steps", "20:29"], train_argv(ctx))
    if not trace:
        return
    windows = windows_of(trace)
    report.judge("capture steps: one window, steps 20..29, trigger STEPS",
                 len(windows) == 1 and windows[0][3:] == (20, 29, 0), f"{windows}")
    judge_steps(report, "steps", report_json(ctx, trace), list(range(20, 30)))
    judge_kernels_inside(report, "steps", trace)


def check_periodic(ctx, report):
    trace, _ = record(ctx, report, "periodic", ["--capture-every", "20", "--capture-length", "5"], train_argv(ctx))
    if not trace:
        return
    windows = windows_of(trace)
    report.judge("capture periodic: windows 0-4, 20-24, 40-44", [w[3:5] for w in windows] == [(0, 4), (20, 24), (40, 44)],
                 f"{[w[3:5] for w in windows]}")
    expected = [s for s in range(STEPS) if s % 20 < 5]
    judge_steps(report, "periodic (--warmup 0)", report_json(ctx, trace, "--warmup", "0"), expected)
    judge_steps(report, "periodic (default warm-up)", report_json(ctx, trace), expected[2:])
    judge_kernels_inside(report, "periodic", trace)
    # NVTX reaches CUPTI only while it is attached (nvtx_paths.hpp): each window, after CUPTI was attached again, still
    # records the sample's module ranges.
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        ranges = [db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE start BETWEEN ? AND ?", (w[1], w[2])).fetchone()[0]
                  for w in windows]
    report.judge("capture periodic: NVTX ranges recorded in every window", ranges and min(ranges) > 0, f"{ranges}")
    detaches = STDERR.get("periodic", "").count("capture: CUPTI detached")
    report.judge("capture periodic: CUPTI detached after each window", detaches >= 2,
                 f"{detaches} detaches, {STDERR.get('periodic', '').count('capture: CUPTI attached again')} attaches")


def check_profiler(ctx, report):
    trace, truth = record(ctx, report, "profiler", ["--capture-range", "cudaProfilerApi"],
                          [ctx.python, PROFILER_SCRIPT])
    if not trace:
        return
    windows = windows_of(trace)
    report.judge("capture profiler: one window, trigger PROFILER_API, steps 10..20 began in it",
                 len(windows) == 1 and windows[0][3:] == (10, 20, 2), f"{windows}")
    # cudaProfilerStart runs just before step 10's marker, inside step 9, and cudaProfilerStop just after step 20's:
    # steps 9 and 20 are cut by the window's edges. On the device's clock (docs/analysis.md "Capture windows") step
    # 20 begins where the window ends when the GPU runs behind the host at the stop (an H200 ran steps 18 and 19
    # after it): then it lies outside the window, and only step 9 is cut.
    judge_steps(report, "profiler", report_json(ctx, trace), list(range(10, 20)), edge=(1, 2))
    judge_kernels_inside(report, "profiler", trace)


def check_time(ctx, report):
    # The sample spends about 5 s in set-up before its first step (H100, 2026-11-24) and 400 steps take about 15 s
    # more: a window from 8 s to 10 s lies inside the training loop.
    trace, _ = record(ctx, report, "time", ["--delay", "8", "--duration", "2"], train_argv(ctx, 400))
    if not trace:
        return
    windows = windows_of(trace)
    # At most 2 s long: shorter when the job ended first (the window then closes at the end of recording).
    ok = len(windows) == 1 and windows[0][5] == 3 and windows[0][2] is not None \
        and 8.0e9 <= windows[0][1] <= 8.1e9 and 0 < windows[0][2] - windows[0][1] <= 2.1e9
    report.judge("capture time: one window, ~8 s after the start, at most ~2 s long", ok, f"{windows}")
    doc = report_json(ctx, trace)
    report.judge("capture time: steps analysed, none across the window's edges",
                 doc is not None and len(doc["steps"]["steps"]) > 0,
                 doc and f"{len(doc['steps']['steps'])} steps, edge {doc['steps']['window_edge_excluded']}")
    judge_kernels_inside(report, "time", trace)


# A job that marks no step (no fp8scope.step(), no NVTX step range), under --capture-steps
# (docs/collector.md "Capture windows").
NO_MARKERS_JOB = ("import torch\n"
                  "x = torch.randn(1024, 1024, device='cuda')\n"
                  "for _ in range(100):\n"
                  "    x = torch.tanh(x @ x)\n"
                  "torch.cuda.synchronize()\n"
                  "print('done', flush=True)\n")
NEVER_OPENED = ("the capture window never opened: no step markers or NVTX step ranges; use --capture-range, "
                "--delay/--duration or fp8scope.step()")


def check_no_markers(ctx, report):
    """A job without step markers under --capture-steps 5:9: the warning at the end of the run and in `info`."""
    argv = [ctx.python, "-c", NO_MARKERS_JOB]
    if ctx.use_record:
        directory = ctx.fresh_dir("capture-no-markers")
        targv, env = ctx.traced(directory / "trace-%p.sqlite", argv)
        targv = targv[:4] + ["--capture-steps", "5:9"] + targv[4:]
        result = g.run(ctx, "capture-no-markers", targv, env=env, timeout_s=RUN_TIMEOUT_S, cwd=directory)
        traces = g.traces_in(directory)
        warned = [line for line in result.stderr.splitlines()
                  if line.startswith("fp8scope: warning: ") and line.endswith(": " + NEVER_OPENED)]
        report.judge("capture no markers: record warns the window never opened", result.rc == 0
                     and len(traces) == 1 and len(warned) == 1,
                     f"rc {result.rc}, {len(traces)} traces, {len(warned)} warning lines",
                     "" if warned else result.stderr.strip()[-400:])
        if len(traces) == 1:
            text = g.run(ctx, "capture-no-markers-info", [ctx.fp8scope, "info", traces[0]], timeout_s=60)
            doc = g.run(ctx, "capture-no-markers-info-json", [ctx.fp8scope, "info", "--format", "json", traces[0]],
                        timeout_s=60)
            info = json.loads(doc.stdout) if doc.rc == 0 else {}
            ok = f"warning         {NEVER_OPENED}" in text.stdout and info.get("warnings") == [NEVER_OPENED] \
                and info.get("meta", {}).get("nvtx_step_ranges") == "0" \
                and info.get("row_counts", {}).get("FP8SCOPE_KERNEL") == 0
            report.judge("capture no markers: info says the window never opened (text, JSON)", ok,
                         f"warnings {info.get('warnings')}, nvtx_step_ranges {info.get('meta', {}).get('nvtx_step_ranges')}"
                         f", kernels {info.get('row_counts', {}).get('FP8SCOPE_KERNEL')}")
    # Plain injection, no record and so no summary: the collector says it itself, with the trace's name.
    directory = ctx.fresh_dir("capture-no-markers-env")
    env = ctx.injected_env(directory / "trace-%p.sqlite", {"FP8SCOPE_CAPTURE_STEPS": "5:9"})
    env.pop("FP8SCOPE_MANIFEST", None)
    result = g.run(ctx, "capture-no-markers-env", argv, env=env, timeout_s=RUN_TIMEOUT_S, cwd=directory)
    warned = [line for line in result.stderr.splitlines()
              if line.startswith(f"fp8scope: warning: {NEVER_OPENED} (trace '")]
    report.judge("capture no markers: the collector warns at exit without record", result.rc == 0 and len(warned) == 1
                 and len(g.traces_in(directory)) == 1, f"rc {result.rc}, {len(warned)} warning lines",
                 "" if warned else result.stderr.strip()[-400:])


REALJOBS = g.REPO / "tests" / "gpu" / "realjobs"


def check_realjobs(ctx, report):
    """The real jobs (tests/gpu/realjobs/, 30 steps each, fp8scope.step() markers), windowed: the report analyses
    exactly the windows' steps, and every kernel was launched inside a window."""
    periodic, steps = ["--capture-every", "10", "--capture-length", "3"], ["--capture-steps", "10:19"]
    jobs = (("hf_llama", periodic, [REALJOBS / "hf_llama.py"]),
            ("jax_mlp", steps, [REALJOBS / "jax_mlp.py"]),
            ("compile_block", steps, [REALJOBS / "compile_block.py"]),
            ("graph_step", periodic, [REALJOBS / "whatif.py", "--workload", "fp8_sample", "--mode", "graph"]))
    for name, capture, script in jobs:
        trace, _ = record(ctx, report, f"job-{name}", capture, [str(a) for a in (ctx.python, *script, "--steps", 30)],
                          helpers_allowed=True)
        if not trace:
            continue
        expected = [s for s in range(30) if s % 10 < 3] if capture is periodic else list(range(10, 20))
        judge_steps(report, f"job {name} (--warmup 0)", report_json(ctx, trace, "--warmup", "0"), expected)
        judge_kernels_inside(report, f"job {name}", trace)


# Windows 0-4 and 100-104; steps before 5 are warm-up. AFTER: steps after a window's end counted as CUPTI's grace
# (docs/collector.md: detached 300 ms after a window, at the next CUDA call; about 12 steps of the sample).
OVERHEAD_STEPS, PERIOD, LENGTH, AFTER, FIRST_MEASURED = 200, 100, 5, 20, 5


def step_phase(step):
    return "inside" if step % PERIOD < LENGTH else "after" if step % PERIOD < LENGTH + AFTER else "detached"


def step_medians(truth):
    """{phase: median step time}, steps from FIRST_MEASURED on."""
    times = list(enumerate(truth["step_ms"]))[FIRST_MEASURED:]
    return {phase: statistics.median([t for i, t in times if step_phase(i) == phase])
            for phase in ("inside", "after", "detached")}


def check_overhead(ctx, report):
    argv = train_argv(ctx, OVERHEAD_STEPS)
    directory = ctx.fresh_dir("capture-untraced")
    env = dict(os.environ, PYTHONPATH=str(g.REPO / "probes" / "python"))  # fp8scope.step() present, a no-op
    capture = ["--capture-every", str(PERIOD), "--capture-length", str(LENGTH)]
    # Processes differ by up to ±15% on these hosts (docs/benchmarks.md): untraced and windowed runs alternate, three
    # of each, and their medians are compared; the whole-run trace is recorded once, for scale.
    untraced_ms, inside_ms, after_ms, outside_ms, same_losses = [], [], [], [], []
    for round_index in range(3):
        plain = g.run(ctx, f"capture-untraced-{round_index}", [str(a) for a in argv], env=env,
                      timeout_s=RUN_TIMEOUT_S, cwd=directory)
        truth = g.ground_truth(plain.stdout)
        _, windowed = record(ctx, report, f"overhead-window-{round_index}", capture, argv)
        if not (truth and windowed):
            report.add("capture overhead", "FAIL", "a run failed", plain.brief())
            return
        untraced_ms.append(statistics.median(truth["step_ms"][FIRST_MEASURED:]))
        medians = step_medians(windowed)
        inside_ms.append(medians["inside"])
        after_ms.append(medians["after"])
        outside_ms.append(medians["detached"])
        same_losses.append(truth["losses"] == windowed["losses"])
    _, full = record(ctx, report, "overhead-full", [], argv)
    if not full:
        report.add("capture overhead", "FAIL", "the whole-run recording failed")
        return
    u, f = statistics.median(untraced_ms), statistics.median(full["step_ms"][FIRST_MEASURED:])
    i, a, o = statistics.median(inside_ms), statistics.median(after_ms), statistics.median(outside_ms)
    report.add("capture overhead: untraced / inside windows / 20 steps after / detached, median step per process "
               "(ms)", "INFO", " / ".join(str([round(x, 2) for x in xs])
                                        for xs in (untraced_ms, inside_ms, after_ms, outside_ms)))
    # 10 steps of every 1000 captured, extrapolated from the steps measured here: the window, the 20 steps after it
    # (more than CUPTI's grace), the rest detached.
    averaged = (10 * i + AFTER * a + (990 - AFTER) * o) / 1000
    report.add("capture overhead: median step untraced / traced whole / inside windows / 20 after / detached / "
               "10-of-1000 average (extrapolated)", "INFO",
               f"{u:.3f} / {f:.3f} / {i:.3f} / {a:.3f} / {o:.3f} / {averaged:.3f} ms ("
               + " / ".join(f"{100 * (x / u - 1):+.1f}%" for x in (f, i, a, o, averaged)) + ")")
    report.judge("capture overhead: the windowed runs' losses are bitwise the untraced runs'", all(same_losses),
                 f"{same_losses}")
    # The steps after a window, with CUPTI detached, must at least cost less than tracing everything; the goals (at most
    # 5% while capturing, at most 1% averaged over 10 steps of every 1000) are judged as goals and fail while missed
    # (docs/benchmarks.md, "Capture windows on the H100", has the figures and what limits them).
    report.judge("capture overhead: detached steps cheaper than whole-run tracing", o < f,
                 f"detached {100 * (o / u - 1):+.1f}%, whole run {100 * (f / u - 1):+.1f}%")
    report.judge("capture overhead goal: at most 5% while capturing", i <= 1.05 * u, f"{100 * (i / u - 1):+.1f}%")
    report.judge("capture overhead goal: at most 1% averaged (10 of every 1000 steps)", averaged <= 1.01 * u,
                 f"{100 * (averaged / u - 1):+.1f}%")


# The setting of docs/benchmarks.md "A grace counted in steps": a window of 3 steps every 20; CUPTI detaches 2 steps
# after each (collector/src/capture/capture.cpp).
FAST_STEPS, FAST_EVERY, FAST_LENGTH, FAST_GRACE = 120, 20, 3, 2


def fast_phase(step):
    r = step % FAST_EVERY
    return "inside" if r < FAST_LENGTH else "grace" if r < FAST_LENGTH + FAST_GRACE else "detached"


def check_overhead_every_20(ctx, report):
    """Untraced and --capture-every 20 --capture-length 3 runs alternating, twice each: median step time per phase
    (inside the windows, the 2 steps of grace, detached) against the untraced runs; the two untraced runs against
    each other are the A/A control. The goal (docs/benchmarks.md "A grace counted in steps"): detached steps within 1%
    of untraced."""
    argv = train_argv(ctx, FAST_STEPS)
    directory = ctx.fresh_dir("capture-every20-untraced")
    env = dict(os.environ, PYTHONPATH=str(g.REPO / "probes" / "python"))
    untraced, phases = [], {"inside": [], "grace": [], "detached": []}
    detaches = 0
    for round_index in range(2):
        plain = g.run(ctx, f"capture-every20-untraced-{round_index}", [str(a) for a in argv], env=env,
                      timeout_s=RUN_TIMEOUT_S, cwd=directory)
        truth = g.ground_truth(plain.stdout)
        _, windowed = record(ctx, report, f"every20-{round_index}",
                             ["--capture-every", str(FAST_EVERY), "--capture-length", str(FAST_LENGTH)], argv)
        if not (truth and windowed):
            report.add("capture every 20", "FAIL", "a run failed", plain.brief())
            return
        detaches += STDERR.get(f"every20-{round_index}", "").count("capture: CUPTI detached")
        untraced.append(statistics.median(truth["step_ms"][FIRST_MEASURED:]))
        times = list(enumerate(windowed["step_ms"]))[FIRST_MEASURED:]
        for phase, values in phases.items():
            values.append(statistics.median([t for i, t in times if fast_phase(i) == phase]))
    u = statistics.median(untraced)
    aa = 100 * (untraced[1] / untraced[0] - 1)
    figures = {phase: statistics.median(values) for phase, values in phases.items()}
    report.add("capture every 20, length 3: median step untraced (A/A) / inside / grace / detached (ms)", "INFO",
               f"{[round(x, 3) for x in untraced]} (A/A {aa:+.1f}%) / "
               + " / ".join(f"{figures[p]:.3f} ({100 * (figures[p] / u - 1):+.1f}%)"
                            for p in ("inside", "grace", "detached"))
               + f"; {detaches} detaches in {2 * (FAST_STEPS // FAST_EVERY)} windows")
    report.judge("capture every 20: CUPTI detached after (nearly) every window", detaches >= FAST_STEPS // FAST_EVERY,
                 f"{detaches} detaches")
    figure = f"{100 * (figures['detached'] / u - 1):+.1f}% (A/A {aa:+.1f}%)"
    if abs(aa) > 1.0:
        # Two untraced processes differ by more than the goal: this setting cannot judge 1% (not passed either).
        # bench/component_cost.py measures it inside one process
        # (docs/benchmarks.md "What each collector part costs, inside one process").
        report.add("capture every 20 goal: detached steps within 1% of untraced", "SKIP", figure,
                   "the A/A control is wider than the goal; see bench/component_cost.py's in-process figure")
        return
    report.judge("capture every 20 goal: detached steps within 1% of untraced", figures["detached"] <= 1.01 * u,
                 figure)


def run_all(ctx, report, state):
    only = {n for n in os.environ.get("FP8SCOPE_CAPTURE_ONLY", "").split(",") if n}
    for name, fn, seconds in (("steps", check_steps, 40), ("no markers", check_no_markers, 30),
                              ("periodic", check_periodic, 40),
                              ("profiler", check_profiler, 30), ("time", check_time, 40),
                              ("real jobs", check_realjobs, 120),
                              ("overhead", check_overhead, 220), ("every 20", check_overhead_every_20, 120)):
        if only and name not in only:  # FP8SCOPE_CAPTURE_ONLY=periodic,overhead: a few of the checks
            continue
        g.guarded(report, f"capture {name}", seconds, fn, ctx, report, torch=True)
