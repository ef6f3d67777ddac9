#!/usr/bin/env bash
# The FP8 what-if's validation on the GPU (docs/benchmarks.md "FP8 what-if"): `fp8scope calibrate` run twice, BF16
# traces to predict from, and the FP8 runs measured untraced. Run from the repository root on the GPU machine:
#
#   OUT=/some/folder tests/gpu/tools/fp8_whatif_validation.sh BUILD_DIR PART...
#       calibrate   calibrate --sweep twice (cal1.json, cal2.json, their stdout in cal1.txt, cal2.txt)
#       traces      record the BF16 eager runs (hf_llama, fp8_whatif_mlp small and large) and the small FP8 rowwise
#                   run (the rowwise eager profile's source), statistics every step; calibrate on the large trace
#       fp8traces   record the large model's FP8 eager runs (tensorwise, rowwise, delayed)
#       llama-fp8-trace  record hf_llama.py --fp8
#       untraced-llama, untraced-large, untraced-small, untraced-delayed, untraced-graphs
#                   the jobs untraced: BF16 and FP8, eager and compiled; one FP8SCOPE_GROUND_TRUTH line each in
#                   truth.jsonl
#   $OUT/whatif.tar.xz holds everything (traces, logs, tables). Needs .torchao/ (tests/gpu/tools/make_torchao.sh).
set -u
build=$1
shift
out=${OUT:?set OUT}
mkdir -p "$out/w"
w=$out/w
fp8scope=$build/bin/fp8scope
py=${FP8SCOPE_GPU_PYTHON:-python3}
# fp8scope's Python module, so that each job marks its steps (fp8scope.step) when recorded; untraced it is a no-op.
export PYTHONPATH=$PWD/probes/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
mlp=tests/gpu/realjobs/fp8_whatif_mlp.py
llama=tests/gpu/realjobs/hf_llama.py

run() { # NAME TIMEOUT ARGV...: stdout and stderr to $w/NAME.log, the truth line appended to truth.jsonl
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    timeout "$limit" "$@" > "$w/$name.log" 2>&1
    local rc=$?
    grep -h '^FP8SCOPE_GROUND_TRUTH ' "$w/$name.log" | sed "s/^FP8SCOPE_GROUND_TRUTH /{\"run\": \"$name\", \"truth\": /; s/\$/}/" \
        >> "$w/truth.jsonl"
    echo "$name rc=$rc $((SECONDS - start)) s"
}
record() { # NAME TIMEOUT ARGV...
    local name=$1 limit=$2
    shift 2
    FP8SCOPE_STATS_EVERY=1 run "$name" "$limit" "$fp8scope" record -o "$w/$name.sqlite" -- "$@"
}

for part in "$@"; do
    case $part in
    calibrate)
        for i in 1 2; do
            run "cal$i" 300 "$fp8scope" calibrate --sweep --no-progress -o "$w/cal$i.json"
        done ;;
    traces)
        # zero-code: no step markers (the collector learns the GEMM sequence, or samples at its bounded rate)
        PYTHONPATH= record mlp_large_bf16_zerocode 120 "$py" $mlp --size large --precision bf16 --steps 12
        record hf_llama_bf16 120 "$py" $llama --steps 20
        record mlp_large_bf16 120 "$py" $mlp --size large --precision bf16 --steps 12
        record mlp_small_bf16 120 "$py" $mlp --size small --precision bf16 --steps 20
        record mlp_small_rowwise 120 "$py" $mlp --size small --precision fp8 --recipe rowwise --steps 20
        run cal_large 200 "$fp8scope" calibrate --no-progress "$w/mlp_large_bf16.sqlite" -o "$w/cal_large.json"
        run cal_llama 200 "$fp8scope" calibrate --no-progress "$w/hf_llama_bf16.sqlite" -o "$w/cal_llama.json" ;;
    fp8traces)
        # the FP8 runs of the large model, eager: their cast and amax kernels' GPU time per operand element
        for recipe in tensorwise rowwise delayed; do
            record "mlp_large_$recipe" 120 "$py" $mlp --size large --precision fp8 --recipe $recipe --steps 12
        done ;;
    untraced-graphs)
        # the small model compiled with CUDA graphs (mode reduce-overhead): the what-if's compiled mode
        for precision in bf16 tensorwise rowwise; do
            if [[ $precision == bf16 ]]; then args=(--precision bf16); else args=(--precision fp8 --recipe $precision); fi
            run "u_small_${precision}_graphs" 240 "$py" $mlp --size small "${args[@]}" --compile reduce-overhead
        done ;;
    untraced-delayed)
        run u_large_delayed_eager 120 "$py" $mlp --size large --precision fp8 --recipe delayed
        run u_small_delayed_eager 120 "$py" $mlp --size small --precision fp8 --recipe delayed ;;
    llama-fp8-trace)
        record hf_llama_fp8 120 "$py" $llama --steps 20 --fp8 ;;
    untraced-llama)
        run u_llama_bf16 120 "$py" $llama --steps 20
        run u_llama_fp8 120 "$py" $llama --steps 20 --fp8 ;;
    untraced-large | untraced-small)
        for size in ${part#untraced-}; do
            run "u_${size}_bf16_eager" 120 "$py" $mlp --size $size --precision bf16
            run "u_${size}_bf16_compiled" 240 "$py" $mlp --size $size --precision bf16 --compile
            for recipe in tensorwise rowwise; do
                run "u_${size}_${recipe}_eager" 120 "$py" $mlp --size $size --precision fp8 --recipe $recipe
                run "u_${size}_${recipe}_compiled" 240 "$py" $mlp --size $size --precision fp8 --recipe $recipe \
                    --compile
            done
        done ;;
    *) echo "fp8_whatif_validation.sh: unknown part '$part'" >&2; exit 2 ;;
    esac
done
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > "$w/gpu.txt" 2>&1
tar cJf "$out/whatif.tar.xz" -C "$out" w && rm -rf "$w"
