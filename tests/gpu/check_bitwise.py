"""Never a changed number (issue 26 item 3): every zoo workload, a torch.compile'd Hugging Face GPT-2 (default and
reduce-overhead) and the FP8 training sample, run untraced and under `fp8scope record` with GEMM statistics on (the
collector's default, and FP8SCOPE_STATS_EVERY=1 where the zoo sets it); the losses each printed (final_loss, and
the per-step losses where it prints them) must be bitwise equal.

Each run gets an empty Inductor and Triton cache (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR), so compiled jobs
compile and autotune in both runs, traced and untraced alike: a cache shared between the two would hide whatever
the recording does to the compile. When the two differ, the stage finds out whose doing it is:
  - the traced run once more, on a copy of the untraced run's cache (the kernels and the configs Inductor's
    autotuner chose, untraced): equal then means the recording changed only the autotuner's timing-based choice;
  - the untraced run once more on an empty cache (the A/A control): differing too means the job is not bitwise
    reproducible from a cold cache even untraced.
The check passes when the runs with the same kernels are bitwise equal; the autotuned configs that differ are
named (hf_gpt2_compile.py prints them).

With two or more GPUs the runs go two at a time, one per GPU (CUDA_VISIBLE_DEVICES): the same model of GPU gives
the same bits (cuBLAS's reproducibility is per architecture and SM count). Multi-GPU workloads run alone.

FP8SCOPE_BITWISE_SETS=extras,zoo1,zoo2,zoo-ddp2 (default: all) picks the sets; FP8SCOPE_ZOO_ONLY=a,b the
workloads by name.
"""

import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import check_realjobs
import check_zoo
import gpu_common as g

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "zoo"))
import registry  # noqa: E402  (tests/gpu/zoo/registry.py)

SETS = ("extras", "zoo1", "zoo2", "zoo-ddp2")
GPT2 = [registry.PY, f"{registry.REALJOBS}/hf_gpt2_compile.py", "--steps", "25"]


@dataclass
class Job:
    name: str
    argv: list
    env: dict = field(default_factory=dict)
    timeout_s: int = 120
    gpus: int = 1
    requires: tuple = ()


def extras():
    stats = dict(registry.STATS_EVERY_STEP)
    return [
        Job("hf_gpt2_compile default", [*GPT2, "--mode", "default"], timeout_s=180, requires=("transformers",)),
        Job("hf_gpt2_compile reduce-overhead", [*GPT2, "--mode", "reduce-overhead"], timeout_s=180,
            requires=("transformers",)),
        Job("train fp8 delayed, statistics every step", registry._train("fp8", 30), env=stats),
        Job("train fp8 current, statistics every step", registry._train("fp8", 30, ["--scaling", "current"]),
            env=stats),
    ]


def jobs_of(sets, only):
    jobs = extras() if "extras" in sets else []
    for stage in ("zoo1", "zoo2", "zoo-ddp2"):
        if stage in sets:
            jobs += [Job(w.name, w.argv, w.env, max(w.timeout_s, 120), w.gpus, w.requires)
                     for w in registry.WORKLOADS if w.stage == stage]
    return [j for j in jobs if not only or j.name.split(" ")[0] in only or j.name in only]


def losses_of(stdout):
    """{rank: (final_loss, losses)} of the printed truths; a rank-less job is rank None."""
    return {t.get("rank"): (t.get("final_loss"), t.get("losses")) for t in check_realjobs._truths(stdout)}


def autotuned_of(stdout):
    merged = {}
    for truth in check_realjobs._truths(stdout):
        merged.update(truth.get("autotuned") or {})
    return merged


class Runner:
    """Runs (name, argv, env) on free GPUs, one run per GPU (all GPUs for a multi-GPU job)."""

    def __init__(self, ctx, gpus):
        self.ctx = ctx
        self.gpus = max(1, gpus)

    def run(self, label, job, traced, cache_from=None, gpu=None):
        directory = self.ctx.fresh_dir(f"bitwise-{label}")
        cache = directory / "inductor"
        if cache_from is not None:
            shutil.copytree(cache_from, cache)
        else:
            cache.mkdir()
        extra = check_zoo.env_extra({**job.env, "TORCHINDUCTOR_CACHE_DIR": str(cache),
                                     "TRITON_CACHE_DIR": str(cache / "triton")})
        if gpu is not None:
            extra["CUDA_VISIBLE_DEVICES"] = str(gpu)
        argv = check_zoo.expand(self.ctx, job.argv)
        if traced:
            argv, env = self.ctx.traced(directory / "trace-%p.sqlite", argv, extra)
        else:
            env = dict(os.environ, **extra)
        result = g.run(self.ctx, f"bitwise-{label}", argv, env=env, timeout_s=job.timeout_s, cwd=directory)
        return result, cache

    def pair(self, label, job, runs):
        """runs: [(suffix, traced, cache_from)]; two at a time on two GPUs, else one after the other."""
        if job.gpus > 1 or self.gpus < 2:
            return [self.run(f"{label}-{s}", job, t, c) for s, t, c in runs]
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(self.run, f"{label}-{s}", job, t, c, i % 2) for i, (s, t, c) in enumerate(runs)]
            return [f.result() for f in futures]


