#!/usr/bin/env python3
"""The host cost of fp8scope's dispatcher interception of torch._scaled_mm (docs/python.md "Scaled GEMMs"), and whether
compiled code reaches it. Run by tests/gpu/tools/scaled_mm_overhead.sh in three ways: untraced, traced with the
interception off (FP8SCOPE_TORCH_SCALED_MM=0) and on, all traced runs with FP8SCOPE_GEMM_STATS=0 so that no
statistics are taken: the difference between the last two is the wrapper itself (a Python call, the report's ctypes
call, the collector's check that cuBLASLt already saw the GEMM).

  scaled_mm_overhead.py eager    host microseconds per torch._scaled_mm, tensorwise and rowwise, 256x256x256
  scaled_mm_overhead.py compiled a torch.compile'd rowwise matmul, 10 steps: prints the wrapper's report count
  scaled_mm_overhead.py windows  40 marked steps of 500 tensorwise calls each (eager) and 20 of a compiled rowwise
                                 matmul, under `record --capture-every 10 --capture-length 2`: per step, whether the
                                 wrappers are on, the reports made and the host microseconds per call
                                 (_scaled_gemm.follow)
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


def count_reports():
    """Counts the wrapper's reports from now on: a one-element list, or None without the fp8scope package."""
    reports = [0]
    try:
        from fp8scope import _scaled_gemm

        original = _scaled_gemm.report

        def counted(*args, **kwargs):
            reports[0] += 1
            return original(*args, **kwargs)

        _scaled_gemm.report = counted
    except ImportError:
        return None
    return reports


def compiled():
    reports = count_reports() or [0]
    a, b, sa, sb = operands(True)
    f = torch.compile(lambda a, b, sa, sb: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16).relu())
    for _ in range(10):
        f(a, b, sa, sb)
    torch.cuda.synchronize()
    print("RESULT " + json.dumps({"mode": "compiled", "calls": 10, "reports": reports[0]}), flush=True)


def windows():
    import fp8scope
    from fp8scope import _scaled_gemm

    reports = count_reports()
    api = fp8scope._collector.api(cuda_is_up=True)
    rows = []

    def run(label, steps, first, call, calls):
        for n in range(first, first + steps):
            fp8scope.step(n)
            before = reports[0]
            wrapped = bool(_scaled_gemm._libraries)
            t0 = time.perf_counter()
            for _ in range(calls):
                call()
            per_call = (time.perf_counter() - t0) / calls * 1e6
            torch.cuda.synchronize()
            rows.append({"kind": label, "step": n, "window": api.recording() if api else None,
                         "stats_wanted": api.stats_wanted() if api else None, "wrapped": wrapped,
                         "reports": reports[0] - before, "us_per_call": round(per_call, 2)})

    a, b, sa, sb = operands(False)
    run("eager", 40, 0, lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16), 500)
    ra, rb, rsa, rsb = operands(True)
    f = torch.compile(lambda a, b, sa, sb: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16).relu())
    f(ra, rb, rsa, rsb)  # compiled before the steps
    run("compiled", 20, 40, lambda: f(ra, rb, rsa, rsb), 50)
    for row in rows:
        print("STEP " + json.dumps(row))
    eager_rows = [r for r in rows if r["kind"] == "eager" and r["step"] >= 2]  # past the warm-up

    def median(selected):
        return statistics.median([r["us_per_call"] for r in selected]) if selected else None

    print("RESULT " + json.dumps({
        "mode": "windows",
        "us_per_call_wrapped": median([r for r in eager_rows if r["wrapped"]]),
        "us_per_call_removed": median([r for r in eager_rows if not r["wrapped"]]),
        # each step that takes statistics has the wrappers on and reports every call; each other one reports none
        "wanted_steps_reported": all(r["wrapped"] and r["reports"] > 0 for r in rows if r["stats_wanted"]),
        "other_steps_silent": all(r["reports"] == 0 for r in rows if not r["stats_wanted"] and not r["wrapped"]),
        "steps_removed": sum(1 for r in rows if not r["wrapped"]), "steps": len(rows)}), flush=True)


if __name__ == "__main__":
    {"eager": eager, "compiled": compiled, "windows": windows}[sys.argv[1]]()
