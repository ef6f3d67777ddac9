"""What the GPU verification steps share: running commands with timeouts and logs, the collector's environment,
ground-truth parsing, and the result table (written to $OUT/summary.json after every result, so that a run cut
short still leaves its results behind).

The device returns at most 8 files from $OUT (16 MiB each, names of letters, digits, '.', '_', '-'), so $OUT
holds only summary.json, run_all.log, a few kept traces and two archives that pack_results.py makes from the
scratch folder: details.tar.gz (logs of every command, per-check JSON) and traces-extra.tar.gz."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIVE = set()  # process groups started and not yet reaped: killed if the driver itself is terminated
SAMPLES = ("launch_bound", "host_stall", "syncs", "multistream", "graph")
GROUND_TRUTH_PREFIX = "FP8SCOPE_GROUND_TRUTH "
# Every multi-process run keeps NVLink multicast off (NCCL's NVLS, PyTorch's symmetric memory, NVSHMEM): the device
# machines must not use it.
NVLINK_MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


@dataclass
class Result:
    name: str
    argv: list
    rc: int | None  # negative: killed by that signal (subprocess convention)
    stdout: str
    stderr: str
    wall_s: float
    timed_out: bool

    def brief(self):
        return f"rc={self.rc}{' TIMEOUT' if self.timed_out else ''} {self.wall_s:.1f}s"


class Ctx:
    """Paths of one build, the output folder, and the time budget of the whole run."""

    MAX_KEPT_BYTES = 15 << 20  # under the device's 16 MiB per returned file
    KEPT_IN_OUT = 3  # traces directly in $OUT; further ones go to traces-extra.tar.gz

    def __init__(self, build, out, scratch, budget_s, python=None):
        self.build = Path(build).resolve()
        self.out = Path(out).resolve()
        scratch = Path(scratch).resolve()
        self.logs = scratch / "logs"  # packed into details.tar.gz
        self.details = scratch / "details"  # packed into details.tar.gz
        self.extra = scratch / "extra"  # packed into traces-extra.tar.gz
        self.work = scratch / "work"  # not returned
        for d in (self.out, self.logs, self.details, self.extra, self.work):
            d.mkdir(parents=True, exist_ok=True)
        self.kept = {}
        self.fp8scope = self.build / "bin" / "fp8scope"
        self.collector = self.build / "lib" / "libfp8scope.so"
        self.python = python or sys.executable
        self.train_py = Path(os.environ.get("FP8SCOPE_GPU_TRAIN_PY", REPO / "samples" / "torch" / "train.py")).resolve()
        self.start = time.monotonic()
        self.deadline = self.start + budget_s
        self.counter = 0
        self.use_record = True  # set by the preflight step: False means env injection replaces `fp8scope record`
        self.torch = None  # set by the preflight step: "torch <version> cuda <version>" when torch sees a GPU

    def keep(self, name, path, top=False):
        """Keeps a trace (or a folder) for the lead: in $OUT when top and the slots allow, else in the extra
        archive. Returns where it went, or a reason it was not kept."""
        path = Path(path)
        size = sum(p.stat().st_size for p in path.rglob("*")) if path.is_dir() else path.stat().st_size
        self.kept[name] = size
        if size > self.MAX_KEPT_BYTES:
            return f"not kept: {size / 1e6:.1f} MB"
        in_out = sum(1 for p in self.out.glob("trace-*"))
        target = (self.out if top and in_out < self.KEPT_IN_OUT and path.is_file() else self.extra) / f"trace-{name}"
        if path.is_dir():
            shutil.copytree(path, target, dirs_exist_ok=True)
        else:
            shutil.copyfile(path, target)
        return str(target)

    def sample(self, name):
        return self.build / "samples" / f"fp8scope_sample_{name}"

    def time_left(self):
        return self.deadline - time.monotonic()

    def fresh_dir(self, name):
        d = self.work / name
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        return d

    def injected_env(self, pattern, extra=None):
        """The collector's contract: the driver loads the library at cuInit, NVTX forwards to it."""
        env = dict(os.environ)
        env["CUDA_INJECTION64_PATH"] = str(self.collector)
        env["NVTX_INJECTION64_PATH"] = str(self.collector)
        env["FP8SCOPE_OUTPUT"] = str(pattern)
        env.update(extra or {})
        return env

    def traced(self, pattern, argv, extra_env=None):
        """(argv, env) running argv traced: through `fp8scope record` when it works, else by env injection."""
        if self.use_record:
            env = dict(os.environ)
            env.update(extra_env or {})
            return [str(self.fp8scope), "record", "-o", str(pattern), "--", *map(str, argv)], env
        return [str(x) for x in argv], self.injected_env(pattern, extra_env)


