#!/usr/bin/env python3
"""Pack an SQLite trace column by column for git, and unpack it again (issue 46 item 6: a smaller tracked tree).

    scripts/trace_pack.py pack TRACE.sqlite [ARCHIVE]     # writes ARCHIVE (default TRACE.sqlite.pack), then checks it
    scripts/trace_pack.py unpack ARCHIVE [TRACE.sqlite]   # default: ARCHIVE without its .pack
    scripts/trace_pack.py check ARCHIVE TRACE.sqlite      # exit 0 when ARCHIVE unpacks to TRACE's rows and schema
    scripts/trace_pack.py unpack-all ARCHIVE...           # each beside itself, without .pack, on every core

xz of the SQLite file keeps its b-tree pages: each row's values side by side, absolute times and ids. This format
stores each table's columns one after another instead, integers as the difference from the previous row (a kernel's
start, an id: small numbers), reals byte-plane by byte-plane, then xz over the whole: about half the size of the
.sqlite.xz of the same trace. Unpacking gives the same database to the value: every object of sqlite_master with its
SQL (tables and views in their order, then indexes and triggers), every row with its rowid, every value with its SQLite type
(TEXT as its bytes, valid UTF-8 or not) and its bits (a REAL's sign of zero), and PRAGMA user_version, application_id
and page_size. The pages themselves are new (the file is not byte-identical, nor needs to be: readers read rows).

`pack` unpacks what it wrote and compares it with the original (`check`), and removes the archive when they differ.
Python 3's standard library only (sqlite3, lzma): CMake's configure unpacks every archive with it
(cmake/Fp8scopeSampleTraces.cmake), as the GPU scripts do (tests/gpu/sample_traces.py).

Archive: the line b"fp8scope trace pack 1\\n", then one xz stream of: a 4-byte little-endian length, a JSON header
(pragmas, the schema's objects, each table's name, columns, row count and section sizes), and the sections, one per
column of each table in order: the row's kinds (one byte each: 0 NULL, 1 INTEGER, 2 REAL, 3 TEXT, 4 BLOB), the
integers (zigzag varints of each one's difference from the previous integer of the column), the reals (8-byte
little-endian doubles, first bytes of all, then second bytes, ...) and the texts and blobs (varint length, bytes).
Exit codes: 0 done, 1 a check found a difference, 2 usage or I/O error (one line on stderr).
"""
import json
import lzma
import os
import sqlite3
import struct
import sys

MAGIC = b"fp8scope trace pack 1\n"
NULL, INTEGER, REAL, TEXT, BLOB = 0, 1, 2, 3, 4
KINDS = {"null": NULL, "integer": INTEGER, "real": REAL, "text": TEXT, "blob": BLOB}
PRAGMAS = ("user_version", "application_id", "page_size")


class PackError(Exception):
    pass


def _quote(name):
    return '"' + name.replace('"', '""') + '"'


def _varint(out, value):
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varints(data, count, at=0):
    """`count` varints from data[at:], and the offset after them."""
    values = []
    append = values.append
    for _ in range(count):
        value = shift = 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        append(value)
    return values, at


def _has_rowid(db, table):
    try:
        db.execute(f"SELECT rowid FROM {_quote(table)} LIMIT 0")
        return True
    except sqlite3.OperationalError:
        return False  # WITHOUT ROWID


def _encode_column(cells):
    """cells: [(typeof, value)] -> one section."""
    kinds = bytearray()
    ints, reals, blobs = bytearray(), [], bytearray()
    previous = 0
    for kind_name, value in cells:
        kind = KINDS[kind_name]
        kinds.append(kind)
        if kind == INTEGER:
            delta = value - previous
            previous = value
            _varint(ints, (delta << 1) if delta >= 0 else ((-delta << 1) - 1))
        elif kind == REAL:
            reals.append(struct.pack("<d", value))
        elif kind in (TEXT, BLOB):
            _varint(blobs, len(value))
            blobs += value
    planes = bytearray()
    for byte in range(8):
        planes += bytes(real[byte] for real in reals)
    out = bytearray(kinds)
    _varint(out, len(ints))
    out += ints
    out += planes
    out += blobs
    return bytes(out)


def _decode_column(section, rows):
    """One section -> [(kind, value)] of `rows` cells (TEXT as bytes)."""
    kinds = section[:rows]
    at = rows
    (ints_size,), at = _read_varints(section, 1, at)
    int_count = kinds.count(INTEGER)
    real_count = kinds.count(REAL)
    zigzags, end = _read_varints(section, int_count, at)
    if end != at + ints_size:
        raise PackError("an integer section does not end where its size says")
    at = end
    planes = section[at:at + 8 * real_count]
    at += 8 * real_count
    reals = [struct.unpack("<d", bytes(planes[b * real_count + i] for b in range(8)))[0] for i in range(real_count)]
    cells = []
    previous = 0
    next_int = next_real = 0
    for kind in kinds:
        if kind == INTEGER:
            zigzag = zigzags[next_int]
            next_int += 1
            previous += (zigzag >> 1) if not zigzag & 1 else -((zigzag + 1) >> 1)
            cells.append((kind, previous))
        elif kind == REAL:
            cells.append((kind, reals[next_real]))
            next_real += 1
        elif kind in (TEXT, BLOB):
            (size,), at = _read_varints(section, 1, at)
            cells.append((kind, bytes(section[at:at + size])))
            at += size
        elif kind == NULL:
            cells.append((kind, None))
        else:
            raise PackError(f"unknown value kind {kind}")
    if at != len(section):
        raise PackError("a column section has bytes left over")
    return cells


