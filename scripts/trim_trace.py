#!/usr/bin/env python3
"""Cut an fp8scope trace to its first steps (issue 46 item 6: a smaller tracked tree).

    scripts/trim_trace.py IN.sqlite OUT.sqlite --steps N      # keep steps 0..N-1 (the job's step markers)
    scripts/trim_trace.py IN.sqlite OUT.sqlite --cut-ns T     # keep what the host began before T (trace clock)

The cut is a host time T: with --steps N, the timestamp of the job's first step marker numbered N or more
(FP8SCOPE_STEP_MARKER rows of the job's own mark each step's start on the host; the optimizer hook's mark its end
and are not used); without markers, pass T yourself (for instance the
host start of the first step to drop, from `fp8scope report TRACE --format json`). Then:

  * host rows (CUPTI_ACTIVITY_KIND_RUNTIME, _SYNCHRONIZATION, NVTX_EVENTS, FP8SCOPE_STEP_MARKER, FP8SCOPE_SCALAR,
    FP8SCOPE_SCALAR_NAN, FP8SCOPE_OVERHEAD, FP8SCOPE_DROPPED) are kept when they begin before T;
  * device rows (FP8SCOPE_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, _MEMSET) are kept when the API call that launched them
    (same correlationId) is kept, so a step's work that the GPU ran after T stays with it; FP8SCOPE_KERNEL_LATENCY
    follows its kernel, FP8SCOPE_COLLECTOR_WORK its API call;
  * tensor statistics (FP8SCOPE_TENSOR_STATS, FP8SCOPE_BLOCK_STATS) are kept when their step is below N (with
    --steps), else when their API call is kept, else when their timestamp is before T;
  * tables that describe rather than record (StringIds, FP8SCOPE_KERNEL_CONFIG, FP8SCOPE_TENSOR_SITE, TARGET_INFO_*,
    ThreadNames, ENUM_*) are kept whole; a trace with rows in any other table (an Nsight Systems export, capture
    windows) is refused;
  * FP8SCOPE_META: every row_count.<TABLE> is set to the table's real count (the loader checks them),
    session_end_ns to the end of the last row kept, tensor_stats_skipped (the statistics cap's skipped samples, the
    same number each sampled step) in proportion to the sampled steps kept, dropped_records to what FP8SCOPE_DROPPED
    still holds; a row `trimmed` says what was cut.

The file is then VACUUMed. Store it in git with `scripts/trace_pack.py pack OUT.sqlite` (samples/traces/README.md). Python 3's
standard library only.
"""
import argparse
import os
import shutil
import sqlite3
import sys

HOST_TABLES = {  # table: the column of its (host) start time
    "CUPTI_ACTIVITY_KIND_RUNTIME": "start",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": "start",
    "NVTX_EVENTS": "start",
    "FP8SCOPE_STEP_MARKER": "timestamp",
    "FP8SCOPE_SCALAR": "timestamp",
    "FP8SCOPE_SCALAR_NAN": "timestamp",
    "FP8SCOPE_OVERHEAD": "start",
    "FP8SCOPE_DROPPED": "timestamp",
}
DEVICE_TABLES = ["FP8SCOPE_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"]
END_COLUMNS = {  # table: an expression for a row's end, for session_end_ns
    "CUPTI_ACTIVITY_KIND_RUNTIME": '"end"',
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": '"end"',
    "CUPTI_ACTIVITY_KIND_MEMCPY": '"end"',
    "CUPTI_ACTIVITY_KIND_MEMSET": '"end"',
    "FP8SCOPE_KERNEL": "start + duration",
    "NVTX_EVENTS": 'coalesce("end", start)',
    "FP8SCOPE_STEP_MARKER": "timestamp",
    "FP8SCOPE_SCALAR": "timestamp",
    "FP8SCOPE_TENSOR_STATS": "timestamp",
    "FP8SCOPE_BLOCK_STATS": "timestamp",
    "FP8SCOPE_OVERHEAD": '"end"',
}


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def count(db, table):
    return db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]


