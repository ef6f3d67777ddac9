"""Real jobs nobody wrote for fp8scope (docs/benchmarks.md "CUDA-graph what-if against real graph replays"): record
each, keep its trace with the truth it printed, and measure the CUDA-Graphs what-if against real graph replays.

Jobs (tests/gpu/realjobs/, each marks its steps with fp8scope.step(i) and prints FP8SCOPE_GROUND_TRUTH):
  hf_llama        transformers LlamaForCausalLM from a config, loss.item() every step
  train_fp8_stats samples/torch/train.py --precision fp8 with tensor statistics every step
  ddp_gloo        torchrun --nproc-per-node 2, DDP over gloo, both ranks on one GPU (NCCL needs a GPU per rank)
  graph_step      the FP8 sample's step captured as one CUDA graph and replayed (whatif.py --mode graph)
  jax_mlp         a jitted JAX train step
  compile_block   a torch.compile'd model
Each job must leave exactly one trace per process that did GPU work: a helper that only initialized CUDA
(torch.compile's compile worker, torchrun's launcher) removes its own at its exit
(docs/collector.md "Processes that do no GPU work"); record's summary counts those processes ("N more process(es)
initialized CUDA but did no GPU work").
What-if (whatif.py): tiny_fp8, fp8_sample and host_stall, each eager and graph, untraced in two rounds and traced
in the first; the medians go to summary.json under "whatif".

Traces and truths are packed, gzip per file, into $OUT/realjobs-N.tar (each under 15 MiB) for samples/traces/.
"""

import gzip
import json
import os
import re
import shutil
import sqlite3
import statistics
import tarfile
from pathlib import Path

import gpu_common as g

HERE = Path(__file__).resolve().parent
JOBS_DIR = HERE / "realjobs"
JOB_TIMEOUT_S = 180
CAP_BYTES = 15 << 20


def _truths(stdout):
    decoder, truths = json.JSONDecoder(), []
    for match in re.finditer(re.escape(g.GROUND_TRUTH_PREFIX), stdout):
        try:
            truths.append(decoder.raw_decode(stdout, match.end())[0])
        except json.JSONDecodeError:
            pass
    return truths


def _env_extra():
    return {"PYTHONPATH": str(g.REPO / "probes" / "python"), "PYTHONUNBUFFERED": "1", **g.NVLINK_MULTICAST_OFF}


def _markers(trace):
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM FP8SCOPE_STEP_MARKER").fetchone()[0]


def _trace_figures(trace):
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        kernels = db.execute("SELECT COUNT(*) FROM FP8SCOPE_KERNEL").fetchone()[0]
        try:
            own = db.execute("SELECT COUNT(*) FROM FP8SCOPE_COLLECTOR_WORK").fetchone()[0]
        except sqlite3.Error:
            own = None
        rank = db.execute("SELECT value FROM FP8SCOPE_META WHERE key='rank'").fetchone()
    return kernels, own, rank[0] if rank else None


class Kept:
    """Traces and truths to bring back, stored gzip'd under scratch/realjobs-keep."""

    def __init__(self, ctx, prefix="realjobs"):
        self.prefix = prefix
        self.dir = ctx.work / f"{prefix}-keep"
        self.dir.mkdir(parents=True, exist_ok=True)

    def add(self, name, trace, truth):
        with open(trace, "rb") as src, gzip.open(self.dir / f"{name}.sqlite.gz", "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        (self.dir / f"{name}.truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True))

    def pack(self, out):
        files = sorted(self.dir.iterdir(), key=lambda p: p.name)
        archives, current, size = [], None, 0
        for path in files:
            n = path.stat().st_size
            if n > CAP_BYTES:
                continue
            if current is None or size + n > CAP_BYTES:
                if current is not None:
                    current.close()
                archives.append(out / f"{self.prefix}-{len(archives) + 1}.tar")
                current, size = tarfile.open(archives[-1], "w"), 0
            current.add(path, arcname=path.name)
            size += n
        if current is not None:
            current.close()
        return [a.name for a in archives]


