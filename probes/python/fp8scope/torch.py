"""fp8scope.torch: PyTorch helpers. torch is imported only inside annotate(), never when fp8scope is imported.

intercept_scaled_mm() wraps PyTorch's scaled matmuls in the dispatcher (_scaled_gemm.py); annotate() calls it.

annotate(model) does two things while the model runs:
- NVTX ranges named after each module's qualified name ("blocks.0.qkv"; the root takes its class name), pushed and
  popped by forward pre/post hooks and, for the backward pass, by full backward pre/post hooks. The collector
  records NVTX ranges, so every GEMM the module launches carries the module's name in its NVTX path.
- High-precision statistics at FP8 casts (cast_stats=True): a TorchFunctionMode, entered at the outermost
  annotated forward and left when it returns, watches casts of float32/bfloat16/float16 tensors to float8_e4m3fn or
  float8_e5m2 (Tensor.to, Tensor.type, Tensor.copy_) and probes the SOURCE tensor against the target format with
  scale 1, named "<module>.<n>" for the n-th cast (from 0) in one run of the innermost running module.

Why only the forward pass gets cast statistics: the autograd engine restores each node's thread-local state,
torch-function modes included, from the state captured at .backward() (engine.cpp, ThreadLocalStateGuard around
every node), so a mode entered in a backward hook is gone by the next node; popping it later would even pop the
wrong mode. FP8 gradients are still seen as FP8 codes where the GEMM consumes them (zero-code statistics).
"""

import threading
import weakref

from . import _api, _collector

_CAST_FUNCTIONS = frozenset(("to", "type", "copy_"))
_HIGH_PRECISION = frozenset(("float32", "bfloat16", "float16"))
_FP8_TARGETS = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}

_annotated = weakref.WeakSet()  # root modules with hooks in place: annotating twice would nest every range twice
_mode_class = []  # the cast-statistics mode class, made once torch is imported


class Handle:
    """What annotate() returns: remove() takes every hook away again (a no-op when none was installed). Also a
    context manager that removes the hooks on exit."""

    def __init__(self, hooks=(), model=None, gate=None):
        self._hooks = list(hooks)
        self._model = model
        self._gate = gate

    @property
    def active(self):
        """True while hooks are installed."""
        return bool(self._hooks)

    def remove(self):
        hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook.remove()
        if self._gate is not None:
            self._gate.close()
        if hooks and self._model is not None:
            _annotated.discard(self._model)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()
        return False


class _Gate:
    """The submodules' hooks, present only while the collector wants them: while it records (inside a capture
    window) or while a probe would be measured. Outside windows the root's hooks alone stay, so the job runs
    without a hook on any submodule: full backward hooks wrap every module's inputs and outputs in autograd nodes
    and cost even when they do nothing (docs/python.md). Decided at the root's forward, before any submodule runs
    and after the previous step's backward has ended (a backward already set up keeps the hooks it was given)."""

    def __init__(self, wanted, install):
        self.wanted = wanted  # () -> bool, asked at each forward of the root
        self._install = install  # () -> the submodules' hook handles
        self._hooks = None  # the handles while installed
        self._closed = False

    @property
    def open(self):
        return self._hooks is not None

    def update(self, wanted):
        if self._closed or wanted == self.open:
            return
        if wanted:
            self._hooks = self._install()
        else:
            hooks, self._hooks = self._hooks, None
            for hook in hooks:
                hook.remove()

    def close(self):
        self.update(False)
        self._closed = True


class _ThreadState(threading.local):
    """Per thread, because forward runs on the caller's thread and backward on autograd's device threads, and NVTX
    ranges are per thread too."""

    def __init__(self):
        self.forward = []  # [qualified name, casts so far, module] per running annotated module, innermost last
        self.backward = []  # modules whose backward range is open, innermost last
        self.mode = None  # the cast-statistics mode, while entered on this thread
        self.mode_depth = 0  # len(forward) when it was entered


# One state for all annotated models, so that a model running inside another shares the module stack and the mode
# (two modes would measure every cast twice).
_state = _ThreadState()


def annotate(model, cast_stats=True, backward=True):
    """Install NVTX naming (and, with cast_stats, statistics at FP8 casts) on `model` and all its submodules.
    Installs nothing and returns an inactive Handle when no collector is loaded. backward=False leaves out the
    full backward hooks (see docs/python.md: they reject in-place changes of a module's inputs or outputs)."""
    if _collector.api() is None and not _collector.undecided():
        return Handle()
    if model in _annotated:
        _api._warn_once("annotate-twice", f"annotate: {type(model).__name__} is already annotated (call "
                        "remove() on the first handle first); nothing added")
        return Handle()
    try:
        import torch  # the caller holds a model, so this finds torch already imported
    except ImportError:
        _api._warn_once("annotate-no-torch", "annotate needs PyTorch; nothing installed")
        return Handle()

    intercept_scaled_mm(warn=False)
    state = _state
    if cast_stats and not _mode_class:
        _mode_class.append(_cast_mode_class(torch, state))
    cast_mode = _mode_class[0] if cast_stats else None
    push, pop = _nvtx_functions(torch)

    def hooks_of(modules, root):
        hooks = []
        try:
            for qualified_name, module in modules:
                name = qualified_name or type(model).__name__
                hooks += _forward_hooks(module, name, state, cast_mode, push, pop, gate, root)
                if backward:
                    hooks += _backward_hooks(module, name + ".backward", state, push, pop, gate)
        except Exception:  # e.g. a scripted module that refuses hooks: leave the model as it was
            for hook in hooks:
                hook.remove()
            raise
        return hooks

    def wanted():
        return _api.recording() or (cast_mode is not None and _api.stats_wanted())

    def install_submodules():
        try:
            return hooks_of(list(model.named_modules())[1:], root=False)
        except Exception as error:
            _api._warn_once("annotate-error", f"annotate: hooks could not be installed on the submodules "
                            f"({type(error).__name__}: {error}); only the model's own range is recorded")
            return []

    gate = _Gate(wanted, install_submodules)
    try:
        root_hooks = hooks_of([("", model)], root=True)
    except Exception as error:
        _api._warn_once("annotate-error", f"annotate: hooks could not be installed ({type(error).__name__}: "
                        f"{error}); the model runs unannotated")
        return Handle()
    gate.update(wanted())
    _annotated.add(model)
    return Handle(root_hooks, model, gate)