def _log_name(ctx, name):
    """The log files' common stem; .cmd, .out and .err are appended (a '.' in the name is no suffix)."""
    ctx.counter += 1
    return str(ctx.logs / f"{ctx.counter:03d}-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}")


def start(ctx, name, argv, env=None, cwd=None):
    """Starts argv in its own process group (so that a timeout kills its children too)."""
    argv = [str(a) for a in argv]
    base = _log_name(ctx, name)
    Path(base + ".cmd").write_text(" ".join(argv) + "\n")
    out = open(Path(base + ".out"), "w+")
    err = open(Path(base + ".err"), "w+")
    try:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as error:
        err.write(f"cannot start: {error}\n")
        out.close()
        err.close()
        raise
    LIVE.add(proc)
    return {"name": name, "argv": argv, "proc": proc, "out": out, "err": err, "t0": time.monotonic(), "base": base}


def finish(handle, timeout_s):
    proc = handle["proc"]
    timed_out = False
    try:
        proc.wait(timeout=max(1.0, timeout_s))
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc, signal.SIGKILL)
        proc.wait()
    kill_group(proc, signal.SIGKILL)  # whatever the command left behind in its group (e.g. orphaned workers)
    LIVE.discard(proc)
    wall_s = time.monotonic() - handle["t0"]
    texts = []
    for f in (handle["out"], handle["err"]):
        f.flush()
        f.seek(0)
        texts.append(f.read())
        f.close()
    rc = proc.returncode
    with open(Path(handle["base"] + ".cmd"), "a") as f:
        f.write(f"# rc={rc} timed_out={timed_out} wall_s={wall_s:.2f}\n")
    return Result(handle["name"], handle["argv"], rc, texts[0], texts[1], wall_s, timed_out)


def run(ctx, name, argv, env=None, timeout_s=60, cwd=None):
    """Runs argv to its end or its timeout (never past the run's budget by more than 5 s). A program that cannot
    be started gives exit code 127, as a shell would."""
    timeout_s = min(timeout_s, max(5.0, ctx.time_left()))
    try:
        handle = start(ctx, name, argv, env, cwd)
    except OSError as error:
        return Result(name, [str(a) for a in argv], 127, "", f"cannot start: {error}", 0.0, False)
    return finish(handle, timeout_s)


def kill_live_groups(signum, _frame):
    """SIGTERM/SIGINT handler of the driver: its commands run in their own groups, so take them down too."""
    for proc in list(LIVE):
        kill_group(proc, signal.SIGKILL)
    sys.exit(128 + signum)


def kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def torchrun_argv(python, args):
    """torchrun ARGS: the launcher next to `python`, else the one on the PATH, else `python -m torch.distributed.run`."""
    torchrun = Path(python).parent / "torchrun"
    if not torchrun.exists():
        torchrun = shutil.which("torchrun")
    return [str(torchrun), *map(str, args)] if torchrun else [str(python), "-m", "torch.distributed.run",
                                                              *map(str, args)]


