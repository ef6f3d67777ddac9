"""Several ranks (docs/benchmarks.md "Two H100s over NCCL: the recorded ranks"): the training sample under torchrun, DDP
over NCCL, recorded per rank with `fp8scope record -o DIR/rank%r.sqlite`, and
`fp8scope report rank0.sqlite rank1.sqlite --format json` (fp8scope.ranks/1) judged against what each rank printed.

With 2 GPUs or more, `torchrun --standalone --nproc-per-node 2 samples/torch/train.py` (MODEL below: small, so that
the committed traces stay small; tensor statistics every STATS_EVERY steps; the fp8scope package on PYTHONPATH):
  fp8-clean      --precision fp8: the step count on both ranks = the printed steps; communication and exposed
                 communication > 0 in every step on every rank; no rank causes a wait of 80% of the planted
                 sleep (the straggler's own line) in any step;
                 FP8 scale agreement: compared > 0, mismatches 0 (the amaxes are reduced across the ranks)
  bf16-clean     --precision bf16: the same, without the scale agreement
  fp8-straggler  --precision fp8 --straggler-rank 1 --straggler-sleep-ms SLEEP_MS: in every step after the
                 warm-up, rank 1 is the slowest, by the wait it caused, at least 80% of the sleep, led by host
  bf16-straggler the same in --precision bf16
  mlp-slow-compute  realjobs/ddp_mlp.py --backend nccl --item --straggler-rank 1 --straggler-batch-factor 16: rank
                 1 trains a 16x batch; it is the slowest rank by caused wait in every step after the warm-up, led
                 by compute
  fp8-no-reduce  --precision fp8 --no-amax-reduction (each rank's scales from its own amaxes): mismatches > 0,
                 the first named (site and step), which shows that the agreement check can fail on real traces
All six are packed with each rank's printed truth into $OUT/ranks.tar as ranks/<run>/rank<r>.sqlite and
rank<r>.truth.json: `tar xf ranks.tar -C samples/traces` gives what tests/analyzer/ranks/ranks_real_test.cpp reads.
With 1 GPU: the same sample under `torchrun --nproc-per-node 1 ... --ddp` as a smoke check (rank 0 sleeping, so its
GPU idles for the sleep as `host`), and the 2-rank checks reported as SKIP ("needs 2 GPUs"), never as passed.
Every run has NVLink multicast off (gpu_common.NVLINK_MULTICAST_OFF).
"""

import json
import tarfile

import check_realjobs
import gpu_common as g
import trace_checks as tc

MODEL = ["--layers", "1", "--d-model", "256", "--heads", "4", "--seq", "128", "--batch", "4", "--vocab", "2048"]
STEPS = 8
STATS_EVERY = 3  # tensor statistics at steps 0, 3, 6: enough scales to compare, few samples to store
SLEEP_MS = 30.0
STRAGGLER = 1
WARMUP = 2  # the analyzer's default warm-up: per-step waits are judged after it (cuBLAS, NCCL and DDP set-up)
TOLERANCE = 0.2  # the straggler's caused wait at least 80% of the sleep (its 1-GPU smoke: within +-20%)
RUN_TIMEOUT_S = 180
DDP_MLP = str(g.REPO / "tests" / "gpu" / "realjobs" / "ddp_mlp.py")
# The rank slow in compute: realjobs/ddp_mlp.py, an MLP whose rank 1 trains a 16x batch (about 6 ms of compute
# against 0.4 ms; a 3x batch hid behind the launches, docs/accuracy.md), as the zoo's ddp_nccl_slow_compute.
COMPUTE_RUN = ("mlp-slow-compute", ["--steps", STEPS, "--backend", "nccl", "--item", "--straggler-rank", 1,
                                    "--straggler-batch-factor", 16, "--name", "mlp-slow-compute"], True)
RUNS = (  # (name, train.py arguments, kept for samples/traces/ranks/)
    ("fp8-clean", ["--precision", "fp8"], True),
    ("bf16-clean", ["--precision", "bf16"], True),
    ("fp8-straggler", ["--precision", "fp8", "--straggler-rank", STRAGGLER, "--straggler-sleep-ms", SLEEP_MS], True),
    ("bf16-straggler", ["--precision", "bf16", "--straggler-rank", STRAGGLER, "--straggler-sleep-ms", SLEEP_MS], True),
    ("fp8-no-reduce", ["--precision", "fp8", "--no-amax-reduction"], True),
)


