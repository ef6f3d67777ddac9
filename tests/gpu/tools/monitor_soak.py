#!/usr/bin/env python3
"""`record --monitor` over a long run (issue 47 item 3), on a machine with two GPUs: its whole-run cost on a
launch-bound step (about 10 ms) and on a GPU-bound step (about 35 ms), each against the same job untraced on the same
GPU, and the analysis of what it captured checked against the job's own truth.

  monitor_soak.py run --build BUILD --dir DIR [--minutes M] [--launch-args A] [--gpu-args A] [--no-checks]
                      [--one-gpu]
  monitor_soak.py show --dir DIR [--out OUT] [--wait-s S]     prints DIR/monitor_soak.json once it is complete

Every soak job is the FP8 training sample (samples/torch/train.py) with --no-markers and --no-annotate: no
fp8scope.step, no NVTX step range, no logged loss, no fp8scope.torch.annotate module hooks, so its steps come from the
optimizer hooks of `fp8scope record`, as in a job written without fp8scope. Phases:
  1. calibration (unless --launch-args and --gpu-args give the shapes): candidate shapes untraced (60 steps each),
     the launch-bound one closest to 10 ms a step on GPU 0 and the GPU-bound one closest to 35 ms on GPU 1.
  2. checks (unless --no-checks): the bound (windows of 10 steps every 20 under --max-size 16 over 1,500 steps,
     markers on: older windows must be dropped), and a planted pair: FP8 and BF16 with --plant-drift 1:150:1.5 under
     --monitor with windows of 10 steps every 50 and statistics every step (FP8SCOPE_STATS_EVERY=1), then `compare`.
  3. the soak, M minutes a run (--max-seconds), the launch-bound job on GPU 0 and the GPU-bound one on GPU 1 at once:
     first the launch-bound one under `record --monitor` and the GPU-bound one untraced, then the other way round.
     Each job's two runs are on the same GPU, one after the other, in opposite orders for the two jobs. Side by
     side the jobs slowed each other (docs/benchmarks.md); --one-gpu runs the four one at a time on GPU 0 instead.
A run's cost is its time per step (the loop's wall time over its steps) against the untraced run's on the same GPU.
DIR/monitor_soak.json is rewritten after every phase. The figures are read, not judged.
Exit codes: 0 done, 1 a phase failed, 2 usage, 77 fewer CUDA devices than asked for."""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import soak as collector_soak  # its run/show command line is shared

REPO = Path(__file__).resolve().parents[3]
TRAIN = REPO / "samples" / "torch" / "train.py"
# --no-annotate since 2026-11-30: annotate's module hooks (full backward hooks included) stay on between windows, a
# cost of fp8scope.torch.annotate rather than of --monitor (docs/benchmarks.md); the planted pair keeps them (its
# sites are named by their modules).
FP8 = ["--precision", "fp8", "--no-markers", "--no-annotate"]
LAUNCH_BOUND = {  # about 490 launches a step: the host's launch rate sets the step time
    "1 layer, d512": ["--layers", "1", "--d-model", "512", "--heads", "8", "--seq", "256", "--batch", "8",
                      "--vocab", "4096"],
    "1 layer, d1024": ["--layers", "1"],
}
GPU_BOUND = {
    "4 layers, d2048, seq 1024, batch 8": ["--layers", "4", "--d-model", "2048", "--heads", "16", "--seq", "1024",
                                           "--batch", "8"],
    "4 layers, d2048, seq 1024, batch 12": ["--layers", "4", "--d-model", "2048", "--heads", "16", "--seq", "1024",
                                            "--batch", "12"],
}
TARGET_MS = {"launch": 10.0, "gpu": 35.0}
PAIR_MODEL = ["--layers", "2", "--d-model", "512", "--heads", "8", "--seq", "256", "--batch", "8", "--vocab", "4096"]
PAIR_PLANT = ["--plant-drift", "1:150:1.5", "--steps", "170"]
EVERY, LENGTH = 1000, 10  # --monitor's windows


def truth_of(text):
    for line in text.splitlines():
        if line.startswith("FP8SCOPE_GROUND_TRUTH "):
            return json.loads(line.split(" ", 1)[1])
    return None


def env_for(gpu):
    return dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu), PYTHONPATH=str(REPO / "probes" / "python"),
                PYTHONUNBUFFERED="1")


