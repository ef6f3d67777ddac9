#!/usr/bin/env python3
"""What each part of the collector costs a launch-bound step (issue 26 item 1): the same job untraced twice (A and B,
the A/A control) and under `fp8scope record` with one part at a time left out, in paired rounds.

Each round runs every mode once, in an order rotated from round to round, and each run reports its own median step
time (the FP8SCOPE_GROUND_TRUTH line's median_step_ms). A mode's cost in a round is its step time over the same
round's untraced A run: rounds pair runs made close together, which cancels most of the drift between processes
(docs/benchmarks.md: processes differ by up to +-15% on these hosts). Printed per mode: the median of its per-round
ratios and their range (min to max over the rounds: with R rounds, an interval holding the median with probability
1 - 2^(1-R)), and the A/A control's own ratio, which the others must clear to mean anything. One JSON object last.

Modes (the collector's diagnostic switches, docs/collector.md):
  untraced-a, untraced-b   no fp8scope (the A/A pair)
  record                   fp8scope record, defaults
  no-gemm-stats            FP8SCOPE_GEMM_STATS=0 (no GEMM interception, no statistics kernels)
  no-nvtx                  FP8SCOPE_NVTX=0
  no-api                   FP8SCOPE_API=none (no API records, no sync callbacks' launches)
  kernels-only             FP8SCOPE_ACTIVITIES=kernels FP8SCOPE_API=none FP8SCOPE_NVTX=0 FP8SCOPE_GEMM_STATS=0
  discard                  FP8SCOPE_DISCARD_RECORDS=1 (records handed back undecoded: the writer's share)
  no-subscriber            FP8SCOPE_SUBSCRIBE=0 (no callback subscriber: the sync callbacks' share)

  component_cost.py --fp8scope BIN [--rounds R] [--modes a,b,...] [--work-dir DIR] -- python job.py ...

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
    "no-gemm-stats": {"FP8SCOPE_GEMM_STATS": "0"},
    "no-nvtx": {"FP8SCOPE_NVTX": "0"},
    "no-api": {"FP8SCOPE_API": "none"},
    "kernels-only": {"FP8SCOPE_ACTIVITIES": "kernels", "FP8SCOPE_API": "none", "FP8SCOPE_NVTX": "0",
                     "FP8SCOPE_GEMM_STATS": "0"},
    "discard": {"FP8SCOPE_DISCARD_RECORDS": "1"},
    "no-subscriber": {"FP8SCOPE_SUBSCRIBE": "0"},
}


def parse_args(argv):
    if "--" not in argv:
        print("component_cost: give the job after --", file=sys.stderr)
        sys.exit(2)
    split = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fp8scope", required=True, help="the fp8scope executable")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated, of: " + " ".join(MODES))
    p.add_argument("--work-dir", help="folder for traces and logs (default: a temporary folder, removed)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per run")
    args = p.parse_args(argv[:split])
    args.job = argv[split + 1:]
    args.modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in args.modes if m not in MODES]
    if unknown or not args.job or args.rounds < 1 or "untraced-a" not in args.modes:
        p.error(f"unknown modes {unknown}" if unknown else "need a job, --rounds >= 1 and the untraced-a mode")
    return args


def one_run(args, mode, round_index, work):
    directory = work / f"{mode}-{round_index}"
    directory.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    argv = list(args.job)
    if MODES[mode] is not None:
        env.update(MODES[mode])
        argv = [args.fp8scope, "record", "-o", str(directory / "trace-%p.sqlite"), "--", *argv]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, env=env, cwd=directory, capture_output=True, text=True, timeout=args.timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    truth = next((json.loads(line[len(PREFIX):]) for line in reversed(out.splitlines()) if line.startswith(PREFIX)),
                 None)
    return {"mode": mode, "round": round_index, "rc": rc, "wall_s": round(time.monotonic() - t0, 2),
            "median_step_ms": truth.get("median_step_ms") if truth else None,
            "stderr_tail": err.strip()[-300:] if rc != 0 else ""}


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
                print(f"component_cost: round {r} {mode}: rc {run['rc']}, median step {run['median_step_ms']} ms",
                      file=sys.stderr, flush=True)
                if run["rc"] == 77:
                    return 77
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    base = {r["round"]: r["median_step_ms"] for r in runs if r["mode"] == "untraced-a" and r["median_step_ms"]}
    table = {}
    for mode in args.modes:
        ratios = sorted(r["median_step_ms"] / base[r["round"]] for r in runs
                        if r["mode"] == mode and r["median_step_ms"] and r["round"] in base)
        steps = [r["median_step_ms"] for r in runs if r["mode"] == mode and r["median_step_ms"]]
        table[mode] = {"median_step_ms": statistics.median(steps) if steps else None,
                       "ratio_median": statistics.median(ratios) if ratios else None,
                       "ratio_min": ratios[0] if ratios else None, "ratio_max": ratios[-1] if ratios else None,
                       "rounds": len(ratios)}
    print(f"{'mode':<16} {'median step':>12} {'vs untraced A (median, min..max over rounds)':>46}")
    for mode, row in table.items():
        if row["ratio_median"] is None:
            print(f"{mode:<16} {'failed':>12}")
            continue
        print(f"{mode:<16} {row['median_step_ms']:>9.3f} ms   {100 * (row['ratio_median'] - 1):+7.1f}%  "
              f"({100 * (row['ratio_min'] - 1):+.1f}% .. {100 * (row['ratio_max'] - 1):+.1f}%, {row['rounds']} rounds)")
    print(json.dumps({"job": args.job, "rounds": args.rounds, "modes": table,
                      "runs": [r for r in runs]}), flush=True)
    return 0 if all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
