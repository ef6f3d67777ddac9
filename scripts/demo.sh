#!/usr/bin/env bash
# README command 1: install what is missing, build the fp8scope CLI (Release) into build/demo, and run
# `fp8scope info` on the bundled default trace. Idempotent: a second run reuses build/demo.
#
# The bundled trace is synthetic, made by the scenario builder (samples/traces/README.md), until a real H100
# recording replaces it.
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${FP8SCOPE_JOBS:-$(nproc)}"
build_dir=build/demo
trace=samples/traces/scenario-demo.sqlite

scripts/install-deps.sh

# The demo needs the CLI only: no tests, benchmarks or CUDA stages.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DFP8SCOPE_BUILD_TESTS=OFF -DFP8SCOPE_BUILD_BENCH=OFF \
    -DFP8SCOPE_BUILD_COLLECTOR=OFF -DFP8SCOPE_BUILD_PROBES=OFF -DFP8SCOPE_BUILD_SAMPLES=OFF >/dev/null
cmake --build "$build_dir" --target fp8scope -j "$jobs" >/dev/null

echo "Note: $trace is synthetic, written by the scenario builder, not recorded on a GPU (samples/traces/README.md)."
echo "\$ fp8scope info $trace"
exec "$build_dir/bin/fp8scope" info "$trace"
