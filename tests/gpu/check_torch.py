"""The PyTorch training sample: kernel counts per name in our trace against torch.profiler's counts for the same
deterministic workload (separate runs: CUPTI admits one subscriber), and the real traces kept in $OUT."""

import json
import re
import shutil

import gpu_common as g
import trace_checks as tc

STEPS = 30
TRAIN_TIMEOUT_S = 240
LOSSES_PREFIX = "FP8SCOPE_LOSSES "


def train(ctx, name, args, traced, extra_env=None):
    """One train.py run; returns (Result, trace paths). Traced runs write into their own folder."""
    directory = ctx.fresh_dir(f"train-{name}")
    argv = [ctx.python, ctx.train_py, *map(str, args)]
    if traced:
        # Without tensor statistics: their kernels are fp8scope's, not the job's, and torch.profiler has none
        # (check_stats.py covers them).
        argv, env = ctx.traced(directory / "trace-%p.sqlite", argv, {"FP8SCOPE_GEMM_STATS": "0", **(extra_env or {})})
    else:
        env = None
    result = g.run(ctx, f"train-{name}", argv, env=env, timeout_s=TRAIN_TIMEOUT_S, cwd=directory)
    return result, g.traces_in(directory), directory


def losses_line(stdout):
    return next((line for line in stdout.splitlines() if line.startswith(LOSSES_PREFIX)), None)


def _norm(name):
    return re.sub(r"\s+", "", name)


def compare_kernel_names(summary, profiled):
    """Matches the trace's kernel functions (demangled, short and mangled name) to torch.profiler's names
    (demangled, as Kineto writes them): exactly on demangledName, then mangledName, then demangledName with
    whitespace ignored, then shortName; reports what matched on which and what matched nothing."""
    torch_names = profiled["kernels_by_name"]
    loose = {_norm(name): name for name in torch_names}
    trace_counts, how, unmatched_trace = {}, {}, {}
    for demangled, short, mangled, n in summary["kernel_names"]:
        for kind, match in (("demangled", demangled if demangled in torch_names else None),
                            ("mangled", mangled if mangled in torch_names else None),
                            ("demangled, whitespace ignored", loose.get(_norm(demangled))),
                            ("short", short if short in torch_names else None)):
            if match is not None:
                trace_counts[match] = trace_counts.get(match, 0) + n
                how.setdefault(match, kind)
                break
        else:
            unmatched_trace[demangled] = unmatched_trace.get(demangled, 0) + n
    rows = [{"name": name, "torch": expected, "trace": trace_counts[name], "matched_on": how[name]}
            for name, expected in sorted(torch_names.items()) if name in trace_counts]
    return {
        "rows": rows,
        "count_mismatches": [r for r in rows if r["torch"] != r["trace"]],
        "unmatched_torch_names": {n: c for n, c in torch_names.items() if n not in trace_counts},
        "unmatched_trace_names": unmatched_trace,
        "torch_total": profiled["kernels"],
        "trace_total": summary["kernels"],
    }


def check_trace_basics(report, label, result, traces, steps):
    """rc 0, one finished trace, no drops, one NVTX train_step range per step. Returns the summary or None."""
    if result.rc == 77:
        report.add(label, "SKIP", "no CUDA device or no FP8 support (exit 77)", result.stderr.strip()[-200:])
        return None
    if result.rc != 0 or len(traces) != 1:
        report.add(label, "FAIL", f"{result.brief()}, {len(traces)} traces", result.stderr.strip()[-300:])
        return None
    summary = tc.summarize(traces[0])
    results = []
    tc.common_checks(summary, results)
    got = tc.nvtx_count(summary, "train_step")
    tc.check(results, "nvtx train_step ranges", got == steps, f"trace {got} truth {steps}")
    failures = [f"{r['check']}: {r['detail']}" for r in results if not r["ok"]]
    report.judge(label, not failures, f"{summary['kernels']} kernels, {summary['runtime_rows']} API rows, "
                 f"{traces[0].stat().st_size / 1e6:.1f} MB, dropped {summary['dropped']}", "; ".join(failures))
    return summary


