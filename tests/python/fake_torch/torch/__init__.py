"""A stand-in for the few parts of PyTorch that fp8scope.torch touches, for tests on machines without torch.

It models: dtypes printed as "torch.<name>"; tensors with data_ptr/numel/dtype/device/is_contiguous and a `to`,
`type` and `copy_` that go through torch-function modes as PyTorch's do (the innermost mode is popped while its
__torch_function__ runs); nn.Module with named_modules and forward/backward hooks whose handles remove them; NVTX
push/pop and the current stream, recorded in `calls`. Backward hooks are fired by the test itself
(Module.fire_backward_pre / fire_backward), since there is no autograd here. The training loop's parts (backward,
optimizers and their global post hooks, GradScaler) are in _training.py.
"""

import itertools
import sys
import types

from . import _training

calls = []  # ("push", name), ("pop",), ("mode_enter",), ("mode_exit",) in the order they happened
_training.calls = calls
autograd = types.SimpleNamespace(backward=_training.backward)
# As in PyTorch 2.11, torch.optim deletes its submodules' names: torch.optim.optimizer is only in sys.modules.
optim = types.SimpleNamespace()
sys.modules["torch.optim.optimizer"] = _training.optimizer
amp = types.SimpleNamespace(GradScaler=_training.GradScaler)
_modes = []
_addresses = itertools.count(0x10000, 0x1000)


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


float32, bfloat16, float16, int32 = dtype("float32"), dtype("bfloat16"), dtype("float16"), dtype("int32")
float8_e4m3fn, float8_e5m2 = dtype("float8_e4m3fn"), dtype("float8_e5m2")
float8_e8m0fnu = dtype("float8_e8m0fnu")


class device:
    def __init__(self, type, index=None):
        self.type, self.index = type, index


def _dispatch(func, args, implementation):
    if not _modes:
        return implementation()
    mode = _modes.pop()
    try:
        return mode.__torch_function__(func, (Tensor,), args, {})
    finally:
        _modes.append(mode)


class Tensor:
    def __init__(self, numel=16, dtype=bfloat16, device_type="cuda", contiguous=True):
        self._ptr, self._numel, self.dtype = next(_addresses), numel, dtype
        self.device, self._contiguous = device(device_type, 0 if device_type == "cuda" else None), contiguous

    def data_ptr(self):
        return self._ptr

    def numel(self):
        return self._numel

    def is_contiguous(self):
        return self._contiguous

    def to(self, dtype):
        return _dispatch(Tensor.to, (self, dtype), lambda: Tensor(self._numel, dtype, self.device.type))

    def type(self, dtype):
        return _dispatch(Tensor.type, (self, dtype), lambda: Tensor(self._numel, dtype, self.device.type))

    def copy_(self, source):
        return _dispatch(Tensor.copy_, (self, source), lambda: self)

    def add(self, other):  # any other torch function: must pass through the mode untouched
        return _dispatch(Tensor.add, (self, other), lambda: Tensor(self._numel, self.dtype, self.device.type))

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        return autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def scaled_copy(self):  # what GradScaler.scale returns: the loss times the scale, a new tensor
        return Tensor(self._numel, self.dtype, self.device.type)


def empty(numel, dtype=bfloat16):
    return Tensor(numel, dtype)


class _Stream:
    def __init__(self, handle):
        self.cuda_stream = handle


def _current_stream(device=None):
    return _Stream(0x5000 + (getattr(device, "index", None) or 0))


def _range_push(name):
    calls.append(("push", name))


def _range_pop():
    calls.append(("pop",))


cuda = types.SimpleNamespace(
    amp=types.SimpleNamespace(GradScaler=_training.CudaGradScaler),
    current_stream=_current_stream,
    is_initialized=lambda: True,
    nvtx=types.SimpleNamespace(range_push=_range_push, range_pop=_range_pop),
)
_C = types.SimpleNamespace(_nvtx=object())


class TorchFunctionMode:
    def __enter__(self):
        calls.append(("mode_enter",))
        _modes.append(self)
        return self

    def __exit__(self, *exc_info):
        calls.append(("mode_exit",))
        _modes.pop()
        return False


overrides = types.SimpleNamespace(TorchFunctionMode=TorchFunctionMode)


class _HookHandle:
    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook
        hooks.append(hook)

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class Parameter(Tensor):
    pass


class Module:
    def __init__(self):
        object.__setattr__(self, "_children", {})
        self.hooks = {"pre": [], "post": [], "always": [], "backward_pre": [], "backward": []}

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._children[name] = value
        object.__setattr__(self, name, value)

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self._children.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def hook_count(self):
        """Hooks installed on this module and all below it."""
        return sum(len(hooks) for _, module in self.named_modules() for hooks in module.hooks.values())

    def register_forward_pre_hook(self, hook):
        return _HookHandle(self.hooks["pre"], hook)

    def register_forward_hook(self, hook, always_call=False):
        return _HookHandle(self.hooks["always" if always_call else "post"], hook)

    def register_full_backward_pre_hook(self, hook):
        return _HookHandle(self.hooks["backward_pre"], hook)

    def register_full_backward_hook(self, hook):
        return _HookHandle(self.hooks["backward"], hook)

    def __call__(self, *args):
        for hook in list(self.hooks["pre"]):
            hook(self, args)
        try:
            result = self.forward(*args)
        except Exception:
            for hook in list(self.hooks["always"]):
                hook(self, args, None)
            raise
        for hook in list(self.hooks["post"]) + list(self.hooks["always"]):
            hook(self, args, result)
        return result

    def fire_backward_pre(self):
        for hook in list(self.hooks["backward_pre"]):
            hook(self, (None,))

    def fire_backward(self):
        for hook in list(self.hooks["backward"]):
            hook(self, (None,), (None,))


