#!/bin/bash
# docs/benchmarks.md "A real Nsight Systems export against fp8scope" (samples/traces/nsys/): one CUDA sample recorded by
# fp8scope and by Nsight Systems in the same session, ROUNDS rounds alternating, from a folder holding
# build-gpu/{bin,samples} and debs/ (libdw1, libelf1: the importer needs them); run from the repository root on the GPU
# machine.
#   tests/gpu/tools/nsys_pair.sh [SAMPLE [ROUNDS [SAMPLE ARGS...]]]     default: syncs 3
# fp8scope report on each (JSON), the figures side by side; round 1's pair kept, in $OUT/nsyspair-SAMPLE.tar.xz.
sample=${1:-syncs}
rounds=${2:-3}
shift 2 2>/dev/null
root=$(pwd)
program="$root/build-gpu/samples/fp8scope_sample_$sample"
mkdir -p /tmp/dw && for f in build-gpu/debs/*.deb; do dpkg -x $f /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
W=/tmp/pair-$sample; rm -rf $W; mkdir -p $W
"$NSYS" --version > $W/nsys-version.txt 2>&1
echo "$sample $*" > $W/command.txt
for r in $(seq 1 $rounds); do
  "$root/build-gpu/bin/fp8scope" record -o $W/fp8scope-$r.sqlite -- "$program" "$@" > $W/fp8scope-$r.out 2>&1
  timeout 120 "$NSYS" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none -o $W/nsys-$r --force-overwrite true "$program" "$@" > $W/nsys-$r.out 2>&1
  timeout 120 "$NSYS" export --type sqlite -o $W/nsys-$r.sqlite --force-overwrite true $W/nsys-$r.nsys-rep > /dev/null 2>&1
done
for f in $W/*.sqlite; do "$root/build-gpu/bin/fp8scope" report $f --format json --no-progress > ${f%.sqlite}.json 2>${f%.sqlite}.err; done
python3 - $W <<'PY'
import json, sys, glob, os, statistics
w = sys.argv[1]
ratios = {"fp8scope": {}, "nsys": {}}
for f in sorted(glob.glob(w + "/*.json")):
    d = json.load(open(f))
    t = d["totals"]
    syncs = d.get("syncs", {})
    name = os.path.basename(f)[:-5]
    tool, r = name.split("-")
    ratios[tool][int(r)] = t["bubble_ratio"]
    print(name, "steps", len(d["steps"]["steps"]), "bubble_ratio", round(t["bubble_ratio"], 4),
          "kernels", d["launch"].get("kernels") if isinstance(d.get("launch"), dict) else None,
          "blocking", syncs.get("count") if isinstance(syncs, dict) else None,
          "idle_by_cause_ns", t.get("idle_by_cause_ns", t.get("bubbles_by_cause")))
both = sorted(set(ratios["fp8scope"]) & set(ratios["nsys"]))
if both:
    diffs = [ratios["fp8scope"][r] - ratios["nsys"][r] for r in both]
    print("median bubble_ratio fp8scope", round(statistics.median(ratios["fp8scope"].values()), 4),
          "nsys", round(statistics.median(ratios["nsys"].values()), 4),
          "paired differences (pp)", [round(100 * x, 2) for x in diffs],
          "median |difference| (pp)", round(100 * statistics.median(abs(x) for x in diffs), 2))
PY
cd $W && tar cJf $OUT/nsyspair-$sample.tar.xz command.txt nsys-version.txt *.json *.err *.out fp8scope-1.sqlite nsys-1.sqlite
