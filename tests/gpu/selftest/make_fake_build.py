"""Makes a fake build folder (bin/fp8scope, lib/libfp8scope.so, samples/, bench/) whose programs are the stand-ins
in this folder, so that run_all.py can be exercised end to end on a machine without a GPU:

  python3 tests/gpu/selftest/make_fake_build.py FAKE_BUILD [REAL_BUILD]
  FP8SCOPE_GPU_TRAIN_PY=tests/gpu/selftest/fake_train.py OUT=/tmp/out tests/gpu/run_all.sh FAKE_BUILD

REAL_BUILD, when given, provides bench/ (the real launch-loop library and driver, which exit 77 without a GPU)."""

import os
import shutil
import stat
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLES = ("launch_bound", "host_stall", "syncs", "multistream", "graph")


def script(path, body):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def main(argv):
    fake = Path(argv[0])
    if fake.exists():
        shutil.rmtree(fake)
    script(fake / "bin" / "fp8scope", f'exec "{sys.executable}" "{HERE / "fake_fp8scope.py"}" "$@"')
    (fake / "lib").mkdir()
    (fake / "lib" / "libfp8scope.so").write_bytes(b"")
    for name in SAMPLES:
        script(fake / "samples" / f"fp8scope_sample_{name}", f'exec "{sys.executable}" "{HERE / "fake_sample.py"}" {name} "$@"')
    if len(argv) > 1:
        shutil.copytree(Path(argv[1]) / "bench", fake / "bench", symlinks=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