nn = types.SimpleNamespace(Module=Module, Parameter=Parameter)


# ---- torch._scaled_mm and torch.library, as fp8scope's dispatcher interception (_scaled_gemm.py) uses them --------

class Matrix:
    """A 2-D tensor: shape, stride (elements), dtype, data_ptr; `t()` is the transposed view."""

    def __init__(self, rows, cols, dtype=bfloat16, stride=None, ptr=None):
        self.shape = (rows, cols)
        self._stride = stride or (cols, 1)
        self.dtype, self._ptr = dtype, ptr or next(_addresses)
        self.device = device("cuda", 0)

    def stride(self):
        return self._stride

    def dim(self):
        return 2

    def numel(self):
        return self.shape[0] * self.shape[1]

    def data_ptr(self):
        return self._ptr

    def t(self):
        return Matrix(self.shape[1], self.shape[0], self.dtype, (self._stride[1], self._stride[0]), self._ptr)

    def is_contiguous(self):
        return self._stride == (self.shape[1], 1)

    def reshape(self, rows, cols):
        """A view of a contiguous matrix (rows -1: inferred); the fake cannot copy."""
        rows = self.numel() // cols if rows == -1 else rows
        assert self.is_contiguous() and rows * cols == self.numel()
        return Matrix(rows, cols, self.dtype, None, self._ptr)


class Stack:
    """A 3-D tensor (G, rows, cols) for torch._scaled_grouped_mm: transpose(1, 2), reshape to a matrix when the
    result is a view."""

    def __init__(self, groups, rows, cols, dtype=bfloat16, stride=None, ptr=None):
        self.shape = (groups, rows, cols)
        self._stride = stride or (rows * cols, cols, 1)
        self.dtype, self._ptr = dtype, ptr or next(_addresses)
        self.device = device("cuda", 0)

    def dim(self):
        return 3

    def data_ptr(self):
        return self._ptr

    def transpose(self, d0, d1):
        assert (d0, d1) == (1, 2)
        g, r, c = self.shape
        return Stack(g, c, r, self.dtype, (self._stride[0], self._stride[2], self._stride[1]), self._ptr)

    def is_contiguous(self):
        g, r, c = self.shape
        return self._stride == (r * c, c, 1)

    def reshape(self, rows, cols):
        assert self.is_contiguous()
        g, r, c = self.shape
        return Matrix(g * r * c // cols if rows == -1 else rows, cols, self.dtype, None, self._ptr)


class _Kernel:
    """What torch.library.get_kernel returns: the op's CUDA kernel, called boxed with a dispatch key set."""

    def __init__(self, name):
        self.name = name

    def call_boxed(self, keyset, *args, **kwargs):
        calls.append(("kernel", self.name, keyset))
        if kwargs.get("raise_in_kernel"):
            raise RuntimeError("the kernel failed")
        if "out" in kwargs:
            return kwargs["out"]
        if args[1].dim() == 3:  # _scaled_grouped_mm, 2D x 3D: (M_total, N)
            return Matrix(args[0].shape[0], args[1].shape[2], kwargs.get("out_dtype") or bfloat16)
        return Matrix(args[0].shape[0], args[1].shape[1], kwargs.get("out_dtype") or bfloat16)


class Library:
    """torch.library.Library("aten", "IMPL"): impl() records the wrapper; registered[name] = (fn, key, with_keyset).
    _destroy() takes this library's wrappers out again (the op's own kernel is its CUDA kernel once more)."""

    registered = {}
    destroyed = 0

    def __init__(self, ns, kind):
        self.ns, self.kind = ns, kind
        self._names = []

    def impl(self, name, fn, dispatch_key, with_keyset=False):
        Library.registered[name] = (fn, dispatch_key, with_keyset)
        self._names.append(name)

    def _destroy(self):
        Library.destroyed += 1
        for name in self._names:
            Library.registered.pop(name, None)
        self._names = []


def _get_kernel(op, dispatch_key):
    calls.append(("get_kernel", op, dispatch_key))
    return _Kernel(op)


library = types.SimpleNamespace(Library=Library, get_kernel=_get_kernel)


class _Packet:
    def __init__(self, overloads):
        self._overloads = overloads

    def overloads(self):
        return list(self._overloads)


ops = types.SimpleNamespace(aten=types.SimpleNamespace(_scaled_mm=_Packet(["default", "out"]),
                                                       _scaled_grouped_mm=_Packet(["default"])))