def _schema(db):
    """sqlite_master's objects with SQL, in order (internal autoindexes have none and come with their tables)."""
    return [[_text(value) for value in row] for row in db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value  # names and SQL (text_factory is bytes)


def _table_cells(db, table):
    """(columns, has_rowid, rows of [(typeof, value)]) in rowid (or key) order, TEXT as bytes."""
    columns = [_text(row[1]) for row in db.execute(f"PRAGMA table_xinfo({_quote(table)})") if row[6] == 0]  # generated columns are not stored
    rowid = _has_rowid(db, table)
    names = (["rowid"] if rowid else []) + columns
    select = ", ".join(f"typeof({c}), {c}" for c in (["rowid"] if rowid else []) + [_quote(c) for c in columns])
    order = " ORDER BY rowid" if rowid else ""
    rows = [[(_text(row[2 * i]), row[2 * i + 1]) for i in range(len(names))]
            for row in db.execute(f"SELECT {select} FROM {_quote(table)}{order}")]
    return names, rowid, rows


def _open(path, uri_mode="ro"):
    db = sqlite3.connect(f"file:{path}?mode={uri_mode}", uri=True)
    db.text_factory = bytes
    return db


def pack(trace, archive):
    db = _open(trace)
    try:
        header = {"pragmas": {p: db.execute(f"PRAGMA {p}").fetchone()[0] for p in PRAGMAS},
                  "schema": _schema(db), "tables": []}
        sections = []
        for kind, name, _, _ in header["schema"]:
            if kind != "table" or name.startswith("sqlite_"):
                continue
            columns, rowid, rows = _table_cells(db, name)
            table_sections = [_encode_column([row[i] for row in rows]) for i in range(len(columns))]
            header["tables"].append({"name": name, "columns": columns, "rowid": rowid, "rows": len(rows),
                                     "sections": [len(s) for s in table_sections]})
            sections += table_sections
    finally:
        db.close()
    head = json.dumps(header, separators=(",", ":")).encode()
    payload = struct.pack("<I", len(head)) + head + b"".join(sections)
    partial = f"{archive}.packing-{os.getpid()}"
    with open(partial, "wb") as out:
        out.write(MAGIC)
        out.write(lzma.compress(payload, preset=9 | lzma.PRESET_EXTREME))
    os.replace(partial, archive)


def _read_archive(archive):
    with open(archive, "rb") as source:
        if source.read(len(MAGIC)) != MAGIC:
            raise PackError(f"{archive} is not an fp8scope trace pack")
        try:
            payload = lzma.decompress(source.read())
        except lzma.LZMAError as error:
            raise PackError(f"{archive}: {error}") from error
    if len(payload) < 4:
        raise PackError(f"{archive} is truncated")
    (head_size,) = struct.unpack("<I", payload[:4])
    try:
        header = json.loads(payload[4:4 + head_size])
    except ValueError as error:
        raise PackError(f"{archive}: its header is not JSON ({error})") from error
    return header, payload[4 + head_size:]


def _bind(kind, value):
    """A value as sqlite3 binds it to the same type; TEXT that is not UTF-8 goes as bytes under CAST (see _insert)."""
    if kind == TEXT:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


def _insert(db, table, columns, cells_by_column, rows):
    names = ", ".join("rowid" if c == "rowid" and i == 0 else _quote(c) for i, c in enumerate(columns))
    plain = f"INSERT INTO {_quote(table)} ({names}) VALUES ({', '.join('?' * len(columns))})"
    batch = []
    for r in range(rows):
        row = [cells_by_column[c][r] for c in range(len(columns))]
        if any(kind == TEXT and isinstance(_bind(kind, value), bytes) for kind, value in row):
            # Bytes bind as a BLOB; CAST keeps them as they are and makes them TEXT, as they were.
            marks = ", ".join("CAST(? AS TEXT)" if kind == TEXT else "?" for kind, _ in row)
            db.execute(f"INSERT INTO {_quote(table)} ({names}) VALUES ({marks})", [v for _, v in row])
            continue
        batch.append([_bind(kind, value) for kind, value in row])
    db.executemany(plain, batch)


def unpack(archive, trace):
    header, body = _read_archive(archive)
    partial = f"{trace}.unpacking-py{os.getpid()}"
    if os.path.exists(partial):
        os.remove(partial)
    try:
        db = sqlite3.connect(partial)
        db.execute(f"PRAGMA page_size = {int(header['pragmas']['page_size'])}")
        db.execute(f"PRAGMA user_version = {int(header['pragmas']['user_version'])}")
        db.execute(f"PRAGMA application_id = {int(header['pragmas']['application_id'])}")
        later = []  # indexes and triggers after the rows: built once, and no trigger fires on the restore
        for kind, _, _, sql in header["schema"]:
            if kind in ("index", "trigger"):
                later.append(sql)
            else:
                db.execute(sql)
        at = 0
        for table in header["tables"]:
            cells = []
            for size in table["sections"]:
                cells.append(_decode_column(body[at:at + size], table["rows"]))
                at += size
            _insert(db, table["name"], table["columns"], cells, table["rows"])
        if at != len(body):
            raise PackError(f"{archive} has bytes after its last table")
        for sql in later:
            db.execute(sql)
        db.commit()
        db.close()
        os.replace(partial, trace)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def differences(trace, other):
    """'' when the two databases hold the same schema, pragmas and rows, value by value, else the first difference."""
    a, b = _open(trace), _open(other)
    try:
        for pragma in PRAGMAS:
            x, y = a.execute(f"PRAGMA {pragma}").fetchone()[0], b.execute(f"PRAGMA {pragma}").fetchone()[0]
            if x != y:
                return f"PRAGMA {pragma}: {x} != {y}"
        if sorted(_schema(a)) != sorted(_schema(b)):  # indexes and triggers are made after the rows: order aside
            return "the schemas differ"
        for kind, name, _, _ in _schema(a):
            if kind != "table" or name.startswith("sqlite_"):
                continue
            ta, tb = _table_cells(a, name), _table_cells(b, name)
            if ta[:2] != tb[:2]:
                return f"{name}: the columns differ"
            for index, (x, y) in enumerate(zip(ta[2], tb[2])):
                # REAL by bits: -0.0 == 0.0 in Python.
                bits = [(k, struct.pack("<d", v) if k == "real" else v) for k, v in x]
                if bits != [(k, struct.pack("<d", v) if k == "real" else v) for k, v in y]:
                    return f"{name}: row {index} differs"
            if len(ta[2]) != len(tb[2]):
                return f"{name}: {len(ta[2])} rows != {len(tb[2])}"
        return ""
    finally:
        a.close()
        b.close()


def check(archive, trace):
    unpacked = f"{archive}.check-{os.getpid()}.sqlite"
    try:
        unpack(archive, unpacked)
        return differences(trace, unpacked)
    finally:
        if os.path.exists(unpacked):
            os.remove(unpacked)


def _unpack_beside(archive):
    """unpack-all's one job: '' or the one-line error."""
    try:
        unpack(archive, archive[:-len(".pack")])
        return ""
    except Exception as error:  # noqa: BLE001 - reported by the caller, one line per archive
        return f"{archive}: {type(error).__name__}: {error}"


def unpack_all(archives):
    if any(not a.endswith(".pack") for a in archives):
        raise PackError("unpack-all takes .pack archives")
    if len(archives) < 2:
        errors = [_unpack_beside(a) for a in archives]
    else:
        import concurrent.futures
        with concurrent.futures.ProcessPoolExecutor(max_workers=min(len(archives), os.cpu_count() or 1)) as pool:
            errors = list(pool.map(_unpack_beside, archives))
    errors = [e for e in errors if e]
    if errors:
        raise PackError(f"{len(errors)} archive(s) failed; the first: {errors[0]}")


def main(argv):
    if len(argv) >= 1 and argv[0] == "unpack-all":
        try:
            unpack_all(argv[1:])
            return 0
        except Exception as error:  # noqa: BLE001
            print(f"trace_pack: {error}", file=sys.stderr)
            return 2
    if len(argv) < 2 or argv[0] not in ("pack", "unpack", "check") or len(argv) > 3 \
            or (argv[0] == "check" and len(argv) != 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        if argv[0] == "pack":
            archive = argv[2] if len(argv) == 3 else argv[1] + ".pack"
            pack(argv[1], archive)
            problem = check(archive, argv[1])
            if problem:
                os.remove(archive)
                print(f"trace_pack: {argv[1]}: the packed trace does not unpack to the same: {problem}",
                      file=sys.stderr)
                return 1
            return 0
        if argv[0] == "unpack":
            target = argv[2] if len(argv) == 3 else (argv[1][:-len(".pack")] if argv[1].endswith(".pack")
                                                     else argv[1] + ".sqlite")
            unpack(argv[1], target)
            return 0
        problem = check(argv[1], argv[2])
        if problem:
            print(f"trace_pack: {argv[1]} differs from {argv[2]}: {problem}", file=sys.stderr)
            return 1
        return 0
    except Exception as error:  # noqa: BLE001 - any failure is one line and exit 2, never a traceback
        print(f"trace_pack: {type(error).__name__}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
