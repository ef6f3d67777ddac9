"""The five CUDA ground-truth samples, each run untraced and then under `fp8scope record`: the trace's counts
must equal the sample's FP8SCOPE_GROUND_TRUTH, and the traced run's exit code and stdout must equal the
untraced run's."""

import json

import gpu_common as g
import trace_checks as tc

KEEP = ("syncs", "launch_bound", "multistream")  # traces kept (syncs in $OUT, the others in traces-extra.tar.gz)


def check_sample(ctx, report, sample):
    exe = ctx.sample(sample)
    if not exe.exists():
        report.add(f"sample {sample}", "FAIL", f"missing {exe}")
        return
    plain = g.run(ctx, f"{sample}-plain", [exe], timeout_s=90)
    if plain.rc == 77:
        report.add(f"sample {sample}", "SKIP", "no CUDA device (exit 77)", plain.stderr.strip()[:200])
        return
    directory = ctx.fresh_dir(f"sample-{sample}")
    argv, env = ctx.traced(directory / "trace-%p.sqlite", [exe])
    traced = g.run(ctx, f"{sample}-traced", argv, env=env, timeout_s=90)
    diff = g.stdout_diff(plain.stdout, traced.stdout)
    report.judge(f"sample {sample}: exit code and stdout as untraced", plain.rc == traced.rc and not diff,
                 f"rc {plain.rc} -> {traced.rc}", diff or f"stderr: {g.fp8scope_lines(traced.stderr)[:3]}")
    truth = g.ground_truth(traced.stdout)
    traces = g.traces_in(directory)
    if truth is None or len(traces) != 1:
        report.add(f"sample {sample}: trace = ground truth", "FAIL",
                   f"{len(traces)} traces, ground truth {'found' if truth else 'missing'}", traced.brief())
        return
    summary = tc.summarize(traces[0])
    results = tc.compare_cuda_sample(summary, truth)
    (ctx.details / f"sample-{sample}.json").write_text(
        json.dumps({"truth": truth, "trace": summary, "results": results}, indent=1, default=str))
    hard_failures = [r for r in results if r["hard"] and not r["ok"]]
    syncs = summary["syncs_by_type"]
    figure = (f"kernels {summary['kernels']}/{truth['kernels']}, syncs s{syncs.get(3, 0)} d{syncs.get(4, 0)} "
              f"e{syncs.get(1, 0)} w{syncs.get(2, 0)}, memcpy {sum(summary['memcpy_by_kind'].values())}, "
              f"memset {summary['memsets']}, nvtx {tc.nvtx_count(summary, 'train_step')}, "
              f"dropped {summary['dropped']}")
    report.judge(f"sample {sample}: trace = ground truth", not hard_failures, figure,
                 "; ".join(f"{r['check']}: {r['detail']}" for r in hard_failures)[:1000])
    soft = [r for r in results if not r["hard"] and not r["ok"]]
    if soft:
        report.add(f"sample {sample}: uncertain mappings differ", "INFO", f"{len(soft)} fields",
                   "; ".join(f"{r['check']}: {r['detail']}" for r in soft)[:1000])
    if sample in KEEP or hard_failures:
        ctx.keep(f"sample-{sample}.sqlite", traces[0], top=sample == "syncs")


def run_all(ctx, report):
    for sample in g.SAMPLES:
        g.guarded(report, f"sample {sample}", 10, check_sample, ctx, report, sample)
