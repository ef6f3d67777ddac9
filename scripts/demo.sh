#!/usr/bin/env bash
# README command 1: install what is missing, build the fp8scope CLI (Release) into build/demo, and run
# `fp8scope report` on the bundled default trace: a real recording of the PyTorch FP8 training sample on an H100
# (samples/traces/README.md). Idempotent: a second run reuses build/demo.
#
# The trace is stored in git as $trace.xz, like every sample trace: the configure below unpacks it beside the archive
# (cmake/Fp8scopeSampleTraces.cmake), on every run, when it is missing or older than the archive.
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${FP8SCOPE_JOBS:-$(nproc)}"
build_dir=build/demo
trace=samples/traces/h100-train-fp8.sqlite

scripts/install-deps.sh

# The demo needs the CLI only: no tests, benchmarks or CUDA stages.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DFP8SCOPE_BUILD_TESTS=OFF -DFP8SCOPE_BUILD_BENCH=OFF \
    -DFP8SCOPE_BUILD_COLLECTOR=OFF -DFP8SCOPE_BUILD_PROBES=OFF -DFP8SCOPE_BUILD_SAMPLES=OFF >/dev/null
cmake --build "$build_dir" --target fp8scope -j "$jobs" >/dev/null
if [ ! -f "$trace" ] || [ "$trace.xz" -nt "$trace" ]; then
    echo "demo: $trace was not unpacked from $trace.xz by the configure; unpack it by hand: xz -dkf $trace.xz" >&2
    exit 1
fi

echo "$trace: 30 steps of samples/torch/train.py --precision fp8, recorded by fp8scope on an H100."
echo "\$ fp8scope report $trace"
exec "$build_dir/bin/fp8scope" report "$trace"
