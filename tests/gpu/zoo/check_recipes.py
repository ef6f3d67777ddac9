"""The recipe stage (`recipes`, issue 31), after the zoo-recipes stage of tests/gpu/check_zoo.py in the same call: the
zoo-recipes FP8 traces against the jobs' own count of torch._scaled_mm, and the same jobs untraced and traced by
injection alone. Split from check_zoo.py, whose record and keep steps it reuses (expand)."""

import os
import sqlite3

import gpu_common as g
from check_zoo import expand

# run_all.py puts tests/gpu on the path, check_zoo.py this folder (tests/gpu/zoo)
import registry  # noqa: E402  (tests/gpu/zoo/registry.py)

# ---- The recipe stage (`recipes`) -------------------------------------------------------------------------------
# Rowwise and blockwise FP8 recipes (issue 31) on the GPU: the zoo-recipes stage's FP8 traces against the jobs' own
# count of torch._scaled_mm, and the same jobs untraced and traced by injection alone (no LD_PRELOAD, so no cuBLASLt
# interception: only the Python package's dispatcher interception of torch._scaled_mm sees the GEMMs).
#
# Judged, per FP8 workload of zoo-recipes (run first, in the same call):
# - every step's scaled operands per recipe in the trace (A and B sites with a scale recipe) equal the job's own count
#   (scaled_mm_count.py), in every step with statistics;
# - every sample of an operand scaled per row or block has its per-block statistics (FP8SCOPE_BLOCK_STATS, same site
#   and step), with the recipe's block shape;
# and per clean FP8 workload:
# - traced by injection alone: the same counts, every site from the dispatcher interception (source TORCH_SCALED_MM);
# - the losses bitwise equal (float.hex) traced with `fp8scope record`, traced by injection, and untraced;
# - its first rowwise or blockwise operands, dumped with their scales by dump_block_operands.py, give the per-block
#   kernel's statistics equal to the CPU twin's, field by field (fp8scope_block_stats_dumps).

RECIPE_NAMES = {0: "tensorwise", 1: "rowwise", 2: "blockwise 1×128", 3: "blockwise 128×128", 4: "MX 32", 5: "NVFP4 16"}
RECIPE_CLEAN = ("torchao_rowwise_clean", "deepseek_blockwise_clean")
RECIPE_FP8 = RECIPE_CLEAN + ("torchao_rowwise_drift", "deepseek_blockwise_drift")


def counts_per_step(trace, source=None):
    """{step: {recipe name: operand samples}} over A/B sites with a scale recipe in the marked steps; the sources seen;
    the samples lost."""
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT st.step, site.scaleRecipe, site.source, count(*) FROM FP8SCOPE_TENSOR_STATS st "
            "JOIN FP8SCOPE_TENSOR_SITE site ON site.id = st.siteId "
            "WHERE site.scaleRecipe IS NOT NULL AND site.role IN (0, 1) GROUP BY st.step, site.scaleRecipe, site.source"
        ).fetchall()
        lost = db.execute("SELECT coalesce(sum(count), 0) FROM FP8SCOPE_DROPPED WHERE source = 5").fetchone()[0]
    finally:
        db.close()
    out, sources = {}, set()
    for step, recipe, src, n in rows:
        sources.add(src)
        if step is None:  # before the first step marker (a job's set-up GEMMs): no step to judge
            continue
        if source is None or src == source:
            per = out.setdefault(step, {})
            name = RECIPE_NAMES.get(recipe, f"recipe {recipe}")
            per[name] = per.get(name, 0) + n
    return out, sources, lost


def judge_counts(report, label, trace, truth, source=None):
    expected = {k: v for k, v in truth["scaled_mm"]["operands_per_step"].items() if v}
    per_step, sources, lost = counts_per_step(trace, source)
    wrong = {s: c for s, c in per_step.items() if c != expected}
    steps = truth["steps"]
    ok = bool(per_step) and not wrong and len(per_step) == steps and lost == 0
    report.judge(f"recipes {label}: scaled operands per step by recipe", ok,
                 f"{len(per_step)}/{steps} steps equal to the job's count {expected}" if ok else
                 f"{len(per_step) - len(wrong)}/{steps} steps equal; lost samples {lost}",
                 f"sources {sorted(sources)}; wrong steps (first 3): {dict(list(wrong.items())[:3])}; calls per step "
                 f"{truth['scaled_mm']['calls_per_step']}, pairs {truth['scaled_mm']['pairs_per_step']}")
    return ok


BLOCK_SHAPES = {1: None, 2: (1, 128), 3: (128, 128)}  # rowwise: 1 x the row


def judge_block_stats(report, label, trace):
    """Every per-block operand sample has its FP8SCOPE_BLOCK_STATS row, with the recipe's block shape."""
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    try:
        samples = db.execute(
            "SELECT count(*) FROM FP8SCOPE_TENSOR_STATS st JOIN FP8SCOPE_TENSOR_SITE site ON site.id = st.siteId "
            "WHERE site.scaleRecipe IN (1, 2, 3) AND site.role IN (0, 1)").fetchone()[0]
        rows = db.execute(
            "SELECT site.scaleRecipe, b.blockRows, b.blockCols, b.blocks, b.badScaleBlocks, b.blockAmaxP50, b.amax "
            "FROM FP8SCOPE_BLOCK_STATS b JOIN FP8SCOPE_TENSOR_SITE site ON site.id = b.siteId").fetchall()
    except sqlite3.Error as error:
        report.judge(f"recipes {label}: per-block statistics", False, "no FP8SCOPE_BLOCK_STATS", str(error))
        return
    finally:
        db.close()
    ok = samples > 0 and len(rows) == samples and all(r[4] == 0 and r[3] > 0 and (
        BLOCK_SHAPES[r[0]] == (r[1], r[2]) if BLOCK_SHAPES.get(r[0]) else r[1] == 1) for r in rows)
    shapes = sorted({(r[0], r[1], r[2]) for r in rows})
    report.judge(f"recipes {label}: per-block statistics for every per-block operand sample", ok,
                 f"{len(rows)} block rows for {samples} samples; (recipe, block rows, block cols) {shapes[:4]}",
                 f"first rows {rows[:3]}")


