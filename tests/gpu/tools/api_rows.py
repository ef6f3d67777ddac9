#!/usr/bin/env python3
"""API rows of traces, for comparing where they came from (FP8SCOPE_API_SOURCE=activity or callbacks,
docs/collector.md "Environment"): per trace, kernels, kernels with their launch call (an API row of the same correlation
id), API rows, API rows per kernel, the collector's own calls (FP8SCOPE_COLLECTOR_WORK) and the five most frequent API
names. One JSON line per trace.

  api_rows.py TRACE...
"""

import json
import sqlite3
import sys


def rows(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    one = lambda q: db.execute(q).fetchone()[0]  # noqa: E731
    kernels = one("SELECT COUNT(*) FROM FP8SCOPE_KERNEL")
    launched = one("SELECT COUNT(*) FROM FP8SCOPE_KERNEL WHERE correlationId IN "
                   "(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME)")
    api = one("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME")
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    own = one("SELECT COUNT(*) FROM FP8SCOPE_COLLECTOR_WORK") if "FP8SCOPE_COLLECTOR_WORK" in tables else None
    top = db.execute("SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s "
                     "ON s.id = r.nameId GROUP BY 1 ORDER BY 2 DESC LIMIT 5").fetchall()
    return {"trace": str(path), "kernels": kernels, "kernels_with_launch": launched, "api_rows": api,
            "api_per_kernel": round(api / kernels, 3) if kernels else None, "collector_work": own,
            "top_api": top}


if __name__ == "__main__":
    for trace in sys.argv[1:]:
        try:
            print(json.dumps(rows(trace)), flush=True)
        except sqlite3.Error as error:
            print(json.dumps({"trace": trace, "error": str(error)}), flush=True)
