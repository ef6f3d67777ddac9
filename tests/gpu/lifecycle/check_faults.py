"""Collector fault injection (docs/reliability.md "The collector under faults"): a full disk, a read-only output folder,
the output folder removed mid-run, signal storms, a fork storm, 8 traced processes on one GPU, and a loss that goes NaN.
In every case the job's exit code and output must be those of the same run untraced, and the trace either finished, or
unfinished but readable, with any loss in FP8SCOPE_DROPPED and at most one warning line on stderr.

Jobs are traced by environment injection, so that limits and signals reach the job itself. The read-only and
tmpfs cases mount a tmpfs where the machine allows it (root), and say so in the figure otherwise."""

import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import gpu_common as g
import trace_checks as tc

WORKLOADS = g.REPO / "tests" / "gpu" / "workloads"
# A small FP8 training run: about 60 steps, a trace of a few MB.
TRAIN = ["--precision", "fp8", "--steps", "60", "--layers", "2", "--d-model", "512", "--seq", "256", "--batch", "8"]
FILE_LIMIT_KIB = 1024  # RLIMIT_FSIZE for the full-disk case: far below the trace's size


def warnings(stderr):
    return [line for line in stderr.splitlines() if line.startswith("fp8scope: warning")]


def unchanged(plain, traced):
    diff = g.stdout_diff(plain.stdout, traced.stdout)
    return plain.rc == traced.rc and not diff, f"rc {plain.rc} -> {traced.rc}", diff


def trace_state(ctx, path):
    """(readable by `fp8scope info`, finished, kernels, WRITER_ERROR loss, all dropped) of one trace."""
    info = g.run(ctx, f"info-{Path(path).name}", [ctx.fp8scope, "info", path, "--format", "json"], timeout_s=60)
    try:
        s = tc.summarize(path)
        lost = _writer_error_loss(path)
        return info.rc == 0, s["meta"].get("finished"), s["kernels"], lost, s["dropped"]
    except Exception as error:  # sqlite3.Error: the finding
        return False, None, 0, None, f"unreadable: {error}"


def _writer_error_loss(path):
    db = tc.open_ro(path)
    try:
        return db.execute("SELECT COALESCE(SUM(count), 0) FROM FP8SCOPE_DROPPED WHERE source = 3").fetchone()[0]
    finally:
        db.close()


def train_argv(ctx, extra=()):
    return [ctx.python, ctx.train_py, *TRAIN, *extra]


def mount_tmpfs(directory, options):
    """Mounts a tmpfs on directory; False when this machine does not allow it."""
    if os.geteuid() != 0:
        return False
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(directory)], capture_output=True,
                            text=True, timeout=30)
    return result.returncode == 0


def unmount(directory):
    subprocess.run(["umount", "-l", str(directory)], capture_output=True, timeout=30)


def full_disk(ctx, report, state):
    """RLIMIT_FSIZE (both runs), and a 3 MiB tmpfs where mounting is allowed: writes fail mid-run."""
    limited = ["bash", "-c", f'ulimit -f {FILE_LIMIT_KIB} && exec "$@"', "bash"]
    plain = g.run(ctx, "fsize-plain", limited + train_argv(ctx), timeout_s=180)
    if plain.rc == 77:
        report.add("full disk", "SKIP", "exit 77 (no CUDA device or no FP8)")
        return
    state["plain"] = g.run(ctx, "train-plain", train_argv(ctx), timeout_s=180)
    cases = [("RLIMIT_FSIZE 1 MiB", limited, None, plain)]
    tmpfs = ctx.fresh_dir("fault-tmpfs")
    if mount_tmpfs(tmpfs, "size=3m"):
        cases.append(("tmpfs of 3 MiB", [], tmpfs, state["plain"]))
    else:
        report.add("full disk: tmpfs of 3 MiB", "SKIP", "cannot mount a tmpfs on this machine")
    for label, prefix, where, baseline in cases:
        directory = where or ctx.fresh_dir("fault-fsize")
        env = ctx.injected_env(directory / "trace-%p.sqlite")
        traced = g.run(ctx, f"full-disk-{label}", prefix + train_argv(ctx), env=env, timeout_s=240)
        same, figure, diff = unchanged(baseline, traced)
        lines = warnings(traced.stderr)
        traces = g.traces_in(directory)
        states = [trace_state(ctx, t) for t in traces]
        ok = same and len(lines) == 1 and "cannot write the trace" in lines[0] and len(states) == 1 \
            and states[0][0] and (states[0][3] or 0) > 0
        report.judge(f"full disk ({label}): run unchanged, one warning, readable, loss in FP8SCOPE_DROPPED", ok,
                     f"{figure}; (readable, finished, kernels, WRITER_ERROR, dropped) {states}",
                     f"{diff} warnings {lines[:2]}")
        for t in traces:
            ctx.keep(f"full-disk-{label.split()[0]}", t)
        if where:
            unmount(where)