def gpu_count(ctx):
    probe = g.run(ctx, "ranks-gpu-count", [ctx.python, "-c", "import torch; print(torch.cuda.device_count())"],
                  timeout_s=90)
    try:
        return int(probe.stdout.split()[-1]) if probe.rc == 0 else 0
    except (IndexError, ValueError):
        return 0


def record(ctx, name, nproc, extra_args, script=None):
    """Runs train.py (or `script` with `extra_args` alone) under torchrun traced; returns (result, {rank: truth},
    [traces], directory)."""
    directory = ctx.fresh_dir(f"ranks-{name}")
    args = ["--standalone", "--nproc-per-node", nproc, *(
        [script, *extra_args] if script else [ctx.train_py, "--steps", STEPS, *MODEL, *extra_args])]
    env_extra = {"PYTHONPATH": str(g.REPO / "probes" / "python"), "PYTHONUNBUFFERED": "1",
                 "FP8SCOPE_STATS_EVERY": str(STATS_EVERY), "OMP_NUM_THREADS": "1", **g.NVLINK_MULTICAST_OFF}
    argv, env = ctx.traced(directory / "rank%r.sqlite", g.torchrun_argv(ctx.python, args), env_extra)
    for variable in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        env.pop(variable, None)  # the launcher starts without a rank, as from a shell
    result = g.run(ctx, f"ranks-{name}", argv, env=env, timeout_s=RUN_TIMEOUT_S, cwd=directory)
    # The ranks share one pipe: each truth is decoded after its prefix (check_realjobs._truths).
    truths = {t.get("rank"): t for t in check_realjobs._truths(result.stdout)}
    return result, truths, g.traces_in(directory), directory


LAUNCHER_TRACE = "ranknorank.sqlite"  # torchrun 2.11's agent initializes CUDA: a trace with no rank and no kernel


def split_launcher(ctx, report, name, traces):
    """The rank traces, and an INFO row for the launcher's own trace when there is one (`fp8scope report DIR`
    leaves it out: RankSetReport::left_out)."""
    launcher = [t for t in traces if t.name == LAUNCHER_TRACE]
    if launcher:
        kernels = tc.summarize(launcher[0])["kernels"]
        report.add(f"ranks {name}: the launcher's own trace", "INFO", f"{LAUNCHER_TRACE}: {kernels} kernels")
    return [t for t in traces if t.name != LAUNCHER_TRACE]


def report_json(ctx, name, traces):
    out = g.run(ctx, f"ranks-{name}-report", [ctx.fp8scope, "report", *traces, "--warmup", "0", "--format", "json"],
                timeout_s=120)
    (ctx.details / f"ranks-{name}.json").write_text(out.stdout + out.stderr)
    return json.loads(out.stdout) if out.rc == 0 else None


def _by_rank(entries):
    return {e["rank"]: e for e in entries}


