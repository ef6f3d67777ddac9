#!/usr/bin/env bash
# Verifies the collector on the GPU machine: CUDA samples and PyTorch traces against ground truth, lifecycle cases,
# overhead benchmarks, tensor statistics, real jobs and the CUDA-graph what-if. Run from the repository root:
#
#   OUT=/some/folder tests/gpu/run_all.sh BUILD_DIR [STAGE ...]
#       stages: samples torch lifecycle signals bench stats realstats realjobs compare capture ranks faults zoo1 zoo2
#       zoo-ddp2 zoo-recipes recipes zoo-markerless zoo-slowdrift zoo-compiled zoo-fusion bitwise calibrate (all of
#       them take more than one 10-minute call: tests/gpu/README.md says how to split them)
#
# $OUT receives summary.json, run_all.log, kept traces (trace-*), details.tar.gz (every command's logs, per-check
# JSON), traces-extra.tar.gz and, for realjobs, compare and ranks, realjobs-N.tar, compare-N.tar and ranks.tar; a
# PASS/FAIL table ends stdout. FP8SCOPE_GPU_WORK sets the scratch folder.
# The whole run is bounded: the Python driver keeps to FP8SCOPE_GPU_BUDGET_S (default 510 s) and is killed at
# FP8SCOPE_GPU_HARD_LIMIT_S (default 570 s), within the device's 10 minutes per call.
# Exit codes: 0 all judged checks passed, 1 a check failed, 2 usage error, 124 the hard limit was hit.
set -u

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    [[ $# -lt 1 ]] && exit 2 || exit 0
fi
build_dir=$1
shift
if [[ -z "${OUT:-}" ]]; then
    echo "run_all.sh: set OUT to the output folder" >&2
    exit 2
fi
if [[ ! -d "$build_dir" ]]; then
    echo "run_all.sh: build folder '$build_dir' does not exist" >&2
    exit 2
fi
mkdir -p "$OUT"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${FP8SCOPE_GPU_PYTHON:-python3}
hard_limit=${FP8SCOPE_GPU_HARD_LIMIT_S:-570}

# Logs and the runs' own files live outside $OUT (the device returns at most 8 files from it); pack_results.py
# packs what matters into $OUT at the end, whatever happened.
scratch=${FP8SCOPE_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/fp8scope-gpu.XXXXXX")}
mkdir -p "$scratch"
echo "run_all.sh: build $build_dir, out $OUT, scratch $scratch, python $python"

# -k: a driver that ignores SIGTERM is killed 10 s later; summary.json is rewritten after every result, so the
# results so far survive either way.
limiter=(timeout -k 10 "$hard_limit")
command -v timeout > /dev/null || limiter=()  # the driver's own budget still applies
"${limiter[@]}" "$python" -u "$here/run_all.py" --build "$build_dir" --out "$OUT" --scratch "$scratch" \
    --python "$python" "$@" 2>&1 | tee "$OUT/run_all.log"
status=${PIPESTATUS[0]}
if [[ $status -eq 124 || $status -eq 137 ]]; then
    echo "run_all.sh: hard time limit (${hard_limit} s) reached; partial results in $OUT/summary.json" | tee -a "$OUT/run_all.log"
    "$python" - "$OUT/summary.json" <<'PY' 2>/dev/null | tee -a "$OUT/run_all.log"
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(f"{r['check'][:58]:58}  {r['result']:6}  {r['figure'][:90]}")
PY
fi
"$python" "$here/pack_results.py" "$scratch" "$OUT" 2>&1 | tee -a "$OUT/run_all.log"
exit "$status"
