"""Tensor statistics on a real zero-code job, and trace names under torchrun (docs/collector.md "Tensor statistics",
docs/collector.md "Attaching it").

zero-code statistics (workloads/zero_code_mlp.py: 8 FP8 layers of one shape, 40 steps, no markers, no NVTX, no
fp8scope package), recorded with `fp8scope record`:
  default   FP8SCOPE_STATS_CAP unset (256): the collector learns the GEMM period (24 calls) by itself. Samples in
            the first and the last quarter of the run (quarters of the job's kernel launches, host time), samples
            with a learned ordinal in the last quarter, 8 distinct ordinals for the 8 same-shaped layers, no
            dropped records, meta tensor_stats_skipped present and 0, losses bitwise those of the untraced run.
  cap16     FP8SCOPE_STATS_CAP=16 (a sampled period has 72 candidates): samples skipped by the cap counted in meta
            tensor_stats_skipped (and shown as skipped by `fp8scope info` and record's summary), none as dropped.
torchrun (workloads/torchrun_ranks.py, gloo, both ranks on cuda:0), `fp8scope record -o DIR/rank%r.sqlite`:
  plain     `torchrun --standalone --nproc-per-node 2`: rank0.sqlite and rank1.sqlite, meta rank 0 and 1.
  launcher  the same through a launcher that initializes CUDA itself (as seen on a real job): rank0.sqlite and
            rank1.sqlite still, and the launcher's own trace ranknorank.sqlite with meta rank -1.
"""

import json
import re
import os

import gpu_common as g
import trace_checks as tc

WORKLOADS = g.REPO / "tests" / "gpu" / "workloads"
MLP = WORKLOADS / "zero_code_mlp.py"
RANKS = WORKLOADS / "torchrun_ranks.py"
RUN_TIMEOUT_S = 180
TORCHRUN_TIMEOUT_S = 150


def _truth(stdout, prefix):
    for line in reversed(stdout.splitlines()):
        if line.startswith(prefix + " "):
            try:
                return json.loads(line[len(prefix) + 1:])
            except json.JSONDecodeError:
                return None
    return None


