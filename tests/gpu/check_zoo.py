"""The workload zoo (docs/accuracy.md "Accuracy on the zoo"): record every workload of a stage with the collector, keep
each trace xz-compressed with the truth its program printed, and measure the untraced timings (the CUDA-graph replay
against eager, FP8 against its BF16 twin) that the analyzer's answers are judged by.

Stages (tests/gpu/zoo/registry.py says which workload runs in which):
  zoo1      plain PyTorch patterns (data loading, accumulation, evaluation, logging, variable lengths, checkpointing,
            hand-written SGD, CUDA graphs, torch.compile), the CUDA C++ sample, DDP over gloo on one GPU, JAX,
            Hugging Face; timing: eager_mlp_item eager vs graph replay
  zoo2      torch.compile reduce-overhead, the FP8/BF16 twins (train.py delayed and current scaling, torchao
            Float8Linear), clean and with planted drift; timing: FP8 against BF16
  zoo-ddp2  DDP over NCCL, one GPU per rank (SKIP "needs 2 GPUs" with fewer)
  zoo-recipes  rowwise (torchao on a Hugging Face Llama) and DeepSeek-style blockwise FP8 with their BF16 twins,
            clean and with planted drift (issue 31); the stage `recipes` (zoo/check_recipes.py) then checks them
  zoo-markerless  issue 42 item 5: patterns the analyzer is judged on with the job's markers and with them ignored
            (a sleep at the loop's top, DDP over gloo with a rank sleeping there, GradScaler, checkpoints every N
            steps, a compile graph break, a side-stream prefetch, clipping with a non-finite check, a GPU-bound loop),
            each printing when it set each marker, and a zero-code FP8/BF16 pair with no markers at all
  zoo-slowdrift  issue 43: train.py (a smaller model) with slow drifts (10-18% per step) planted at blocks.0.fc2,
            blocks.1.qkv (set without a host sync) and blocks.1.proj, each with its BF16 twin, a clean pair, and a
            planted overflow judged alone; truth "numerics" says healthy, at_risk_or_broken, broken or reference
  zoo-compiled  issue 44: a mid-size Hugging Face Llama under torch.compile in BF16 and torchao tensorwise and
            rowwise FP8 (truth: what each Inductor kernel does, from its source), and the BF16 model eager
  zoo-fusion  issue 44: four held-out Hugging Face architectures (GPT-NeoX, BERT, OPT, Qwen2) traced eager in BF16,
            timed untraced eager and compiled in BF16, torchao tensorwise and rowwise: the eager-to-compiled what-if's
            measured answers

Per workload: one traced run (`fp8scope record`, one trace per process), judged PASS when it exits 0, prints the
expected number of truth lines, leaves that many traces with step markers (FP8SCOPE_STEP_MARKER; the CUDA sample:
its one trace's NVTX train_step ranges), each holding as many steps as the truth says and the registry expects. A
zero-code job (registry markers="none") instead leaves that many traces with kernels, markers not demanded (it makes
none; any the recorder's own hooks write are counted in the kept truth), and prints the registry's steps.
Each job has its own timeout and runs under gpu_common.guarded: one failure never stops the rest, and a job the
budget no longer fits is a SKIP. Then, while time remains, the untraced timing runs (alternating rounds), merged
into the kept truths.

Kept: zoo/<name>.sqlite.xz (lzma preset 9 | PRESET_EXTREME, compressed in the background while the next job runs)
and zoo/<name>.truth.json (-rank<r> per rank), packed uncompressed into $OUT/zoo-<stage>.tar:
`tar xf zoo-zoo1.tar -C samples/traces` puts them in samples/traces/zoo/. Each trace's raw and compressed size is
an INFO row; the budget is about 300 KiB compressed per trace.
"""

import json
import lzma
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import check_realjobs
import gpu_common as g

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "zoo"))
import registry  # noqa: E402  (tests/gpu/zoo/registry.py)

XZ_PRESET = 9 | lzma.PRESET_EXTREME
BUDGET_XZ_BYTES = 300 << 10  # per trace, compressed: a goal, reported, not judged
CAP_BYTES = 15 << 20  # the device returns files of at most 16 MiB
NVTX_STEP_RANGE = "train_step"