def meta(db, key):
    row = db.execute("SELECT value FROM FP8SCOPE_META WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(db, key, value):
    db.execute("INSERT OR REPLACE INTO FP8SCOPE_META (key, value) VALUES (?, ?)", (key, value))


def cut_time(db, steps):
    # The job's own markers (source JOB, or no source column before schema 1.7) mark a step's start; the optimizer
    # hook's mark its end, so they do not give a cut: pass --cut-ns for a job without markers of its own.
    columns = {r[1] for r in db.execute("PRAGMA table_info(FP8SCOPE_STEP_MARKER)")}
    job = "(source IS NULL OR source = 0)" if "source" in columns else "1"
    row = db.execute(f"SELECT min(timestamp) FROM FP8SCOPE_STEP_MARKER WHERE {job} AND step >= ?", (steps,)).fetchone()
    if row[0] is None:
        sys.exit(f"trim_trace: no step marker of the job's numbered {steps} or more: nothing to cut")
    return row[0]


# Tables that describe rather than record, kept whole; any other table with rows must be one this script cuts.
DESCRIPTIVE = {"StringIds", "FP8SCOPE_META", "FP8SCOPE_KERNEL_CONFIG", "FP8SCOPE_TENSOR_SITE", "ThreadNames",
               "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME"}
STATS_TABLES = ["FP8SCOPE_TENSOR_STATS", "FP8SCOPE_BLOCK_STATS"]


def sampled_steps(db):
    return {r[0] for r in db.execute("SELECT DISTINCT step FROM FP8SCOPE_TENSOR_STATS WHERE step IS NOT NULL")}


def trim(path, steps, cut_ns):
    db = sqlite3.connect(path)
    present = tables(db)
    if "FP8SCOPE_META" not in present:
        sys.exit(f"trim_trace: {path} is not an fp8scope trace (no FP8SCOPE_META)")
    if cut_ns is None:
        cut_ns = cut_time(db, steps)
    before = {t: count(db, t) for t in sorted(present)}
    known = DESCRIPTIVE | set(HOST_TABLES) | set(DEVICE_TABLES) | set(STATS_TABLES) | {
        "FP8SCOPE_KERNEL_LATENCY", "FP8SCOPE_COLLECTOR_WORK", "FP8SCOPE_CAPTURE_WINDOW"}
    unknown = [t for t in present if before[t] and t not in known and not t.startswith("ENUM_")]
    if unknown:
        sys.exit(f"trim_trace: {path} has rows in tables this script does not know how to cut: {unknown}")
    if "FP8SCOPE_CAPTURE_WINDOW" in present and before["FP8SCOPE_CAPTURE_WINDOW"]:
        sys.exit(f"trim_trace: {path} has capture windows, which this script does not cut")
    sampled_before = sampled_steps(db) if "FP8SCOPE_TENSOR_STATS" in present else set()

    for table, column in HOST_TABLES.items():
        if table in present:
            db.execute(f'DELETE FROM "{table}" WHERE "{column}" >= ?', (cut_ns,))
    kept_calls = "(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME)"
    for table in DEVICE_TABLES:
        if table in present:
            db.execute(f'DELETE FROM "{table}" WHERE correlationId NOT IN {kept_calls}')
    if "FP8SCOPE_KERNEL_LATENCY" in present:
        db.execute("DELETE FROM FP8SCOPE_KERNEL_LATENCY WHERE kernelId NOT IN (SELECT id FROM FP8SCOPE_KERNEL)")
    if "FP8SCOPE_COLLECTOR_WORK" in present:
        db.execute(f"DELETE FROM FP8SCOPE_COLLECTOR_WORK WHERE correlationId NOT IN {kept_calls}")
    for table in STATS_TABLES:  # FP8SCOPE_BLOCK_STATS has no correlationId: its step, else its timestamp
        if table not in present:
            continue
        has_call = "correlationId" in {r[1] for r in db.execute(f'PRAGMA table_info("{table}")')}
        by_call = f"correlationId IS NOT NULL AND correlationId NOT IN {kept_calls}" if has_call else "0"
        by_time = f"{'correlationId IS NULL AND ' if has_call else ''}timestamp >= {int(cut_ns)}"
        outside = f"(({by_call}) OR ({by_time}))"
        if steps is not None:
            db.execute(f'DELETE FROM "{table}" WHERE step >= ?', (steps,))
            db.execute(f'DELETE FROM "{table}" WHERE step IS NULL AND {outside}')
        else:
            db.execute(f'DELETE FROM "{table}" WHERE {outside}')

    after = {t: count(db, t) for t in sorted(present)}
    for key, value in list(db.execute("SELECT key, value FROM FP8SCOPE_META WHERE key LIKE 'row_count.%'")):
        table = key[len("row_count."):]
        if table in after:
            set_meta(db, key, after[table])
    ends = [db.execute(f'SELECT max({expr}) FROM "{t}"').fetchone()[0] for t, expr in END_COLUMNS.items() if t in present]
    ends = [e for e in ends if e is not None]
    if ends and meta(db, "session_end_ns") is not None:
        set_meta(db, "session_end_ns", max(ends))
    skipped = meta(db, "tensor_stats_skipped")
    if skipped and sampled_before:
        kept = len(sampled_steps(db))
        value = int(skipped) * kept // len(sampled_before)
        if int(skipped) * kept % len(sampled_before):
            print(f"trim_trace: tensor_stats_skipped {skipped} does not divide over {len(sampled_before)} sampled "
                  f"steps; rounded down", file=sys.stderr)
        set_meta(db, "tensor_stats_skipped", value)
    if "FP8SCOPE_DROPPED" in present and meta(db, "dropped_records") is not None:
        set_meta(db, "dropped_records", db.execute("SELECT coalesce(sum(count), 0) FROM FP8SCOPE_DROPPED").fetchone()[0])
    what = f"the first {steps} steps (0-{steps - 1})" if steps is not None else f"what began before {cut_ns} ns"
    set_meta(db, "trimmed", f"scripts/trim_trace.py kept {what}: host rows before {cut_ns} ns, the device work "
                            f"they launched")
    db.commit()
    db.execute("VACUUM")
    db.close()
    return cut_ns, before, after


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--steps", type=int, help="keep the steps numbered below this (step markers)")
    group.add_argument("--cut-ns", type=int, help="keep the host rows that begin before this time")
    args = parser.parse_args()
    if os.path.abspath(args.input) != os.path.abspath(args.output):
        shutil.copyfile(args.input, args.output)
    cut_ns, before, after = trim(args.output, args.steps, args.cut_ns)
    print(f"{args.output}: cut at {cut_ns} ns")
    for table in before:
        if before[table] != after[table]:
            print(f"  {table}: {before[table]} -> {after[table]}")


if __name__ == "__main__":
    main()
