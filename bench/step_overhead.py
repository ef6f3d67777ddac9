#!/usr/bin/env python3
"""Step time of the PyTorch training sample with and without fp8scope (spec goal: at most 2% slower traced).

Runs samples/torch/train.py K times untraced and K times under `fp8scope record`, alternating (ABBA order, so that
neither mode always runs first), and prints one JSON line: each run's median step time (GPU time between the
step's CUDA events, train.py's median_step_ms) and wall time, the medians per mode and the slowdown in percent.

Examples:
  python3 bench/step_overhead.py --fp8scope build/bin/fp8scope
  python3 bench/step_overhead.py --fp8scope build/bin/fp8scope --runs 5 --precision bf16 --steps 50

Exit codes: 0 ok, 1 a run failed, 2 usage error, 77 no CUDA device (or no FP8 support).
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

REPO = Path(__file__).resolve().parents[1]
PREFIX = "FP8SCOPE_GROUND_TRUTH "


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fp8scope", help="the fp8scope executable (traced runs use `fp8scope record`)")
    p.add_argument("--inject", metavar="LIBFP8SCOPE_SO",
                   help="trace by setting CUDA_INJECTION64_PATH to this library instead of `fp8scope record`")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--train", default=str(REPO / "samples" / "torch" / "train.py"))
    p.add_argument("--runs", type=int, default=3, help="runs per mode (default 3)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--precision", choices=("bf16", "fp8"), default="fp8")
    p.add_argument("--work-dir", help="folder for traces and logs (default: a temporary folder, removed)")
    p.add_argument("--timeout", type=float, default=240, help="seconds per run (default 240)")
    args = p.parse_args(argv)
    if not args.fp8scope and not args.inject:
        p.error("give --fp8scope or --inject")
    if args.runs < 1 or args.steps < 1:
        p.error("--runs and --steps must be at least 1")
    return args


def one_run(args, traced, index, work):
    directory = work / f"{'traced' if traced else 'plain'}-{index}"
    directory.mkdir(parents=True, exist_ok=True)
    argv = [args.python, args.train, "--precision", args.precision, "--steps", str(args.steps)]
    env = dict(os.environ)
    if traced and args.inject:
        env.update(CUDA_INJECTION64_PATH=args.inject, NVTX_INJECTION64_PATH=args.inject,
                   FP8SCOPE_OUTPUT=str(directory / "trace-%p.sqlite"))
    elif traced:
        argv = [args.fp8scope, "record", "-o", str(directory / "trace-%p.sqlite"), "--", *argv]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, env=env, cwd=directory, capture_output=True, text=True, timeout=args.timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as expired:
        rc, out, err = "timeout", expired.stdout or "", expired.stderr or ""
        out, err = [x.decode(errors="replace") if isinstance(x, bytes) else x for x in (out, err)]
    wall_s = time.monotonic() - t0
    (directory / "stdout.txt").write_text(out)
    (directory / "stderr.txt").write_text(err)
    truth = next((json.loads(line[len(PREFIX):]) for line in reversed(out.splitlines()) if line.startswith(PREFIX)),
                 None)
    traces = sorted(directory.glob("*.sqlite"))
    return {
        "mode": "traced" if traced else "plain",
        "rc": rc,
        "wall_s": round(wall_s, 2),
        "median_step_ms": truth.get("median_step_ms") if truth else None,
        "losses": truth.get("losses") if truth else None,
        "trace_bytes": sum(t.stat().st_size for t in traces),
        "stderr_tail": err.strip()[-300:] if rc != 0 else "",
    }


def median_of(runs, mode, key):
    values = [r[key] for r in runs if r["mode"] == mode and r[key] is not None]
    return statistics.median(values) if values else None


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="fp8scope-step-overhead-"))
    runs = []
    try:
        for i in range(args.runs):
            for traced in ((False, True) if i % 2 == 0 else (True, False)):
                run = one_run(args, traced, i, work)
                runs.append(run)
                print(f"step_overhead: {run['mode']} run {i}: rc {run['rc']}, median step {run['median_step_ms']} ms, "
                      f"wall {run['wall_s']} s", file=sys.stderr, flush=True)
                if run["rc"] == 77:
                    print("step_overhead: train.py exited 77 (no CUDA device or no FP8)", file=sys.stderr)
                    return 77
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    plain = median_of(runs, "plain", "median_step_ms")
    traced = median_of(runs, "traced", "median_step_ms")
    losses = [r["losses"] for r in runs]
    result = {
        "precision": args.precision,
        "steps": args.steps,
        "runs_per_mode": args.runs,
        "plain_median_step_ms": plain,
        "traced_median_step_ms": traced,
        "slowdown_pct": round(100.0 * (traced - plain) / plain, 2) if plain and traced else None,
        "plain_median_wall_s": median_of(runs, "plain", "wall_s"),
        "traced_median_wall_s": median_of(runs, "traced", "wall_s"),
        "losses_equal_in_all_runs": all(x == losses[0] for x in losses) and losses[0] is not None,
        "runs": [{k: v for k, v in r.items() if k != "losses"} for r in runs],
    }
    print(json.dumps(result), flush=True)
    return 0 if all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
