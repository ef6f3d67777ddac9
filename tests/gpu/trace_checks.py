#!/usr/bin/env python3
"""Reads an fp8scope trace with Python's sqlite3 and compares it with a sample's FP8SCOPE_GROUND_TRUTH.

Table and column names follow docs/trace-format.md. Kernels are read from FP8SCOPE_KERNEL joined with
FP8SCOPE_KERNEL_CONFIG (as the analyzer does), not through the CUPTI_ACTIVITY_KIND_KERNEL view.

  trace_checks.py summary TRACE              print what the trace holds (JSON)
  trace_checks.py compare TRACE TRUTH.json   compare with a ground-truth object; exit 0 when every hard check passes

Exit codes: 0 ok, 1 a hard check failed, 2 usage error, 3 the trace could not be read.
"""

import json
import sqlite3
import sys
from collections import Counter

# CUPTI_ACTIVITY_KIND_SYNCHRONIZATION.syncType (ENUM_CUPTI_SYNC_TYPE) for each ground-truth field.
SYNC_TYPES = {"event": 1, "stream_wait_event": 2, "stream": 3, "device": 4}
MEMCPY_HTOD, MEMCPY_DTOH = 1, 2
NVTX_PUSHPOP_RANGE = 59


def open_ro(path):
    """Read-only, as a reader of an untrusted file should; works for unfinished WAL traces left by SIGKILL."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)


def _tables(db):
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def summarize(path):
    """Everything the checks need, as plain data. Raises sqlite3.Error on an unreadable file."""
    db = open_ro(path)
    try:
        tables = _tables(db)
        meta = {key: value for key, value in db.execute("SELECT key, value FROM FP8SCOPE_META")}
        strings = dict(db.execute("SELECT id, value FROM StringIds"))
        s = {"path": str(path), "meta": meta, "tables_missing": []}

        names = {"demangled": Counter(), "short": Counter(), "mangled": Counter()}
        triplets = Counter()  # (demangled, short, mangled) -> kernels
        by_stream = Counter()
        graph_kernels = 0
        total = 0
        if {"FP8SCOPE_KERNEL", "FP8SCOPE_KERNEL_CONFIG"} <= tables:
            query = (
                "SELECT c.demangledName, c.shortName, c.mangledName, k.streamId, k.graphId != 0, COUNT(*) "
                "FROM FP8SCOPE_KERNEL AS k JOIN FP8SCOPE_KERNEL_CONFIG AS c ON c.id = k.configId "
                "GROUP BY 1, 2, 3, 4, 5"
            )
            for dem, short, mang, stream, in_graph, n in db.execute(query):
                triplet = tuple(strings.get(i, f"<dangling {i}>") for i in (dem, short, mang))
                triplets[triplet] += n
                for kind, text in zip(("demangled", "short", "mangled"), triplet):
                    names[kind][text] += n
                by_stream[stream] += n
                graph_kernels += n if in_graph else 0
                total += n
            s["kernel_rows_without_config"] = db.execute(
                "SELECT COUNT(*) FROM FP8SCOPE_KERNEL WHERE configId NOT IN (SELECT id FROM FP8SCOPE_KERNEL_CONFIG)"
            ).fetchone()[0]
        else:
            s["tables_missing"].append("FP8SCOPE_KERNEL/FP8SCOPE_KERNEL_CONFIG")
        s["kernels"] = total
        s["kernels_by_name"] = {kind: dict(c) for kind, c in names.items()}
        s["kernel_names"] = [[*t, n] for t, n in sorted(triplets.items())]
        s["kernels_by_stream"] = {str(k): v for k, v in sorted(by_stream.items())}
        s["graph_kernels"] = graph_kernels

        def grouped(table, column):
            if table not in tables:
                s["tables_missing"].append(table)
                return {}
            return {k: n for k, n in db.execute(f"SELECT {column}, COUNT(*) FROM {table} GROUP BY 1")}

        s["syncs_by_type"] = grouped("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "syncType")
        s["memcpy_by_kind"] = grouped("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind")
        s["memsets"] = sum(grouped("CUPTI_ACTIVITY_KIND_MEMSET", "1").values())
        # Copies by the API call that issued them (joined on correlationId): tells cudaMemcpy from cudaMemcpyAsync.
        s["memcpy_by_api"] = {}
        if {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME"} <= tables:
            query = (
                "SELECT m.copyKind, r.nameId, COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m "
                "LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = m.correlationId GROUP BY 1, 2"
            )
            for kind, name_id, n in db.execute(query):
                key = f"{kind}:{strings.get(name_id, '<no API row>')}"
                s["memcpy_by_api"][key] = s["memcpy_by_api"].get(key, 0) + n
        api = Counter()
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
            for name_id, n in db.execute("SELECT nameId, COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1"):
                api[strings.get(name_id, f"<dangling {name_id}>")] += n
        s["api_calls"] = dict(api)

        nvtx = Counter()
        s["nvtx_open_ranges"] = 0
        s["nvtx_ranges_ns"] = {}
        if "NVTX_EVENTS" in tables:
            query = "SELECT text, textId, eventType, start, \"end\" FROM NVTX_EVENTS ORDER BY start"
            for text, text_id, event_type, start, end in db.execute(query):
                name = text if text is not None else strings.get(text_id, f"<textId {text_id}>")
                nvtx[f"{event_type}:{name}"] += 1
                if end is None:
                    s["nvtx_open_ranges"] += 1
                s["nvtx_ranges_ns"].setdefault(name, []).append([start, end])
        else:
            s["tables_missing"].append("NVTX_EVENTS")
        s["nvtx"] = dict(nvtx)

        if "FP8SCOPE_DROPPED" in tables:
            s["dropped"] = db.execute("SELECT COALESCE(SUM(count), 0) FROM FP8SCOPE_DROPPED").fetchone()[0]
        else:
            s["tables_missing"].append("FP8SCOPE_DROPPED")
            s["dropped"] = None
        s["runtime_rows"] = sum(api.values())
        return s
    finally:
        db.close()


def nvtx_count(summary, name):
    return summary["nvtx"].get(f"{NVTX_PUSHPOP_RANGE}:{name}", 0)


def api_count(summary, prefix):
    """Calls of one API, whatever its version suffix (cudaLaunchKernel_v7000) or _ptsz/_ptds variant."""
    return sum(n for name, n in summary["api_calls"].items() if name == prefix or name.startswith(prefix + "_"))


def kernel_count_by_name(summary, name):
    """A kernel's count under whichever of the three name columns holds exactly this name."""
    for kind in ("short", "demangled", "mangled"):
        if name in summary["kernels_by_name"][kind]:
            return summary["kernels_by_name"][kind][name]
    return 0


