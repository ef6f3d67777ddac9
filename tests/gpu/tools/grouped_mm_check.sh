#!/usr/bin/env bash
# torch._scaled_grouped_mm seen by the dispatcher interception (grouped_mm_check.py), untraced and under `fp8scope
# record` with statistics every step: prints the job's truth, each run's outputs, and per step the grouped GEMM's
# A and B samples (rowwise) and per-block rows in the trace.
#   tests/gpu/tools/grouped_mm_check.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
export PYTHONPATH=$repo/probes/python
python3 "$here/grouped_mm_check.py" > "$work/untraced.txt"
FP8SCOPE_STATS_EVERY=1 "$build/bin/fp8scope" record -q -o "$work/trace.sqlite" -- python3 "$here/grouped_mm_check.py" \
    > "$work/traced.txt" 2> "$work/traced.err"
python3 - "$work" <<'PY'
import json, sqlite3, sys
work = sys.argv[1]
def truth(path):
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("FP8SCOPE_GROUND_TRUTH "):
            return json.loads(line.split(" ", 1)[1])
db = sqlite3.connect(f"{work}/trace.sqlite")
name = "(SELECT value FROM StringIds WHERE id = s.nameId)"
samples = db.execute(f"SELECT st.step, {name}, s.role, s.scaleRecipe, count(*) FROM FP8SCOPE_TENSOR_STATS st "
                     "JOIN FP8SCOPE_TENSOR_SITE s ON s.id = st.siteId GROUP BY st.step, s.id ORDER BY st.step").fetchall()
blocks = db.execute("SELECT step, blockRows, blockCols, blocks, blockAmaxP50, amax FROM FP8SCOPE_BLOCK_STATS "
                    "ORDER BY step").fetchall()
u, t = truth(f"{work}/untraced.txt"), truth(f"{work}/traced.txt")
print("RESULT", json.dumps({"truth": t, "outputs_equal": u is not None and t is not None and u["out_amax"] == t["out_amax"],
                            "samples": samples, "block_rows": blocks}))
PY
grep -i "fp8scope" "$work/traced.err" | head -5
rm -rf "$work"