def start(argv, gpu, log, extra_env=None):
    env = env_for(gpu)
    env.update(extra_env or {})
    return subprocess.Popen([str(a) for a in argv], env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def finish(proc, log):
    proc.wait()
    text = Path(log).read_text(errors="replace")
    return proc.returncode, truth_of(text), text


def run_cmd(argv, timeout=600):
    out = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout)
    return out.returncode, out.stdout + out.stderr


def calibrate(directory, python):
    """Each GPU measures its candidates one after another; returns the chosen shapes with their step times."""
    chosen = {}
    procs = {}
    for kind, gpu, candidates in (("launch", 0, LAUNCH_BOUND), ("gpu", 1, GPU_BOUND)):
        script = " && ".join(
            f"{python} {TRAIN} {' '.join(FP8 + args)} --steps 60 > {directory}/cal-{kind}-{i}.log 2>&1"
            for i, args in enumerate(candidates.values()))
        procs[kind] = subprocess.Popen(["bash", "-c", script], env=env_for(gpu))
    for kind, candidates in (("launch", LAUNCH_BOUND), ("gpu", GPU_BOUND)):
        procs[kind].wait()
        measured = {}
        for i, name in enumerate(candidates):
            truth = truth_of((directory / f"cal-{kind}-{i}.log").read_text(errors="replace"))
            if truth:
                measured[name] = truth["median_step_ms"]
        if not measured:
            return None
        name = min(measured, key=lambda n: abs(measured[n] - TARGET_MS[kind]))
        chosen[kind] = {"name": name, "args": candidates[name], "median_step_ms": measured[name],
                        "candidates_ms": measured}
    return chosen


def steps_for(step_ms, seconds):
    return max(200, int(seconds * 1000 * 1.4 / step_ms))  # never the end of the run: --max-seconds is


def window_split(step_ms):
    """Mean step time inside --monitor's windows, in the 5 steps after each, and elsewhere (skipping step 0)."""
    inside, after, rest = [], [], []
    for i, ms in enumerate(step_ms):
        if i == 0:
            continue
        phase = i % EVERY
        (inside if phase < LENGTH else after if phase < LENGTH + 5 else rest).append(ms)
    mean = lambda xs: round(statistics.fmean(xs), 4) if xs else None  # noqa: E731
    return {"in_windows_ms": mean(inside), "after_windows_ms": mean(after), "elsewhere_ms": mean(rest)}


def analysis(build, trace):
    fp8scope = Path(build) / "bin" / "fp8scope"
    rc_info, info = run_cmd([fp8scope, "info", trace])
    rc_report, report = run_cmd([fp8scope, "report", trace, "--format", "json"])
    figures = {"info_rc": rc_info, "info": info.strip().splitlines()[:30], "report_rc": rc_report}
    try:
        figures["report"] = json.loads(report)
    except ValueError:
        figures["report_text"] = report[-3000:]
    _, text = run_cmd([fp8scope, "report", trace])
    figures["report_head"] = text.splitlines()[:40]
    return figures


def cost(build, monitored, untraced, trace):
    """One job's monitored run against its untraced run on the same GPU."""
    (rc_m, truth_m), (rc_u, truth_u) = monitored, untraced
    result = {"monitor_rc": rc_m, "untraced_rc": rc_u}
    if not (truth_m and truth_u):
        return result
    per_m, per_u = truth_m["loop_s"] / truth_m["steps"], truth_u["loop_s"] / truth_u["steps"]
    sum_m, sum_u = sum(truth_m["step_ms"]) / truth_m["steps"], sum(truth_u["step_ms"]) / truth_u["steps"]
    result.update({
        "monitor_steps": truth_m["steps"], "untraced_steps": truth_u["steps"],
        "monitor_loop_s": round(truth_m["loop_s"], 2), "untraced_loop_s": round(truth_u["loop_s"], 2),
        "monitor_ms_per_step": round(per_m * 1e3, 4), "untraced_ms_per_step": round(per_u * 1e3, 4),
        "cost": round(per_m / per_u - 1, 5), "cost_cuda_events": round(sum_m / sum_u - 1, 5),
        "monitor_windows": window_split(truth_m["step_ms"]), "untraced_windows": window_split(truth_u["step_ms"]),
        "monitor_median_step_ms": truth_m["median_step_ms"], "untraced_median_step_ms": truth_u["median_step_ms"],
        "trace_bytes": trace.stat().st_size if trace.exists() else None,
    })
    if trace.exists():
        result["analysis"] = analysis(build, trace)
    return result