def check(results, name, ok, detail, hard=True):
    results.append({"check": name, "ok": bool(ok), "hard": hard, "detail": detail})


def common_checks(summary, results):
    """What every finished trace must satisfy, whatever ran."""
    check(results, "finished", summary["meta"].get("finished") == 1,
          f"finished={summary['meta'].get('finished')} reason={summary['meta'].get('finish_reason')}")
    dropped = summary["dropped"]
    check(results, "no dropped records", dropped == 0,
          f"sum(FP8SCOPE_DROPPED.count)={dropped} meta dropped_records={summary['meta'].get('dropped_records')}")
    check(results, "no missing tables", not summary["tables_missing"], f"missing={summary['tables_missing']}")


def compare_cuda_sample(summary, truth):
    """Hard checks: counts whose CUPTI mapping is certain. Soft checks (hard=False): reported, never failing."""
    results = []
    common_checks(summary, results)
    check(results, "kernels total", summary["kernels"] == truth["kernels"],
          f"trace {summary['kernels']} truth {truth['kernels']}")
    for name, expected in sorted(truth.get("kernels_by_name", {}).items()):
        got = kernel_count_by_name(summary, name)
        check(results, f"kernels {name}", got == expected, f"trace {got} truth {expected}")
    for field, sync_type in SYNC_TYPES.items():
        expected = truth.get("syncs", {}).get(field, 0)
        got = summary["syncs_by_type"].get(sync_type, 0)
        check(results, f"syncs {field} (syncType {sync_type})", got == expected, f"trace {got} truth {expected}")
    others = {k: v for k, v in summary["syncs_by_type"].items() if k not in SYNC_TYPES.values()}
    check(results, "no other sync types", not others, f"other syncType counts {others}")
    memcpy = truth.get("memcpy", {})
    dtoh = memcpy.get("dtoh_blocking", 0) + memcpy.get("async_pageable", 0)
    got = summary["memcpy_by_kind"].get(MEMCPY_DTOH, 0)
    check(results, "memcpy DtoH", got == dtoh, f"trace {got} truth {dtoh} (blocking + async to pageable)")
    got = summary["memcpy_by_kind"].get(MEMCPY_HTOD, 0)
    check(results, "memcpy HtoD", got == memcpy.get("htod", 0), f"trace {got} truth {memcpy.get('htod', 0)}")
    total = sum(summary["memcpy_by_kind"].values())
    check(results, "memcpy total", total == dtoh + memcpy.get("htod", 0), f"trace {total} by kind "
          f"{summary['memcpy_by_kind']}")
    check(results, "memset", summary["memsets"] == truth.get("memset", 0),
          f"trace {summary['memsets']} truth {truth.get('memset', 0)}")
    range_name = truth.get("nvtx_step_range", "train_step")
    got = nvtx_count(summary, range_name)
    check(results, f"nvtx ranges {range_name}", got == truth.get("nvtx_ranges", 0),
          f"trace {got} truth {truth.get('nvtx_ranges', 0)} (all NVTX: {summary['nvtx']})")
    soft_checks(summary, truth, results)
    return results


