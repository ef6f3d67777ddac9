"""The committed sample traces for scripts that run without a configure, e.g. on the GPU machine.

Every trace under samples/traces/ is stored in git as <name>.sqlite.pack (scripts/trace_pack.py) or <name>.sqlite.xz
(samples/traces/README.md), and a CMake configure unpacks it to the gitignored <name>.sqlite beside it. The working
tree that travels to the GPU machine holds only tracked and non-ignored files, so there the unpacked copies are missing
until something unpacks them: a script asks `sample_trace("scenario-demo.sqlite")` instead of building the path
itself. Only the standard library (lzma, sqlite3): the GPU machine guarantees Python, not xz.
"""

import lzma
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import trace_pack  # noqa: E402  (scripts/trace_pack.py)

TRACES = Path(__file__).resolve().parents[2] / "samples" / "traces"


def sample_trace(relative):
    """The path of samples/traces/<relative> (a .sqlite path), unpacked from <relative>.pack or <relative>.xz when it
    is missing or older than the archive, as cmake/Fp8scopeSampleTraces.cmake does at configure time."""
    trace = TRACES / relative
    pack = trace.with_name(trace.name + ".pack")
    if pack.is_file():
        if not trace.is_file() or trace.stat().st_mtime <= pack.stat().st_mtime:
            trace_pack.unpack(str(pack), str(trace))  # to a name of its own, then renamed, as below
        return trace
    archive = trace.with_name(trace.name + ".xz")
    if not archive.is_file():
        return trace  # not a committed trace: the caller's open names what is missing
    if trace.is_file() and trace.stat().st_mtime > archive.stat().st_mtime:
        return trace
    # Written beside the target under a name of this process's, then renamed (atomic on one file system): two
    # scripts unpacking at once, or a configure, never leave or read a half-written trace. The name matches
    # .gitignore's /samples/traces/**/*.sqlite.unpacking-*.
    partial = trace.with_name(f"{trace.name}.unpacking-py{os.getpid()}")
    try:
        with lzma.open(archive) as source, open(partial, "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        os.replace(partial, trace)
    finally:
        partial.unlink(missing_ok=True)
    return trace
