#!/usr/bin/env python3
"""The host cost of fp8scope's dispatcher interception of torch._scaled_mm (docs/python.md "Scaled GEMMs"), and whether
compiled code reaches it. Run by tests/gpu/tools/scaled_mm_overhead.sh in three ways: untraced, traced with the
interception off (FP8SCOPE_TORCH_SCALED_MM=0) and on, all traced runs with FP8SCOPE_GEMM_STATS=0 so that no
statistics are taken: the difference between the last two is the wrapper itself (a Python call, the report's ctypes
call, the collector's check that cuBLASLt already saw the GEMM).

  scaled_mm_overhead.py eager    host microseconds per torch._scaled_mm, tensorwise and rowwise, 256x256x256
  scaled_mm_overhead.py compiled a torch.compile'd rowwise matmul, 10 steps: prints the wrapper's report count
"""

import json
import statistics
import sys
import time

import torch


def operands(rowwise):
    a = torch.randn(256, 256, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(256, 256, device="cuda").to(torch.float8_e4m3fn).t()
    if rowwise:
        return a, b, torch.ones(256, 1, device="cuda"), torch.ones(1, 256, device="cuda")
    one = torch.ones((), device="cuda")
    return a, b, one, one


def eager():
    out = {}
    for label, rowwise in (("tensorwise", False), ("rowwise", True)):
        a, b, sa, sb = operands(rowwise)
        for _ in range(200):
            torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)
        torch.cuda.synchronize()
        per_call = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(2000):
                torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)
            per_call.append((time.perf_counter() - t0) / 2000 * 1e6)
            torch.cuda.synchronize()
        out[label] = statistics.median(per_call)
    print("RESULT " + json.dumps({"mode": "eager", "host_us_per_call": out}), flush=True)


def compiled():
    reports = [0]
    try:
        from fp8scope import _scaled_gemm

        original = _scaled_gemm.report

        def counted(*args, **kwargs):
            reports[0] += 1
            return original(*args, **kwargs)

        _scaled_gemm.report = counted
    except ImportError:
        pass
    a, b, sa, sb = operands(True)
    f = torch.compile(lambda a, b, sa, sb: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16).relu())
    for _ in range(10):
        f(a, b, sa, sb)
    torch.cuda.synchronize()
    print("RESULT " + json.dumps({"mode": "compiled", "calls": 10, "reports": reports[0]}), flush=True)


if __name__ == "__main__":
    {"eager": eager, "compiled": compiled}[sys.argv[1]]()