def soft_checks(summary, truth, results):
    """Fields whose mapping to CUPTI records is plausible but not certain: reported, not failed."""
    def soft(name, got, expected):
        check(results, name, got == expected, f"trace {got} truth {expected}", hard=False)

    async_rows = sum(n for k, n in summary["memcpy_by_api"].items() if k.startswith(f"{MEMCPY_DTOH}:cudaMemcpyAsync"))
    soft("memcpy async DtoH (by API name)", async_rows, truth.get("memcpy", {}).get("async_pageable", 0))
    soft("cudaLaunchKernel calls", api_count(summary, "cudaLaunchKernel"), truth.get("kernel_launch_calls", 0))
    soft("cudaGraphLaunch calls", api_count(summary, "cudaGraphLaunch"), truth.get("graph_launches", 0))
    soft("cudaEventRecord calls", api_count(summary, "cudaEventRecord"), truth.get("event_records", 0))
    soft("cudaLaunchHostFunc calls", api_count(summary, "cudaLaunchHostFunc"), truth.get("host_funcs", 0))
    if "graph_kernels" in truth:
        soft("kernels with a graphId", summary["graph_kernels"], truth["graph_kernels"])
    if "kernels_per_stream" in truth:
        soft("kernels per stream (sorted)", sorted(summary["kernels_by_stream"].values()),
             sorted(truth["kernels_per_stream"]))
    # Clock agreement: each NVTX step range, moved to UTC by session_start_utc_ns, should lie within the
    # CLOCK_REALTIME bounds the sample took just outside it (a few us of slack for clock reads).
    start_utc = summary["meta"].get("session_start_utc_ns")
    ranges = summary["nvtx_ranges_ns"].get(truth.get("nvtx_step_range", "train_step"), [])
    steps = truth.get("step_ns", [])
    if isinstance(start_utc, int) and steps and len(ranges) == len(steps):
        slack_ns = 50_000
        worst = 0
        for (r_start, r_end), (h_start, h_end) in zip(ranges, steps):
            r_end = r_start if r_end is None else r_end
            worst = max(worst, h_start - (r_start + start_utc), (r_end + start_utc) - h_end)
        check(results, "NVTX step ranges inside the host's step bounds", worst <= slack_ns,
              f"largest excursion {worst} ns (slack {slack_ns} ns)", hard=False)


def main(argv):
    if len(argv) < 2 or argv[0] not in ("summary", "compare") or (argv[0] == "compare" and len(argv) != 3):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        summary = summarize(argv[1])
    except sqlite3.Error as error:
        print(f"trace_checks: cannot read '{argv[1]}': {error}", file=sys.stderr)
        return 3
    if argv[0] == "summary":
        print(json.dumps(summary, indent=1, default=str))
        return 0
    with open(argv[2]) as f:
        truth = json.load(f)
    results = compare_cuda_sample(summary, truth)
    for r in results:
        print(f"{'ok  ' if r['ok'] else ('FAIL' if r['hard'] else 'note')} {r['check']}: {r['detail']}")
    return 0 if all(r["ok"] for r in results if r["hard"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
