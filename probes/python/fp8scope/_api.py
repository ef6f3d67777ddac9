"""probe, step, log_scalar, enabled: the C API of probes/include/fp8scope.h for Python objects.

Rules kept here (docs/python.md gives them to users):
- No call ever raises into the training job or blocks on the GPU. Bad arguments skip the call with one warning
  per kind of problem (Fp8scopeWarning) and return False.
- Nothing reads device memory from the host: device scalars and scales travel as device pointers and are read by
  the collector's kernels in stream order. No .item(), no synchronization.
- Tensors are duck-typed (data_ptr(), numel(), dtype, is_contiguous(), device with .type/.index) and dtypes are
  recognised by name (str(dtype)), so torch is never imported here and stand-ins work in tests.
"""

import sys
import threading
import warnings

from . import _collector, _scaled_gemm

# enum fp8scope_dtype, keyed by the dtype's name without "torch."
_DTYPES = {"float32": 0, "bfloat16": 1, "float16": 2, "float8_e4m3fn": 3, "float8_e5m2": 4}
_FP8_FORMAT_OF_DTYPE = {3: 1, 4: 2}  # an FP8 tensor is measured in its own format
# enum fp8scope_fp8_format
_TARGETS = {"e4m3": 1, "e4m3fn": 1, "float8_e4m3fn": 1, "e5m2": 2, "float8_e5m2": 2}
# ENUM_FP8SCOPE_TENSOR_ROLE (format/include/fp8scope/format/schema.hpp, TensorRole); 0-2 are GEMM operands A/B/D,
# which only the collector's own interception assigns.
_ROLES = {"input": 3, "weight": 4, "output": 5, "gradient": 6, "grad": 6, "other": 7}
_ROLE_OTHER = 7
_SCALAR_DTYPES = (0, 1, 2)  # fp8scope_scalar_device reads F32, BF16 or F16
# enum fp8scope_scale_kind
_SCALE_NONE, _SCALE_VALUE, _SCALE_INV_VALUE, _SCALE_DEVICE, _SCALE_INV_DEVICE = 0, 1, 2, 3, 4

_warned = set()
_warned_lock = threading.Lock()
_next_step = 0
# Set by the job's own calls, never by the package's hooks: the job's instrumentation wins over theirs
# (_torch_hooks.py: the optimizer hook stops marking steps, the backward hook stops logging "loss").
job_marks_steps = False
job_logs_loss = False
# Called by step() before it marks the job's step: the torch hooks log the loss they hold (_torch_hooks._flush_loss)
# in the step it belongs to. Each takes no argument and raises nothing.
step_boundary_hooks = []


def _warn_once(key, message):
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn("fp8scope: " + message, _collector.Fp8scopeWarning, stacklevel=4)


def _dtype_name(dtype):
    name = str(dtype)
    return name[len("torch."):] if name.startswith("torch.") else name


def _name_bytes(name):
    # The C side copies a NUL-terminated string: an embedded NUL would cut the name short.
    return str(name).encode("utf-8", "replace").replace(b"\0", b"?")


def _device_key(obj):
    device = obj.device
    return getattr(device, "type", None), getattr(device, "index", None)


def _on_cuda(obj):
    try:
        return _device_key(obj)[0] == "cuda"
    except Exception:
        return False


def _is_tensor(obj):
    return hasattr(obj, "data_ptr") and hasattr(obj, "dtype")


def _current_stream(obj, stream):
    """The cudaStream_t handle to enqueue on: the caller's `stream` (a handle or an object with .cuda_stream), else
    PyTorch's current stream on the tensor's device, else 0, the legacy default stream. PyTorch is used only if the
    program already imported it."""
    if stream is not None:
        return int(getattr(stream, "cuda_stream", stream))
    torch = sys.modules.get("torch")
    if torch is None:
        return 0
    return int(torch.cuda.current_stream(obj.device).cuda_stream)


def _contiguous(tensor):
    flag = tensor.is_contiguous
    return bool(flag() if callable(flag) else flag)


def _target_code(target):
    if target is None:
        return 0
    return _TARGETS.get(_dtype_name(target).lower())


