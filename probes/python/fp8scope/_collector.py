"""Finding libfp8scope.so's C API (probes/include/fp8scope.h) in this process, without ever loading it.

The collector reaches a process in one of two ways (docs/collector.md):
- LD_PRELOAD: the loader maps it into the global scope, so its symbols are visible through dlopen(NULL), which is
  what ctypes.CDLL(None) opens;
- CUDA_INJECTION64_PATH: the CUDA driver dlopen()s it at cuInit with RTLD_LOCAL, so its symbols are not global.
  dlopen(path, RTLD_NOLOAD) then hands back the already-loaded copy (glibc matches it by name or by file
  identity), and fails instead of loading when it is not there.

The package must never load the collector itself: a library loaded by Python rather than by the driver would not
be tracing anything, and its constructor would change the process's environment. Hence RTLD_NOLOAD everywhere.

The injection case has a twist: the driver loads the library only when CUDA initializes, which is usually after
`import fp8scope`. So "not found" is final only once CUDA is known to be initialized (or nothing can load it
later); until then each call looks again (one dlopen with RTLD_NOLOAD, a few microseconds).
"""

import ctypes
import os
import sys
import threading
import warnings

C_API_VERSION = 1  # FP8SCOPE_C_API_VERSION this package speaks; another value is another major version

# enum fp8scope_status
OK = 0
E_NOT_RECORDING = -1
E_INVALID_ARGUMENT = -2
E_SAMPLED_OUT = -3
E_CUDA = -4

_ABSENT, _PENDING, _FOUND = "absent", "pending", "found"
_SYMBOL = "fp8scope_api_version"
_SONAME = "libfp8scope.so"


class Fp8scopeWarning(UserWarning):
    """Every warning the package emits; filter it with warnings.simplefilter("ignore", fp8scope.Fp8scopeWarning)."""


class ProbeArgs(ctypes.Structure):
    """struct fp8scope_probe_args; ctypes lays it out with the platform's C alignment rules, as the compiler does."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("data", ctypes.c_void_p),
        ("numel", ctypes.c_uint64),
        ("dtype", ctypes.c_int32),
        ("target_format", ctypes.c_int32),
        ("role", ctypes.c_int32),
        ("scale_kind", ctypes.c_int32),
        ("scale", ctypes.c_float),
        ("scale_device", ctypes.c_void_p),
        ("stream", ctypes.c_void_p),
    ]


PROBE_ARGS_SIZE = ctypes.sizeof(ProbeArgs)  # struct_size: lets a later collector accept a longer struct

LIBRARY_GEMM = 1  # fp8scope_scaled_gemm: the GEMM ran through cuBLAS(Lt), whose interception has it


class GemmOperand(ctypes.Structure):
    """struct fp8scope_gemm_operand."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("recipe", ctypes.c_int32),
        ("rows", ctypes.c_int64),
        ("cols", ctypes.c_int64),
        ("row_stride", ctypes.c_int64),
        ("col_stride", ctypes.c_int64),
        ("scale", ctypes.c_void_p),
        ("scale_rows", ctypes.c_int64),
        ("scale_cols", ctypes.c_int64),
        ("scale_row_stride", ctypes.c_int64),
        ("scale_col_stride", ctypes.c_int64),
    ]