def record_job(ctx, report, kept, name, argv, expect_traces=1, extra_env=None):
    directory = ctx.fresh_dir(f"realjobs-{name}")
    env_extra = _env_extra()
    env_extra.update(extra_env or {})
    targv, env = ctx.traced(directory / "trace-%p.sqlite", argv, env_extra)
    result = g.run(ctx, f"realjobs-{name}", targv, env=env, timeout_s=JOB_TIMEOUT_S, cwd=directory)
    # Ranks share one pipe, so their lines can run together: decode one JSON object after each prefix (objects may
    # nest: train.py's truth holds its final scales).
    truths = _truths(result.stdout)
    traces = [t for t in g.traces_in(directory)]
    # Only the traces that hold step markers are the job's (a launcher may write one without).
    marked = [(t, _markers(t)) for t in traces]
    job_traces = [(t, m) for t, m in marked if m > 0]
    steps = truths[0]["steps"] if truths else None
    ok = result.rc == 0 and len(truths) == expect_traces and len(job_traces) == expect_traces \
        and all(m == steps for _, m in job_traces)
    figures = []
    for i, (trace, m) in enumerate(job_traces):
        kernels, own, rank = _trace_figures(trace)
        truth = dict(truths[min(i, len(truths) - 1)]) if truths else {}
        if rank not in (None, "-1"):
            truth = next((t for t in truths if str(t.get("rank")) == str(rank)), truth)
        suffix = f"-rank{rank}" if expect_traces > 1 else ""
        truth.update(markers=m, kernels=kernels, collector_calls=own, trace_bytes=trace.stat().st_size)
        kept.add(f"{name}{suffix}", trace, truth)
        figures.append(f"{m} markers, {kernels} kernels, {own} own calls, {trace.stat().st_size >> 10} KiB")
    report.judge(f"realjobs {name}", ok, "; ".join(figures) or result.brief(),
                 f"{result.brief()} traces {len(traces)} truths {len(truths)} steps {steps} "
                 f"{result.stderr.strip()[-300:] if result.rc else ''}")
    # docs/collector.md "Processes that do no GPU work": no trace from a process that did no GPU work (an empty one has
    # no markers and no kernels).
    removed = re.search(r"^fp8scope: (\d+) more process", result.stderr, re.MULTILINE)
    report.judge(f"realjobs {name}: no trace from processes without GPU work", result.rc == 0
                 and len(traces) == expect_traces,
                 f"{len(traces)} traces for {expect_traces} processes with GPU work; "
                 f"{removed.group(1) if removed else 0} removed by processes that did none (record's summary)",
                 " ".join(f"{t.name}: {_trace_figures(t)[0]} kernels, {_markers(t)} markers" for t in traces))
    return result


def whatif_round(ctx, report, kept, results, workload, mode, traced, steps):
    argv = [ctx.python, JOBS_DIR / "whatif.py", "--workload", workload, "--mode", mode, "--steps", steps]
    name = f"whatif-{workload}-{mode}-{'traced' if traced else 'untraced'}"
    directory = ctx.fresh_dir(name)
    env_extra = _env_extra()
    if traced:
        argv, env = ctx.traced(directory / "trace-%p.sqlite", argv, env_extra)
    else:
        env = dict(os.environ, **env_extra)
    result = g.run(ctx, name, [str(a) for a in argv], env=env, timeout_s=JOB_TIMEOUT_S, cwd=directory)
    truth = g.ground_truth(result.stdout)
    if result.rc != 0 or not truth:
        report.add(name, "FAIL", result.brief(), result.stderr.strip()[-400:])
        return
    results.setdefault(name, []).append(truth["median_step_ms"])
    traces = g.traces_in(directory)
    if traced and traces and f"whatif-{workload}-{mode}" not in kept.names:
        kept.names.add(f"whatif-{workload}-{mode}")
        kept.add(f"whatif-{workload}-{mode}", traces[0], truth)


def run_all(ctx, report, state):
    kept = Kept(ctx)
    kept.names = set()
    py = ctx.python
    jobs = [
        ("hf_llama", [py, JOBS_DIR / "hf_llama.py", "--steps", 30], 1, None),
        ("train_fp8_stats", [py, ctx.train_py, "--precision", "fp8", "--steps", 30], 1,
         {"FP8SCOPE_STATS_EVERY": "1"}),
        ("ddp_gloo", [py, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29533",
                      JOBS_DIR / "ddp_mlp.py", "--steps", 30, "--backend", "gloo"], 2, None),
        ("graph_step", [py, JOBS_DIR / "whatif.py", "--workload", "fp8_sample", "--mode", "graph", "--steps", 30],
         1, None),
        ("jax_mlp", [py, JOBS_DIR / "jax_mlp.py", "--steps", 30], 1, None),
        ("compile_block", [py, JOBS_DIR / "compile_block.py", "--steps", 30], 1, None),
    ]
    for name, argv, n, env in jobs:
        g.guarded(report, f"realjobs {name}", 60, record_job, ctx, report, kept, name, [str(a) for a in argv], n,
                  env, torch=True)
    results = {}
    for round_index in range(2):
        for workload, steps in (("tiny_fp8", 60), ("fp8_sample", 30), ("host_stall", 40)):
            for mode in ("eager", "graph"):
                for traced in ((False, True) if round_index == 0 else (False,)):
                    g.guarded(report, f"whatif {workload} {mode}", 45, whatif_round, ctx, report, kept, results,
                              workload, mode, traced, steps, torch=True)
    medians = {k: statistics.median(v) for k, v in results.items()}
    report.extra["whatif"] = {"medians_ms": medians, "runs_ms": results}
    for workload in ("tiny_fp8", "fp8_sample", "host_stall"):
        e = medians.get(f"whatif-{workload}-eager-untraced")
        gr = medians.get(f"whatif-{workload}-graph-untraced")
        report.add(f"whatif {workload}", "INFO", f"eager {e} ms, graph {gr} ms (untraced medians)",
                   json.dumps({k: v for k, v in medians.items() if workload in k}))
    archives = kept.pack(ctx.out)
    report.add("realjobs archives", "INFO", " ".join(archives))