def _role_code(role):
    if role is None:
        return _ROLE_OTHER
    if isinstance(role, int) and 3 <= role <= 7:
        return role
    code = _ROLES.get(str(role).lower())
    if code is None:
        _warn_once(("role", str(role)), f"unknown role {role!r} (recorded as 'other'; roles: {', '.join(_ROLES)})")
        return _ROLE_OTHER
    return code


def _scale_fields(name, scale, scale_inv, tensor):
    """(scale_kind, scale value, device pointer) for ProbeArgs, or None after a warning."""
    if scale is not None and scale_inv is not None:
        _warn_once("scale-both", f"probe {name!r} skipped: give scale or scale_inv, not both")
        return None
    value, inverse = (scale, False) if scale is not None else (scale_inv, True)
    if value is None:
        return _SCALE_NONE, 0.0, None
    if _is_tensor(value) and _on_cuda(value):
        if _dtype_name(value.dtype) != "float32" or int(value.numel()) != 1:
            _warn_once("scale-tensor", f"probe {name!r} skipped: a device scale must be a float32 tensor of one "
                       f"element (got {_dtype_name(value.dtype)}, {int(value.numel())} elements)")
            return None
        if _device_key(value) != _device_key(tensor):
            _warn_once("scale-device", f"probe {name!r} skipped: the scale lives on another device than the tensor")
            return None
        # The statistics kernel reads the scale in stream order: the value in effect at this point of the stream.
        return (_SCALE_INV_DEVICE if inverse else _SCALE_DEVICE), 0.0, int(value.data_ptr())
    try:
        number = float(value)  # a Python number, or a host tensor (reading host memory needs no device sync)
    except (TypeError, ValueError):
        _warn_once("scale-type", f"probe {name!r} skipped: scale must be a number or a float32 CUDA tensor "
                   f"(got {type(value).__name__})")
        return None
    if not (0.0 < number < float("inf")):  # what the collector accepts; NaN fails this test too
        _warn_once("scale-value", f"probe {name!r} skipped: a scale must be finite and > 0 (got {number!r})")
        return None
    return (_SCALE_INV_VALUE if inverse else _SCALE_VALUE), number, None


def probe(name, tensor, scale=None, scale_inv=None, target=None, role=None, stream=None):
    """Enqueue statistics of `tensor` (a contiguous CUDA tensor: float32, bfloat16, float16 or FP8) on the current
    stream. Returns True when the collector accepted the probe. docs/python.md describes every argument."""
    if _collector.absent():
        return False
    try:
        return _probe(name, tensor, scale, scale_inv, target, role, stream)
    except Exception as error:  # a strange tensor-like object must not stop the job
        _warn_once(("probe-error", type(error).__name__), f"probe {name!r} skipped: {type(error).__name__}: {error}")
        return False


def _probe(name, tensor, scale, scale_inv, target, role, stream):
    on_cuda = _on_cuda(tensor)
    api = _collector.api(cuda_is_up=on_cuda)
    if api is None or not _wanted(api):
        return False
    if not str(name):
        _warn_once("empty-name", "a probe without a name was skipped")
        return False
    if not on_cuda:
        _warn_once("not-cuda", f"probe {name!r} skipped: the tensor is not on a CUDA device (only CUDA tensors are "
                   "probed; further such skips are not reported)")
        return False
    dtype = _DTYPES.get(_dtype_name(tensor.dtype))
    if dtype is None:
        _warn_once(("dtype", _dtype_name(tensor.dtype)), f"probe {name!r} skipped: dtype {_dtype_name(tensor.dtype)} "
                   f"is not measured (supported: {', '.join(_DTYPES)})")
        return False
    numel = int(tensor.numel())
    if numel == 0:
        return False
    if not _contiguous(tensor):
        # A contiguous copy would cost a kernel and the tensor's size in memory inside the job; skip instead.
        _warn_once("non-contiguous", f"probe {name!r} skipped: the tensor is not contiguous (probe t.contiguous() "
                   "to measure it; further such skips are not reported)")
        return False
    target_format = _FP8_FORMAT_OF_DTYPE.get(dtype)
    if target_format is None:
        target_format = _target_code(target)
        if target_format is None:
            _warn_once(("target", str(target)), f"probe {name!r} skipped: unknown target {target!r} (use 'e4m3', "
                       "'e5m2' or None)")
            return False
    scale_fields = _scale_fields(name, scale, scale_inv, tensor)
    if scale_fields is None:
        return False
    scale_kind, scale_value, scale_device = scale_fields
    name_bytes = _name_bytes(name)  # kept alive across the call; the collector copies it
    args = _collector.ProbeArgs(
        struct_size=_collector.PROBE_ARGS_SIZE,
        name=name_bytes,
        data=int(tensor.data_ptr()),
        numel=numel,
        dtype=dtype,
        target_format=target_format,
        role=_role_code(role),
        scale_kind=scale_kind,
        scale=scale_value,
        scale_device=scale_device,
        stream=_current_stream(tensor, stream),
    )
    return api.probe(args) == _collector.OK