def stats_facts(path):
    """What the checks read from a zero-code trace (plain data)."""
    db = tc.open_ro(path)
    try:
        one = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
        meta = dict(db.execute("SELECT key, value FROM FP8SCOPE_META"))
        # Host times of the job's own kernel launches (the collector's statistics kernels left out): their quarters
        # are the run's quarters, on the same clock as the samples' timestamps (host time at enqueue).
        launches = [row[0] for row in db.execute(
            "SELECT r.start FROM FP8SCOPE_KERNEL AS k JOIN FP8SCOPE_KERNEL_CONFIG AS c ON c.id = k.configId "
            "JOIN StringIds AS n ON n.id = c.demangledName "
            "JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId "
            "WHERE n.value NOT LIKE '%fp8scope%' ORDER BY r.start")]
        samples = db.execute(
            "SELECT t.timestamp, s.ordinal, s.nameId, COALESCE(s.nvtxPathId, -1), s.rows, s.cols, s.dtype, s.role "
            "FROM FP8SCOPE_TENSOR_STATS AS t JOIN FP8SCOPE_TENSOR_SITE AS s ON s.id = t.siteId "
            "WHERE s.source = 0").fetchall()
        # GEMM sites with a learned ordinal, by (name, path, rows, cols, dtype, role): ordinal -> samples.
        groups = {}
        for _, ordinal, *site in samples:
            if ordinal >= 0:
                counts = groups.setdefault(tuple(site), {})
                counts[ordinal] = counts.get(ordinal, 0) + 1
        names = dict(db.execute("SELECT id, value FROM StringIds"))
        facts = {
            "samples": len(samples),
            "samples_with_step": one("SELECT COUNT(step) FROM FP8SCOPE_TENSOR_STATS"),
            "samples_unknown_ordinal": sum(1 for s in samples if s[1] < 0),
            "gemm_sites": one("SELECT COUNT(*) FROM FP8SCOPE_TENSOR_SITE WHERE source = 0"),
            "max_ordinal": max((s[1] for s in samples), default=None),
            "ordinal_groups": sorted(
                ([names.get(k[0], "?"), k[2], k[3], k[4], k[5], sorted(v)] for k, v in groups.items()),
                key=lambda r: -len(r[5])),
            "dropped": one("SELECT COALESCE(SUM(count), 0) FROM FP8SCOPE_DROPPED"),
            "dropped_rows_by_source": dict(db.execute("SELECT source, SUM(count) FROM FP8SCOPE_DROPPED GROUP BY 1")),
            "skipped_meta": meta.get("tensor_stats_skipped"),
            "finished": meta.get("finished"),
            "job_launches": len(launches),
        }
        if launches:
            first_quarter_end = launches[len(launches) // 4]
            last_quarter_start = launches[(3 * len(launches)) // 4]
            facts["first_quarter"] = sum(1 for s in samples if s[0] <= first_quarter_end)
            facts["last_quarter"] = sum(1 for s in samples if s[0] >= last_quarter_start)
            facts["last_quarter_known_ordinal"] = sum(
                1 for s in samples if s[0] >= last_quarter_start and s[1] >= 0)
        # Which steps hold samples, from the workload's own step start times (wall clock; the trace's UTC anchor).
        start_utc = int(meta.get("session_start_utc_ns", 0))
        facts["_sample_utc_ns"] = sorted(start_utc + s[0] for s in samples)
        return facts
    finally:
        db.close()


def steps_with_samples(sample_utc_ns, step_starts):
    steps = set()
    for t in sample_utc_ns:
        step = sum(1 for start in step_starts if start <= t) - 1
        steps.add(step)
    return sorted(steps)


def record_mlp(ctx, name, extra_env):
    directory = ctx.fresh_dir(f"realstats-{name}")
    # Zero-code: the MLP never imports the fp8scope package, so no markers and no NVTX whatever PYTHONPATH holds.
    argv, env = ctx.traced(directory / "trace-%p.sqlite", [ctx.python, MLP], dict(extra_env))
    result = g.run(ctx, f"realstats-{name}", argv, env=env, timeout_s=RUN_TIMEOUT_S, cwd=directory)
    return result, g.traces_in(directory)


def info_json(ctx, trace):
    result = g.run(ctx, "realstats-info", [ctx.fp8scope, "info", "--format", "json", trace], timeout_s=60)
    try:
        return json.loads(result.stdout) if result.rc == 0 else None
    except json.JSONDecodeError:
        return None


def zero_code(ctx, report):
    untraced = g.run(ctx, "realstats-untraced", [ctx.python, MLP], timeout_s=RUN_TIMEOUT_S)
    if untraced.rc == 77:
        report.add("realstats: zero-code FP8 MLP", "SKIP", "exit 77 (no device with FP8 GEMMs)")
        return
    plain = _truth(untraced.stdout, "ZERO_CODE_MLP")
    report.judge("realstats: zero-code MLP runs untraced", untraced.rc == 0 and plain is not None, untraced.brief(),
                 untraced.stderr.strip()[-300:])

    result, traces = record_mlp(ctx, "default", {})
    truth = _truth(result.stdout, "ZERO_CODE_MLP")
    if not report.judge("realstats: zero-code MLP recorded, one trace", result.rc == 0 and len(traces) == 1
                        and truth is not None, f"{result.brief()}, {len(traces)} traces",
                        result.stderr.strip()[-300:]):
        return
    same = plain is not None and truth["losses"] == plain["losses"]
    report.judge("realstats: losses bitwise equal to the untraced run", same, "equal" if same else "differ",
                 f"traced {truth['losses'][:3]}..., untraced {(plain or {}).get('losses', [])[:3]}...")
    f = stats_facts(traces[0])
    utc = f.pop("_sample_utc_ns")
    report.add("realstats: zero-code trace facts", "INFO",
               f"{f['samples']} samples, {f['gemm_sites']} GEMM sites, skipped {f['skipped_meta']}",
               json.dumps(f)[:1500])
    report.add("realstats: steps holding samples (workload's step clock)", "INFO",
               str(steps_with_samples(utc, truth["step_start_unix_ns"])))
    report.judge("realstats: no step markers: every sample's step is NULL", f["samples_with_step"] == 0,
                 f"{f['samples_with_step']} with a step")
    report.judge("realstats: samples in the first and the last quarter of the run",
                 f.get("first_quarter", 0) > 0 and f.get("last_quarter", 0) > 0,
                 f"first {f.get('first_quarter')}, last {f.get('last_quarter')} of {f['samples']}",
                 f"quarters of {f['job_launches']} job kernel launches")
    report.judge("realstats: the last quarter has samples with a learned ordinal (period locked, still sampled)",
                 f.get("last_quarter_known_ordinal", 0) > 0, str(f.get("last_quarter_known_ordinal")))
    layers = truth["layers"]
    eight = [g_ for g_ in f["ordinal_groups"] if g_[5] == list(range(layers))]
    report.judge(f"realstats: {layers} same-shaped layers get {layers} distinct sites (ordinals 0..{layers - 1})",
                 bool(eight) and (f["max_ordinal"] or 0) < truth["gemm_calls_per_step"],
                 f"{len(eight)} site groups with ordinals 0..{layers - 1}; max ordinal {f['max_ordinal']}",
                 json.dumps(f["ordinal_groups"][:8]))
    report.judge("realstats: no samples counted as dropped", f["dropped"] == 0, str(f["dropped_rows_by_source"]))
    report.judge("realstats: meta tensor_stats_skipped present, 0 under the default cap",
                 f["skipped_meta"] is not None and int(f["skipped_meta"]) == 0, str(f["skipped_meta"]))
    report.add("realstats: zero-code trace kept", "INFO", "", ctx.keep("zero-code-mlp-fp8.sqlite", traces[0]))

    result, traces = record_mlp(ctx, "cap16", {"FP8SCOPE_STATS_CAP": "16"})
    if not report.judge("realstats: zero-code MLP recorded with FP8SCOPE_STATS_CAP=16",
                        result.rc == 0 and len(traces) == 1, result.brief(), result.stderr.strip()[-300:]):
        return
    f = stats_facts(traces[0])
    f.pop("_sample_utc_ns")
    skipped = int(f["skipped_meta"] or 0)
    info = info_json(ctx, traces[0]) or {}
    report.judge("realstats: cap 16: skipped samples counted as skipped (meta and info), none as dropped",
                 skipped > 0 and f["dropped"] == 0 and info.get("tensor_stats_skipped") == skipped
                 and info.get("dropped_records") == 0,
                 f"skipped {skipped}, dropped {f['dropped']}, info skipped {info.get('tensor_stats_skipped')}",
                 json.dumps({k: f[k] for k in ("samples", "samples_unknown_ordinal", "dropped_rows_by_source")}))
    if ctx.use_record:
        report.judge("realstats: cap 16: record's summary shows the skipped samples",
                     "skipped by cap" in result.stderr, next(
                         (line for line in result.stderr.splitlines() if "skipped by cap" in line), "")[:200])


def torchrun_argv(ctx, launcher_cuda):
    args = ["--standalone", "--nproc-per-node", "2", str(RANKS)]
    if launcher_cuda:
        return [ctx.python, str(RANKS), "--launcher-cuda", *args]
    return g.torchrun_argv(ctx.python, args)


def trace_ranks(directory):
    ranks = {}
    for path in g.traces_in(directory):
        try:
            ranks[path.name] = tc.summarize(path)["meta"].get("rank")
        except Exception as error:  # an unreadable trace is reported by name
            ranks[path.name] = f"unreadable: {error}"
    return ranks


def torchrun_names(ctx, report):
    for variant, launcher_cuda in (("plain", False), ("launcher initializes CUDA", True)):
        directory = ctx.fresh_dir(f"realstats-torchrun-{'launcher' if launcher_cuda else 'plain'}")
        argv, env = ctx.traced(directory / "rank%r.sqlite", torchrun_argv(ctx, launcher_cuda))
        env = dict(env, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=os.environ.get("GLOO_SOCKET_IFNAME", "lo"))
        for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"):
            env.pop(name, None)  # the launcher must start without a rank, as from a shell
        result = g.run(ctx, f"realstats-torchrun-{variant.split()[0]}", argv, env=env, timeout_s=TORCHRUN_TIMEOUT_S,
                       cwd=directory)
        ranks = trace_ranks(directory)
        # Two ranks write to one pipe: their lines can run together, so find each JSON object after the tag.
        printed = sorted(json.loads(m)["rank"] for m in re.findall(r"TORCHRUN_RANK (\{[^{}]*\})", result.stdout))
        ok = result.rc == 0 and printed == [0, 1] and ranks.get("rank0.sqlite") == 0 \
            and ranks.get("rank1.sqlite") == 1 and not any(n.startswith("rank0-") for n in ranks)
        if launcher_cuda:
            ok = ok and ranks.get("ranknorank.sqlite") == -1
        expected = "rank0, rank1" + (", ranknorank (rank -1)" if launcher_cuda else "")
        report.judge(f"realstats: torchrun 2 ranks, {variant}: {expected}", ok,
                     f"{result.brief()}; traces {ranks}; ranks printed {printed}", result.stderr.strip()[-400:])


def run_all(ctx, report, state):
    g.guarded(report, "realstats zero-code statistics", 90, zero_code, ctx, report, torch=True)
    g.guarded(report, "realstats torchrun names", 60, torchrun_names, ctx, report, torch=True)