def judge_rank_set(name, doc, truths, straggler=None, scales=None):
    """The verdicts on one run's fp8scope.ranks/1 document: [(check, ok or None for INFO, figure)]. straggler:
    (rank, sleep_ms) planted, (rank, "compute") for a rank slow in compute, else None; scales: "agree", "disagree" or
    None (not judged). Pure, so that selftest/ranks_judge_test.py can feed it made-up documents."""
    verdicts = []
    ranks = _by_rank(doc.get("ranks", []))
    counts = {r: ranks.get(r, {}).get("steps") for r in sorted(truths)}
    printed = {r: t.get("steps") for r, t in sorted(truths.items())}
    verdicts.append((f"ranks {name}: steps on every rank = printed", bool(truths) and counts == printed
                     and doc.get("world_size") == len(truths) and set(ranks) == set(truths),
                     f"analysed {counts}, printed {printed}, world size {doc.get('world_size')}"))
    steps = [s for s in doc.get("steps", []) if s["step"] >= WARMUP]
    comm = [(s["step"], r["rank"], r["comm_ns"], r["exposed_comm_ns"]) for s in steps for r in s["ranks"]]
    lacking = [(step, rank) for step, rank, c, e in comm if not (c > 0 and e > 0)]
    verdicts.append((f"ranks {name}: comm and exposed comm > 0 per step and rank", bool(comm) and not lacking,
                     f"{len(comm) - len(lacking)}/{len(comm)} (step, rank) with both; median comm "
                     f"{_median_us([c for *_, c, _ in comm])} us, exposed {_median_us([e for *_, e in comm])} us"
                     + (f"; without: {lacking[:4]}" if lacking else "")))
    caused = [(s["step"], s["slowest_rank"], s["slowest_by"], max(r["caused_wait_ns"] for r in s["ranks"]))
              for s in steps]
    if straggler is None:
        # The planted straggler's line is 80% of its sleep: a clean run stays under it in every step. Below it, ranks
        # of a clean run do make each other wait (2 H100s, 2026-11-26: 5-12 ms a step, one rank launching slower,
        # led by `launch`), and the report names that rank: a real imbalance, not the planted sleep.
        line_ns = (1 - TOLERANCE) * SLEEP_MS * 1e6
        verdicts.append((f"ranks {name}: no planted-size straggler (every caused wait < {1 - TOLERANCE:.0%} of "
                         f"{SLEEP_MS:g} ms)", bool(caused) and all(w < line_ns for *_, w in caused),
                         f"largest caused wait per step (ms): {[round(w / 1e6, 2) for *_, w in caused]}"))
    elif straggler[1] == "compute":
        rank = straggler[0]
        wrong = [(step, who, by) for step, who, by, _ in caused if who != rank or by != "caused_wait"]
        verdicts.append((f"ranks {name}: straggler = rank {rank}, by caused wait, in every step >= {WARMUP}",
                         bool(steps) and not wrong, f"{len(steps) - len(wrong)}/{len(steps)} steps; caused wait per "
                         f"step (ms): {[round(w / 1e6, 2) for *_, w in caused]}"
                         + (f"; otherwise (step, slowest, by): {wrong[:4]}" if wrong else "")))
        causes = [s.get("slowest_lead_cause") for s in steps if s["slowest_rank"] == rank]
        verdicts.append((f"ranks {name}: the straggler's lead cause is compute (a larger batch)",
                         all(c == "compute" for c in causes), f"per step: {causes}"))
    else:
        rank, sleep_ms = straggler
        waits = [(s["step"], _by_rank(s["ranks"]).get(rank, {}).get("caused_wait_ns", 0)) for s in steps]
        wrong = [(step, who, by) for step, who, by, _ in caused if who != rank or by != "caused_wait"]
        # At least the sleep less 20%: more is the straggler's own slower work after it (2 H100s, 2026-11-26: 39-45 ms
        # for a 30 ms sleep), which is a wait it caused too.
        off = [(step, round(w / 1e6, 2)) for step, w in waits if w / 1e6 < (1 - TOLERANCE) * sleep_ms]
        verdicts.append((f"ranks {name}: straggler = rank {rank}, by caused wait, in every step >= {WARMUP}",
                         bool(steps) and not wrong, f"{len(steps) - len(wrong)}/{len(steps)} steps"
                         + (f"; otherwise (step, slowest, by): {wrong[:4]}" if wrong else "")))
        verdicts.append((f"ranks {name}: rank {rank}'s caused wait at least {1 - TOLERANCE:.0%} of {sleep_ms:g} ms "
                         f"per step", bool(waits) and not off,
                         f"caused wait per step (ms): {[round(w / 1e6, 2) for _, w in waits]}"
                         + (f"; outside: {off}" if off else "")))
        # It slept before its forward: what it had more of than the others before it arrived is host idle.
        causes = [s.get("slowest_lead_cause") for s in steps if s["slowest_rank"] == rank]
        verdicts.append((f"ranks {name}: the straggler's lead cause is host (it slept)",
                         all(c == "host" for c in causes), f"per step: {causes}"))
    agreement = doc.get("scales", {})
    compared, mismatches = agreement.get("compared", 0), agreement.get("mismatches", 0)
    figure = f"{compared} compared, {mismatches} mismatches; first {agreement.get('first')}"
    if scales == "agree":
        verdicts.append((f"ranks {name}: FP8 scales agree across ranks", compared > 0 and mismatches == 0, figure))
    elif scales == "disagree":
        first = agreement.get("first") or {}
        verdicts.append((f"ranks {name}: FP8 scales without amax reduction disagree, the first named",
                         compared > 0 and mismatches > 0 and bool(first.get("site")), figure))
    else:
        verdicts.append((f"ranks {name}: FP8 scale agreement", None, figure))
    return verdicts


