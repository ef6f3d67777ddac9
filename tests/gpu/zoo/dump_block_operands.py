"""Dumps FP8 operands scaled per row or per block, with their scales, from a real job, for the per-block statistics
check on the GPU (the `recipes` stage: fp8scope_block_stats_dumps compares the kernel with its CPU twin on them).

  dump_block_operands.py OUTDIR MAX_CALLS SCRIPT [ARGS...]

runs SCRIPT as __main__ with torch._scaled_mm replaced (the Python attribute, as scaled_mm_count.py does) by a
function that, for its first MAX_CALLS calls with a rowwise or blockwise operand, writes each such operand as
OUTDIR/NNNN-a.block or -b.block (layout in tests/probes/gpu_block_dumps.cpp), then calls the original. An operand is
written as the kernel reads it: rows along the outer dimension (m for mat1, n for mat2), the contracted k contiguous,
and its scales as a dense (outer blocks x k blocks) float32 array.
"""

import os
import runpy
import struct
import sys

import torch

from scaled_mm_count import _recipe

MAGIC = 0x6B636F6C62387066
DTYPES = {torch.float8_e4m3fn: 3, torch.float8_e5m2: 4}
BLOCKS = {"rowwise": (1, None), "blockwise 1×128": (1, 128), "blockwise 128×128": (128, 128)}


def dump(path, codes, scales, recipe):
    """codes: outer x k; scales: outer blocks x k blocks."""
    rows, cols = codes.shape
    block_rows, block_cols = BLOCKS[recipe]
    block_cols = block_cols or cols
    dtype = DTYPES[codes.dtype]
    codes = codes.contiguous().view(torch.uint8).cpu()
    scales = scales.to(torch.float32).contiguous().cpu()
    header = struct.pack("<8q", MAGIC, dtype, rows, cols, block_rows, block_cols, scales.shape[0], scales.shape[1])
    with open(path, "wb") as f:
        f.write(header)
        f.write(codes.numpy().tobytes())
        f.write(scales.numpy().tobytes())


def main():
    outdir, max_calls, script = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    original = torch._scaled_mm
    seen = [0]

    def dumping(a, b, scale_a=None, scale_b=None, *args, **kwargs):
        if seen[0] < max_calls and scale_a is not None and scale_b is not None and a.dim() == 2 and b.dim() == 2:
            m, k = a.shape
            n = b.shape[1]
            ra, rb = _recipe(scale_a, m, k, True), _recipe(scale_b, n, k, False)
            if ra in BLOCKS or rb in BLOCKS:
                stem = os.path.join(outdir, f"{seen[0]:04d}")
                with torch.no_grad():
                    if ra in BLOCKS:  # mat1 m x k; its scales (m or m/128) x (1 or k/128)
                        dump(stem + "-a.block", a.detach(), scale_a.detach().reshape(scale_a.shape[0], -1), ra)
                    if rb in BLOCKS:  # mat2 k x n as n x k; its scales (1 or k/128) x (n or n/128), transposed
                        dump(stem + "-b.block", b.detach().t(), scale_b.detach().t().reshape(scale_b.shape[1], -1), rb)
                seen[0] += 1
        return original(a, b, scale_a, scale_b, *args, **kwargs)

    torch._scaled_mm = dumping
    sys.argv = [script] + sys.argv[4:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
