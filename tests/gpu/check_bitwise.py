"""Never a changed number (docs/benchmarks.md "Never a changed number: the bitwise stage"): every zoo workload, a
torch.compile'd Hugging Face GPT-2 (default and reduce-overhead, each also under torch.use_deterministic_algorithms)
and the FP8 training sample, run untraced and under `fp8scope record` with GEMM statistics on (the collector's
default, and FP8SCOPE_STATS_EVERY=1 where the zoo sets it); the losses each printed (final_loss, and the per-step
losses where it prints them) must be bitwise equal.

Each run gets an empty Inductor and Triton cache (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR), so compiled jobs
compile and autotune in both runs, traced and untraced alike: a cache shared between the two would hide whatever
the recording does to the compile. When the two differ, the stage finds out whose doing it is:
  - the untraced run once more on an empty cache, and once more on a copy of its own cache (the A/A controls):
    when any two untraced runs differ, the job is not bitwise reproducible even untraced, and is reported, not
    judged. Inductor picks launch configs by timing them on a cold cache, and a compiled GPT-2 gives one of three
    last losses at random on one warm cache, untraced (docs/benchmarks.md);
  - both runs once more on copies of the untraced run's cache (Inductor's, Triton's and JAX's persistent
    compilation cache): the same kernels and autotuned configs on both sides.
The check passes when the runs on the same cache are bitwise equal, and fails when they differ while every
untraced run agreed. The autotuned configs chosen otherwise are named (hf_gpt2_compile.py prints them). The
deterministic GPT-2 jobs are the judged case for torch.compile: their untraced runs reproduce, so a difference there
is the recording's.

Each run takes the GPUs its job needs (CUDA_VISIBLE_DEVICES), at most two runs per GPU at a time, and as many jobs
go side by side as there are GPUs: the same model of GPU gives the same bits (cuBLAS's reproducibility is per
architecture and SM count).

FP8SCOPE_BITWISE_SETS=extras,zoo1,zoo2,zoo-ddp2,zoo-markerless (default: all) picks the sets; FP8SCOPE_ZOO_ONLY=a,b the
workloads by name.
"""

import os
import shutil
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import check_realjobs
import check_zoo
import gpu_common as g

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "zoo"))
import registry  # noqa: E402  (tests/gpu/zoo/registry.py)

SETS = ("extras", "zoo1", "zoo2", "zoo-ddp2", "zoo-markerless")
GPT2 = [registry.PY, f"{registry.REALJOBS}/hf_gpt2_compile.py", "--steps", "25"]


@dataclass
class Job:
    name: str
    argv: list
    env: dict = field(default_factory=dict)
    timeout_s: int = 120
    gpus: int = 1
    requires: tuple = ()
    # False for a job shown not bitwise reproducible untraced (docs/benchmarks.md): its runs are reported, never
    # judged, since one traced run that differs (or agrees) says nothing about the recording.
    judged: bool = True


def extras():
    stats = dict(registry.STATS_EVERY_STEP)
    return [
        # Without deterministic algorithms, eight untraced runs of the default mode on one H100 gave three different
        # last losses, two of them alone on the GPU on copies of one warm cache (docs/benchmarks.md): reported, not
        # judged.
        Job("hf_gpt2_compile default", [*GPT2, "--mode", "default"], timeout_s=180, requires=("transformers",),
            judged=False),
        Job("hf_gpt2_compile reduce-overhead", [*GPT2, "--mode", "reduce-overhead"], timeout_s=180,
            requires=("transformers",), judged=False),
        Job("hf_gpt2_compile default deterministic", [*GPT2, "--mode", "default", "--deterministic"], timeout_s=180,
            requires=("transformers",)),
        Job("hf_gpt2_compile reduce-overhead deterministic", [*GPT2, "--mode", "reduce-overhead", "--deterministic"],
            timeout_s=180, requires=("transformers",)),
        Job("train fp8 delayed, statistics every step", registry._train("fp8", 30), env=stats),
        Job("train fp8 current, statistics every step", registry._train("fp8", 30, ["--scaling", "current"]),
            env=stats),
        # Statistics every 10th step (the default): the torch._scaled_mm wrappers leave at each other step's beginning
        # and come back (_scaled_gemm.follow), at the job's markers and, without them, at the optimizer's step ends.
        Job("train fp8 delayed, statistics every 10th step", registry._train("fp8", 30)),
        Job("train fp8 delayed, statistics every 10th step, no markers", registry._train("fp8", 30, ["--no-markers"])),
    ]


