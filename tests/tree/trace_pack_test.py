#!/usr/bin/env python3
"""scripts/trace_pack.py on a database built to be awkward (tests/tree/CMakeLists.txt, tree_trace_pack_roundtrip):
every SQLite type in one column, TEXT that is not UTF-8, infinities and a subnormal, 64-bit extremes (whose differences
overflow 64 bits), NULLs, a blob, a table without rowid, rowids with gaps, a view, an index, a trigger and the
pragmas; then the packed archive must unpack to the same rows, value by value and type by type, and a damaged
archive must fail with one line and exit 2. Prints what it checked; exits 1 on the first difference."""
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "trace_pack.py"
sys.path.insert(0, str(SCRIPT.parent))
import trace_pack  # noqa: E402

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def build(path):
    db = sqlite3.connect(path)
    db.executescript("""
        PRAGMA page_size = 8192;
        PRAGMA user_version = 65543;
        PRAGMA application_id = 1718185061;
        CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, r REAL, s TEXT, b BLOB, any_value ANY);
        CREATE TABLE kv (key TEXT NOT NULL, value ANY, PRIMARY KEY (key)) WITHOUT ROWID;
        CREATE TABLE plain (a, b);
        CREATE INDEX t_n ON t (n);
        CREATE VIEW v AS SELECT id, n * 2 AS twice FROM t;
        CREATE TRIGGER plain_no_insert AFTER INSERT ON plain BEGIN SELECT RAISE(ABORT, 'fired'); END;
    """)
    rows = [
        (1, 0, 0.0, "", b"", None),
        (2, INT64_MAX, -0.0, "héllo", b"\x00\x01\xff", 42),
        (3, INT64_MIN, float("inf"), "x" * 300, None, 1.5),
        (7, -1, float("-inf"), None, b"blob" * 100, "text in ANY"),
        (1000, None, 1e-310, "tab\tnewline\n", b"\xfe", b"raw"),
        (INT64_MAX, 5, 3.141592653589793, "end", None, None),
    ]
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", rows)
    # TEXT that is not valid UTF-8 (a trace is untrusted input: the loader's valid_utf8 exists for such values).
    db.execute("INSERT INTO t (id, s) VALUES (8, CAST(x'c328ff' AS TEXT))")
    db.executemany("INSERT INTO kv VALUES (?, ?)", [("b", 2), ("a", "one"), ("c", None)])
    db.execute("DROP TRIGGER plain_no_insert")
    db.executemany("INSERT INTO plain (rowid, a, b) VALUES (?, ?, ?)", [(5, 1, "x"), (9, 2.5, None), (10, None, b"y")])
    db.execute("CREATE TRIGGER plain_no_insert AFTER INSERT ON plain BEGIN SELECT RAISE(ABORT, 'fired'); END")
    db.commit()
    db.close()


def main():
    with tempfile.TemporaryDirectory() as scratch:
        original = os.path.join(scratch, "awkward.sqlite")
        archive = original + ".pack"
        build(original)
        packed = subprocess.run([sys.executable, str(SCRIPT), "pack", original], capture_output=True, text=True)
        if packed.returncode != 0:
            print(f"FAIL: pack exited {packed.returncode}: {packed.stderr.strip()}")
            return 1
        unpacked = os.path.join(scratch, "unpacked.sqlite")
        trace_pack.unpack(archive, unpacked)
        problem = trace_pack.differences(original, unpacked)
        if problem:
            print(f"FAIL: the unpacked database differs: {problem}")
            return 1
        db = sqlite3.connect(unpacked)
        checks = {
            "the non-UTF-8 text kept its bytes and type": db.execute(
                "SELECT typeof(s), hex(s) FROM t WHERE id = 8").fetchone() == ("text", "C328FF"),
            "the ANY column kept each value's type": [r[0] for r in db.execute(
                "SELECT typeof(any_value) FROM t ORDER BY id")] == ["null", "integer", "real", "text", "null",
                                                                     "blob", "null"],
            "the view reads": db.execute("SELECT count(*) FROM v").fetchone()[0] == 7,
            "the index is there": db.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 't_n'").fetchone()[0] == 1,
            "the trigger is there and did not fire on the restore": db.execute(
                "SELECT count(*) FROM plain").fetchone()[0] == 3,
            "page_size kept": db.execute("PRAGMA page_size").fetchone()[0] == 8192,
        }
        db.close()
        for what, ok in checks.items():
            print(f"{'ok' if ok else 'FAIL'}: {what}")
        if not all(checks.values()):
            return 1
        # A damaged archive: one line on stderr, exit 2, no traceback and no unpacked file.
        data = Path(archive).read_bytes()
        for name, damaged in (("truncated", data[: len(data) // 2]), ("not a pack", b"hello\n" + data[6:])):
            broken = os.path.join(scratch, f"{name.replace(' ', '-')}.sqlite.pack")
            Path(broken).write_bytes(damaged)
            result = subprocess.run([sys.executable, str(SCRIPT), "unpack", broken], capture_output=True, text=True)
            lines = result.stderr.strip().splitlines()
            ok = result.returncode == 2 and len(lines) == 1 and not os.path.exists(broken[: -len(".pack")])
            print(f"{'ok' if ok else 'FAIL'}: a {name} archive: exit {result.returncode}, stderr {lines}")
            if not ok:
                return 1
        size = os.path.getsize(archive)
        print(f"ok: {os.path.getsize(original)} bytes of SQLite packed to {size} bytes and back, value by value")
    return 0


if __name__ == "__main__":
    sys.exit(main())
