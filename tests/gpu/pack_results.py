#!/usr/bin/env python3
"""Packs the scratch folder of run_all.py into $OUT, within what the device returns (at most 8 files of 16 MiB):

  pack_results.py SCRATCH OUT

OUT/details.tar.gz: SCRATCH/logs (every command's .cmd/.out/.err) and SCRATCH/details (per-check JSON);
OUT/traces-extra.tar.gz: SCRATCH/extra (traces beyond those kept in OUT itself). Files that would take an
archive past 15 MiB are left out, largest first, and listed in OUT/summary.json under packing_left_out; the
names of OUT's files go there under returned_files."""

import json
import os
import sys
import tarfile
from pathlib import Path

CAP_BYTES = 15 << 20


def pack(archive, root, folders):
    """Adds every file under root/folder for each folder, smallest first, while the archive stays under the cap
    (sizes are judged uncompressed, which only errs on the safe side). Returns the files left out."""
    files = sorted((p for f in folders if (root / f).is_dir() for p in (root / f).rglob("*") if p.is_file()),
                   key=lambda p: p.stat().st_size)
    total, left_out = 0, []
    with tarfile.open(archive, "w:gz") as tar:
        for path in files:
            size = path.stat().st_size
            if total + size > CAP_BYTES:
                left_out.append(f"{path.relative_to(root)} ({size} bytes)")
                continue
            tar.add(path, arcname=str(path.relative_to(root)))
            total += size
    return left_out


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    scratch, out = Path(argv[0]), Path(argv[1])
    left_out = pack(out / "details.tar.gz", scratch, ["logs", "details"])
    if (scratch / "extra").is_dir() and any((scratch / "extra").iterdir()):
        left_out += pack(out / "traces-extra.tar.gz", scratch, ["extra"])
    returned = sorted(p.name for p in out.iterdir())
    summary_path = out / "summary.json"
    if summary_path.exists():
        summary = json.loads(summary_path.read_text())
        summary["returned_files"] = returned
        summary["packing_left_out"] = left_out
        summary_path.write_text(json.dumps(summary, indent=1))
    # Quiet when all is well, so that the results table stays the last thing printed.
    if left_out or len(returned) > 8:
        print(f"pack_results: $OUT holds {len(returned)} entries (the device returns 8): {' '.join(returned)}; "
              f"left out of the archives: {left_out}")
    return 0 if len(returned) <= 8 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
