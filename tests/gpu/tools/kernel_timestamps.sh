#!/usr/bin/env bash
# Which kernel timestamps the collector chose (meta kernel_timestamps; docs/collector.md "Kernel timestamps:
# hardware or software"), on a C sample (the runtime makes the primary context) and on a PyTorch job, for each build
# given. Run from the repository root on the GPU machine:
#
#   tests/gpu/tools/kernel_timestamps.sh BUILD [BUILD...]
#
# Prints one line per build and job: the meta, the kernel count and the trace's finished flag. Exit code: 0, or 2 on
# a usage error; the lines are read, not judged (the expected meta depends on the GPU: Hopper refuses the hardware
# trace, Blackwell takes it).
set -u
if [[ $# -lt 1 ]]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
work=$(mktemp -d)
for build in "$@"; do
    "$build/bin/fp8scope" record -o "$work/c.sqlite" -- "$1/samples/fp8scope_sample_launch_bound" > "$work/c.log" 2>&1
    "$build/bin/fp8scope" record -o "$work/torch.sqlite" -- python3 -c \
        "import torch; x = torch.ones(1000, device='cuda'); print(float((x * 2).sum()))" > "$work/torch.log" 2>&1
    for job in c torch; do
        python3 - "$work/$job.sqlite" "$build" "$job" << 'PY'
import sqlite3, sys
path, build, job = sys.argv[1:]
try:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("SELECT key, value FROM FP8SCOPE_META"))
    kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    print(f"{build:16s} {job:6s} kernel_timestamps={meta.get('kernel_timestamps')!r} kernels={kernels} "
          f"finished={meta.get('finished')}")
except sqlite3.Error as error:
    print(f"{build:16s} {job:6s} no trace: {error}")
PY
        grep -h "fp8scope" "$work/$job.log" | head -n 3
    done
    rm -f "$work"/*.sqlite*
done
rm -rf "$work"