def read_only_folder(ctx, report, state):
    plain = state.get("plain") or g.run(ctx, "train-plain", train_argv(ctx), timeout_s=180)
    directory = ctx.fresh_dir("fault-readonly")
    how = "read-only tmpfs"
    if not mount_tmpfs(directory, "ro,size=1m"):
        directory.chmod(0o555)
        how = "chmod 555" + (" (root ignores it)" if os.geteuid() == 0 else "")
    env = ctx.injected_env(directory / "trace-%p.sqlite")
    traced = g.run(ctx, "readonly-traced", train_argv(ctx), env=env, timeout_s=180)
    same, figure, diff = unchanged(plain, traced)
    lines = warnings(traced.stderr)
    files = sorted(p.name for p in directory.iterdir())
    ok = same and len(lines) == 1 and "cannot create trace" in lines[0] and not files
    report.judge(f"read-only output folder ({how}): run unchanged, one warning, nothing written", ok,
                 f"{figure}, files {files}, {lines[:1]}"[:300], diff)
    if how == "read-only tmpfs":
        unmount(directory)


def folder_removed(ctx, report, state):
    plain = state.get("plain") or g.run(ctx, "train-plain", train_argv(ctx), timeout_s=180)
    directory = ctx.fresh_dir("fault-removed") / "out"
    env = ctx.injected_env(directory / "trace-%p.sqlite")
    handle = g.start(ctx, "removed-traced", train_argv(ctx, ["--steps", "200"]), env=env)
    proc = handle["proc"]
    end = time.monotonic() + 90
    while time.monotonic() < end and proc.poll() is None and not (directory.exists() and g.traces_in(directory)):
        time.sleep(0.1)
    time.sleep(2.0)  # a few commits into the file
    removed = proc.poll() is None and directory.exists()
    if removed:
        subprocess.run(["rm", "-rf", str(directory)], timeout=30)
    traced = g.finish(handle, 240)
    longer = g.run(ctx, "removed-plain", train_argv(ctx, ["--steps", "200"]), timeout_s=240)
    same, figure, diff = unchanged(longer, traced)
    lines = warnings(traced.stderr)
    ok = removed and same and len(lines) == 1 and "removed while recording" in lines[0]
    report.judge("output folder removed mid-run: run unchanged, one warning", ok,
                 f"{figure}, removed while running {removed}, {lines[:1]}"[:300], diff)


def _storm(pid, signals, count, stop):
    sent = 0
    while sent < count and not stop.is_set():
        for sig in signals:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return sent
            sent += 1
        if sent % 300 == 0:
            time.sleep(0.005)
    return sent


def storm_run(ctx, name, argv, env, signals, count):
    handle = g.start(ctx, name, argv, env)
    proc = handle["proc"]
    logs = Path(handle["base"] + ".out")
    end = time.monotonic() + 60
    while time.monotonic() < end and proc.poll() is None and "running" not in logs.read_text(errors="replace"):
        time.sleep(0.05)
    stop = threading.Event()
    sent = _storm(proc.pid, signals, count, stop)
    return g.finish(handle, 180), sent


