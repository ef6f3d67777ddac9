"""PyTorch's scaled matmuls, seen in the dispatcher (docs/python.md, "Scaled GEMMs").

`install(torch)` wraps the CUDA kernels of `aten::_scaled_mm` (and its `out` overload, and `aten::_scaled_mm_v2` and
`aten::_scaled_grouped_mm` where PyTorch has them) through `torch.library`: `torch.library.get_kernel` returns the
kernel registered now, and a `torch.library.Library("aten", "IMPL")` registers a wrapper for the same operator and dispatch key that calls it with
the same arguments and returns its result unchanged. Then, on the same thread, it reports the GEMM to the collector
(`fp8scope_scaled_gemm`): the operands' pointers, shapes and strides, and each operand's recipe, read from the shape
of its scale. The collector measures the GEMM itself only when no cuBLAS(Lt) interception saw it on this thread.

This is what it touches in the job: one Python call around every `_scaled_mm` on a CUDA device (eager calls, and the
calls compiled code makes through the dispatcher), in the steps whose statistics are taken: where the collector can
tell that a step takes none (outside capture windows, in steps the sampling skips), `follow` removes the wrappers at
the step's beginning and puts them back at the beginning of one that does; no tensor is allocated, copied or
synchronized, and nothing is read from the device. Needs PyTorch 2.9 or newer (`torch.library.get_kernel`); older
versions are left alone, with one warning.
"""

import ctypes
import threading
import warnings

from . import _collector

# enum fp8scope_dtype by the dtype's name; other dtypes (FP4, E8M0) are reported as -1: not measured.
_DTYPES = {"torch.float32": 0, "torch.bfloat16": 1, "torch.float16": 2, "torch.float8_e4m3fn": 3,
           "torch.float8_e5m2": 4}
NONE, TENSORWISE, ROWWISE, BLOCKWISE_1X128, BLOCKWISE_128X128, MX_32, NVFP4_16 = -1, 0, 1, 2, 3, 4, 5
RECIPE_NAMES = {TENSORWISE: "tensorwise", ROWWISE: "rowwise", BLOCKWISE_1X128: "blockwise 1x128",
                BLOCKWISE_128X128: "blockwise 128x128", MX_32: "MX 32", NVFP4_16: "NVFP4 16", NONE: "none"}
_PER_BLOCK = (ROWWISE, BLOCKWISE_1X128, BLOCKWISE_128X128)
# torch.nn.functional.ScalingType names (the recipes _scaled_mm_v2 is given explicitly)
_SCALING_TYPES = {"TensorWise": TENSORWISE, "RowWise": ROWWISE, "BlockWise1x16": NVFP4_16, "BlockWise1x32": MX_32,
                  "BlockWise1x128": BLOCKWISE_1X128, "BlockWise128x128": BLOCKWISE_128X128}

_lock = threading.Lock()
_libraries = []  # the torch.library.Library objects holding the wrappers (dropping them removes the wrappers)
_warned = set()
_torch = None  # the torch module once install() wrapped its ops
_paused = False  # follow() removed the wrappers: statistics cannot be wanted before the next step
_following = True  # follow() may remove them (False once removing or restoring them failed)
MARKER, OPTIMIZER = 0, 1  # enum fp8scope_step_boundary


def _warn_once(key, message):
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn("fp8scope: " + message, _collector.Fp8scopeWarning, stacklevel=3)


