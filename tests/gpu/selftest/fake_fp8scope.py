"""A stand-in for `fp8scope record -o PATTERN -- CMD...` (and `fp8scope info`), for testing run_all.py."""

import os
import subprocess
import sys

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0]))), "lib", "libfp8scope.so")


def main(argv):
    if argv[:1] == ["--version"]:
        print("fp8scope 0.1.0 (fake)")
        return 0
    if argv[:1] == ["info"]:
        print('{"finished": false}')
        return 0
    if argv[:1] != ["record"]:
        return 2
    if "--help" in argv:
        print("usage: fp8scope record [-o PATTERN] -- CMD")
        return 0
    rest = argv[1:]
    env = dict(os.environ, CUDA_INJECTION64_PATH=LIB, NVTX_INJECTION64_PATH=LIB)
    if rest[:1] == ["-o"]:
        env["FP8SCOPE_OUTPUT"] = rest[1]
        rest = rest[2:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    rc = subprocess.call(rest, env=env)
    print(f"fp8scope: record: child exited {rc}", file=sys.stderr)
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