def slug(name):
    return "".join(c if c.isalnum() else "_" for c in name)


def judge(ctx, report, runner, job):
    label = slug(job.name)
    (traced, traced_cache), (plain, plain_cache) = runner.pair(label, job, [("traced", True, None),
                                                                             ("untraced", False, None)])
    if plain.rc != 0 or traced.rc != 0:
        bad = traced if traced.rc != 0 else plain
        report.add(f"bitwise {job.name}", "FAIL", f"a run failed: {bad.brief()}", bad.stderr.strip()[-400:])
        return
    t_losses, u_losses = losses_of(traced.stdout), losses_of(plain.stdout)
    if not u_losses or all(f is None and s is None for f, s in u_losses.values()):
        report.add(f"bitwise {job.name}", "SKIP", "the workload prints no loss")
        return
    finals = f"final losses traced {[v[0] for v in t_losses.values()]}, untraced {[v[0] for v in u_losses.values()]}"
    if t_losses == u_losses:
        report.judge(f"bitwise {job.name}", True, f"{len(u_losses)} process(es), cold caches; {finals}")
        return
    # Whose doing: the traced run on the untraced run's kernels, and the untraced run again (A/A).
    (warm, _), (again, _) = runner.pair(label, job, [("traced-warm", True, plain_cache),
                                                     ("untraced-again", False, None)])
    w_losses, a_losses = losses_of(warm.stdout), losses_of(again.stdout)
    tuned_u, tuned_t, tuned_a = autotuned_of(plain.stdout), autotuned_of(traced.stdout), autotuned_of(again.stdout)
    changed = sorted(k for k in tuned_u if k in tuned_t and tuned_u[k] != tuned_t[k])
    changed_aa = sorted(k for k in tuned_u if k in tuned_a and tuned_u[k] != tuned_a[k])
    same_kernels = warm.rc == 0 and w_losses == u_losses
    detail = (f"cold caches differ ({finals}); traced on the untraced run's Inductor cache: "
              f"{'bitwise equal' if same_kernels else 'differs: ' + str([v[0] for v in w_losses.values()])}; "
              f"untraced again on a cold cache: {'equal' if a_losses == u_losses else 'differs too'} "
              f"({[v[0] for v in a_losses.values()]}); autotuned configs: {len(tuned_u)}, chosen otherwise traced "
              f"{len(changed)} {changed[:4]}, untraced again {len(changed_aa)} {changed_aa[:4]}")
    report.judge(f"bitwise {job.name}", same_kernels,
                 "same kernels, same bits; a cold compile's autotuning chose otherwise under recording"
                 if same_kernels else "the recording changed a number", detail)


def run_all(ctx, report, state):
    sets = [s for s in os.environ.get("FP8SCOPE_BITWISE_SETS", ",".join(SETS)).split(",") if s in SETS]
    only = {n for n in os.environ.get("FP8SCOPE_ZOO_ONLY", "").split(",") if n}
    jobs = jobs_of(sets, only)
    modules = check_zoo._modules_present(ctx, ["transformers", "jax"]) if ctx.torch else {}
    gpus = check_zoo._gpu_count(ctx) if ctx.torch else 0
    runner = Runner(ctx, gpus)
    report.add("bitwise", "INFO", f"{len(jobs)} jobs, sets {sets}, {gpus} GPU(s)", f"modules {modules}")
    for job in jobs:
        if job.gpus > gpus:
            report.add(f"bitwise {job.name}", "SKIP", f"needs {job.gpus} GPUs")
            continue
        why = check_zoo.missing_requirement(ctx, job.requires, modules)
        if why:
            report.add(f"bitwise {job.name}", "SKIP" if "not built" not in why else "FAIL", why)
            continue
        g.guarded(report, f"bitwise {job.name}", 20, judge, ctx, report, runner, job, torch=True)
