#!/usr/bin/env python3
"""FP8 against BF16 GEMM time by shape on this GPU (docs/analysis.md "FP8 what-if"): for each (m, n, k) of a sweep,
the median GPU time per call (a CUDA graph of 20 calls replayed between two CUDA events) of torch.mm in BF16 and of
torch._scaled_mm (cuBLASLt) in E4M3 with tensorwise and with rowwise scales, output BF16. The table
`fp8scope report --fp8-whatif --gemm-table` reads (docs/cli.md "FP8 what-if").

  gemm_table.py [--out FILE] [--reps N]      writes the table as JSON (fp8scope's GEMM table format)

Exit codes: 0 ok, 77 no CUDA device or no FP8 GEMM.
"""

import argparse
import datetime
import json
import statistics
import sys

import torch

SIZES_M = (256, 512, 1024, 2048, 4096, 8192, 16384)
SIZES_NK = (256, 512, 1024, 2048, 4096, 8192)


def timed(fn, reps, batch=20):
    """The GPU time of one call: `batch` calls captured in a CUDA graph and replayed between two events, divided by
    `batch`; the median of `reps` replays. A graph, because calls timed from Python are host-bound below about 25 us
    (2026-11-27, nvidia-h100-x1: torch.mm of 256x256x256 timed 20 back to back measured 20 us a call)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(batch):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e6 / batch)  # ms -> ns per call
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="gemm_table.json")
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()
    if not torch.cuda.is_available() or not hasattr(torch, "_scaled_mm"):
        print("gemm_table: no CUDA device or no torch._scaled_mm", file=sys.stderr)
        return 77
    device = torch.device("cuda")
    rows = []
    for m in SIZES_M:
        for n in SIZES_NK:
            for k in SIZES_NK:
                a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
                b = torch.randn(n, k, device=device, dtype=torch.bfloat16).t()  # k x n, column-major
                a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
                one = torch.ones((), device=device, dtype=torch.float32)
                row_a = torch.ones(m, 1, device=device, dtype=torch.float32)
                row_b = torch.ones(1, n, device=device, dtype=torch.float32)
                bf16 = timed(lambda: torch.mm(a, b), args.reps)
                tensorwise = timed(lambda: torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16), args.reps)
                try:
                    rowwise = timed(lambda: torch._scaled_mm(a8, b8, row_a, row_b, out_dtype=torch.bfloat16),
                                    args.reps)
                except RuntimeError:
                    rowwise = None
                rows.append({"m": m, "n": n, "k": k, "bf16_ns": round(bf16), "fp8_tensorwise_ns": round(tensorwise),
                             "fp8_rowwise_ns": None if rowwise is None else round(rowwise)})
                del a, b, a8, b8
    table = {"format": "fp8scope.gemm_table/1", "gpu": torch.cuda.get_device_name(0),
             "date": datetime.date.today().isoformat(), "torch": torch.__version__,
             "method": f"median of {args.reps} replays of a CUDA graph of 20 calls (CUDA events, per call) after 3 "
                       "warm-up calls; torch.mm BF16, "
                       "torch._scaled_mm E4M3 x E4M3 -> BF16 (tensorwise and rowwise scales)",
             "rows": rows}
    with open(args.out, "w") as f:
        json.dump(table, f, indent=1)
    speedups = [r["bf16_ns"] / r["fp8_tensorwise_ns"] for r in rows]
    print(f"gemm_table: {len(rows)} shapes on {table['gpu']}; tensorwise speed-up min {min(speedups):.2f} "
          f"median {statistics.median(speedups):.2f} max {max(speedups):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
