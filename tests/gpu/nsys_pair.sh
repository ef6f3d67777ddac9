#!/bin/bash
# Issue 16 (samples/traces/nsys/): the syncs sample recorded by fp8scope and by Nsight Systems in the same session,
# 3 rounds alternating, from a folder holding build-gpu/{bin,samples} and debs/ (libdw1, libelf1: the importer needs
# them); run from the repository root on the GPU machine.
# fp8scope report on each (JSON), the figures side by side; round 1's pair kept.
root=$(pwd)
mkdir -p /tmp/dw && for f in build-gpu/debs/*.deb; do dpkg -x $f /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
W=/tmp/pair; rm -rf $W; mkdir -p $W
"$NSYS" --version > $W/nsys-version.txt 2>&1
for r in 1 2 3; do
  "$root/build-gpu/bin/fp8scope" record -o $W/fp8scope-$r.sqlite -- "$root/build-gpu/samples/fp8scope_sample_syncs" > $W/fp8scope-$r.out 2>&1
  timeout 120 "$NSYS" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none -o $W/nsys-$r --force-overwrite true "$root/build-gpu/samples/fp8scope_sample_syncs" > $W/nsys-$r.out 2>&1
  timeout 120 "$NSYS" export --type sqlite -o $W/nsys-$r.sqlite --force-overwrite true $W/nsys-$r.nsys-rep > /dev/null 2>&1
done
for f in $W/*.sqlite; do "$root/build-gpu/bin/fp8scope" report $f --format json --no-progress > ${f%.sqlite}.json 2>${f%.sqlite}.err; done
python3 - $W <<'PY'
import json, sys, glob, os
w = sys.argv[1]
for f in sorted(glob.glob(w + "/*.json")):
    d = json.load(open(f))
    t = d["totals"]
    syncs = d.get("syncs", {})
    print(os.path.basename(f), "steps", len(d["steps"]["steps"]), "bubble_ratio", round(t["bubble_ratio"], 4),
          "kernels", d["launch"].get("kernels") if isinstance(d.get("launch"), dict) else None,
          "blocking", syncs.get("count") if isinstance(syncs, dict) else None)
PY
cd $W && tar cJf $OUT/nsyspair.tar.xz nsys-version.txt *.json *.err *.out fp8scope-1.sqlite nsys-1.sqlite
