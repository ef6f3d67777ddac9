#!/usr/bin/env python3
"""cuBLASLt FP8 GEMM with an FP8 output, a D scale and AMAX_D_POINTER, called directly through ctypes (PyTorch's
_scaled_mm passes neither of the last two). The call goes through the global symbol `cublasLtMatmul`, so under
`fp8scope record` it is the collector's wrapper that runs. Prints the known answer; `--check TRACE` compares the
trace's amax_D scalar and D statistics with it.

D = scale_D * (scale_A * scale_B * A^T B) in the TN layout cuBLASLt needs for FP8 (column-major, A transposed).

Exit codes: 0 ok, 1 mismatch, 2 usage, 77 no CUDA device with FP8."""

import ctypes
import json
import sqlite3
import sys

M, N, K = 256, 128, 512
SCALE_A, SCALE_B, SCALE_D = 0.5, 0.25, 0.125
E4M3, BF16, R32F, COMPUTE_32F = 28, 14, 0, 68
TRANSA, A_SCALE, B_SCALE, D_SCALE, AMAX_D = 3, 17, 18, 20, 21
PREF_MAX_WORKSPACE = 1


class Heuristic(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def loaded_cublaslt():
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libcublasLt.so" in path:
                return path
    return None


def run():
    import torch

    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 9):
        return 77
    try:
        import fp8scope
    except ImportError:
        fp8scope = None
    torch.manual_seed(0)
    torch.ones(16, 16, device="cuda") @ torch.ones(16, 16, device="cuda")  # makes PyTorch load cuBLASLt
    path = loaded_cublaslt()
    if path is None:
        print("lt_fp8_output: cuBLASLt is not loaded", file=sys.stderr)
        return 1
    lt = ctypes.CDLL(path)  # descriptors and heuristics: the real library
    # The global name: the collector's wrapper when preloaded; untraced, PyTorch's cuBLASLt is not global.
    matmul = getattr(ctypes.CDLL(None), "cublasLtMatmul", None) or lt.cublasLtMatmul

    def ok(status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed with cuBLAS status {status}")

    a = (torch.randn(M, K, device="cuda") * 4).to(torch.float8_e4m3fn)  # column-major K x M, lda = K
    b = (torch.randn(N, K, device="cuda") * 4).to(torch.float8_e4m3fn)  # column-major K x N, ldb = K
    c = torch.zeros(N, M, device="cuda", dtype=torch.bfloat16)
    d = torch.empty(N, M, device="cuda", dtype=torch.float8_e4m3fn)  # column-major M x N, ldd = M
    scales = {n: torch.full((), v, device="cuda") for n, v in (("a", SCALE_A), ("b", SCALE_B), ("d", SCALE_D))}
    amax_d = torch.zeros((), device="cuda")
    workspace = torch.empty(32 << 20, device="cuda", dtype=torch.uint8)

    handle = ctypes.c_void_p()
    ok(lt.cublasLtCreate(ctypes.byref(handle)), "cublasLtCreate")
    desc = ctypes.c_void_p()
    ok(lt.cublasLtMatmulDescCreate(ctypes.byref(desc), COMPUTE_32F, R32F), "cublasLtMatmulDescCreate")

    def set_attr(attr, value):
        ok(lt.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(value), ctypes.c_size_t(ctypes.sizeof(value))),
           f"attr {attr}")

    set_attr(TRANSA, ctypes.c_int32(1))
    for attr, tensor in ((A_SCALE, scales["a"]), (B_SCALE, scales["b"]), (D_SCALE, scales["d"]), (AMAX_D, amax_d)):
        set_attr(attr, ctypes.c_void_p(tensor.data_ptr()))
    layouts = {}
    for name, dtype, rows, cols, ld in (("a", E4M3, K, M, K), ("b", E4M3, K, N, K), ("c", BF16, M, N, M),
                                        ("d", E4M3, M, N, M)):
        layouts[name] = ctypes.c_void_p()
        ok(lt.cublasLtMatrixLayoutCreate(ctypes.byref(layouts[name]), dtype, ctypes.c_uint64(rows),
                                         ctypes.c_uint64(cols), ctypes.c_int64(ld)), "cublasLtMatrixLayoutCreate")
    pref = ctypes.c_void_p()
    ok(lt.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "cublasLtMatmulPreferenceCreate")
    ws_bytes = ctypes.c_uint64(workspace.numel())
    ok(lt.cublasLtMatmulPreferenceSetAttribute(pref, PREF_MAX_WORKSPACE, ctypes.byref(ws_bytes), ctypes.c_size_t(8)),
       "preference")
    result, found = Heuristic(), ctypes.c_int()
    ok(lt.cublasLtMatmulAlgoGetHeuristic(handle, desc, layouts["a"], layouts["b"], layouts["c"], layouts["d"], pref,
                                        1, ctypes.byref(result), ctypes.byref(found)), "cublasLtMatmulAlgoGetHeuristic")
    if found.value < 1:
        print("lt_fp8_output: no cuBLASLt algorithm for this FP8 GEMM", file=sys.stderr)
        return 1
    alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    for step in range(2):
        if fp8scope is not None:
            fp8scope.step(step)
        ok(matmul(handle, desc, ctypes.byref(alpha), ctypes.c_void_p(a.data_ptr()), layouts["a"],
                  ctypes.c_void_p(b.data_ptr()), layouts["b"], ctypes.byref(beta), ctypes.c_void_p(c.data_ptr()),
                  layouts["c"], ctypes.c_void_p(d.data_ptr()), layouts["d"], ctypes.byref(result.algo),
                  ctypes.c_void_p(workspace.data_ptr()), ctypes.c_size_t(workspace.numel()), stream),
           "cublasLtMatmul")
    torch.cuda.synchronize()  # after the GEMMs: only to print the known answer
    product = (b.float() @ a.float().t()) * (SCALE_A * SCALE_B)  # (N, M) row-major = D column-major
    truth = {"amax_d_cublas": amax_d.item(), "amax_d_torch": product.abs().max().item(),
             "d_codes_amax": d.float().abs().max().item(), "scale_d": SCALE_D, "d_numel": d.numel()}
    print("LT_FP8_OUTPUT " + json.dumps(truth))
    return 0


def check(trace, truth_line):
    truth = json.loads(truth_line.split(" ", 1)[1])
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    d_rows = db.execute(
        "SELECT t.amax, t.scale, t.scaleInv, t.numel FROM FP8SCOPE_TENSOR_STATS t JOIN FP8SCOPE_TENSOR_SITE s "
        "ON s.id = t.siteId WHERE s.role = 2 AND s.dtype = 3 AND s.rows = ? AND s.cols = ?", (M, N)).fetchall()
    amax_rows = db.execute("SELECT s.value FROM FP8SCOPE_SCALAR s JOIN StringIds n ON n.id = s.nameId "
                           "WHERE n.value LIKE 'amax_D%'").fetchall()
    result = {"d_samples": d_rows, "amax_D_scalars": [r[0] for r in amax_rows], "truth": truth}
    print(json.dumps(result))
    good = (len(d_rows) == 2 and len(amax_rows) == 2
            and all(r[0] == truth["amax_d_cublas"] for r in amax_rows)
            and all(r[1] == SCALE_D and r[0] == truth["d_codes_amax"] / SCALE_D and r[3] == truth["d_numel"]
                    for r in d_rows))
    return 0 if good else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 1:
        print("usage: lt_fp8_output.py [--check TRACE 'LT_FP8_OUTPUT {...}']", file=sys.stderr)
        sys.exit(2)
    sys.exit(run())