def intercept_scaled_mm(warn=True):
    """Wraps PyTorch's scaled matmuls (torch._scaled_mm and its variants) in the dispatcher, once per process, so
    that the collector sees every one with its recipe, whatever kernel runs it (docs/python.md, "Scaled GEMMs").
    `fp8scope record` does this by itself; annotate() calls it too. Returns True when the wrappers are in place; does
    nothing and returns False when no collector is loaded, or torch is not imported. warn=False: a PyTorch without
    torch.library.get_kernel (before 2.9) is left alone silently."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or (_collector.api() is None and not _collector.undecided()):
        return False
    from . import _scaled_gemm

    return _scaled_gemm.install(torch, warn=warn)


def _nvtx_functions(torch):
    try:
        import torch.cuda.nvtx as nvtx
    except ImportError:  # not a submodule in every build (nor in the tests' stand-in)
        nvtx = getattr(getattr(torch, "cuda", None), "nvtx", None)
    if nvtx is None or not hasattr(torch._C, "_nvtx"):  # a build without CUDA: names only, no ranges

        def nothing(*_):
            return None

        return nothing, nothing
    return nvtx.range_push, nvtx.range_pop


def _forward_hooks(module, name, state, cast_mode, push, pop, gate, root):
    def before(mod, args):
        if root:
            gate.update(gate.wanted())
            if not gate.open:
                return
        elif _collector.api() is None:
            return
        push(name)
        state.forward.append([name, 0, mod])
        # The mode sees every torch call of the forward; outside capture windows and sampled steps no probe would be
        # measured, so it is not entered (H100, 2026-11-24: annotate cost about 14% of the training sample's step
        # outside a capture window while the mode was entered regardless).
        if cast_mode is not None and state.mode is None and _api.stats_wanted():
            mode = cast_mode()
            mode.__enter__()
            state.mode, state.mode_depth = mode, len(state.forward)

    def after(mod, args, output):
        frames = state.forward
        if not frames or frames[-1][2] is not mod:  # `before` did nothing for this call
            return
        if state.mode is not None and state.mode_depth == len(frames):
            mode, state.mode = state.mode, None
            mode.__exit__(None, None, None)
        frames.pop()
        pop()

    pre = module.register_forward_pre_hook(before)
    try:  # always_call (PyTorch >= 2.1): the range is closed and the mode left even when forward raises
        post = module.register_forward_hook(after, always_call=True)
    except TypeError:
        post = module.register_forward_hook(after)
    return [pre, post]


def _backward_hooks(module, name, state, push, pop, gate):
    if not hasattr(module, "register_full_backward_pre_hook"):  # PyTorch < 2.0: no backward ranges
        return []

    def before(mod, grad_output):
        if not gate.open or _collector.api() is None:
            return None
        push(name)
        state.backward.append(mod)
        return None

    def after(mod, grad_input, grad_output):
        # Close this module's range and any range left open inside it: a module whose gradient never reached its
        # inputs gets its pre-hook but not this hook, and an unclosed NVTX range would misname all later work.
        opened = state.backward
        for depth in range(len(opened) - 1, -1, -1):
            if opened[depth] is mod:
                while len(opened) > depth:
                    opened.pop()
                    pop()
                break
        return None

    return [module.register_full_backward_pre_hook(before), module.register_full_backward_hook(after)]


def _cast_mode_class(torch, state):
    TorchFunctionMode = torch.overrides.TorchFunctionMode  # `import torch` imports torch.overrides

    tensor_type = torch.Tensor
    parameter_type = torch.nn.Parameter

    def on_cast(function_name, args, result):
        if function_name == "copy_":  # dst.copy_(src)
            if len(args) < 2:
                return
            source, destination = args[1], args[0]
        else:  # src.to(...), src.type(...)
            if not args:
                return
            source, destination = args[0], result
        if not isinstance(source, tensor_type) or not isinstance(destination, tensor_type):
            return
        target = _FP8_TARGETS.get(_api._dtype_name(destination.dtype))
        if target is None or _api._dtype_name(source.dtype) not in _HIGH_PRECISION or not state.forward:
            return
        frame = state.forward[-1]
        ordinal, frame[1] = frame[1], frame[1] + 1
        role = "weight" if isinstance(source, parameter_type) else None
        # The source is already multiplied by the scale when it reaches the cast, hence scale 1.
        _api.probe(f"{frame[0]}.{ordinal}", source, scale=1.0, target=target, role=role)

    class CastStatisticsMode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            # While this runs the mode is off (PyTorch pops it), so the call below and the probe see no mode.
            result = func(*args, **(kwargs or {}))
            function_name = getattr(func, "__name__", None)
            if function_name in _CAST_FUNCTIONS:
                try:
                    on_cast(function_name, args, result)
                except Exception as error:
                    _api._warn_once("cast-error", f"annotate: a cast was not measured ({type(error).__name__}: "
                                    f"{error})")
            return result

    return CastStatisticsMode
