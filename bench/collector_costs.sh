#!/usr/bin/env bash
# The collector's cost per part and between capture windows, side by side on a machine with 4 GPUs, one benchmark per
# GPU (docs/benchmarks.md "What each collector part costs, inside one process",
# docs/benchmarks.md "A grace counted in steps"). Run from the repository root on the GPU machine:
#
#   OUT=/some/folder bench/collector_costs.sh BUILD_DIR [ROUNDS]
#
# GPU 0: bench/component_cost.py on the Hugging Face Llama (tests/gpu/realjobs/hf_llama.py, 2 layers);
# GPU 1: the same on torchao's tensorwise FP8 MLP (tests/gpu/zoo/torchao_mlp.py; torchao's Python sources on its
#        PYTHONPATH alone, from .torchao as tests/gpu/tools/make_torchao.sh exports them: transformers fails to
#        import LlamaForCausalLM with that torchao on the path);
# GPU 2: periodic capture on the FP8 sample with 1 layer (a 10-12 ms step): --capture-every 1000 --capture-length
#        10 (1,032 steps: component_cost.py needs more than warm-up + every), then --capture-every 20 --capture-length 3 (200 steps), untraced A and B (the A/A
#        control) against record;
# GPU 3: tests/gpu/run_all.sh BUILD_DIR capture (every capture check), its results packed into capture.tar.
# Writes $OUT/cc-llama.txt, cc-torchao.txt, cc-periodic.txt (each benchmark's table and per-run lines) and
# capture.tar (FP8SCOPE_COSTS_CAPTURE=0 leaves the capture stage out). Exit code: 0, or 2 on a usage error; the figures are read, not judged.
set -u
if [[ $# -lt 1 || -z "${OUT:-}" ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
build=$1
rounds=${2:-3}
fp8scope=$PWD/$build/bin/fp8scope
export PYTHONPATH=$PWD/probes/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
cost=(python3 bench/component_cost.py --fp8scope "$fp8scope" --rounds "$rounds")
modes=untraced-a,untraced-b,record,no-api,kernels-only,api-activity
train=(python3 "$PWD/samples/torch/train.py" --precision fp8 --layers 1 --d-model 512 --heads 8 --seq 256 --batch 8
    --vocab 4096)

(CUDA_VISIBLE_DEVICES=0 "${cost[@]}" --modes "$modes" -- python3 "$PWD/tests/gpu/realjobs/hf_llama.py" --steps 96 \
    --layers 2 > "$OUT/cc-llama.txt" 2>&1) &
(CUDA_VISIBLE_DEVICES=1 PYTHONPATH=$PWD/.torchao:$PYTHONPATH "${cost[@]}" --modes "$modes" -- python3 "$PWD/tests/gpu/zoo/torchao_mlp.py" --precision fp8 \
    --steps 96 > "$OUT/cc-torchao.txt" 2>&1) &
(
    export CUDA_VISIBLE_DEVICES=2
    "${cost[@]}" --every 1000 --length 10 --skip 20 --modes untraced-a,untraced-b,record -- "${train[@]}" \
        --steps 1032 > "$OUT/cc-periodic.txt" 2>&1
    "${cost[@]}" --every 20 --length 3 --skip 20 --modes untraced-a,untraced-b,record -- "${train[@]}" \
        --steps 200 >> "$OUT/cc-periodic.txt" 2>&1
) &
[[ "${FP8SCOPE_COSTS_CAPTURE:-1}" == 0 ]] || (
    mkdir -p /tmp/capture-out
    CUDA_VISIBLE_DEVICES=3 FP8SCOPE_GPU_BUDGET_S=${FP8SCOPE_GPU_BUDGET_S:-480} OUT=/tmp/capture-out \
        tests/gpu/run_all.sh "$build" capture > /tmp/capture-out/stdout.txt 2>&1
    tar cf "$OUT/capture.tar" -C /tmp capture-out
) &
wait
tail -n 12 "$OUT"/cc-*.txt
[[ -f /tmp/capture-out/stdout.txt ]] && tail -n 40 /tmp/capture-out/stdout.txt
