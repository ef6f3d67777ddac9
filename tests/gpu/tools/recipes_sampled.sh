#!/usr/bin/env bash
# Per-block statistics with statistics taken every 5th step, as by default every 10th (the zoo records every step): the
# torchao rowwise job untraced and under `fp8scope record` with FP8SCOPE_STATS_EVERY=5. Prints each run's losses and,
# per step of the trace, the rowwise operand samples and the per-block rows; docs/tensor-stats.md keeps the result.
#   tests/gpu/tools/recipes_sampled.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
job=$repo/tests/gpu/zoo/torchao_rowwise_hf.py
work=$(mktemp -d)
export PYTHONPATH=$repo/probes/python
args=(--precision fp8 --steps 16 --name sampled --twin none)
python3 "$job" "${args[@]}" > "$work/untraced.txt" 2>/dev/null
FP8SCOPE_STATS_EVERY=5 "$build/bin/fp8scope" record -q -o "$work/trace.sqlite" -- python3 "$job" "${args[@]}" \
    > "$work/traced.txt" 2>"$work/traced.err"
python3 - "$work" <<'PY'
import json, sqlite3, sys
work = sys.argv[1]
def losses(path):
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("FP8SCOPE_GROUND_TRUTH "):
            return json.loads(line.split(" ", 1)[1]).get("losses_hex")
db = sqlite3.connect(f"{work}/trace.sqlite")
samples = dict(db.execute("SELECT st.step, count(*) FROM FP8SCOPE_TENSOR_STATS st JOIN FP8SCOPE_TENSOR_SITE s "
                          "ON s.id = st.siteId WHERE s.scaleRecipe = 1 GROUP BY st.step").fetchall())
blocks = dict(db.execute("SELECT step, count(*) FROM FP8SCOPE_BLOCK_STATS GROUP BY step").fetchall())
u, t = losses(f"{work}/untraced.txt"), losses(f"{work}/traced.txt")
print("RESULT", json.dumps({"losses_equal": u is not None and u == t, "steps": len(u or []),
                            "rowwise_samples_per_step": samples, "block_rows_per_step": blocks}))
PY
tail -3 "$work/traced.err"
rm -rf "$work"