def jobs_of(sets, only):
    jobs = extras() if "extras" in sets else []
    for stage in ("zoo1", "zoo2", "zoo-ddp2", "zoo-markerless"):
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
    """Runs (name, argv, env) on free GPUs: each run takes as many distinct GPUs as its job needs
    (CUDA_VISIBLE_DEVICES) and gives them back when it ends. A GPU holds up to RUNS_PER_GPU runs at once (a run
    spends much of its time importing and compiling on the host; sharing a GPU changes no number). The same model
    of GPU on one host gives the same bits (cuBLAS's reproducibility is per architecture and SM count)."""

    RUNS_PER_GPU = 2

    def __init__(self, ctx, gpus):
        self.ctx = ctx
        self.gpus = max(1, gpus)
        self.free = {gpu: self.RUNS_PER_GPU for gpu in range(self.gpus)}
        self.cond = threading.Condition()

    def _take(self, count):
        count = min(count, self.gpus)

        def pick():
            open_gpus = sorted((gpu for gpu, slots in self.free.items() if slots > 0), key=lambda gpu: -self.free[gpu])
            return open_gpus[:count] if len(open_gpus) >= count else None

        with self.cond:
            self.cond.wait_for(lambda: pick() is not None)
            taken = pick()
            for gpu in taken:
                self.free[gpu] -= 1
            return taken

    def _give(self, taken):
        with self.cond:
            for gpu in taken:
                self.free[gpu] += 1
            self.cond.notify_all()

    def run(self, label, job, traced, cache_from=None):
        directory = self.ctx.fresh_dir(f"bitwise-{label}")
        cache = directory / "inductor"
        if cache_from is not None:
            shutil.copytree(cache_from, cache)
        else:
            cache.mkdir()
        # JAX's persistent compilation cache too (every compile kept), so that XLA's autotuned choices can be
        # shared the same way.
        extra = check_zoo.env_extra({**job.env, "TORCHINDUCTOR_CACHE_DIR": str(cache),
                                     "TRITON_CACHE_DIR": str(cache / "triton"),
                                     "JAX_COMPILATION_CACHE_DIR": str(cache / "jax"),
                                     "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                                     "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"})
        argv = check_zoo.expand(self.ctx, job.argv)
        taken = self._take(job.gpus)
        try:
            extra["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, taken))
            if traced:
                argv, env = self.ctx.traced(directory / "trace-%p.sqlite", argv, extra)
            else:
                env = dict(os.environ, **extra)
            result = g.run(self.ctx, f"bitwise-{label}", argv, env=env, timeout_s=job.timeout_s, cwd=directory)
        finally:
            self._give(taken)
        return result, cache

    def pair(self, label, job, runs):
        """runs: [(suffix, traced, cache_from)], all at once, each as soon as its GPUs are free."""
        with ThreadPoolExecutor(max_workers=len(runs)) as pool:
            futures = [pool.submit(self.run, f"{label}-{s}", job, t, c) for s, t, c in runs]
            return [f.result() for f in futures]


def slug(name):
    return "".join(c if c.isalnum() else "_" for c in name)


def finals(losses):
    """The last loss per process: final_loss, else the last of the per-step losses."""
    return [f if f is not None else (steps[-1] if steps else None) for f, steps in losses.values()]


def judge(ctx, report, runner, job):
    label = slug(job.name)
    (traced, _), (plain, plain_cache) = runner.pair(label, job, [("traced", True, None), ("untraced", False, None)])
    if plain.rc != 0 or traced.rc != 0:
        bad = traced if traced.rc != 0 else plain
        report.add(f"bitwise {job.name}", "FAIL", f"a run failed: {bad.brief()}", bad.stderr.strip()[-400:])
        return
    t_losses, u_losses = losses_of(traced.stdout), losses_of(plain.stdout)
    if not u_losses or all(f is None and s is None for f, s in u_losses.values()):
        report.add(f"bitwise {job.name}", "SKIP", "the workload prints no loss")
        return
    figure = f"last losses traced {finals(t_losses)}, untraced {finals(u_losses)}"
    if not job.judged:
        report.add(f"bitwise {job.name}", "INFO", "not bitwise reproducible untraced (docs/benchmarks.md): not judged; "
                   + ("equal this time" if t_losses == u_losses else "differ this time"), figure)
        return
    if t_losses == u_losses:
        report.judge(f"bitwise {job.name}", True, f"{len(u_losses)} process(es), cold caches; {figure}")
        return
    # Whose doing: both runs again on copies of the untraced run's compile cache (the same kernels and autotuned
    # configs on both sides), and the untraced run once more on a cold cache (is a cold compile reproducible?).
    (warm_t, _), (warm_u, _), (again, _) = runner.pair(label, job, [("traced-warm", True, plain_cache),
                                                                    ("untraced-warm", False, plain_cache),
                                                                    ("untraced-again", False, None)])
    wt, wu, aa = losses_of(warm_t.stdout), losses_of(warm_u.stdout), losses_of(again.stdout)
    tuned_u, tuned_t, tuned_a = autotuned_of(plain.stdout), autotuned_of(traced.stdout), autotuned_of(again.stdout)
    changed = sorted(k for k in tuned_u if k in tuned_t and tuned_u[k] != tuned_t[k])
    changed_aa = sorted(k for k in tuned_u if k in tuned_a and tuned_u[k] != tuned_a[k])
    warm_same = warm_t.rc == 0 and warm_u.rc == 0 and bool(wu) and wt == wu
    warm_reproducible = warm_u.rc == 0 and bool(wu) and wu == u_losses
    cold_reproducible = again.rc == 0 and aa == u_losses
    detail = (f"cold caches differ ({figure}); untraced again on a cold cache: "
              f"{'equal' if cold_reproducible else 'differs too'} ({finals(aa)}); on copies of the untraced run's "
              f"cache, traced {finals(wt)} untraced {finals(wu)}: {'bitwise equal' if warm_same else 'differ'}; "
              f"autotuned configs {len(tuned_u)}, chosen otherwise traced {len(changed)} {changed[:3]}, untraced "
              f"again {len(changed_aa)} {changed_aa[:3]}")
    if warm_same:
        report.judge(f"bitwise {job.name}", True, "same kernels, same bits; a cold compile chose otherwise"
                     + ("" if cold_reproducible else ", as two untraced cold compiles do"), detail)
    elif not (warm_reproducible and cold_reproducible):
        # Two untraced runs disagree (from cold, or on the same cache): bitwise equality is not this job's property,
        # and one traced run that differs says nothing about the recording.
        report.add(f"bitwise {job.name}", "INFO", "not bitwise reproducible untraced either: not judged", detail)
    else:
        report.judge(f"bitwise {job.name}", False, "the recording changed a number (three untraced runs agree)",
                     detail)


def run_all(ctx, report, state):
    sets = [s for s in os.environ.get("FP8SCOPE_BITWISE_SETS", ",".join(SETS)).split(",") if s in SETS]
    only = {n for n in os.environ.get("FP8SCOPE_ZOO_ONLY", "").split(",") if n}
    jobs = jobs_of(sets, only)
    modules = check_zoo._modules_present(ctx, ["transformers", "jax"]) if ctx.torch else {}
    gpus = check_zoo._gpu_count(ctx) if ctx.torch else 0
    runner = Runner(ctx, gpus)
    report.add("bitwise", "INFO", f"{len(jobs)} jobs, sets {sets}, {gpus} GPU(s)", f"modules {modules}")
    runnable = []
    for job in jobs:
        if job.gpus > gpus:
            report.add(f"bitwise {job.name}", "SKIP", f"needs {job.gpus} GPUs")
            continue
        why = check_zoo.missing_requirement(ctx, job.requires, modules)
        if why:
            report.add(f"bitwise {job.name}", "SKIP" if "not built" not in why else "FAIL", why)
            continue
        runnable.append(job)
    # Jobs go side by side, as many as there are GPUs (each job's traced and untraced runs at the same time).
    with ThreadPoolExecutor(max_workers=max(1, gpus)) as pool:
        for future in [pool.submit(g.guarded, report, f"bitwise {job.name}", 20, judge, ctx, report, runner, job,
                                   torch=True) for job in runnable]:
            future.result()