def expand(ctx, argv):
    """The registry's argv with its placeholders filled in."""
    subs = {"{python}": str(ctx.python), "{repo}": str(g.REPO), "{build}": str(ctx.build)}
    out = []
    for arg in argv:
        for key, value in subs.items():
            arg = arg.replace(key, value)
        out.append(arg)
    if out and out[0] == "{torchrun}":
        return g.torchrun_argv(ctx.python, out[1:])
    return out


def env_extra(extra=None):
    path = os.pathsep.join(p for p in (str(g.REPO / "probes" / "python"), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": path, "PYTHONUNBUFFERED": "1", **g.NVLINK_MULTICAST_OFF}
    env.update(extra or {})
    return env


def _count(trace, query):
    try:
        with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
            return db.execute(query).fetchone()[0]
    except sqlite3.Error:
        return 0


def step_markers(trace):
    return _count(trace, "SELECT COUNT(*) FROM FP8SCOPE_STEP_MARKER")


def kernel_count(trace):
    return _count(trace, "SELECT COUNT(*) FROM FP8SCOPE_KERNEL")


MARKER_SOURCES = {"fp8scope": "FP8SCOPE_STEP_MARKER", "nvtx": "NVTX train_step ranges",
                  "none": "none: a zero-code job (no fp8scope call); its steps are its truth's"}


def nvtx_steps(trace):
    return _count(trace, "SELECT COUNT(*) FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId "
                         f"WHERE COALESCE(e.text, s.value) = '{NVTX_STEP_RANGE}'")


def median_step_ms(truth):
    """A run's measured median step time: the zoo's measured.median_step_ms, the C++ sample's measured ns, or the
    top-level median_step_ms of programs that print their own truth (train.py, whatif.py)."""
    if not truth:
        return None
    measured = truth.get("measured") or {}
    if measured.get("median_step_ms") is not None:
        return measured["median_step_ms"]
    if measured.get("median_step_ns") is not None:
        return measured["median_step_ns"] / 1e6
    return truth.get("median_step_ms")


def normalized_truth(w, printed):
    """The truth kept for workload w: its program's truth with the registry's zoo fields under it, named by the
    zoo, and measured.*_ms beside any integer *_ns figure (the C++ sample's JSON writer has no floating point)."""
    truth = {**w.truth_extra, **printed}
    own_name = printed.get("workload") or printed.get("sample")
    if own_name != w.name:
        truth["program_workload"] = own_name
    truth["workload"] = w.name
    measured = dict(truth.get("measured") or {})
    for key, value in list(measured.items()):
        if "_ns" in key and isinstance(value, (int, float)) and not isinstance(value, bool):
            measured.setdefault(key.replace("_ns", "_ms"), value / 1e6)
    if "median_step_ms" not in measured and printed.get("median_step_ms") is not None:
        measured["median_step_ms"] = printed["median_step_ms"]
        measured["median_step_source"] = "the program's own median_step_ms, over all its steps"
    truth["measured"] = measured
    return truth


class Kept:
    """zoo/<name>.sqlite.xz and zoo/<name>.truth.json under the scratch folder, packed into $OUT/zoo-<stage>.tar.
    Traces are compressed on two background threads (lzma releases the GIL), so the next job need not wait."""

    def __init__(self, ctx, stage):
        self.stage = stage
        self.root = ctx.work / f"zoo-{stage}-keep"
        self.dir = self.root / "zoo"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.pending = {}  # name -> future of (raw bytes, xz bytes)
        self.sizes = {}  # name -> (raw bytes, xz bytes)
        self.truths = {}  # name -> the truth as kept
        self.traces = {}  # name -> the raw trace (scratch folder), for later stages of the same run

    def add(self, name, trace, truth):
        self.truths[name] = truth
        self.traces[name] = Path(trace)
        self.write_truth(name)
        self.pending[name] = self.pool.submit(self._compress, Path(trace), self.dir / f"{name}.sqlite.xz")

    @staticmethod
    def _compress(trace, target):
        partial = target.with_name(target.name + ".partial")
        with open(trace, "rb") as src, lzma.open(partial, "wb", preset=XZ_PRESET) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        partial.replace(target)
        return trace.stat().st_size, target.stat().st_size

    def write_truth(self, name):
        (self.dir / f"{name}.truth.json").write_text(json.dumps(self.truths[name], indent=1, sort_keys=True) + "\n")

    def merge(self, name, measured, timing):
        """Adds untraced medians to a kept truth's measured fields, and the runs behind them under untraced_timing."""
        truth = self.truths.get(name)
        if truth is None:
            return False
        truth.setdefault("measured", {}).update(measured)
        truth.setdefault("untraced_timing", {}).update(timing)
        self.write_truth(name)
        return True

    def wait(self, report):
        """Waits for the compressions; one INFO row per trace with its raw and compressed size."""
        for name, future in sorted(self.pending.items()):
            try:
                raw, xz = future.result()
            except Exception as error:  # a trace that cannot be compressed is lost, not the stage
                report.add(f"zoo size {name}", "FAIL", f"compression failed: {type(error).__name__}: {error}")
                continue
            self.sizes[name] = (raw, xz)
            truth = self.truths.get(name)
            if truth is not None:
                truth.setdefault("recorded", {}).update(trace_bytes=raw, trace_xz_bytes=xz)
                self.write_truth(name)
            over = xz > BUDGET_XZ_BYTES
            report.add(f"zoo size {name}", "INFO", f"{raw >> 10} KiB raw, {xz >> 10} KiB xz",
                       f"over the ~{BUDGET_XZ_BYTES >> 10} KiB budget: cut steps in tests/gpu/zoo/registry.py"
                       if over else "")
        self.pending.clear()

    def pack(self, out):
        """$OUT/zoo-<stage>.tar with every kept file (members zoo/<file>), smallest first, under the device's cap.
        Returns (archive name, files left out)."""
        archive = out / f"zoo-{self.stage}.tar"
        files = sorted((p for p in self.dir.iterdir() if p.is_file() and not p.name.endswith(".partial")),
                       key=lambda p: p.stat().st_size)
        total, left_out = 0, []
        partial = archive.with_name(archive.name + ".partial")
        with tarfile.open(partial, "w") as tar:
            for path in files:
                size = path.stat().st_size
                if total + size + 1024 > CAP_BYTES:
                    left_out.append(f"{path.name} ({size} bytes)")
                    continue
                tar.add(path, arcname=f"zoo/{path.name}")
                total += size + 1024
        partial.replace(archive)
        return archive.name, left_out


def record(ctx, report, kept, w):
    directory = ctx.fresh_dir(f"zoo-{w.name}")
    argv = expand(ctx, w.argv)
    targv, env = ctx.traced(directory / "trace-%p.sqlite", argv, env_extra(w.env))
    result = g.run(ctx, f"zoo-{w.name}", targv, env=env, timeout_s=w.timeout_s, cwd=directory)
    # Ranks share one pipe, so their lines can run together: one JSON object is decoded after each prefix.
    truths = check_realjobs._truths(result.stdout)
    traces = g.traces_in(directory)
    if w.markers == "nvtx":
        job_traces = [(t, nvtx_steps(t)) for t in traces]
    elif w.markers == "none":  # a zero-code job: its traces are those with kernels; markers are not demanded (the
        # job makes none; rows the recorder's own hooks may write are counted and kept in the truth, not judged)
        job_traces = [(t, step_markers(t)) for t in traces if kernel_count(t) > 0]
    else:  # a launcher or a compile worker may leave a trace without markers: not the job's
        job_traces = [(t, m) for t in traces if (m := step_markers(t)) > 0]
    steps = [t.get("steps") for t in truths]
    names_ok = bool(w.truth_extra) or all(t.get("workload") == w.name for t in truths)
    marked = None if w.markers == "none" else w.steps  # the markers each trace must hold
    ok = (result.rc == 0 and len(truths) == w.traces and len(job_traces) == w.traces and names_ok
          and all(s == w.steps for s in steps) and (marked is None or all(m == marked for _, m in job_traces)))
    figures = []
    for i, (trace, markers) in enumerate(job_traces):
        kernels, own, rank = check_realjobs._trace_figures(trace)
        printed = truths[min(i, len(truths) - 1)] if truths else {}
        if rank not in (None, "-1"):
            printed = next((t for t in truths if str(t.get("rank")) == str(rank)), printed)
        name = f"{w.name}-rank{rank}" if w.traces > 1 else w.name
        truth = normalized_truth(w, printed)
        truth["recorded"] = {"stage": w.stage, "command": " ".join(w.argv), "env": w.env, "markers": markers,
                             "marker_source": MARKER_SOURCES[w.markers], "kernels": kernels, "collector_calls": own,
                             "trace_bytes": trace.stat().st_size, "traced_by": "fp8scope record"
                             if ctx.use_record else "environment injection", "exit_code": result.rc,
                             "by": "tests/gpu/check_zoo.py"}
        if ok:  # a failed job's traces stay in the scratch folder (logs name it), out of the archive
            kept.add(name, trace, truth)
        figures.append(f"{markers} steps, {kernels} kernels, {trace.stat().st_size >> 10} KiB")
    detail = f"{result.brief()}; traces {len(traces)} (the job's {len(job_traces)}, expected {w.traces}); " \
             f"truths {len(truths)}; steps printed {steps}, expected {w.steps}; markers per trace " \
             f"{[m for _, m in job_traces]}, expected {'any (zero-code)' if marked is None else marked}"
    if not names_ok:
        detail += f"; workload names printed {[t.get('workload') for t in truths]}"
    if not ok:
        detail += f"; stderr: {result.stderr.strip()[-400:]}"
    report.judge(f"zoo {w.name}", ok, "; ".join(figures) or result.brief(), detail)
    return ok


def timing(ctx, report, kept, t, cache):
    """Untraced runs of each variant, rounds alternating; medians merged into the kept truths of t.into. A variant
    already run in this stage (the same command) reuses that run's result for the same round."""
    runs = {key: [] for key in t.variants}
    for round_index in range(t.rounds):
        for key, argv in t.variants.items():
            argv = expand(ctx, argv)
            done = cache.setdefault(tuple(argv), [])
            if len(done) > round_index:
                runs[key].append(done[round_index])
                continue
            if ctx.time_left() < t.expected_s:
                report.add(f"zoo timing {t.name}", "SKIP", f"round {round_index + 1}: needs ~{t.expected_s} s, "
                           f"{ctx.time_left():.0f} s left", json.dumps(runs))
                return
            label = re.sub(r"[^A-Za-z0-9_]+", "-", f"{t.name}-{key}-{round_index}")
            directory = ctx.fresh_dir(f"zoo-time-{label}")
            result = g.run(ctx, f"zoo-time-{label}", argv, env=dict(os.environ, **env_extra(t.env)),
                           timeout_s=t.timeout_s, cwd=directory)
            value = median_step_ms(g.ground_truth(result.stdout))
            if result.rc != 0 or value is None:
                report.add(f"zoo timing {t.name}", "FAIL", f"{key}: {result.brief()}", result.stderr.strip()[-400:])
                return
            done.append(value)
            runs[key].append(value)
    medians = {key: statistics.median(values) for key, values in runs.items()}
    if t.derived:
        key, a, b = t.derived
        medians[key] = medians[a] - medians[b]
    details = {t.name: {"runs_ms": runs, "rounds": t.rounds, "untraced": True,
                        "commands": {k: " ".join(v) for k, v in t.variants.items()}}}
    merged = [name for name in t.into if kept.merge(name, medians, details)]
    missing = [name for name in t.into if name not in merged]
    report.add(f"zoo timing {t.name}", "INFO", ", ".join(f"{k} {v:.3f}" for k, v in medians.items()),
               f"runs {json.dumps(runs)}; merged into {merged}" + (f"; no kept truth for {missing}" if missing else ""))


def _modules_present(ctx, modules):
    probe = ("import importlib.util, json, sys; "
             "print(json.dumps({m: importlib.util.find_spec(m) is not None for m in sys.argv[1:]}))")
    result = g.run(ctx, "zoo-modules", [ctx.python, "-c", probe, *modules], timeout_s=60)
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {m: False for m in modules}


def _gpu_count(ctx):
    result = g.run(ctx, "zoo-gpu-count", [ctx.python, "-c", "import torch; print(torch.cuda.device_count())"],
                   timeout_s=90)
    try:
        return int(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return 0


def missing_requirement(ctx, requires, modules):
    """Why a job that needs `requires` cannot run on this machine, or None."""
    for need in requires:
        if need == "sample" and not ctx.sample("zoo_sync_loop").exists():
            return (f"{ctx.sample('zoo_sync_loop')} not built "
                    "(cmake --build BUILD --target fp8scope_sample_zoo_sync_loop)")
        if need == "torchao":
            folder = Path(os.environ.get("FP8SCOPE_TORCHAO_DIR", g.REPO / ".torchao"))
            if not (folder / "torchao" / "float8" / "__init__.py").exists():
                return f"no torchao in {folder}: run tests/gpu/tools/make_torchao.sh and carry .torchao"
        if need in ("jax", "transformers") and not modules.get(need, False):
            return f"{need} is not installed for {ctx.python}"
    return None


def _only():
    """FP8SCOPE_ZOO_ONLY=a,b: only these workloads, and the timings that feed them (to re-record a few)."""
    return {n for n in os.environ.get("FP8SCOPE_ZOO_ONLY", "").split(",") if n}


def run_all(ctx, report, state, stage):
    only = _only()
    workloads = [w for w in registry.workloads(stage) if not only or w.name in only]
    timings = [t for t in registry.timings(stage) if not only or set(t.into) & only]
    kept = Kept(ctx, stage)
    state.setdefault("zoo", {})[stage] = kept
    modules = {}
    needed = sorted({r for w in workloads for r in w.requires if r in ("jax", "transformers")})
    if needed and ctx.torch:
        modules = _modules_present(ctx, needed)
    gpus = None
    if any(w.gpus > 1 for w in workloads) and ctx.torch:
        gpus = _gpu_count(ctx)
    report.add(f"zoo {stage}", "INFO", f"{len(workloads)} workloads, {len(timings)} timings",
               f"modules {modules}; GPUs {gpus}" + (f"; only {sorted(only)}" if only else ""))
    for w in workloads:
        if w.gpus > 1 and (gpus or 0) < w.gpus:
            report.add(f"zoo {w.name}", "SKIP", f"needs {w.gpus} GPUs", f"torch.cuda.device_count() = {gpus}")
            continue
        if w.markers != "nvtx" and not ctx.torch:
            report.add(f"zoo {w.name}", "SKIP", "no PyTorch with a CUDA device (see the 'torch' row)")
            continue
        why = missing_requirement(ctx, w.requires, modules)
        if why and "not built" in why:  # a build step was forgotten: the lead must see it
            report.add(f"zoo {w.name}", "FAIL", "CUDA sample missing", why)
            continue
        if why:
            report.add(f"zoo {w.name}", "SKIP", why)
            continue
        g.guarded(report, f"zoo {w.name}", w.expected_s, record, ctx, report, kept, w,
                  torch=w.markers != "nvtx")
    kept.wait(report)
    if kept.truths:
        kept.pack(ctx.out)  # what the traced runs left, should the timing runs be cut short
    cache = {}
    for t in timings:
        why = missing_requirement(ctx, t.requires, modules)
        if why:
            report.add(f"zoo timing {t.name}", "SKIP", why)
            continue
        g.guarded(report, f"zoo timing {t.name}", t.expected_s * len(t.variants), timing, ctx, report, kept, t, cache,
                  torch=True)
    if not kept.truths:
        kept.pool.shutdown(wait=True)
        return
    name, left_out = kept.pack(ctx.out)
    report.add(f"zoo {stage} archive", "INFO" if not left_out else "FAIL",
               f"{name}: {len(kept.sizes)} traces, {sum(x for _, x in kept.sizes.values()) >> 10} KiB xz",
               f"left out (over {CAP_BYTES >> 20} MiB): {left_out}" if left_out else "")
    kept.pool.shutdown(wait=True)
