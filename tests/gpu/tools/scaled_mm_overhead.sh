#!/usr/bin/env bash
# The interception's host cost per torch._scaled_mm (tests/gpu/tools/scaled_mm_overhead.py), three ways in turn, three
# rounds; then the compiled check, and the wrappers following capture windows and sampled steps. Prints the RESULT
# lines; docs/benchmarks.md keeps the figures.
#   tests/gpu/tools/scaled_mm_overhead.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
script=$here/scaled_mm_overhead.py
work=$(mktemp -d)
export PYTHONPATH=$repo/probes/python
for round in 1 2 3; do
    echo "== round $round: untraced"
    python3 "$script" eager | grep RESULT
    echo "== round $round: traced, interception off"
    FP8SCOPE_GEMM_STATS=0 FP8SCOPE_TORCH_SCALED_MM=0 "$build/bin/fp8scope" record -q -o "$work/off-%p.sqlite" -- \
        python3 "$script" eager | grep RESULT
    echo "== round $round: traced, interception on"
    FP8SCOPE_GEMM_STATS=0 "$build/bin/fp8scope" record -q -o "$work/on-%p.sqlite" -- python3 "$script" eager | grep RESULT
done
echo "== compiled, traced"
"$build/bin/fp8scope" record -q -o "$work/compiled-%p.sqlite" -- python3 "$script" compiled | grep RESULT
echo "== windows, traced (the wrappers removed in steps without statistics)"
"$build/bin/fp8scope" record -q --capture-every 10 --capture-length 2 -o "$work/windows-%p.sqlite" -- \
    python3 "$script" windows | grep -E "RESULT|STEP"
rm -rf "$work"
