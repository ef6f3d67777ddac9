#!/usr/bin/env bash
# A collector change's before and after, interleaved on one GPU (docs/benchmarks.md "Record against the floor"):
#
#   OUT=/some/folder bench/record_ab.sh BUILD BEFORE_BUILD [ROUNDS]
#
# BUILD and BEFORE_BUILD each hold bin/fp8scope and lib/libfp8scope.so (BUILD also bench/ and the loop library).
# 1. Launch loops, host microseconds per launch (median of each run's repetitions), modes rotated per round: the C loop
#    (fp8scope_launch_overhead) and the PyTorch loop (bench/launch_overhead.py --loop torch), each untraced, under
#    `record` of both builds, and under the floor (kernel records alone: FP8SCOPE_ACTIVITIES=kernels FP8SCOPE_API=none
#    FP8SCOPE_NVTX=0 FP8SCOPE_GEMM_STATS=0). Writes $OUT/ab-loops.txt: one JSON line per run, then the medians.
# 2. bench/component_cost.py on the Hugging Face Llama (2 layers) and on the launch-bound FP8 step (the FP8 sample
#    with 1 layer, about 490 launches in 10-12 ms): untraced A and B (the A/A control), record, record-before and
#    kernels-only, each cost measured inside the process against its own detached steps. Writes $OUT/ab-llama.txt
#    and $OUT/ab-fp8.txt.
# Exit code: 0, or 2 on a usage error; the figures are read, not judged.
set -u
if [[ $# -lt 2 || -z "${OUT:-}" ]]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
build=$PWD/$1
before=$PWD/$2
rounds=${3:-3}
export PYTHONPATH=$PWD/probes/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
# The C loop's runpath names the folder it was built in, which the GPU machine lacks.
export LD_LIBRARY_PATH=$build/bench${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
floor=(env FP8SCOPE_ACTIVITIES=kernels FP8SCOPE_API=none FP8SCOPE_NVTX=0 FP8SCOPE_GEMM_STATS=0)

loops() {
    local c=("$build/bench/fp8scope_launch_overhead" --launches 20000 --reps 3)
    local py=(python3 "$PWD/bench/launch_overhead.py" --loop torch --launches 20000 --reps 3)
    local modes=(plain record record-before floor) r i mode loop
    for ((r = 0; r < rounds; r++)); do
        for loop in c torch; do
            for ((i = 0; i < ${#modes[@]}; i++)); do
                mode=${modes[$(((i + r) % ${#modes[@]}))]}
                local argv
                if [[ $loop == c ]]; then argv=("${c[@]}"); else argv=("${py[@]}"); fi
                local dir=/tmp/ab-loop-$loop-$mode-$r
                rm -rf "$dir" && mkdir -p "$dir"
                local line
                case $mode in
                plain) line=$("${argv[@]}" 2> /dev/null | tail -n 1) ;;
                record) line=$("$build/bin/fp8scope" record -o "$dir/t-%p.sqlite" -- "${argv[@]}" 2> /dev/null | tail -n 1) ;;
                record-before) line=$("$before/bin/fp8scope" record -o "$dir/t-%p.sqlite" -- "${argv[@]}" 2> /dev/null | tail -n 1) ;;
                floor) line=$("${floor[@]}" "$build/bin/fp8scope" record -o "$dir/t-%p.sqlite" -- "${argv[@]}" 2> /dev/null | tail -n 1) ;;
                esac
                echo "{\"loop\": \"$loop\", \"mode\": \"$mode\", \"round\": $r, \"run\": ${line:-null}}"
                rm -rf "$dir"
            done
        done
    done
}

loops > "$OUT/ab-loops.txt"
python3 - "$OUT/ab-loops.txt" >> "$OUT/ab-loops.txt" << 'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    row = json.loads(line)
    us = (row["run"] or {}).get("median_us_per_launch")
    if us is not None:
        runs.setdefault((row["loop"], row["mode"]), []).append(us)
for (loop, mode), values in sorted(runs.items()):
    print(f"median {loop:5s} {mode:14s} {statistics.median(values):7.3f} us/launch  runs {[round(v, 3) for v in values]}")
EOF

cost=(python3 bench/component_cost.py --fp8scope "$build/bin/fp8scope" --fp8scope-before "$before/bin/fp8scope"
    --rounds "$rounds" --modes untraced-a,untraced-b,record,record-before,kernels-only)
"${cost[@]}" -- python3 "$PWD/tests/gpu/realjobs/hf_llama.py" --steps 96 --layers 2 > "$OUT/ab-llama.txt" 2>&1
"${cost[@]}" -- python3 "$PWD/samples/torch/train.py" --precision fp8 --layers 1 --d-model 512 --heads 8 --seq 256 \
    --batch 8 --vocab 4096 --steps 96 > "$OUT/ab-fp8.txt" 2>&1
tail -n 8 "$OUT/ab-loops.txt" "$OUT/ab-llama.txt" "$OUT/ab-fp8.txt"
