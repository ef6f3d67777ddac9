"""Lifecycle under signals: SIGTERM mid-run gives a finished trace and the same death-by-SIGTERM as untraced;
SIGKILL mid-run leaves an unfinished trace that opens read-only and holds the kernels committed so far.

The workload is the host_stall sample with a long run (about 3 ms per step, roughly 2,700 kernels/s, so the
trace stays small). It is traced by environment injection, so that the signal reaches the sample itself."""

import os
import signal
import time

import gpu_common as g
import trace_checks as tc

LONG_RUN = ["--steps", "100000", "--stall-ms", "2", "--kernel-us", "100"]
SETTLE_S = 3.0  # time after the trace appears: several of the writer's commits (every 500 ms)


def wait_for(predicate, timeout_s, proc):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and proc.poll() is None:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def run_and_signal(ctx, name, argv, env, sig, ready, to_group=False):
    """Starts argv, waits until ready() (or 40 s; None: 1 s for CUDA to start), lets it run SETTLE_S more, sends
    sig. Returns (Result, whether the signal was sent to a live process)."""
    handle = g.start(ctx, name, argv, env)
    proc = handle["proc"]
    if ready is None:
        time.sleep(1.0)
    else:
        wait_for(ready, 40, proc)
    time.sleep(SETTLE_S)
    sent = proc.poll() is None
    if sent:
        if to_group:
            g.kill_group(proc, sig)
        else:
            os.kill(proc.pid, sig)
    return g.finish(handle, 60), sent


def sigterm_case(ctx, report, label, argv, plain_ready, traced_extra_env=None):
    directory = ctx.fresh_dir(f"sigterm-{label}")
    plain, _ = run_and_signal(ctx, f"sigterm-{label}-plain", argv, None, signal.SIGTERM, plain_ready)
    if plain.rc == 77:
        report.add(f"SIGTERM mid-run ({label})", "SKIP", "exit 77 (no CUDA device)")
        return
    env = ctx.injected_env(directory / "trace-%p.sqlite", traced_extra_env)
    traced, sent = run_and_signal(ctx, f"sigterm-{label}-traced", argv, env, signal.SIGTERM,
                                  lambda: bool(g.traces_in(directory)))
    traces = g.traces_in(directory)
    figure = f"rc {plain.rc} -> {traced.rc}"
    if len(traces) != 1 or not sent:
        report.add(f"SIGTERM mid-run ({label})", "FAIL", f"{figure}, {len(traces)} traces, signal sent {sent}",
                   traced.stderr.strip()[-300:])
        return
    s = tc.summarize(traces[0])
    reason = str(s["meta"].get("finish_reason"))
    ok = plain.rc == -signal.SIGTERM and traced.rc == -signal.SIGTERM and s["meta"].get("finished") == 1 \
        and "TERM" in reason.upper() and s["kernels"] > 0 and s["dropped"] == 0
    report.judge(f"SIGTERM mid-run ({label}): finished trace, death by SIGTERM", ok,
                 f"{figure}, finished {s['meta'].get('finished')} ({reason}), {s['kernels']} kernels, "
                 f"dropped {s['dropped']}", f"meta keys {sorted(s['meta'])}; stderr {g.fp8scope_lines(traced.stderr)}")


def sigterm_record_group(ctx, report, argv):
    """SIGTERM to the whole process group of `fp8scope record` (what a job scheduler or timeout(1) -s TERM does
    to a group): reported, since what record itself does with the signal is its own design."""
    if not ctx.use_record:
        report.add("SIGTERM to fp8scope record's group", "SKIP", "fp8scope record unavailable")
        return
    directory = ctx.fresh_dir("sigterm-record-group")
    traced_argv, env = ctx.traced(directory / "trace-%p.sqlite", argv)
    result, sent = run_and_signal(ctx, "sigterm-record-group", traced_argv, env, signal.SIGTERM,
                                  lambda: bool(g.traces_in(directory)), to_group=True)
    if result.rc == 77:
        report.add("SIGTERM to fp8scope record's group", "SKIP", "exit 77 (no CUDA device)")
        return
    traces = g.traces_in(directory)
    finished = [tc.summarize(t)["meta"].get("finished") for t in traces]
    report.add("SIGTERM to fp8scope record's group", "INFO",
               f"record rc {result.rc} (143 = 128+SIGTERM), traces finished {finished}",
               f"sent {sent}; stderr {g.fp8scope_lines(result.stderr)[-3:]}")


def sigkill_case(ctx, report, argv):
    directory = ctx.fresh_dir("sigkill")
    env = ctx.injected_env(directory / "trace-%p.sqlite")
    traced, sent = run_and_signal(ctx, "sigkill-traced", argv, env, signal.SIGKILL,
                                  lambda: bool(g.traces_in(directory)))
    traces = g.traces_in(directory)
    if traced.rc == 77:
        report.add("SIGKILL mid-run", "SKIP", "exit 77 (no CUDA device)")
        return
    if len(traces) != 1 or not sent:
        report.add("SIGKILL mid-run", "FAIL", f"rc {traced.rc}, {len(traces)} traces, signal sent {sent}",
                   traced.stderr.strip()[-300:])
        return
    files = sorted(p.name for p in directory.iterdir())
    try:
        s = tc.summarize(traces[0])
    except Exception as error:  # sqlite3.Error or worse: the point of the check
        report.add("SIGKILL mid-run: trace opens read-only", "FAIL", f"{type(error).__name__}: {error}",
                   f"files {files}")
        return
    ok = traced.rc == -signal.SIGKILL and s["meta"].get("finished") == 0 and s["kernels"] > 0
    report.judge("SIGKILL mid-run: opens read-only, finished=0, kernels committed", ok,
                 f"rc {traced.rc}, finished {s['meta'].get('finished')}, {s['kernels']} kernels, "
                 f"{s['runtime_rows']} API rows", f"files {files}")
    info = g.run(ctx, "sigkill-info", [ctx.fp8scope, "info", traces[0], "--format", "json"], timeout_s=30)
    report.judge("SIGKILL trace: fp8scope info reads it (unfinished)", info.rc == 0 and '"finished": false' in info.stdout,
                 info.brief(), info.stderr.strip()[:300])
    ctx.keep("sigkill", directory)  # the trace with its -wal and -shm, as SIGKILL left them


def run_all(ctx, report):
    sample = ctx.sample("host_stall")
    argv = [sample, *LONG_RUN]
    g.guarded(report, "SIGTERM mid-run (host_stall)", 25, sigterm_case, ctx, report, "host_stall", argv, None)
    g.guarded(report, "SIGKILL mid-run", 20, sigkill_case, ctx, report, argv)
    g.guarded(report, "SIGTERM to fp8scope record's group", 20, sigterm_record_group, ctx, report, argv)
    loop = [ctx.python, g.REPO / "tests" / "gpu" / "workloads" / "torch_loop.py", "120"]
    logs = ctx.logs
    # Python leaves SIGTERM at its default disposition; the plain run is ready once it printed "running".
    g.guarded(report, "SIGTERM mid-run (python torch loop)", 60, sigterm_case, ctx, report, "python torch loop",
              loop, _latest_out_has(logs, "running"), torch=True)


def _latest_out_has(logs, text):
    def ready():
        outs = sorted(logs.glob("*.out"))
        return bool(outs) and text in outs[-1].read_text(errors="replace")
    return ready
