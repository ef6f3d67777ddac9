#!/usr/bin/env python3
"""CTest check of one CUDA sample: records it with `fp8scope record` and compares the trace with the sample's
FP8SCOPE_GROUND_TRUTH line (kernels in total and by name, syncs by type, copies, memsets, NVTX ranges, no dropped
records, finished trace; trace_checks.py says which fields are compared and which are only reported).

  record_and_check.py --fp8scope BIN --sample BIN --dir SCRATCH [--collector LIBFP8SCOPE_SO]

Exit codes: 0 the trace matches, 1 it does not (or the run failed), 2 usage error, 77 no CUDA device (the sample
exited 77), which CTest reports as skipped.
"""

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trace_checks as tc  # noqa: E402
from gpu_common import ground_truth, traces_in  # noqa: E402

EXIT_SKIP = 77


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fp8scope", required=True)
    p.add_argument("--sample", required=True)
    p.add_argument("--dir", required=True, help="scratch folder (emptied first)")
    p.add_argument("--collector", help="libfp8scope.so, passed to record as FP8SCOPE_LIBRARY")
    p.add_argument("--timeout", type=float, default=120)
    args = p.parse_args(sys.argv[1:] if argv is None else argv)

    directory = Path(args.dir)
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    env = None
    if args.collector:
        import os

        env = dict(os.environ, FP8SCOPE_LIBRARY=args.collector)
    argv = [args.fp8scope, "record", "-o", str(directory / "trace-%p.sqlite"), "--", args.sample]
    try:
        run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"record_and_check: timed out after {args.timeout:.0f} s: {' '.join(argv)}")
        return 1
    sys.stderr.write(run.stderr)
    if run.returncode == EXIT_SKIP:
        print("record_and_check: the sample exited 77 (no CUDA device): skipped")
        return EXIT_SKIP
    if run.returncode != 0:
        print(f"record_and_check: exit code {run.returncode}: {' '.join(argv)}")
        return 1
    truth = ground_truth(run.stdout)
    traces = traces_in(directory)
    if truth is None or len(traces) != 1:
        print(f"record_and_check: ground truth {'found' if truth else 'missing'}, {len(traces)} traces in {directory}")
        return 1
    results = tc.compare_cuda_sample(tc.summarize(traces[0]), truth)
    for r in results:
        print(f"{'ok  ' if r['ok'] else ('FAIL' if r['hard'] else 'note')} {r['check']}: {r['detail']}")
    return 0 if all(r["ok"] for r in results if r["hard"]) else 1


if __name__ == "__main__":
    sys.exit(main())