def soak(directory, build, python, shapes, seconds, save, result, one_gpu):
    """Two rounds on both GPUs at once: launch-bound (GPU 0) monitored and GPU-bound (GPU 1) untraced, then the
    other way round. With one_gpu (--one-gpu), the four runs one at a time on GPU 0, no neighbour: launch-bound
    monitored then untraced, GPU-bound untraced then monitored."""
    fp8scope = Path(build) / "bin" / "fp8scope"
    gpus = {"launch": 0, "gpu": 0 if one_gpu else 1}
    rounds = ([[("launch", "monitor")], [("launch", "untraced")], [("gpu", "untraced")], [("gpu", "monitor")]]
              if one_gpu else [[("launch", "monitor"), ("gpu", "untraced")], [("launch", "untraced"), ("gpu", "monitor")]])
    runs = {}
    for together in rounds:
        procs = {}
        for kind, mode in together:
            shape = shapes[kind]
            argv = [python, TRAIN, *FP8, *shape["args"], "--steps", shape["steps"], "--max-seconds", seconds]
            if mode == "monitor":
                argv = [fp8scope, "record", "-q", "--monitor", "-o", directory / f"{kind}-monitor.sqlite", "--",
                        *argv]
            procs[(kind, mode)] = start(argv, gpus[kind], directory / f"{kind}-{mode}.log")
        for (kind, mode), proc in procs.items():
            rc, truth, _ = finish(proc, directory / f"{kind}-{mode}.log")
            runs[(kind, mode)] = (rc, truth)
        result["soak_runs_done"] = [f"{kind} {mode}" for kind, mode in runs]
        save()
    for kind in ("launch", "gpu"):
        result[f"soak_{kind}"] = dict(shape=shapes[kind]["name"], gpu=gpus[kind], order="monitored first"
                                      if kind == "launch" else "untraced first",
                                      neighbour=None if one_gpu else "the other job, on the other GPU",
                                      **cost(build, runs[(kind, "monitor")], runs[(kind, "untraced")],
                                             directory / f"{kind}-monitor.sqlite"))
        save()


def checks(directory, build, python, launch_shape):
    fp8scope = Path(build) / "bin" / "fp8scope"
    bounded = directory / "bounded.sqlite"
    # Markers on here (the sample's own fp8scope.step): the bound is judged with them, the soaks without.
    bound = start([fp8scope, "record", "-q", "--monitor", "--capture-every", "20", "--capture-length", "10",
                   "--max-size", "16", "-o", bounded, "--", python, TRAIN, "--precision", "fp8",
                   *launch_shape["args"], "--steps", "1500"], 0, directory / "bounded.log")
    pair = {}
    stats = {"FP8SCOPE_STATS_EVERY": "1"}
    procs = {}
    # The BF16 reference on GPU 1 while the bound runs on GPU 0, then the FP8 run on GPU 1.
    for precision in ("bf16", "fp8"):
        trace = directory / f"pair-{precision}.sqlite"
        procs[precision] = start([fp8scope, "record", "-q", "--monitor", "--capture-every", "50", "--capture-length",
                                  "10", "-o", trace, "--", python, TRAIN, "--precision", precision, "--no-markers",
                                  *PAIR_MODEL, *PAIR_PLANT], 1, directory / f"pair-{precision}.log", stats)
        rc, truth, _ = finish(procs[precision], directory / f"pair-{precision}.log")
        pair[precision] = {"rc": rc, "steps": truth and truth["steps"], "trace": str(trace)}
    rc_b, truth_b, _ = finish(bound, directory / "bounded.log")
    result = {"bound": {"rc": rc_b, "steps": truth_b and truth_b["steps"],
                        "trace_bytes": bounded.stat().st_size if bounded.exists() else None}}
    if bounded.exists():
        result["bound"]["analysis"] = analysis(build, bounded)
    if all(p["rc"] == 0 for p in pair.values()):
        rc, text = run_cmd([fp8scope, "compare", pair["fp8"]["trace"], pair["bf16"]["trace"], "--format", "json"])
        pair["compare_rc"] = rc
        try:
            pair["compare"] = json.loads(text)
        except ValueError:
            pair["compare_text"] = text[-3000:]
        pair["compare_head"] = run_cmd([fp8scope, "compare", pair["fp8"]["trace"], pair["bf16"]["trace"]])[1] \
            .splitlines()[:40]
        pair["fp8_analysis"] = analysis(build, pair["fp8"]["trace"])
    result["pair"] = pair
    return result