def compare_with_profiler(ctx, report, precision, summary, profile_path):
    label = f"train {precision}: kernels per name = torch.profiler"
    try:
        profiled = json.loads(profile_path.read_text())
    except (OSError, ValueError) as error:
        report.add(label, "FAIL", f"no profiler counts: {error}")
        return
    cmp = compare_kernel_names(summary, profiled)
    (ctx.details / f"torch-{precision}-kernel-compare.json").write_text(json.dumps(cmp, indent=1))
    shutil.copyfile(profile_path, ctx.details / f"torch-{precision}-profiler-counts.json")
    ok = not cmp["count_mismatches"] and not cmp["unmatched_torch_names"] and not cmp["unmatched_trace_names"] \
        and cmp["torch_total"] == cmp["trace_total"]
    detail = "; ".join([f"{r['name'][:80]}: torch {r['torch']} trace {r['trace']}" for r in cmp["count_mismatches"][:5]]
                       + [f"only torch: {n[:80]} x{c}" for n, c in list(cmp["unmatched_torch_names"].items())[:5]]
                       + [f"only trace: {n[:80]} x{c}" for n, c in list(cmp["unmatched_trace_names"].items())[:5]])
    report.judge(label, ok, f"{len(cmp['rows'])} names matched, total torch {cmp['torch_total']} trace "
                 f"{cmp['trace_total']}, {len(cmp['count_mismatches'])} count mismatches, unmatched "
                 f"{len(cmp['unmatched_torch_names'])}/{len(cmp['unmatched_trace_names'])}", detail)


def check_precision(ctx, report, precision, state):
    """A profiled untraced run, then a traced run; compares kernel counts and losses; keeps the trace."""
    args = ["--precision", precision, "--steps", STEPS]
    # A path relative to the run's folder, so that the printed path is the same in every run that compares.
    profiled, _, directory = train(ctx, f"{precision}-profiled", [*args, "--profile-torch", "torch_kernels.json"],
                                   traced=False)
    profile_path = directory / "torch_kernels.json"
    state[f"{precision}-profiled"] = (profiled, profile_path)
    if profiled.rc == 77:
        state["precision"] = "bf16"  # the later FP8 steps run BF16 instead
        report.add(f"train {precision}", "SKIP", "exit 77 (no device or no FP8)", profiled.stderr.strip()[-200:])
        return
    report.judge(f"train {precision} --profile-torch (untraced) runs", profiled.rc == 0 and profile_path.exists(),
                 profiled.brief(), profiled.stderr.strip()[-300:] if profiled.rc else "")
    traced, traces, _ = train(ctx, f"{precision}-traced", args, traced=True)
    if precision == "fp8" and profiled.rc != 0 and traced.rc != 0:
        state["precision"] = "bf16"  # FP8 fails here either way: later steps use BF16 rather than fail again
    summary = check_trace_basics(report, f"train {precision} traced: finished, no drops, NVTX steps", traced,
                                 traces, STEPS)
    if summary is None:
        return
    kept = ctx.keep(f"train-{precision}-{STEPS}steps.sqlite", traces[0], top=True)
    report.add(f"train {precision}: trace kept", "INFO", f"{traces[0].stat().st_size / 1e6:.2f} MB", kept)
    same = losses_line(traced.stdout) is not None and losses_line(traced.stdout) == losses_line(profiled.stdout)
    report.judge(f"train {precision}: traced losses bitwise = profiled run's", same,
                 "equal" if same else "differ", (losses_line(traced.stdout) or "no losses line")[:200])
    truth = g.ground_truth(traced.stdout) or {}
    report.add(f"train {precision}: median step (traced run)", "INFO", f"{truth.get('median_step_ms', '?')} ms",
               f"torch {truth.get('torch_version')} on {truth.get('device')}")
    if profile_path.exists():
        compare_with_profiler(ctx, report, precision, summary, profile_path)


def run_all(ctx, report, state):
    g.guarded(report, "train fp8", 60, check_precision, ctx, report, "fp8", state, torch=True)
    g.guarded(report, "train bf16", 60, check_precision, ctx, report, "bf16", state, torch=True)
