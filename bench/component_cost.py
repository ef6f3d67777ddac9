#!/usr/bin/env python3
"""What each part of the collector costs a step (issue 26 item 1): the same job untraced twice (A and B, the A/A
control) and under `fp8scope record` with one part at a time left out, each traced run capturing windows of steps
(--capture-every E --capture-length L), so that every process holds its own untraced baseline.

Why windows: two processes of the same job differ by up to 22% on these hosts (docs/benchmarks.md), more than the
parts cost. Inside one process, steps inside a window (CUPTI attached, every part on) and steps long after it
(CUPTI detached, docs/collector.md "Capture windows") alternate every E steps, so their ratio cancels what differs
between processes. Per step r = step % E: r = 0 is the window's first step (CUPTI attaches at its marker: the
re-attach cost), 1 the first step after it, 2..L-1 inside, L and L+1 the detach grace, L+2..E-1 detached. Steps
before --skip are warm-up. A mode's cost in one process is median(inside steps 1..L-1) / median(detached steps) - 1;
the untraced modes give the same ratio over the same step positions: the method's own noise (the A/A control),
which the other modes must clear. Across rounds: the median and the range (min to max over R processes, an
interval holding the median with probability 1 - 2^(1-R)). Each round runs every mode once, in an order rotated
from round to round. Also printed: the detached steps against the same round's untraced A process (across
processes, so noisy), and the window's first step (re-attach) and the step after it, each against detached.

The job must print FP8SCOPE_GROUND_TRUTH {"step_ms": [...]} (and "step_ms_from": K when the list starts at step
K) and mark its steps (fp8scope.step), as samples/torch/train.py and tests/gpu/realjobs/ do. One JSON object ends stdout.

Modes (the collector's diagnostic switches, docs/collector.md):
  untraced-a, untraced-b   no fp8scope (the A/A pair)
  record                   fp8scope record, defaults (tensor statistics every 10th step)
  record-before            the same with the build given as --fp8scope-before (a change's before and after,
                           interleaved in one run)
  stats-every-step         FP8SCOPE_STATS_EVERY=1: every step's GEMMs probed (the price of a sampled step)
  no-gemm-stats            FP8SCOPE_GEMM_STATS=0 (no GEMM interception, no statistics kernels)
  no-nvtx                  FP8SCOPE_NVTX=0
  no-api                   FP8SCOPE_API=none (no API records)
  api-all                  FP8SCOPE_API=all (every runtime and driver call, not the filtered set)
  api-activity             FP8SCOPE_API_SOURCE=activity (the traced calls from CUPTI's RUNTIME and DRIVER activity
                           kinds, as the collector once did, instead of callbacks on their ids)
  kernels-only             FP8SCOPE_ACTIVITIES=kernels FP8SCOPE_API=none FP8SCOPE_NVTX=0 FP8SCOPE_GEMM_STATS=0
                           (the floor: CUPTI's kernel records)
  discard                  FP8SCOPE_DISCARD_RECORDS=1 (records handed back undecoded: the writer's share)
  no-subscriber            FP8SCOPE_SUBSCRIBE=0 (no callback subscriber: the sync callbacks' share)

  component_cost.py --fp8scope BIN [--fp8scope-before BIN] [--rounds R] [--every E] [--length L] [--skip S] [--modes a,b,...]
                    [--work-dir DIR] -- python job.py ...

Exit codes: 0 done, 1 a run failed, 2 usage error, 77 the job exited 77 (no CUDA device).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PREFIX = "FP8SCOPE_GROUND_TRUTH "
MODES = {
    "untraced-a": None,
    "untraced-b": None,
    "record": {},
    "record-before": {},  # record with --fp8scope-before: another build, for a paired before/after
    "stats-every-step": {"FP8SCOPE_STATS_EVERY": "1"},
    "no-gemm-stats": {"FP8SCOPE_GEMM_STATS": "0"},
    "no-nvtx": {"FP8SCOPE_NVTX": "0"},
    "no-api": {"FP8SCOPE_API": "none"},
    "api-all": {"FP8SCOPE_API": "all"},
    "api-activity": {"FP8SCOPE_API_SOURCE": "activity"},
    "kernels-only": {"FP8SCOPE_ACTIVITIES": "kernels", "FP8SCOPE_API": "none", "FP8SCOPE_NVTX": "0",
                     "FP8SCOPE_GEMM_STATS": "0"},
    "discard": {"FP8SCOPE_DISCARD_RECORDS": "1"},
    "no-subscriber": {"FP8SCOPE_SUBSCRIBE": "0"},
}
GRACE = 2  # steps CUPTI stays attached after a window closed by steps (collector/src/capture/capture.cpp)


def parse_args(argv):
    if "--" not in argv:
        print("component_cost: give the job after --", file=sys.stderr)
        sys.exit(2)
    split = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fp8scope", required=True, help="the fp8scope executable")
    p.add_argument("--fp8scope-before", help="the fp8scope executable of mode record-before")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--every", type=int, default=12, help="a window every E steps (default 12)")
    p.add_argument("--length", type=int, default=5, help="steps per window (default 5)")
    p.add_argument("--skip", type=int, default=12, help="warm-up steps left out (default 12)")
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated, of: " + " ".join(MODES))
    p.add_argument("--work-dir", help="folder for traces and logs (default: a temporary folder, removed)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per run")
    args = p.parse_args(argv[:split])
    args.job = argv[split + 1:]
    args.modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in args.modes if m not in MODES]
    if "record-before" in args.modes and not args.fp8scope_before:
        p.error("mode record-before needs --fp8scope-before")
    if unknown or not args.job or args.rounds < 1 or "untraced-a" not in args.modes:
        p.error(f"unknown modes {unknown}" if unknown else "need a job, --rounds >= 1 and the untraced-a mode")
    if args.length < 2 or args.every < args.length + GRACE + 1:
        p.error(f"need --length >= 2 and --every >= --length + {GRACE + 1}")
    return args


def phase(args, step):
    """'attach' (a window's first step), 'first' (the step after it), 'inside', 'grace' or 'detached'."""
    r = step % args.every
    if r == 0:
        return "attach"
    if r == 1:
        return "first"
    if r < args.length:
        return "inside"
    return "grace" if r < args.length + GRACE else "detached"


def phase_medians(args, step_ms, first_step=0):
    by = {}
    for i, t in enumerate(step_ms, start=first_step):
        if i >= args.skip:
            by.setdefault(phase(args, i), []).append(t)
    # the cost inside a window: every step of it after the attach step
    by["window"] = by.get("first", []) + by.get("inside", [])
    return {k: statistics.median(v) for k, v in by.items() if v}


def one_run(args, mode, round_index, work):
    directory = work / f"{mode}-{round_index}"
    directory.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    argv = list(args.job)
    if MODES[mode] is not None:
        env.update(MODES[mode])
        fp8scope = args.fp8scope_before if mode == "record-before" else args.fp8scope
        argv = [fp8scope, "record", "-o", str(directory / "trace-%p.sqlite"), "--capture-every",
                str(args.every), "--capture-length", str(args.length), "--", *argv]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, env=env, cwd=directory, capture_output=True, text=True, timeout=args.timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    except OSError as error:
        rc, out, err = 127, "", f"cannot start {argv[0]}: {error}"
    truth = next((json.loads(line[len(PREFIX):]) for line in reversed(out.splitlines()) if line.startswith(PREFIX)),
                 None)
    step_ms = (truth or {}).get("step_ms") or []
    medians = phase_medians(args, step_ms, (truth or {}).get("step_ms_from", 0)) if len(step_ms) > args.skip + args.every else {}
    return {"mode": mode, "round": round_index, "rc": rc, "wall_s": round(time.monotonic() - t0, 2),
            "phases_ms": medians, "detaches": err.count("capture: CUPTI detached"),
            "stderr_tail": err.strip()[-300:] if rc != 0 else ""}


def ratio(a, b):
    return a / b - 1 if a and b else None


def spread(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    return {"median": statistics.median(values), "min": values[0], "max": values[-1], "n": len(values)}


def fmt(s):
    if s is None:
        return "failed"
    return f"{100 * s['median']:+6.1f}% ({100 * s['min']:+.1f} .. {100 * s['max']:+.1f})"


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="fp8scope-component-cost-"))
    runs = []
    try:
        for r in range(args.rounds):
            order = args.modes[r % len(args.modes):] + args.modes[:r % len(args.modes)]  # rotated each round
            for mode in order:
                run = one_run(args, mode, r, work)
                runs.append(run)
                print(f"component_cost: round {r} {mode}: rc {run['rc']}, phases "
                      f"{ {k: round(v, 3) for k, v in run['phases_ms'].items()} }", file=sys.stderr, flush=True)
                if run["rc"] == 77:
                    return 77
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    base = {r["round"]: r["phases_ms"].get("detached") for r in runs if r["mode"] == "untraced-a"}
    table = {}
    for mode in args.modes:
        mine = [r for r in runs if r["mode"] == mode and r["phases_ms"].get("detached")]
        table[mode] = {
            "window_ms": statistics.median([r["phases_ms"]["window"] for r in mine]) if mine else None,
            "detached_ms": statistics.median([r["phases_ms"]["detached"] for r in mine]) if mine else None,
            "window_vs_detached": spread([ratio(r["phases_ms"].get("window"), r["phases_ms"]["detached"])
                                          for r in mine]),
            "attach_vs_detached": spread([ratio(r["phases_ms"].get("attach"), r["phases_ms"]["detached"])
                                          for r in mine]),
            "first_vs_detached": spread([ratio(r["phases_ms"].get("first"), r["phases_ms"]["detached"])
                                         for r in mine]),
            "detached_vs_untraced_a": spread([ratio(r["phases_ms"]["detached"], base.get(r["round"])) for r in mine]),
            "detaches": [r["detaches"] for r in mine],
        }
    print(f"windows of {args.length} steps every {args.every}, warm-up {args.skip}, {args.rounds} rounds; "
          "median (min .. max) over rounds")
    print(f"{'mode':<17} {'window':>9} {'detached':>9}  {'window vs detached':>28}  {'attach step':>28}  "
          f"{'step after attach':>28}  {'detached vs untraced A':>28}")
    for mode, row in table.items():
        if row["window_ms"] is None:
            print(f"{mode:<17} failed")
            continue
        print(f"{mode:<17} {row['window_ms']:>6.3f} ms {row['detached_ms']:>6.3f} ms  "
              f"{fmt(row['window_vs_detached']):>28}  {fmt(row['attach_vs_detached']):>28}  "
              f"{fmt(row['first_vs_detached']):>28}  {fmt(row['detached_vs_untraced_a']):>28}")
    print(json.dumps({"job": args.job, "rounds": args.rounds, "every": args.every, "length": args.length,
                      "skip": args.skip, "modes": table, "runs": runs}), flush=True)
    return 0 if all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
