"""FP8 against its BF16 reference (docs/benchmarks.md "FP8 against its BF16 reference: `compare` on real pairs"): record
FP8 + BF16 pairs of the training sample with tensor statistics every step, keep them with the truth each run printed,
and judge `fp8scope compare` / `check --ref` on them.

Pairs (samples/torch/train.py, a small configuration so that the committed traces stay small; same seed):
  clean     --precision fp8 and --precision bf16: FP8 healthy against its reference
  drift     both precisions with --plant-drift 1:14:1.5: from step 14 one feature of blocks.1.fc1's input grows by
            1.5x per step, in both runs; what differs is FP8's delayed scaling of it
  current   --precision fp8 --scaling current (12 steps): the scaling recipe detector's real current-scaling trace
  hf-*      a Hugging Face Llama from a config (realjobs/hf_llama.py, 2 layers, 20 steps, annotate, loss scalar), with
            --fp8 (Fp8Linear in every decoder Linear) and without, clean and with --plant-drift 1:10:1.5 (layer 1's
            MLP input); judged like the sample's pairs, not committed (samples/traces has no room for them)
Judged when the build has `fp8scope compare`: the clean pair flags no site and its loss delta stays under 1e-2; the
drift pair names blocks.1.fc1's activation first, within 3 steps of step 14; `check --ref` exits 0 and 1.

Traces and truths are packed, gzip per file, into $OUT/compare-N.tar for samples/traces/compare/.
"""

import json

import check_realjobs
import gpu_common as g

MODEL = ["--layers", "2", "--d-model", "512", "--heads", "8", "--seq", "256", "--batch", "8", "--vocab", "4096"]
STEPS = 30
DRIFT_BLOCK, DRIFT_STEP = 1, 14
FACTOR = "1.5"
RUN_TIMEOUT_S = 180


HF = g.REPO / "tests" / "gpu" / "realjobs" / "hf_llama.py"
HF_ARGS = ["--layers", "2", "--steps", "20", "--annotate", "--log-loss"]
HF_PLANT = ["--plant-drift", "1:10:1.5"]


def record(ctx, report, kept, name, extra_args, steps=STEPS, script=None):
    directory = ctx.fresh_dir(f"compare-{name}")
    env_extra = {"PYTHONPATH": str(g.REPO / "probes" / "python"), "PYTHONUNBUFFERED": "1",
                 "FP8SCOPE_STATS_EVERY": "1"}
    argv = [ctx.python, ctx.train_py, "--steps", steps, *MODEL, *extra_args] if script is None \
        else [ctx.python, script, *extra_args]
    targv, env = ctx.traced(directory / "trace-%p.sqlite", [str(a) for a in argv], env_extra)
    result = g.run(ctx, f"compare-{name}", targv, env=env, timeout_s=RUN_TIMEOUT_S, cwd=directory)
    truth = g.ground_truth(result.stdout)
    traces = g.traces_in(directory)
    ok = result.rc == 0 and truth is not None and len(traces) == 1
    if ok and kept is not None:
        truth = dict(truth, trace_bytes=traces[0].stat().st_size, recorded_by="tests/gpu/check_compare.py",
                     command=" ".join(str(a) for a in argv[1:]))
        kept.add(name, traces[0], truth)
    report.judge(f"compare: record {name}", ok,
                 f"median step {truth.get('median_step_ms', 0):.2f} ms, {traces[0].stat().st_size >> 10} KiB"
                 if ok else result.brief(), result.stderr.strip()[-300:] if not ok else "")
    return traces[0] if ok else None


