#!/usr/bin/env python3
"""`record --monitor` against the same job untraced, in interleaved pairs on one GPU (issue 47 item 3): the
whole-run cost when runs minutes apart differ by more than the cost (docs/benchmarks.md, "`record --monitor` over a
long run"). The pairs alternate their order (monitored first, then untraced first, ...), so that a drift of the
machine's speed over the pairs weighs on both modes alike; the figure is the median of the pairs' ratios.

  monitor_ab.py --build BUILD [--pairs N] [--seconds S] [--shape "train.py args"] [--together]

--together runs each pair's two jobs at once on the same GPU instead: both see the same minute of the machine, and
each other (they share the GPU and the host).

Each run is the FP8 training sample without markers (samples/torch/train.py --no-markers, as monitor_soak.py runs
it) for S seconds (--max-seconds); its time per step is the loop's wall time over its steps. Prints one line per run,
one per pair and the median; exit 1 when a run fails."""

import argparse
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

import monitor_soak


def start(build, python, shape, seconds, monitored, trace):
    steps = int(seconds * 250)  # enough for steps of 4 ms or more: --max-seconds ends the run
    argv = [python, monitor_soak.TRAIN, *monitor_soak.FP8, *shape, "--steps", steps, "--max-seconds", seconds]
    if monitored:
        argv = [Path(build) / "bin" / "fp8scope", "record", "-q", "--monitor", "-o", trace, "--", *argv]
    log = Path(str(trace) + ".log")
    return monitor_soak.start(argv, 0, log), log


def ms_per_step(proc, log):
    rc, truth, _ = monitor_soak.finish(proc, log)
    if rc != 0 or not truth or not truth.get("loop_s") or not truth.get("steps"):
        print(f"run failed (rc {rc}): {log}", file=sys.stderr)
        return None
    return truth["loop_s"] * 1000 / truth["steps"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--pairs", type=int, default=4)
    p.add_argument("--seconds", type=float, default=40)
    p.add_argument("--shape", default="--layers 1", help="train.py's model arguments (default: the launch-bound one)")
    p.add_argument("--together", action="store_true", help="each pair's two jobs at once on the same GPU")
    args = p.parse_args()
    shape = shlex.split(args.shape)
    ratios = []
    with tempfile.TemporaryDirectory() as work:
        for pair in range(args.pairs):
            order = (True, False) if pair % 2 == 0 else (False, True)
            ms = {}
            batches = [order] if args.together else [[monitored] for monitored in order]
            for batch in batches:
                procs = {monitored: start(args.build, sys.executable, shape, args.seconds, monitored,
                                          Path(work) / f"pair{pair}-{'monitor' if monitored else 'untraced'}.sqlite")
                         for monitored in batch}
                for monitored, (proc, log) in procs.items():
                    value = ms_per_step(proc, log)
                    if value is None:
                        return 1
                    ms[monitored] = value
                    print(f"pair {pair} {'monitored' if monitored else 'untraced '}: {value:.4f} ms a step",
                          flush=True)
            ratios.append(ms[True] / ms[False])
            print(f"pair {pair}: cost {100 * (ratios[-1] - 1):+.2f}%", flush=True)
    costs = sorted(100 * (r - 1) for r in ratios)
    together = ", together" if args.together else ""
    print(f"RESULT shape '{args.shape}', {args.pairs} pairs of {args.seconds:g} s{together}: median cost "
          f"{100 * (statistics.median(ratios) - 1):+.2f}%, pairs {', '.join(f'{c:+.2f}%' for c in costs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
