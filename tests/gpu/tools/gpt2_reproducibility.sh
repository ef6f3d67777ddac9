#!/bin/bash
# Is a torch.compiled GPT-2 bitwise reproducible by itself, and does recording move it? On one warm Inductor cache:
# untraced twice alone, recorded twice, recorded without statistics, untraced twice beside a GPU neighbour.
# Run on the device from the repository root with build-gpu-pack carried (docs/benchmarks.md, "Why the compiled
# GPT-2 moves"). Prints each run's last loss and the first step that differs from the first run.
set -u
tar xJf build-gpu-pack/b.tar.xz
R=$PWD; FP=$PWD/build-gpu-run/bin/fp8scope
J=$PWD/tests/gpu/realjobs/hf_gpt2_compile.py
W=/tmp/w2; rm -rf $W; mkdir -p $W
run() { # name traced cache-from extra-env args...
  local name=$1 tr=$2 from=$3 extra=$4; shift 4
  local d=$W/$name; mkdir -p $d
  if [ "$from" != - ]; then cp -r $W/$from/c $d/c; else mkdir $d/c; fi
  local pre=(); [ "$tr" = 1 ] && pre=("$FP" record -o "$d/t-%p.sqlite" --)
  ( cd $d && env TORCHINDUCTOR_CACHE_DIR=$d/c TRITON_CACHE_DIR=$d/c/triton PYTHONPATH=$R/probes/python:${PYTHONPATH:-} \
      PYTHONUNBUFFERED=1 $extra "${pre[@]}" python3 $J --steps 25 "$@" > $d/out 2> $d/err )
  echo "$name rc=$? $(grep FP8SCOPE_GROUND_TRUTH $d/out | python3 -c 'import sys,json; t=json.loads(sys.stdin.read().split(" ",1)[1]); print(repr(t["final_loss"]))' 2>&1)"
}
neighbour() { python3 -c '
import torch, time
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
end = time.time() + float(__import__("sys").argv[1])
while time.time() < end:
    for _ in range(20): a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
' "$1"; }
T0=$SECONDS
run U0 0 - X=1
# Inductor marks the kernels it generated with atomic adds (an accumulation whose order is not fixed).
echo "Inductor kernels with atomic adds: $(grep -rl "'atomic_add_found': True" $W/U0/c --include=*.py | wc -l)" \
  "of $(grep -rl "'atomic_add_found'" $W/U0/c --include=*.py | wc -l)"
# sequential on copies of U0's cache: no other process on the GPU
run W1 0 U0 X=1; run T1 1 U0 X=1; run T2 1 U0 X=1; run S0 1 U0 FP8SCOPE_GEMM_STATS=0; run W2 0 U0 X=1
# untraced beside a GPU neighbour (a bf16 matmul loop in another process)
neighbour 90 & run N1 0 U0 X=1; wait
neighbour 90 & run N2 0 U0 X=1; wait
echo "elapsed $((SECONDS-T0)) s"
python3 - <<'PY'
import json, glob, os
runs = {}
for d in sorted(glob.glob('/tmp/w2/*/')):
    try:
        line = [l for l in open(d + 'out') if l.startswith('FP8SCOPE_GROUND_TRUTH')][-1]
        runs[os.path.basename(d.rstrip('/'))] = json.loads(line.split(' ', 1)[1])['losses']
    except Exception as e:
        print(d, 'no truth', e)
base = runs.get('U0')
for k, v in runs.items():
    diff = next((i for i, (x, y) in enumerate(zip(base, v)) if x != y), None)
    print(f"{k}: final {v[-1]!r} first step differing from U0: {diff}")
PY
tar czf ${OUT:-/tmp}/gpt2_reproducibility.tgz -C $W --exclude='*.sqlite' --exclude=c . 2>/dev/null
