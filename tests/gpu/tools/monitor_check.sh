#!/usr/bin/env bash
# `record --monitor` on the FP8 sample (docs/collector.md "Monitoring"), on the GPU machine, from the repository root:
#
#   OUT=/some/folder tests/gpu/tools/monitor_check.sh BUILD [STEPS] [ROUNDS]
#
# 1. The bound: windows of 10 steps every 20 under --max-size 16 over 1,500 steps; prints the trace's size, `info`
#    (how many windows were dropped) and the head of `report` on it (the analysis of the kept windows).
# 2. The cost over a whole run: untraced against `record --monitor` (its defaults), STEPS steps (default 2500) each,
#    ROUNDS rounds (default 2) in alternating order; a run's time is the sum of its steps' CUDA-event times
#    (FP8SCOPE_GROUND_TRUTH step_ms). Prints each run and the median ratio.
# Writes $OUT/monitor.txt. Exit code: 0, or 2 on a usage error; the figures are read, not judged.
set -u
if [[ $# -lt 1 || -z "${OUT:-}" ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
build=$PWD/$1
steps=${2:-2500}
rounds=${3:-2}
export PYTHONPATH=$PWD/probes/python${PYTHONPATH:+:$PYTHONPATH}
train=(python3 "$PWD/samples/torch/train.py" --precision fp8 --layers 1 --d-model 512 --heads 8 --seq 256 --batch 8
    --vocab 4096)
work=$(mktemp -d)
exec > "$OUT/monitor.txt" 2>&1

# Half the steps captured (about 45 KB a step): about twice the bound, so about half the windows are dropped.
echo "== the bound: --capture-every 20 --capture-length 10 --max-size 16, 1500 steps"
"$build/bin/fp8scope" record -q --monitor --capture-every 20 --capture-length 10 --max-size 16 -o "$work/bounded.sqlite" \
    -- "${train[@]}" --steps 1500 > "$work/bounded.log" 2>&1
echo "record exit $?; trace $(stat -c %s "$work/bounded.sqlite") bytes"
"$build/bin/fp8scope" info "$work/bounded.sqlite"
"$build/bin/fp8scope" report "$work/bounded.sqlite" > "$work/report.txt" 2>&1
echo "report exit $?"
head -n 40 "$work/report.txt"

echo "== the cost over a whole run: untraced against record --monitor, $steps steps, $rounds rounds"
total_ms() { # the sum of the run's step times and its step count, from its FP8SCOPE_GROUND_TRUTH line
    python3 - "$1" << 'PY'
import json, sys
prefix = "FP8SCOPE_GROUND_TRUTH "
for line in open(sys.argv[1]):
    if line.startswith(prefix):
        step_ms = json.loads(line[len(prefix):])["step_ms"]
        print("%.1f %d" % (sum(step_ms), len(step_ms)))
        break
else:
    print("nan 0")
PY
}
for ((r = 0; r < rounds; r++)); do
    for mode in untraced monitor; do
        [[ $((r % 2)) == 1 ]] && mode=$([[ $mode == untraced ]] && echo monitor || echo untraced)
        rm -f "$work"/run*.sqlite*
        if [[ $mode == untraced ]]; then
            "${train[@]}" --steps "$steps" > "$work/run.log" 2>&1
        else
            "$build/bin/fp8scope" record -q --monitor -o "$work/run.sqlite" -- "${train[@]}" --steps "$steps" \
                > "$work/run.log" 2>&1
        fi
        echo "run round=$r mode=$mode total_ms_and_steps=$(total_ms "$work/run.log")"
    done
done
python3 - "$OUT/monitor.txt" << 'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"run round=(\d+) mode=(\w+) total_ms_and_steps=([\d.]+|nan) (\d+)", line)
    if m:
        runs.setdefault(int(m.group(1)), {})[m.group(2)] = float(m.group(3))
ratios = [r["monitor"] / r["untraced"] - 1 for r in runs.values() if "monitor" in r and r.get("untraced")]
print("monitor vs untraced per round:", [f"{x:+.2%}" for x in ratios])
if ratios:
    print(f"median {statistics.median(ratios):+.2%}")
PY
rm -rf "$work"