def judge_compare(ctx, report, name, run, ref, expect_flagged, site=f"blocks.{DRIFT_BLOCK}.fc1", step=DRIFT_STEP):
    out = g.run(ctx, f"compare-{name}-json", [ctx.fp8scope, "compare", run, ref, "--format", "json"], timeout_s=120)
    if out.rc != 0:
        report.add(f"compare {name}", "FAIL", out.brief(), out.stderr.strip()[-300:])
        return
    doc = json.loads(out.stdout)
    flagged = doc.get("drift", {}).get("flagged_sites", [])
    first = doc.get("drift", {}).get("first_divergent")
    loss = doc.get("loss", {})
    if expect_flagged:
        ok = bool(first) and site in first.get("site", "") \
            and "activation" in first.get("site", "") and abs(first.get("onset_step", -99) - step) <= 3
    else:
        ok = not flagged and loss.get("final_relative_delta") is not None and loss["final_relative_delta"] < 1e-2
    report.judge(f"compare {name}", ok,
                 f"{len(flagged)} flagged, first {first and first.get('site')} @ {first and first.get('onset_step')}, "
                 f"loss delta {loss.get('final_relative_delta')} (largest single step {loss.get('max_relative_delta')})")
    check = g.run(ctx, f"check-ref-{name}", [ctx.fp8scope, "check", run, "--ref", ref], timeout_s=120)
    report.judge(f"check --ref {name} exits {1 if expect_flagged else 0}", check.rc == (1 if expect_flagged else 0),
                 f"exit {check.rc}", check.stdout.strip()[-300:])


def run_all(ctx, report, state):
    kept = check_realjobs.Kept(ctx, prefix="compare")
    traces = {}
    runs = [("clean-fp8", ["--precision", "fp8"]), ("clean-bf16", ["--precision", "bf16"])]
    plant = ["--plant-drift", f"{DRIFT_BLOCK}:{DRIFT_STEP}:{FACTOR}"]
    runs += [("drift-fp8", ["--precision", "fp8", *plant]), ("drift-bf16", ["--precision", "bf16", *plant])]
    for name, args in runs:
        traces[name] = g.guarded(report, f"compare record {name}", 50, record, ctx, report, kept, name, args,
                                 torch=True)
    g.guarded(report, "compare record current", 30, record, ctx, report, kept, "current-fp8",
              ["--precision", "fp8", "--scaling", "current"], 12, torch=True)
    usage = g.run(ctx, "fp8scope-help", [ctx.fp8scope, "--help"], timeout_s=30)
    has_compare = usage.rc == 0 and "compare" in usage.stdout
    if not has_compare:
        report.add("compare: judged", "SKIP", "this build has no `fp8scope compare`")
    else:
        if traces.get("clean-fp8") and traces.get("clean-bf16"):
            judge_compare(ctx, report, "clean", traces["clean-fp8"], traces["clean-bf16"], False)
        if traces.get("drift-fp8") and traces.get("drift-bf16"):
            judge_compare(ctx, report, "drift", traces["drift-fp8"], traces["drift-bf16"], True)
    hf_runs = [("hf-clean-fp8", [*HF_ARGS, "--fp8"]), ("hf-clean-bf16", HF_ARGS),
               ("hf-drift-fp8", [*HF_ARGS, "--fp8", *HF_PLANT]), ("hf-drift-bf16", [*HF_ARGS, *HF_PLANT])]
    for name, args in hf_runs:
        traces[name] = g.guarded(report, f"compare record {name}", 50, record, ctx, report, None, name, args,
                                 STEPS, HF, torch=True)
    if has_compare:
        if traces.get("hf-clean-fp8") and traces.get("hf-clean-bf16"):
            judge_compare(ctx, report, "hf-clean", traces["hf-clean-fp8"], traces["hf-clean-bf16"], False)
        if traces.get("hf-drift-fp8") and traces.get("hf-drift-bf16"):
            judge_compare(ctx, report, "hf-drift", traces["hf-drift-fp8"], traces["hf-drift-bf16"], True,
                          site="model.layers.1.mlp", step=10)
        for name in ("hf-clean", "hf-drift", "clean", "drift"):
            run, ref = traces.get(f"{name}-fp8"), traces.get(f"{name}-bf16")
            if run and ref:
                out = g.run(ctx, f"compare-{name}-text", [ctx.fp8scope, "compare", run, ref], timeout_s=120)
                (ctx.details / f"compare-{name}.txt").write_text(out.stdout + out.stderr)
                js = g.run(ctx, f"compare-{name}-json", [ctx.fp8scope, "compare", run, ref, "--format", "json"],
                           timeout_s=120)
                (ctx.details / f"compare-{name}.json").write_text(js.stdout)
    archives = kept.pack(ctx.out)
    report.add("compare: traces packed", "INFO", ", ".join(archives) or "none")