def run(args):
    directory = Path(args.dir).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    out_json = directory / "monitor_soak.json"
    python = sys.executable
    result = {"minutes": args.minutes, "started": time.strftime("%Y-%m-%d %H:%M:%S")}

    def save():
        tmp = out_json.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1))
        tmp.replace(out_json)

    if args.one_gpu and not (args.launch_args and args.gpu_args and args.no_checks):
        print("monitor_soak.py: --one-gpu needs --launch-args, --gpu-args and --no-checks", file=sys.stderr)
        return 2
    count = subprocess.run([python, "-c", "import torch; print(torch.cuda.device_count())"], capture_output=True,
                           text=True)
    if count.returncode != 0 or int(count.stdout.strip() or 0) < (1 if args.one_gpu else 2):
        result["error"] = "needs one CUDA device with --one-gpu, else two"
        save()
        return 77
    seconds = args.minutes * 60
    if args.launch_args and args.gpu_args:
        chosen = {kind: {"name": text, "args": text.split(), "median_step_ms": ms}
                  for kind, text, ms in (("launch", args.launch_args, TARGET_MS["launch"]),
                                         ("gpu", args.gpu_args, TARGET_MS["gpu"]))}
    else:
        chosen = calibrate(directory, python)
    if not chosen:
        result["error"] = "calibration failed"
        save()
        return 1
    for kind in chosen:
        chosen[kind]["steps"] = steps_for(chosen[kind]["median_step_ms"], max(seconds, 60))
    result["shapes"] = chosen
    save()
    if not args.no_checks:
        result["checks"] = checks(directory, args.build, python, chosen["launch"])
        save()
    soak(directory, args.build, python, chosen, seconds, save, result, args.one_gpu)
    result["done"] = time.strftime("%Y-%m-%d %H:%M:%S")
    save()
    return 0


def show(args):
    path = Path(args.dir) / "monitor_soak.json"
    deadline = time.monotonic() + (args.wait_s or 0)
    while time.monotonic() < deadline and not (path.exists() and "done" in json.loads(path.read_text() or "{}")):
        time.sleep(5)
    if not path.exists():
        print(f"monitor_soak.py: no {path}", file=sys.stderr)
        return 1
    result = json.loads(path.read_text())
    for kind in ("launch", "gpu"):
        s = result.get(f"soak_{kind}")
        if s and "cost" in s:
            print(f"{kind}-bound ({s['shape']}): cost {s['cost']:+.2%} (CUDA events "
                  f"{s['cost_cuda_events']:+.2%}), {s['monitor_ms_per_step']} vs {s['untraced_ms_per_step']} ms a step, "
                  f"{s['monitor_steps']} steps, trace {s['trace_bytes']} bytes")
    print(json.dumps({k: v for k, v in result.items() if k not in ("checks",) and not k.startswith("soak_")},
                     indent=1)[:4000])
    if args.out:
        shutil.copy(path, Path(args.out) / "monitor_soak.json")
    return 0 if "done" in result else 1


def add_run_arguments(r):
    r.add_argument("--launch-args", help="the launch-bound shape's train.py arguments (no calibration)")
    r.add_argument("--gpu-args", help="the GPU-bound shape's train.py arguments (no calibration)")
    r.add_argument("--no-checks", action="store_true", help="no bound check and no planted pair")
    r.add_argument("--one-gpu", action="store_true",
                   help="the soak's four runs one at a time on GPU 0 (no neighbouring job); needs --launch-args and "
                   "--gpu-args, and --no-checks")


def main():
    args = collector_soak.parse_run_show(__doc__, add_run_arguments)
    return run(args) if args.command == "run" else show(args)


if __name__ == "__main__":
    sys.exit(main())