def _median_us(values):
    values = sorted(values)
    return round(values[len(values) // 2] / 1e3, 1) if values else None


def add_verdicts(report, verdicts):
    for check, ok, figure in verdicts:
        if ok is None:
            report.add(check, "INFO", figure)
        else:
            report.judge(check, ok, figure)


def two_ranks(ctx, report, kept):
    for name, args, keep in (*RUNS, COMPUTE_RUN):
        if ctx.time_left() < 60:
            report.add(f"ranks {name}", "SKIP", f"needs ~60 s, {ctx.time_left():.0f} s left")
            continue
        script = DDP_MLP if name == COMPUTE_RUN[0] else None
        result, truths, traces, directory = record(ctx, name, 2, args, script)
        traces = split_launcher(ctx, report, name, traces)
        names = sorted(t.name for t in traces)
        ok = result.rc == 0 and sorted(truths) == [0, 1] and names == ["rank0.sqlite", "rank1.sqlite"]
        sizes = {t.name: t.stat().st_size for t in traces}
        report.judge(f"ranks {name}: 2 ranks recorded, 2 truths printed", ok,
                     f"{result.brief()}; traces {sizes}; truths of ranks {sorted(truths, key=str)}",
                     result.stderr.strip()[-400:] if not ok else "")
        if not ok:
            continue
        doc = report_json(ctx, name, [directory])  # as a user would: the launcher's trace is left out
        if doc is None:
            report.add(f"ranks {name}: fp8scope report over the ranks", "FAIL", "exit code not 0 (details)")
            continue
        planted = (STRAGGLER, "compute") if "--straggler-batch-factor" in args \
            else (STRAGGLER, SLEEP_MS) if "--straggler-rank" in args else None
        scales = {"fp8-clean": "agree", "fp8-no-reduce": "disagree"}.get(name)
        add_verdicts(report, judge_rank_set(name, doc, truths, planted, scales))
        if keep:
            for trace in traces:
                rank = int(trace.stem.removeprefix("rank"))
                kept.append((f"ranks/{name}/{trace.name}", trace, dict(
                    truths[rank], trace_bytes=sizes[trace.name], recorded_by="tests/gpu/check_ranks.py",
                    command=" ".join(str(a) for a in result.argv[result.argv.index("--") + 1:])
                    if "--" in result.argv else " ".join(result.argv))))


def one_rank(ctx, report):
    """torchrun with one process and --ddp: the DDP path on one GPU. NCCL has no kernel to run for one rank (its
    one-rank shortcut copies or does nothing), so communication kernels are counted, not judged."""
    args = ["--precision", "fp8", "--ddp", "--straggler-rank", 0, "--straggler-sleep-ms", SLEEP_MS]
    result, truths, traces, _ = record(ctx, "1rank", 1, args)
    traces = split_launcher(ctx, report, "1rank", traces)
    truth = truths.get(0, {})
    ok = result.rc == 0 and list(truths) == [0] and truth.get("world_size") == 1 and \
        [t.name for t in traces] == ["rank0.sqlite"]
    report.judge("ranks 1 GPU: torchrun --nproc-per-node 1 --ddp runs, one truth, rank0.sqlite", ok,
                 f"{result.brief()}; traces {[t.name for t in traces]}; truth ranks {list(truths)}",
                 result.stderr.strip()[-400:] if not ok else "")
    if not ok:
        return
    doc = one_rank_report(ctx, "1rank", traces[0])
    analysed = len(doc.get("steps", {}).get("steps", []))
    report.judge("ranks 1 GPU: steps analysed = printed", analysed == truth.get("steps"),
                 f"{analysed} analysed ({doc.get('steps', {}).get('source')}), {truth.get('steps')} printed")
    # The step's closing torch.cuda.synchronize() (DDP mode) ends inside the sleep's gap, so rule 1 charges that gap
    # to `sync` (seen on the H100: 31.5 ms sync, 2 ms host per step). The steps idle for other reasons too (a few
    # ms of launch gaps), so the sleep is judged against the same run without it: the extra sync + host idle per
    # step. The last step is left out: it runs into the end of the job (88.6 ms on the H100).
    _, _, baseline_traces, _ = record(ctx, "1rank-nosleep", 1, ["--precision", "fp8", "--ddp"])
    baseline_traces = [t for t in baseline_traces if t.name != LAUNCHER_TRACE]
    held, base = held_ms(doc), held_ms(one_rank_report(ctx, "1rank-nosleep", baseline_traces[0])) \
        if baseline_traces else []
    base_ms = sorted(base)[len(base) // 2] if base else None
    extra = [round(h - base_ms, 2) for h in held] if base_ms is not None else []
    report.judge(f"ranks 1 GPU: the sleep is the extra sync + host idle, within {TOLERANCE:.0%} of {SLEEP_MS:g} ms",
                 bool(extra) and all(abs(e - SLEEP_MS) <= TOLERANCE * SLEEP_MS for e in extra),
                 f"per step (ms): {extra} over the run without sleep (median {base_ms} ms); "
                 f"slept {[round(x, 2) for x in truth.get('slept_ms', [])]}")
    by_name = tc.summarize(traces[0])["kernels_by_name"]["demangled"]
    nccl = sum(n for name, n in by_name.items() if "nccl" in name.lower())
    report.add("ranks 1 GPU: NCCL kernels (none expected: NCCL's one-rank shortcut)", "INFO", f"{nccl} kernels")


def one_rank_report(ctx, name, trace):
    out = g.run(ctx, f"ranks-{name}-report", [ctx.fp8scope, "report", trace, "--warmup", "0", "--format", "json"],
                timeout_s=120)
    (ctx.details / f"ranks-{name}.json").write_text(out.stdout + out.stderr)
    return json.loads(out.stdout) if out.rc == 0 else {}


def held_ms(doc):
    """sync + host idle per step (ms), from WARMUP to the step before the last."""
    steps = [s for s in doc.get("per_device_step", []) if s["step"] >= WARMUP]
    return [round((s["totals"]["idle_by_cause_ns"]["sync"] + s["totals"]["idle_by_cause_ns"]["host"]) / 1e6, 2)
            for s in steps[:-1]]


def pack(ctx, kept):
    if not kept:
        return None
    archive = ctx.out / "ranks.tar"
    with tarfile.open(archive, "w") as tar:
        for arcname, trace, truth in kept:
            tar.add(trace, arcname=arcname)
            truth_path = trace.with_suffix(".truth.json")
            truth_path.write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
            tar.add(truth_path, arcname=arcname.removesuffix(".sqlite") + ".truth.json")
    return archive


def run_all(ctx, report, state):
    gpus = g.guarded(report, "ranks: GPUs", 20, gpu_count, ctx, torch=True)
    if gpus is None:
        return
    report.add("ranks: GPUs", "INFO", f"{gpus} visible to torch")
    if gpus == 0:
        report.add("ranks", "SKIP", "no GPU visible to torch")
        return
    if gpus >= 2:
        kept = []
        g.guarded(report, "ranks 2 GPUs", 120, two_ranks, ctx, report, kept)
        archive = pack(ctx, kept)
        report.add("ranks: traces packed", "INFO", f"{archive.name}: {len(kept)} traces" if archive else "none")
        return
    g.guarded(report, "ranks 1 GPU", 60, one_rank, ctx, report)
    for name, _, _ in RUNS:
        report.add(f"ranks {name}: 2-rank checks", "SKIP", "needs 2 GPUs")