def signal_storms(ctx, report):
    argv = [ctx.python, WORKLOADS / "signal_storm.py", "3000"]
    storms = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1)
    plain, sent_plain = storm_run(ctx, "storm-plain", argv, None, storms, 6000)
    if plain.rc == 77:
        report.add("signal storm", "SKIP", "exit 77")
        return
    directory = ctx.fresh_dir("fault-storm")
    traced, sent = storm_run(ctx, "storm-traced", argv, ctx.injected_env(directory / "trace-%p.sqlite"), storms, 6000)
    same, figure, diff = unchanged(plain, traced)
    states = [trace_state(ctx, t) for t in g.traces_in(directory)]
    received = [line for line in traced.stderr.splitlines() if line.startswith("signals")]
    ok = same and plain.rc == 0 and len(states) == 1 and states[0][:2] == (True, 1) and states[0][4] == 0 \
        and not warnings(traced.stderr)
    report.judge("SIGTERM+SIGINT+SIGUSR1 storm (handled by the job): run unchanged, trace finished, nothing lost", ok,
                 f"{figure}, {sent} signals sent ({sent_plain} untraced), {received[:1]}, "
                 f"(readable, finished, kernels, WRITER_ERROR, dropped) {states}"[:300], diff)
    # The default disposition: the first SIGTERM ends the job; the storm goes on while the collector finishes.
    argv = [ctx.python, WORKLOADS / "torch_loop.py", "60"]
    plain, _ = storm_run(ctx, "term-storm-plain", argv, None, (signal.SIGTERM,), 2000)
    directory = ctx.fresh_dir("fault-term-storm")
    traced, sent = storm_run(ctx, "term-storm-traced", argv, ctx.injected_env(directory / "trace-%p.sqlite"),
                             (signal.SIGTERM,), 2000)
    states = [trace_state(ctx, t) for t in g.traces_in(directory)]
    ok = plain.rc == traced.rc == -signal.SIGTERM and len(states) == 1 and states[0][0]
    report.judge("SIGTERM storm (default disposition): dies by SIGTERM as untraced, trace readable", ok,
                 f"rc {plain.rc} -> {traced.rc}, {sent} sent, (readable, finished, kernels, WRITER_ERROR, dropped) "
                 f"{states}", str(warnings(traced.stderr)[:2]))


def fork_storm(ctx, report):
    argv = [ctx.python, WORKLOADS / "fork_storm.py", "20"]
    plain = g.run(ctx, "forks-plain", argv, timeout_s=240)
    if plain.rc == 77:
        report.add("fork storm", "SKIP", "exit 77")
        return
    directory = ctx.fresh_dir("fault-forks")
    traced = g.run(ctx, "forks-traced", argv, env=ctx.injected_env(directory / "trace-%p.sqlite"), timeout_s=240)
    same, figure, diff = unchanged(plain, traced)
    states = [trace_state(ctx, t) for t in g.traces_in(directory)]
    ok = same and plain.rc == 0 and len(states) == 1 and states[0][:2] == (True, 1) and states[0][4] == 0 \
        and not warnings(traced.stderr)
    report.judge("fork storm (8 DataLoader workers forked every step, 20 steps): run unchanged, one finished trace",
                 ok, f"{figure}, plain {plain.wall_s:.0f} s, traced {traced.wall_s:.0f} s, "
                 f"(readable, finished, kernels, WRITER_ERROR, dropped) {states}"[:300], diff)


def crowd(ctx, report, state):
    """8 traced processes on one GPU at once, against the same 8 untraced at once."""
    def eight(label, traced):
        directory = ctx.fresh_dir(f"fault-crowd-{label}")
        env = ctx.injected_env(directory / "trace-%p.sqlite") if traced else None
        handles = [g.start(ctx, f"crowd-{label}-{i}", train_argv(ctx, ["--seed", str(100 + i)]), env=env)
                   for i in range(8)]
        t0 = time.monotonic()
        results = [g.finish(h, 400) for h in handles]
        return results, time.monotonic() - t0, g.traces_in(directory)

    plain, plain_s, _ = eight("plain", False)
    traced, traced_s, traces = eight("traced", True)
    pairs = [unchanged(p, t) for p, t in zip(plain, traced)]
    states = [trace_state(ctx, t) for t in traces]
    ok = all(same for same, _, _ in pairs) and all(r.rc == 0 for r in plain) and len(states) == 8 \
        and all(s[:2] == (True, 1) and s[4] == 0 for s in states) and not any(warnings(r.stderr) for r in traced)
    report.judge("8 traced processes on one GPU at once: each run unchanged, 8 finished traces, nothing dropped", ok,
                 f"wall {plain_s:.0f} s untraced, {traced_s:.0f} s traced; dropped {[s[4] for s in states]}, "
                 f"kernels {[s[2] for s in states]}"[:300], "; ".join(d for _, _, d in pairs if d)[:300])


