"""Writes fake fp8scope traces for testing the GPU scripts on a machine without a GPU.

The schema is cloned from samples/traces/scenario-demo.sqlite (written by the real writer), so the checks run
against the real table and column names. Rows follow a ground-truth object as a perfect collector would write
them; `spoil` changes some counts so that the checks can be seen failing.
"""

import os
import shutil
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sample_traces import sample_trace  # noqa: E402  (tests/gpu/: unpacks the committed .sqlite.xz if needed)

TEMPLATE = sample_trace("scenario-demo.sqlite")
ENUM_PREFIX = "ENUM_"


def create_empty(path, wal=False):
    """A trace with every table and enum of the template but no rows; meta finished=0."""
    shutil.copyfile(TEMPLATE, path)
    db = sqlite3.connect(path)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        if not table.startswith(ENUM_PREFIX):
            db.execute(f'DELETE FROM "{table}"')
    db.executemany("INSERT INTO FP8SCOPE_META(key, value) VALUES (?, ?)", [
        ("schema_version", "1.0"), ("producer", "fake_trace.py"), ("pid", os.getpid()),
        ("global_pid", os.getpid() << 24), ("session_start_utc_ns", 0), ("finished", 0)])
    db.commit()
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    return db


class Writer:
    def __init__(self, db):
        self.db = db
        self.strings = {}
        self.correlation = 0
        self.t = 1000
        self.configs = {}

    def string(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.db.execute("INSERT INTO StringIds(id, value) VALUES (?, ?)", (self.strings[text], text))
        return self.strings[text]

    def api(self, name):
        self.correlation += 1
        self.t += 10
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?, 0)",
                        (self.t, self.t + 5, os.getpid() << 24, self.correlation, self.string(name)))
        return self.correlation

    def kernel(self, name, stream=7, graph=0):
        corr = self.api("cudaGraphLaunch_v10000" if graph else "cudaLaunchKernel_v7000")
        if name not in self.configs:
            self.configs[name] = len(self.configs) + 1
            sid = self.string(name)
            self.db.execute("INSERT INTO FP8SCOPE_KERNEL_CONFIG VALUES (?, ?, ?, ?, 1,1,1, 1,1,1, 0,0,0, 16, 0,0,0,0,0, 0)",
                            (self.configs[name], sid, sid, sid))
        self.db.execute("INSERT INTO FP8SCOPE_KERNEL(start, duration, deviceId, contextId, streamId, correlationId, "
                        "configId, graphId, graphNodeId) VALUES (?, 1000, 0, 1, ?, ?, ?, ?, ?)",
                        (self.t + 20, stream, corr, self.configs[name], graph, graph))

    def sync(self, sync_type):
        corr = self.api("cudaStreamSynchronize_v3020")
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?, ?, 0, 1, NULL, ?, ?, ?, NULL, NULL)",
                        (self.t, self.t + 3, corr, os.getpid() << 24, sync_type))

    def memcpy(self, kind, api_name):
        corr = self.api(api_name)
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 1, 7, ?, ?, 8, ?, 2, 0, 0, NULL, 0)",
                        (self.t, self.t + 2, corr, os.getpid() << 24, kind))

    def memset(self):
        corr = self.api("cudaMemset_v3020")
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, 0, 1, 7, ?, ?, 0, 8, 2, 0)",
                        (self.t, self.t + 2, corr, os.getpid() << 24))

    def nvtx(self, text):
        self.db.execute("INSERT INTO NVTX_EVENTS(start, \"end\", eventType, text, globalTid) VALUES (?, ?, 59, ?, ?)",
                        (self.t, self.t + 100, text, os.getpid() << 24))

    def dropped(self, count):
        self.db.execute("INSERT INTO FP8SCOPE_DROPPED VALUES (?, 0, ?, 0)", (self.t, count))

    def finish(self, reason="exit"):
        meta = [("finished", 1), ("finish_reason", reason), ("session_end_ns", self.t),
                ("dropped_records", self.db.execute("SELECT COALESCE(SUM(count), 0) FROM FP8SCOPE_DROPPED").fetchone()[0])]
        self.db.executemany("INSERT OR REPLACE INTO FP8SCOPE_META(key, value) VALUES (?, ?)", meta)
        self.db.commit()


def from_truth(path, truth, spoil=(), finish_reason="exit"):
    """A finished trace holding exactly what `truth` says ran. spoil: names of counts to get wrong."""
    w = Writer(create_empty(path))
    graph_kernels = truth.get("graph_kernels", 0)
    for name, n in truth.get("kernels_by_name", {}).items():
        n += 1 if "kernels" in spoil else 0
        for i in range(n):
            w.kernel(name, graph=1 if i < graph_kernels // max(1, len(truth["kernels_by_name"])) else 0)
    for field, sync_type in (("event", 1), ("stream_wait_event", 2), ("stream", 3), ("device", 4)):
        for _ in range(truth.get("syncs", {}).get(field, 0) + (1 if "syncs" in spoil and field == "event" else 0)):
            w.sync(sync_type)
    memcpy = truth.get("memcpy", {})
    for _ in range(memcpy.get("dtoh_blocking", 0)):
        w.memcpy(2, "cudaMemcpy_v3020")
    for _ in range(memcpy.get("async_pageable", 0)):
        w.memcpy(2, "cudaMemcpyAsync_v3020")
    for _ in range(memcpy.get("htod", 0)):
        w.memcpy(1, "cudaMemcpy_v3020")
    for _ in range(truth.get("memset", 0)):
        w.memset()
    for _ in range(truth.get("nvtx_ranges", truth.get("steps", 0))):
        w.nvtx(truth.get("nvtx_step_range", "train_step"))
    if "dropped" in spoil:
        w.dropped(5)
    w.finish(finish_reason)
    w.db.close()


def from_kernel_counts(path, kernels_by_name, steps):
    """A finished trace of a torch run: kernels by (demangled) name and one NVTX range per step."""
    w = Writer(create_empty(path))
    for name, n in kernels_by_name.items():
        for _ in range(n):
            w.kernel(name)
    for _ in range(steps):
        w.nvtx("train_step")
    w.finish()
    w.db.close()