def _ceil(a, b):
    return -(-a // b)


def recipe_of(scale, rows, cols, outer_rows):
    """The recipe that `scale`'s shape gives an FP8 operand of rows x cols, contracted along cols when `outer_rows`
    (torch's mat1, m x k) and along rows otherwise (torch's mat2, k x n). torch._scaled_mm's conventions: one element
    per tensor; one per row of the outer dimension (m x 1, 1 x n); one per 1x128 block along k (m x k/128,
    k/128 x n); one per 128x128 block (m/128 x k/128, k/128 x n/128); E8M0 scales (MX, one per 32 along k) and E4M3
    scales of FP4 data (NVFP4, one per 16) by their dtype, whatever their padded, swizzled layout."""
    if scale is None:
        return NONE
    name = str(scale.dtype)
    if name == "torch.float8_e8m0fnu":
        return MX_32
    if name == "torch.float8_e4m3fn":
        return NVFP4_16
    n = int(scale.numel())
    if n == 1:
        return TENSORWISE
    shape = tuple(int(x) for x in scale.shape)
    if len(shape) != 2:
        return NONE
    outer, inner = (rows, cols) if outer_rows else (cols, rows)  # inner: the contracted dimension
    s_outer, s_inner = shape if outer_rows else (shape[1], shape[0])
    if s_inner == 1 and s_outer == outer:
        return ROWWISE
    if s_inner == _ceil(inner, 128) and s_outer == outer:
        return BLOCKWISE_1X128
    if s_inner == _ceil(inner, 128) and s_outer == _ceil(outer, 128):
        return BLOCKWISE_128X128
    return NONE


def _operand(tensor, recipe, scale):
    rows, cols = (int(x) for x in tensor.shape)
    row_stride, col_stride = (int(x) for x in tensor.stride())
    op = _collector.GemmOperand(data=tensor.data_ptr(), dtype=_DTYPES.get(str(tensor.dtype), -1), recipe=recipe,
                                rows=rows, cols=cols, row_stride=row_stride, col_stride=col_stride)
    if scale is not None and scale.dim() <= 2:
        op.scale = scale.data_ptr() if recipe != TENSORWISE or str(scale.dtype) == "torch.float32" else None
        shape = [int(x) for x in scale.shape] + [1] * (2 - scale.dim())
        stride = [int(x) for x in scale.stride()] + [1] * (2 - scale.dim())
        op.scale_rows, op.scale_cols = shape
        op.scale_row_stride, op.scale_col_stride = stride
    return op


def report(a, b, scale_a, scale_b, out, recipe_a=None, recipe_b=None):
    """Reports one GEMM out = a @ b to the collector; returns the collector's status, or None when nothing records.
    `recipe_a` / `recipe_b`: given explicitly (_scaled_mm_v2), else read from the scales' shapes."""
    api = _collector.api(cuda_is_up=True)
    if api is None or api.scaled_gemm is None:
        return None
    if a.dim() != 2 or b.dim() != 2 or out.dim() != 2:
        if api.library_gemm is not None and api.library_gemm(out.data_ptr()) == 1:
            return _collector.LIBRARY_GEMM
        _warn_once("dims", "a scaled matmul with operands that are not matrices was not reported")
        return None
    if recipe_a is None:
        recipe_a = recipe_of(scale_a, int(a.shape[0]), int(a.shape[1]), True)
    if recipe_b is None:
        recipe_b = recipe_of(scale_b, int(b.shape[0]), int(b.shape[1]), False)
    # The usual case, answered cheaply: cuBLAS(Lt) ran it on this thread, and its interception has it. Operands scaled
    # per row or block are described all the same when statistics are taken now: their scales' layout, which
    # cuBLASLt's scale modes do not give, is what their per-block statistics need (the collector measures the GEMM
    # itself only when cuBLAS(Lt) did not). In a step without statistics that costs ~20 us a call for nothing.
    blocks = recipe_a in _PER_BLOCK or recipe_b in _PER_BLOCK
    if blocks and api.stats_wanted is not None and api.stats_wanted() == 0:
        blocks = False
    if not blocks and api.library_gemm is not None and api.library_gemm(out.data_ptr()) == 1:
        return _collector.LIBRARY_GEMM
    import torch  # already imported: the op is being called

    args = _collector.ScaledGemmArgs(struct_size=_collector.SCALED_GEMM_ARGS_SIZE,
                                     a=_operand(a, recipe_a, scale_a), b=_operand(b, recipe_b, scale_b),
                                     d=_operand(out, NONE, None),
                                     stream=torch.cuda.current_stream(a.device).cuda_stream)
    return api.scaled_gemm(ctypes.byref(args))


def _scaling_recipe(types):
    try:
        import torch.nn.functional as F

        return _SCALING_TYPES.get(F.ScalingType(int(types[0])).name, NONE)
    except Exception:
        return NONE


def _report_v1(args, kwargs, result):
    a, b = args[0], args[1]
    scale_a = args[2] if len(args) > 2 else kwargs.get("scale_a")
    scale_b = args[3] if len(args) > 3 else kwargs.get("scale_b")
    return report(a, b, scale_a, scale_b, result)


def _report_v2(args, kwargs, result):
    # _scaled_mm_v2(self, mat2, scale_a[], recipe_a[], swizzle_a[], scale_b[], recipe_b[], swizzle_b[], ...)
    names = ("self", "mat2", "scale_a", "recipe_a", "swizzle_a", "scale_b", "recipe_b", "swizzle_b")
    given = dict(zip(names, args))
    given.update({k: v for k, v in kwargs.items() if k in names})
    scale_a, scale_b = given.get("scale_a") or [None], given.get("scale_b") or [None]
    return report(given["self"], given["mat2"], scale_a[0], scale_b[0], result,
                  _scaling_recipe(given.get("recipe_a") or [-1]), _scaling_recipe(given.get("recipe_b") or [-1]))


def _report_grouped(args, kwargs, result):
    """torch._scaled_grouped_mm(mat_a, mat_b, scale_a, scale_b, offs, ...), rowwise (float32 scales): reported as one
    grouped GEMM (fp8scope_scaled_gemm_args.groups), A as every group's rows (M_total x K), B as every group's operand
    transposed and stacked (G*N x K, a view: torch requires mat_b column-major), each with one scale per row. mat_b 3D
    only (2D x 3D, a mixture of experts' forward, and 3D x 3D): a 2D mat_b splits K by offsets on the device, which
    the statistics cannot read without a sync."""
    names = ("self", "mat2", "scale_a", "scale_b")
    given = dict(zip(names, args))
    given.update({k: v for k, v in kwargs.items() if k in names})
    a, b, scale_a, scale_b = given["self"], given["mat2"], given.get("scale_a"), given.get("scale_b")
    api = _collector.api(cuda_is_up=True)
    if api is None or api.scaled_gemm is None or (api.stats_wanted is not None and api.stats_wanted() == 0):
        return None
    if scale_a is None or scale_b is None or str(scale_a.dtype) != "torch.float32" or b.dim() != 3:
        _warn_once("grouped", "a torch._scaled_grouped_mm other than rowwise with a 3D mat2 was not reported")
        return None
    groups, k, n = (int(x) for x in b.shape)
    b_t = b.transpose(1, 2)  # (G, N, K): contiguous for the column-major mat2 torch requires
    a_rows = a if a.dim() == 2 else a.reshape(-1, k) if a.is_contiguous() else None
    if a_rows is None or not b_t.is_contiguous() or not result.is_contiguous():
        _warn_once("grouped_layout", "a torch._scaled_grouped_mm with operands not laid out as torch makes them was "
                   "not reported")
        return None
    import torch  # already imported: the op is being called

    args = _collector.ScaledGemmArgs(
        struct_size=_collector.SCALED_GEMM_ARGS_SIZE,
        a=_operand(a_rows, ROWWISE, scale_a.reshape(-1, 1)),
        b=_operand(b_t.reshape(groups * n, k), ROWWISE, scale_b.reshape(-1, 1)),
        d=_operand(result.reshape(-1, n), NONE, None),
        stream=torch.cuda.current_stream(a.device).cuda_stream, groups=groups)
    return api.scaled_gemm(ctypes.byref(args))


def _wrap(kernel, reporter, name):
    def wrapper(keyset, *args, **kwargs):
        result = kernel.call_boxed(keyset, *args, **kwargs)
        try:
            reporter(args, kwargs, result)
        except Exception as error:  # never let reporting break the job: the op's result is returned as it is
            _warn_once(("report", name), f"{name} could not be reported ({type(error).__name__}: {error}); "
                       "its GEMMs may be missing from the statistics")
        return result

    return wrapper


def _register(torch):
    """Registers the wrappers (the kernels they call: those registered now); returns how many ops were wrapped. Under
    _lock."""
    ops = [("_scaled_mm", "default", _report_v1), ("_scaled_mm", "out", _report_v1),
           ("_scaled_mm_v2", "default", _report_v2), ("_scaled_mm_v2", "out", _report_v2),
           ("_scaled_grouped_mm", "default", _report_grouped)]
    library = torch.library.Library("aten", "IMPL")
    wrapped = 0
    for op, overload, reporter in ops:
        packet = getattr(torch.ops.aten, op, None)
        if packet is None or overload not in packet.overloads():
            continue
        qualified = f"aten::{op}" + ("" if overload == "default" else f".{overload}")
        name = op if overload == "default" else f"{op}.{overload}"
        try:
            kernel = torch.library.get_kernel(qualified, "CUDA")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": that is the point
                library.impl(name, _wrap(kernel, reporter, qualified), "CUDA", with_keyset=True)
            wrapped += 1
        except Exception as error:
            _warn_once(("install", name), f"{qualified} was not wrapped ({type(error).__name__}: {error})")
    _libraries.append(library)
    return wrapped


def install(torch, warn=True):
    """Wraps the scaled-matmul CUDA kernels once per process; returns True when they are (now or already) wrapped.
    warn=False: a PyTorch too old for it is left alone without a warning."""
    global _torch
    with _lock:
        if _torch is not None:
            return True
        if not hasattr(torch, "library") or not hasattr(torch.library, "get_kernel"):
            if warn:
                version = getattr(torch, "__version__", "?")
                _warn_once("version", f"PyTorch {version} has no torch.library.get_kernel (2.9 or newer): scaled "
                           "matmuls are seen only where cuBLASLt runs them")
            return False
        _torch = torch
        return _register(torch) > 0


def follow(boundary):
    """Called just after a step began by `boundary`'s call (MARKER: fp8scope.step; OPTIMIZER: the optimizer hook's
    step end). Removes the wrappers while the collector says statistics cannot be wanted before the next such call
    (fp8scope_stats_wanted_in_step: outside capture windows, in steps the sampling skips), and puts them back when they
    can: there, a scaled matmul costs what it costs untraced (docs/python.md, "Scaled GEMMs"). One ctypes call."""
    global _paused, _following
    if _torch is None or not _following:
        return
    api = _collector.api()
    if api is None or api.stats_wanted_in_step is None:
        return
    wanted = api.stats_wanted_in_step(boundary) != 0
    if wanted != _paused:
        return  # wrapped and wanted, or removed and not wanted
    with _lock:
        try:
            if wanted:
                if api.library_gemm is not None:
                    api.library_gemm(None)  # forgets a GEMM cuBLAS(Lt) ran on this thread while removed
                _register(_torch)
            else:
                for library in _libraries:
                    library._destroy()  # the kernel each wrapper replaced is the op's again
                _libraries.clear()
            _paused = not wanted
        except Exception as error:  # e.g. a PyTorch whose Library has no _destroy: the wrappers stay as they are
            _following = False
            what = "put back" if wanted else "removed"
            _warn_once("follow", f"the scaled-matmul wrappers could not be {what} at a step's beginning "
                       f"({type(error).__name__}: {error}); they are left as they are from now on")