def nan_values(ctx, report):
    """A loss that goes NaN on the device, a host scalar logged as NaN and one as +Inf (workloads/nan_scalars.py):
    the job unchanged, and the trace holds each as the job printed it, with nothing lost (schema 1.4)."""
    argv = [ctx.python, WORKLOADS / "nan_scalars.py", "20", "12"]
    package = {"PYTHONPATH": str(g.REPO / "probes" / "python")}
    plain = g.run(ctx, "nan-plain", argv, env=dict(os.environ, **package), timeout_s=120)
    if plain.rc == 77:
        report.add("NaN scalars", "SKIP", "exit 77")
        return
    directory = ctx.fresh_dir("fault-nan")
    traced = g.run(ctx, "nan-traced", argv, env=ctx.injected_env(directory / "trace-%p.sqlite", package),
                   timeout_s=120)
    same, figure, diff = unchanged(plain, traced)
    truth = g.ground_truth(traced.stdout) or {}
    traces = g.traces_in(directory)
    states = [trace_state(ctx, t) for t in traces]
    rows = {}
    if len(traces) == 1:
        db = sqlite3.connect(f"file:{traces[0]}?mode=ro", uri=True)
        try:
            query = ("SELECT s.value, n.step FROM {} n JOIN StringIds s ON s.id = n.nameId ORDER BY n.timestamp")
            rows["nan"] = db.execute(query.format("FP8SCOPE_SCALAR_NAN")).fetchall()
            rows["inf"] = db.execute("SELECT s.value, n.step FROM FP8SCOPE_SCALAR n JOIN StringIds s ON s.id = "
                                     "n.nameId WHERE n.value > 1e308 ORDER BY n.timestamp").fetchall()
        finally:
            db.close()
    result = g.run(ctx, "nan-report", [ctx.fp8scope, "report", traces[0], "--format", "json", "--no-progress"]
                   if traces else ["true"], timeout_s=60)
    try:
        nan_report = {e["name"]: e for e in json.loads(result.stdout)["nan_scalars"]}
    except (ValueError, KeyError):
        nan_report = {}
    want_nan = sorted([("loss", s) for s in truth.get("loss_nan_steps", [])]
                      + [(name, s) for name, steps in truth.get("host_nan", {}).items() for s in steps])
    want_inf = [(name, s) for name, steps in truth.get("host_inf", {}).items() for s in steps]
    loss = nan_report.get("loss", {})
    ok = same and plain.rc == 0 and len(states) == 1 and states[0][:2] == (True, 1) and states[0][4] == 0 \
        and sorted(rows.get("nan", [])) == want_nan and rows.get("inf") == want_inf \
        and bool(truth.get("loss_nan_steps")) and loss.get("first_step") == truth["loss_nan_steps"][0] \
        and loss.get("nan_values") == len(truth["loss_nan_steps"]) and not warnings(traced.stderr)
    report.judge("NaN scalars (loss NaN on the device from step 12, a host NaN, a host +Inf): run unchanged, each in "
                 "the trace as printed, report names the first NaN step", ok,
                 f"{figure}; NaN rows {len(rows.get('nan', []))} (printed {len(want_nan)}), Inf rows "
                 f"{rows.get('inf')} (printed {want_inf}); report loss {loss}; (readable, finished, kernels, "
                 f"WRITER_ERROR, dropped) {states}"[:400], diff)


def run_all(ctx, report):
    state = {}
    g.guarded(report, "full disk", 120, full_disk, ctx, report, state, torch=True)
    g.guarded(report, "read-only output folder", 40, read_only_folder, ctx, report, state, torch=True)
    g.guarded(report, "output folder removed mid-run", 80, folder_removed, ctx, report, state, torch=True)
    g.guarded(report, "signal storms", 80, signal_storms, ctx, report, torch=True)
    g.guarded(report, "fork storm", 90, fork_storm, ctx, report, torch=True)
    g.guarded(report, "8 traced processes on one GPU", 120, crowd, ctx, report, state, torch=True)
    g.guarded(report, "NaN scalars", 30, nan_values, ctx, report, torch=True)