class ScaledGemmArgs(ctypes.Structure):
    """struct fp8scope_scaled_gemm_args."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("a", GemmOperand),
        ("b", GemmOperand),
        ("d", GemmOperand),
        ("stream", ctypes.c_void_p),
        ("groups", ctypes.c_int32),
    ]


SCALED_GEMM_ARGS_SIZE = ctypes.sizeof(ScaledGemmArgs)


class Api:
    """The C functions with their prototypes set, bound to one library handle."""

    def __init__(self, lib):
        self.api_version = lib.fp8scope_api_version
        self.api_version.argtypes = []
        self.api_version.restype = ctypes.c_int
        self.probe = lib.fp8scope_probe
        self.probe.argtypes = [ctypes.POINTER(ProbeArgs)]
        self.probe.restype = ctypes.c_int
        self.step = lib.fp8scope_step
        self.step.argtypes = [ctypes.c_int64]
        self.step.restype = ctypes.c_int
        self.scalar = lib.fp8scope_scalar
        self.scalar.argtypes = [ctypes.c_char_p, ctypes.c_double]
        self.scalar.restype = ctypes.c_int
        self.scalar_device = lib.fp8scope_scalar_device
        self.scalar_device.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p]
        self.scalar_device.restype = ctypes.c_int
        try:  # absent from older collectors: then every probe is prepared and the collector decides
            self.stats_wanted = lib.fp8scope_stats_wanted
            self.stats_wanted.argtypes = []
            self.stats_wanted.restype = ctypes.c_int
        except AttributeError:
            self.stats_wanted = None
        try:  # absent from older collectors: then statistics are taken to be wanted in every step
            self.stats_wanted_in_step = lib.fp8scope_stats_wanted_in_step
            self.stats_wanted_in_step.argtypes = [ctypes.c_int32]
            self.stats_wanted_in_step.restype = ctypes.c_int
        except AttributeError:
            self.stats_wanted_in_step = None
        try:  # absent from older collectors too: then the collector is taken to record all the time
            self.recording = lib.fp8scope_recording
            self.recording.argtypes = []
            self.recording.restype = ctypes.c_int
        except AttributeError:
            self.recording = None
        try:  # absent from older collectors: then PyTorch's scaled GEMMs are not reported
            self.scaled_gemm = lib.fp8scope_scaled_gemm
            self.scaled_gemm.argtypes = [ctypes.POINTER(ScaledGemmArgs)]
            self.scaled_gemm.restype = ctypes.c_int
        except AttributeError:
            self.scaled_gemm = None
        try:  # absent from older collectors: then the PyTorch step and loss hooks do nothing (_torch_hooks.py)
            self.step_end = lib.fp8scope_step_end
            self.step_end.argtypes = [ctypes.c_int64, ctypes.c_int32]
            self.step_end.restype = ctypes.c_int
        except AttributeError:
            self.step_end = None
        try:
            self.library_gemm = lib.fp8scope_library_gemm
            self.library_gemm.argtypes = [ctypes.c_void_p]
            self.library_gemm.restype = ctypes.c_int
        except AttributeError:
            self.library_gemm = None


_lock = threading.RLock()  # reentrant: a warning handler that calls fp8scope while a look-up warns must not hang
_state = _PENDING
_api = None
found_via = None  # once found: "global scope", "CUDA_INJECTION64_PATH" or "soname" (for diagnostics)


def _open_loaded(path):
    """The handle of an already-loaded library, or None. Never loads: RTLD_NOLOAD (ctypes adds RTLD_NOW)."""
    try:
        return ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
    except OSError:
        return None


def _find_library():
    """(handle on which fp8scope_api_version resolves, how it was found), or (None, None)."""
    candidates = [("global scope", None)]  # dlopen(NULL): where LD_PRELOAD puts the collector
    injection_path = os.environ.get("CUDA_INJECTION64_PATH")
    if injection_path:
        candidates.append(("CUDA_INJECTION64_PATH", injection_path))
    candidates.append(("soname", _SONAME))  # loaded some other way, found by its soname
    for how, path in candidates:
        lib = ctypes.CDLL(None) if path is None else _open_loaded(path)
        if lib is not None and hasattr(lib, _SYMBOL):
            return lib, how
    return None, None


def _cuda_initialized():
    """True when CUDA is known to be initialized in this process, so an injected collector would be loaded by
    now. Only PyTorch is asked, and only if it is already imported: this must neither import torch nor
    initialize CUDA."""
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:  # a half-imported or stand-in torch
        return False


def _could_still_arrive():
    """Whether a collector that is not here yet may be loaded later: only the CUDA driver loads it after start-up,
    and only when CUDA_INJECTION64_PATH is set and CUDA is not yet initialized."""
    return bool(os.environ.get("CUDA_INJECTION64_PATH")) and not _cuda_initialized()


def _resolve(cuda_is_up):
    global _state, _api, found_via
    lib, how = _find_library()
    if lib is None:
        if cuda_is_up or not _could_still_arrive():
            _state = _ABSENT
        return
    api = Api(lib)
    version = api.api_version()
    if version != C_API_VERSION:
        _state = _ABSENT  # before warning: a warning handler that calls fp8scope must find the matter settled
        warnings.warn(
            f"fp8scope: the loaded collector speaks C API version {version}, this package speaks version "
            f"{C_API_VERSION} (fp8scope calls are ignored; use the package that came with the collector)",
            Fp8scopeWarning,
            stacklevel=4,
        )
        return
    _api, found_via = api, how
    _state = _FOUND


def api(cuda_is_up=False):
    """The bound C API, or None when calls must be no-ops. `cuda_is_up`: the caller holds a CUDA tensor, so CUDA is
    initialized and a collector that is still not found never will be."""
    global _state
    if _state == _FOUND:
        return _api
    if _state == _ABSENT:
        return None
    with _lock:
        if _state == _PENDING:
            try:
                _resolve(cuda_is_up)
            except Exception as error:  # never let the look-up itself break the job
                _state = _ABSENT
                warnings.warn(f"fp8scope: looking up the collector failed: {error} (fp8scope calls are ignored)",
                              Fp8scopeWarning, stacklevel=3)
    return _api if _state == _FOUND else None


def absent():
    """True once it is settled that no usable collector is here: every call is then a no-op."""
    return _state == _ABSENT


def undecided():
    """True while no collector was found but one may still be loaded by the CUDA driver."""
    if _state == _PENDING:
        api()
    return _state == _PENDING
