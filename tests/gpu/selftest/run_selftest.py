#!/usr/bin/env python3
"""Self-test of the GPU scripts on a machine without a GPU: runs run_all.sh against a fake build (stand-ins that
print the samples' ground truth and write the traces a perfect collector would) and checks the verdicts, then
again with spoiled traces, which must fail.

  run_selftest.py SCRATCH_DIR

Exit codes: 0 the scripts judged as expected, 1 they did not.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

EXPECTED_PASS = [
    *(f"sample {s}: trace = ground truth" for s in ("launch_bound", "host_stall", "syncs", "multistream", "graph")),
    *(f"sample {s}: exit code and stdout as untraced" for s in ("syncs", "graph")),
    "train fp8: kernels per name = torch.profiler",
    "train bf16 traced: finished, no drops, NVTX steps",
    "unwritable path via FP8SCOPE_OUTPUT: run unchanged, one warning line",
    "torch.profiler under fp8scope: one clear line names CUPTI being taken",
    "fork: DataLoader workers=2: one finished trace (parent), run unchanged",
]
EXPECTED_INFO = ["step time fp8 traced vs plain"]
EXPECTED_FAIL_SPOILED = ["sample syncs: trace = ground truth", "sample graph: trace = ground truth"]
# When FP8 runs fail, the FP8 checks fail once and the later steps fall back to BF16.
EXPECTED_FP8_FAILS = {"train fp8 --profile-torch (untraced) runs": "FAIL", "step time bf16 traced vs plain": "INFO",
                      "torch.profiler under fp8scope: exit code and losses unchanged": "PASS",
                      "train bf16: kernels per name = torch.profiler": "PASS"}


def run(scratch, name, stages, extra_env):
    out = scratch / name / "out"
    env = dict(os.environ, OUT=str(out), FP8SCOPE_GPU_WORK=str(scratch / name / "work"),
               FP8SCOPE_GPU_TRAIN_PY=str(HERE / "fake_train.py"), FP8SCOPE_GPU_PYTHON=sys.executable,
               PYTHONPATH=str(HERE / "fake_torch"), FP8SCOPE_GPU_BUDGET_S="120", **extra_env)
    proc = subprocess.run([str(REPO / "tests" / "gpu" / "run_all.sh"), str(scratch / "fake-build"), *stages],
                          env=env, capture_output=True, text=True, timeout=300)
    (scratch / f"{name}.log").write_text(proc.stdout + proc.stderr)
    summary = json.loads((out / "summary.json").read_text())
    return {r["check"]: r["result"] for r in summary["rows"]}, sorted(p.name for p in out.iterdir())


def expect(results, checks, wanted, problems):
    for check in checks:
        if results.get(check) != wanted:
            problems.append(f"{check}: {results.get(check)}, expected {wanted}")


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    scratch = Path(argv[0]).resolve()
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    subprocess.run([sys.executable, str(HERE / "make_fake_build.py"), str(scratch / "fake-build")], check=True)
    problems = []
    results, files = run(scratch, "good", ["samples", "torch", "lifecycle", "bench"], {})
    expect(results, EXPECTED_PASS, "PASS", problems)
    expect(results, EXPECTED_INFO, "INFO", problems)
    if len(files) > 8 or "summary.json" not in files or "details.tar.gz" not in files:
        problems.append(f"$OUT holds {files}")
    results, _ = run(scratch, "spoiled", ["samples"], {"FAKE_SPOIL": "kernels,dropped"})
    expect(results, EXPECTED_FAIL_SPOILED, "FAIL", problems)
    results, _ = run(scratch, "fp8-fails", ["torch", "lifecycle", "bench"], {"FAKE_FP8_FAILS": "1"})
    for check, wanted in EXPECTED_FP8_FAILS.items():
        expect(results, [check], wanted, problems)
    for p in problems:
        print(f"run_selftest: {p}")
    print(f"run_selftest: {'ok' if not problems else f'{len(problems)} problems'} (logs in {scratch})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