def ground_truth(stdout):
    """The JSON of the last FP8SCOPE_GROUND_TRUTH line, or None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(GROUND_TRUTH_PREFIX):
            try:
                return json.loads(line[len(GROUND_TRUTH_PREFIX):])
            except json.JSONDecodeError:
                return None
    return None


_TIMED_VALUE = re.compile(r"\b(\w+_(?:ns|ms))(\s+)-?[0-9][0-9.e+-]*")


# Ground-truth fields that say whether the fp8scope package was importable: under `fp8scope record` it is (record puts
# it on the job's path), untraced it need not be. They describe the tracer, not the run.
_TRACER_FIELDS = ("fp8scope_package", "fp8scope_annotate")


def _drop_timed(value):
    if isinstance(value, dict):
        return {k: _drop_timed(v) for k, v in value.items()
                if not re.search(r"_(ns|ms)$", k) and k not in _TRACER_FIELDS}
    if isinstance(value, list):
        return [_drop_timed(v) for v in value]
    return value


def normalized_stdout(stdout):
    """stdout with the values that differ from run to run (host times, step times) or between a traced and an untraced
    run by design (whether the fp8scope package was found) masked, counts kept."""
    lines = []
    for line in stdout.splitlines():
        if line.startswith(GROUND_TRUTH_PREFIX):
            truth = ground_truth(line)
            line = GROUND_TRUTH_PREFIX + json.dumps(_drop_timed(truth), sort_keys=True) if truth else line
        else:
            line = _TIMED_VALUE.sub(r"\1\2#", line)
        lines.append(line)
    return lines


def stdout_diff(a, b, limit=3):
    """'' when the normalized stdouts agree, else the first differing lines."""
    la, lb = normalized_stdout(a), normalized_stdout(b)
    if la == lb:
        return ""
    diffs = [f"line {i}: {x[:160]!r} != {y[:160]!r}" for i, (x, y) in enumerate(zip(la, lb)) if x != y][:limit]
    if len(la) != len(lb):
        diffs.append(f"{len(la)} lines != {len(lb)} lines")
    return "; ".join(diffs)


def traces_in(directory):
    return sorted(p for p in Path(directory).glob("*.sqlite") if p.is_file())


def fp8scope_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("fp8scope")]


REPORT_LOCK = threading.Lock()


@dataclass
class Report:
    ctx: Ctx
    rows: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def add(self, check, status, figure="", detail=""):
        """status: PASS, FAIL, SKIP (not run) or INFO (a measurement, or a finding that is reported, not judged)."""
        row = {"check": check, "result": status, "figure": str(figure), "detail": str(detail)}
        with REPORT_LOCK:  # stages that run checks side by side (bitwise) add rows from several threads
            self.rows.append(row)
            print(f"[{time.monotonic() - self.ctx.start:6.1f}s] {status:4} {check}: {figure} {detail}"[:600],
                  flush=True)
            self.write()

    def judge(self, check, ok, figure="", detail=""):
        self.add(check, "PASS" if ok else "FAIL", figure, detail)
        return ok

    def write(self):
        summary = {
            "rows": self.rows,
            "counts": {s: sum(r["result"] == s for r in self.rows) for s in ("PASS", "FAIL", "SKIP", "INFO")},
            "elapsed_s": round(time.monotonic() - self.ctx.start, 1),
            **self.extra,
            "kept_bytes": self.ctx.kept,
        }
        tmp = self.ctx.out / "summary.json.tmp"
        tmp.write_text(json.dumps(summary, indent=1, default=str))
        tmp.replace(self.ctx.out / "summary.json")

    def table(self):
        width = min(58, max((len(r["check"]) for r in self.rows), default=10))
        lines = [f"{'check':{width}}  result  figure", "-" * (width + 40)]
        for r in self.rows:
            lines.append(f"{r['check'][:width]:{width}}  {r['result']:6}  {r['figure'][:90]}")
        c = {s: sum(r["result"] == s for r in self.rows) for s in ("PASS", "FAIL", "SKIP", "INFO")}
        lines.append(f"PASS {c['PASS']}  FAIL {c['FAIL']}  SKIP {c['SKIP']}  INFO {c['INFO']}  "
                     f"({time.monotonic() - self.ctx.start:.0f} s)")
        return "\n".join(lines)


def guarded(report, step_name, needed_s, fn, *args, torch=False):
    """Runs one step; an exception becomes a FAIL row (traceback in the log), too little time a SKIP row, and so
    does a step that needs PyTorch with a GPU (torch=True) when the preflight found none."""
    if torch and not report.ctx.torch:
        report.add(step_name, "SKIP", "no PyTorch with a CUDA device (see the 'torch' row)")
        return None
    left = report.ctx.time_left()
    if left < needed_s:
        report.add(step_name, "SKIP", f"needs ~{needed_s:.0f} s, {left:.0f} s left")
        return None
    try:
        return fn(*args)
    except Exception as error:  # one failing step must not stop the others
        (report.ctx.logs / f"exception-{re.sub(r'[^A-Za-z0-9_]', '_', step_name)}.txt").write_text(
            traceback.format_exc())
        report.add(step_name, "FAIL", f"{type(error).__name__}: {error}"[:200], "traceback in logs/exception-*")
        return None