def judge_dumps(ctx, report, name, argv, env_extra):
    """Dumps the first rowwise/blockwise operands of the job and compares the kernel with the twin on them."""
    tool = ctx.build / "tests" / "probes" / "fp8scope_block_stats_dumps"
    if not tool.exists():
        report.add(f"recipes {name}: per-block kernel = twin on dumped operands", "SKIP", f"{tool.name} not built")
        return
    directory = ctx.fresh_dir(f"recipes-{name}-dumps")
    env = {**os.environ, **env_extra, "PYTHONPATH": str(g.REPO / "probes" / "python")}
    dumper = str(g.REPO / "tests" / "gpu" / "zoo" / "dump_block_operands.py")
    r = g.run(ctx, f"recipes-{name}-dumps", [argv[0], dumper, str(directory / "dumps"), "4", *argv[1:]], env=env,
              timeout_s=180, cwd=directory)
    files = list((directory / "dumps").glob("*.block")) if (directory / "dumps").exists() else []
    t = g.run(ctx, f"recipes-{name}-dumps-check", [str(tool), str(directory / "dumps")], timeout_s=120)
    (ctx.details / f"recipes-{name}-dumps.txt").write_text(t.stdout)
    report.judge(f"recipes {name}: per-block kernel = twin on dumped operands", r.rc == 0 and t.rc == 0 and files,
                 (t.stdout.strip().splitlines() or ["no output"])[-1], r.stderr.strip()[-300:] + t.stdout[-600:])


def run_variant(ctx, name, argv, kind, env_extra):
    """kind: 'untraced' or 'injection'. Returns (result, truth, trace or None)."""
    directory = ctx.fresh_dir(f"recipes-{name}-{kind}")
    env = dict(os.environ) if kind == "untraced" else ctx.injected_env(directory / "trace-%p.sqlite", env_extra)
    python = str(g.REPO / "probes" / "python")
    if kind == "injection":  # what `fp8scope record` puts on the path, without its LD_PRELOAD
        env["PYTHONPATH"] = f"{python}/fp8scope/_boot:{python}"
    else:
        env["PYTHONPATH"] = python
    env["PYTHONUNBUFFERED"] = "1"
    r = g.run(ctx, f"recipes-{name}-{kind}", argv, env=env, timeout_s=180, cwd=directory)
    truth = g.ground_truth(r.stdout)
    traces = list(g.traces_in(directory)) if kind == "injection" else []
    return r, truth, (traces[0] if traces else None)


def run_recipes(ctx, report, state):
    """The stage `recipes`: see "The recipe stage" above."""
    kept = state.get("zoo", {}).get("zoo-recipes")
    if kept is None:
        report.add("recipes", "SKIP", "run the zoo-recipes stage first, in the same call")
        return
    workloads = {w.name: w for w in registry.workloads("zoo-recipes")}
    for name in RECIPE_FP8:
        if name not in kept.traces:
            report.add(f"recipes {name}", "SKIP", "not recorded (see its zoo row)")
            continue
        truth = kept.truths[name]
        g.guarded(report, f"recipes {name}", 5, judge_counts, report, name, kept.traces[name], truth)
        g.guarded(report, f"recipes {name} blocks", 5, judge_block_stats, report, name, kept.traces[name])
    for name in RECIPE_CLEAN:
        if name not in kept.traces:
            continue
        w = workloads[name]
        argv = expand(ctx, w.argv)

        def variants():
            injected, untraced = {}, {}
            r, injected, trace = run_variant(ctx, name, argv, "injection", w.env)
            report.judge(f"recipes {name} by injection: ran", r.rc == 0 and trace is not None and injected,
                         r.brief(), r.stderr.strip()[-300:])
            if trace is not None and injected:
                judge_counts(report, f"{name} by injection", trace, injected, source=3)
            r2, untraced, _ = run_variant(ctx, name, argv, "untraced", {})
            losses = {"record": kept.truths[name].get("losses_hex"), "injection": (injected or {}).get("losses_hex"),
                      "untraced": (untraced or {}).get("losses_hex")}
            same = None not in losses.values() and len({tuple(v) for v in losses.values()}) == 1
            report.judge(f"recipes {name}: losses bitwise equal traced and untraced", same,
                         f"{len(losses['untraced'] or [])} steps; final {(untraced or {}).get('final_loss')}",
                         "; ".join(f"{k}: {(v or [])[-2:]}" for k, v in losses.items()))

        g.guarded(report, f"recipes {name} variants", 60, variants, torch=True)
        g.guarded(report, f"recipes {name} dumps", 60, judge_dumps, ctx, report, name, argv, w.env, torch=True)