def step(n=None):
    """Mark the beginning of training step `n` (>= 0) on this thread; n=None means one more than the last step
    marked (0 at first). Returns True when the collector recorded it."""
    global _next_step, job_marks_steps
    job_marks_steps = True
    if n is None:
        n = _next_step
    else:
        try:
            n = int(n)
        except (TypeError, ValueError):
            n = -1
        if n < 0:
            _warn_once("step", f"step({n!r}) ignored: steps are integers >= 0")
            return False
    _next_step = n + 1  # counted even while nothing records, so that a collector found later sees true numbers
    for hook in list(step_boundary_hooks):
        hook()
    api = _collector.api()
    if api is None:
        return False
    marked = api.step(n) == _collector.OK
    _scaled_gemm.follow(_scaled_gemm.MARKER)
    return marked


def log_scalar(name, value, stream=None):
    """Record a scalar: a Python number, a host tensor, or a one-element float32/bfloat16/float16 CUDA tensor,
    which the collector reads when the stream reaches this point (no .item(), no sync). True when recorded."""
    global job_logs_loss
    if name == "loss":
        job_logs_loss = True
    return log_scalar_from_hook(name, value, stream)


def log_scalar_from_hook(name, value, stream=None):
    """log_scalar for the package's own hooks (_torch_hooks.py): the call is not taken for the job's own."""
    if _collector.absent():
        return False
    try:
        return _log_scalar(name, value, stream)
    except Exception as error:
        _warn_once(("scalar-error", type(error).__name__),
                   f"log_scalar {name!r} skipped: {type(error).__name__}: {error}")
        return False


def _log_scalar(name, value, stream):
    device_value = _is_tensor(value) and _on_cuda(value)
    api = _collector.api(cuda_is_up=device_value)
    if api is None:
        return False
    if not device_value:
        try:
            number = float(value)
        except (TypeError, ValueError):
            _warn_once("scalar-type", f"log_scalar {name!r} skipped: a number or a tensor is needed "
                       f"(got {type(value).__name__})")
            return False
        return api.scalar(_name_bytes(name), number) == _collector.OK
    dtype = _DTYPES.get(_dtype_name(value.dtype))
    if dtype not in _SCALAR_DTYPES or int(value.numel()) != 1:
        _warn_once("scalar-tensor", f"log_scalar {name!r} skipped: a device scalar must be a float32, bfloat16 or "
                   f"float16 tensor of one element (got {_dtype_name(value.dtype)}, {int(value.numel())} elements)")
        return False
    stream_handle = _current_stream(value, stream)
    return api.scalar_device(_name_bytes(name), int(value.data_ptr()), dtype, stream_handle) == _collector.OK


def _wanted(api):
    return api.stats_wanted is None or api.stats_wanted() != 0


def stats_wanted():
    """True when a probe made now would be measured: a collector records, inside a capture window (fp8scope record
    --capture-*) and in a sampled step (FP8SCOPE_STATS_EVERY). Instrumentation asks before preparing probes."""
    api = _collector.api()
    return api is not None and _wanted(api)


def recording():
    """True while a collector records activities (kernels, API calls, NVTX ranges): outside capture windows
    (fp8scope record --capture-*) it does not. Instrumentation that only names work for the trace asks it."""
    api = _collector.api()
    return api is not None and (api.recording is None or api.recording() != 0)


def enabled():
    """True when a collector with this package's C API version is loaded in the process (it may still decline to
    record, e.g. when another tool holds CUPTI). False while CUDA_INJECTION64_PATH names a collector that the CUDA
    driver has not loaded yet, i.e. before CUDA initializes."""
    return _collector.api() is not None
