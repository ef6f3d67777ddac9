#!/usr/bin/env bash
# Which recordings keep their GPU rows (TARGET_INFO_GPU, from CUPTI's DEVICE records), on the GPU machine, from the
# repository root:
#
#   OUT=/some/folder tests/gpu/tools/window_gpu_rows.sh BUILD [REPEATS]
#
# The BF16 sample (small model, 120 steps) recorded whole, with periodic windows (CUPTI detached between them), with
# windows but CUPTI kept attached (FP8SCOPE_CAPTURE_DETACH=0), and with windows and no step markers, REPEATS times
# each (default 2). Prints, per run, the GPU rows, the windows and the collector's messages (FP8SCOPE_VERBOSE=1).
# Writes $OUT/gpu-rows.txt. Exit code: 0, or 2 on a usage error; read, not judged.
set -u
if [[ $# -lt 1 || -z "${OUT:-}" ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
build=$PWD/$1
repeats=${2:-2}
export PYTHONPATH=$PWD/probes/python${PYTHONPATH:+:$PYTHONPATH}
train=(python3 "$PWD/samples/torch/train.py" --precision bf16 --layers 1 --d-model 512 --heads 8 --seq 256 --batch 8
    --vocab 4096 --steps 120)
work=$(mktemp -d)
exec > "$OUT/gpu-rows.txt" 2>&1
for ((r = 0; r < repeats; r++)); do
    for mode in whole windows windows-attached windows-markerless; do
        trace=$work/$mode-$r.sqlite
        case $mode in
        whole) opts=() extra=() envs=() ;;
        windows) opts=(--capture-every 50 --capture-length 10) extra=() envs=() ;;
        windows-attached) opts=(--capture-every 50 --capture-length 10) extra=() envs=(FP8SCOPE_CAPTURE_DETACH=0) ;;
        windows-markerless) opts=(--capture-every 50 --capture-length 10) extra=(--no-markers) envs=() ;;
        esac
        echo "== $mode, run $r"
        env FP8SCOPE_VERBOSE=1 "${envs[@]}" "$build/bin/fp8scope" record "${opts[@]}" -o "$trace" -- "${train[@]}" \
            "${extra[@]}" 2>&1 >/dev/null | grep -v '^step ' | tail -n 12
        python3 - "$trace" << 'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print("gpu rows:", db.execute("SELECT id, name FROM TARGET_INFO_GPU").fetchall())
meta = dict(db.execute("SELECT key, value FROM FP8SCOPE_META"))
print("windows:", db.execute("SELECT COUNT(*) FROM FP8SCOPE_CAPTURE_WINDOW").fetchone()[0],
      "kernels:", db.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0],
      "dropped:", meta.get("dropped_records"), "timestamps:", meta.get("kernel_timestamps"))
PY
    done
done
rm -rf "$work"
