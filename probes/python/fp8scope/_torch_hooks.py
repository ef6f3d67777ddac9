"""Steps and the loss of a PyTorch job without code (docs/python.md, "Steps and loss without code").

`install(torch)`, called by _autoload once the job has imported torch under `fp8scope record`, adds:
- a global optimizer step post hook (torch.optim.optimizer.register_optimizer_step_post_hook): each optimizer step
  that ends a training step is marked with fp8scope_step_end(n, OPTIMIZER), n = 0, 1, 2, ... Several optimizers
  stepped in one iteration are one step: a post hook call belongs to the step marked last when no
  torch.autograd.backward ran since the previous call and this optimizer has not stepped in that step yet;
- GradScaler.step (torch.amp's, and torch.cuda.amp's where it is another class) wrapped: when it returns without
  the optimizer having stepped (inf or NaN gradients), fp8scope_step_end(n, OPTIMIZER_SKIPPED) names the skip;
- torch.autograd.backward wrapped (Tensor.backward calls it): a one-element float32/bfloat16/float16 CUDA tensor
  given to it is logged as the scalar "loss" on the device (fp8scope_scalar_device: no .item(), no sync), unscaled
  when GradScaler.scale (wrapped too) made it. It is held until the step's end (the job's next fp8scope.step() when
  the job marks its steps, else the optimizer hook), the next backward or exit, and logged then, in its step.

The job's own instrumentation wins: once it calls fp8scope.step(), no more optimizer markers; once it logs "loss",
no more loss from backward, and a held one is dropped (so step 0 has the job's loss once, not the hook's too). Nothing here may fail the job: the wrappers call what they wrap with the same arguments
and return its result or raise its error; an error of our own becomes one Fp8scopeWarning and the hooks go quiet.
"""

import atexit
import functools
import sys
import threading
import weakref

from . import _api, _collector, _scaled_gemm

OPTIMIZER, OPTIMIZER_SKIPPED = 1, 2  # enum fp8scope_step_end_source
_LOSS_DTYPES = ("float32", "bfloat16", "float16")

_lock = threading.RLock()
_installed = False
_quiet = False  # set after an error of our own: every wrapper then only calls what it wraps
_optimizer_hook = None  # the handle of the global post hook
_restore = []  # (owner, name, original) of every attribute replaced

# Step counting (under _lock): the number the next new step gets, the optimizers stepped in the current one, and
# whether a backward ran since the last post hook call.
_next_step = 0
_stepped = set()
_backward_since = True
_hook_calls = {}  # id(optimizer) -> post hook calls, for GradScaler.step to tell whether its optimizer stepped

# The loss of the last backward, logged at the next step boundary, backward or exit (_flush_loss), under _lock.
_pending_loss = None
_scaled = {}  # id(GradScaler.scale's output) -> (weakref to it, the unscaled input)
_inside = threading.local()  # depth of GradScaler wrappers on this thread (a subclass's method calling the base's)


def _warn_once(key, message):
    _api._warn_once(("torch hooks", key), message)  # the package's one warning per kind of problem


def _fail(error):
    """An error of our own: one warning, then every hook goes quiet and the optimizer hook is removed."""
    global _quiet
    _quiet = True
    _warn_once("error", f"the PyTorch step and loss hooks stopped after an error: {type(error).__name__}: {error}")
    try:
        if _optimizer_hook is not None:
            _optimizer_hook.remove()
    except Exception:
        pass


def _api_with_step_end():
    """The collector's C API when it can take step ends, else None (an older collector: one warning)."""
    api = _collector.api()
    if api is None:
        return None
    if api.step_end is None:
        _warn_once("no-step-end", "the loaded collector has no fp8scope_step_end (an older libfp8scope.so): steps "
                   "and the loss are not recorded without code")
        return None
    return api


def _mark(step, source):
    api = _api_with_step_end()
    if api is not None and not _api.job_marks_steps:
        api.step_end(step, source)  # FP8SCOPE_E_NOT_RECORDING (a forked worker, another tool) is silent
        _scaled_gemm.follow(_scaled_gemm.OPTIMIZER)


def _step_of(optimizer):
    """(the step this optimizer step ends, whether it is a new step); counts it."""
    global _next_step, _backward_since
    key = id(optimizer)
    with _lock:
        new = _backward_since or key in _stepped
        if new:
            _stepped.clear()
            _next_step += 1
        _backward_since = False
        _stepped.add(key)
        return _next_step - 1, new


def _on_optimizer_step(optimizer, args, kwargs):
    if _quiet:
        return
    try:
        if not _api.job_marks_steps:  # else the job's next fp8scope.step() ends the step: it may log its loss first
            _flush_loss()
        with _lock:
            _hook_calls[id(optimizer)] = _hook_calls.get(id(optimizer), 0) + 1
        step, new = _step_of(optimizer)
        if new:
            _mark(step, OPTIMIZER)
    except Exception as error:
        _fail(error)


def _on_skipped(optimizer):
    if not _api.job_marks_steps:
        _flush_loss()
    step, new = _step_of(optimizer)
    if new:
        _mark(step, OPTIMIZER_SKIPPED)


def _loss_of(tensor):
    """The tensor to log as "loss" for this backward, or None."""
    if _api.job_logs_loss or isinstance(tensor, (list, tuple)) or not _api._is_tensor(tensor):
        return None
    entry = _scaled.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        tensor = entry[1]  # GradScaler.scale made it: the unscaled loss
    if not _api._on_cuda(tensor) or _api._dtype_name(tensor.dtype) not in _LOSS_DTYPES or int(tensor.numel()) != 1:
        return None
    return tensor


def _flush_loss():
    """Logs the loss held since the last backward, unless the job has logged "loss" itself since: called where the
    step ends (the job's next fp8scope.step() when it marks its steps, which may log its loss after the optimizer
    step; else the optimizer hook), at the next backward and at exit, so that the value lands in the step it belongs
    to and a job that starts logging its loss in step 0 gets one value there."""
    global _pending_loss
    with _lock:
        loss, _pending_loss = _pending_loss, None
    if loss is not None and not _api.job_logs_loss and _api_with_step_end() is not None:
        _api.log_scalar_from_hook("loss", loss)


def _flush_loss_guarded():
    """_flush_loss for the job's fp8scope.step() and for exit: an error of our own becomes the one warning."""
    if _quiet:
        return
    try:
        _flush_loss()
    except Exception as error:
        _fail(error)


def _on_backward(tensors):
    global _backward_since, _pending_loss
    _flush_loss()  # gradient accumulation: the previous backward's loss, in this same step
    with _lock:
        _backward_since = True
    loss = _loss_of(tensors)
    if loss is not None:
        with _lock:
            _pending_loss = loss  # the tensor itself: no torch call here, and it is one element


def _wrap_backward(original):
    @functools.wraps(original)
    def backward(*args, **kwargs):
        if not _quiet:
            try:
                _on_backward(args[0] if args else kwargs.get("tensors"))
            except Exception as error:
                _fail(error)
        return original(*args, **kwargs)

    return backward


def _outermost():
    return getattr(_inside, "depth", 0) == 0


def _wrap_scale(original):
    @functools.wraps(original)
    def scale(self, outputs, *args, **kwargs):
        outer = _outermost()
        _inside.depth = getattr(_inside, "depth", 0) + 1
        try:
            result = original(self, outputs, *args, **kwargs)
        finally:
            _inside.depth -= 1
        if outer and not _quiet and result is not outputs:
            try:
                if _api._is_tensor(result) and _api._is_tensor(outputs):
                    key = id(result)
                    # The entry goes when the scaled loss does; the unscaled one is kept as long (one element).
                    _scaled[key] = (weakref.ref(result, lambda _, key=key: _scaled.pop(key, None)), outputs)
            except Exception as error:
                _fail(error)
        return result

    return scale


def _wrap_scaler_step(original):
    @functools.wraps(original)
    def step(self, optimizer, *args, **kwargs):
        outer = _outermost() and not _quiet
        if outer:
            before = _hook_calls.get(id(optimizer), 0)
        _inside.depth = getattr(_inside, "depth", 0) + 1
        try:
            result = original(self, optimizer, *args, **kwargs)
        finally:
            _inside.depth -= 1
        if outer:
            try:
                if _hook_calls.get(id(optimizer), 0) == before:  # GradScaler did not call optimizer.step()
                    _on_skipped(optimizer)
            except Exception as error:
                _fail(error)
        return result

    return step


def _replace(owner, name, wrap):
    original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    setattr(owner, name, wrap(original))
    _restore.append((owner, name, original))


def _scaler_classes(torch):
    classes = []
    for path in (("amp", "GradScaler"), ("cuda", "amp", "GradScaler")):
        obj = torch
        for part in path:
            obj = getattr(obj, part, None)
        if isinstance(obj, type) and obj not in classes:
            classes.append(obj)
    return classes


def _optimizer_module(torch):
    """torch.optim.optimizer, already imported by torch: torch.optim deletes its submodules' names from its namespace
    (PyTorch 2.11), so sys.modules has it where the attribute is gone."""
    module = sys.modules.get("torch.optim.optimizer")
    return module if module is not None else getattr(getattr(torch, "optim", None), "optimizer", None)


def install(torch):
    """Installs the hooks once per process; True when they are (now or already) installed."""
    global _installed, _optimizer_hook
    with _lock:
        if _installed:
            return True
        api = _collector.api()
        if api is not None and api.step_end is None:
            _api_with_step_end()  # warns: an older collector
            return False
        register = getattr(_optimizer_module(torch), "register_optimizer_step_post_hook", None)
        if register is None:
            _warn_once("no-post-hook", f"PyTorch {getattr(torch, '__version__', '?')} has no global optimizer step "
                       "post hook (2.0 or newer): steps and the loss are not recorded without code")
            return False
        try:
            _replace(torch.autograd, "backward", _wrap_backward)
            for cls in _scaler_classes(torch):
                if "scale" in cls.__dict__:
                    _replace(cls, "scale", _wrap_scale)
                if "step" in cls.__dict__:
                    _replace(cls, "step", _wrap_scaler_step)
            _optimizer_hook = register(_on_optimizer_step)
            _api.step_boundary_hooks.append(_flush_loss_guarded)
            atexit.register(_flush_loss_guarded)  # the last step's loss (before the collector shuts down)
        except Exception:
            uninstall()
            raise
        _installed = True
        return True


def uninstall():
    """Puts back what install() replaced and removes the optimizer hook (tests; an install that failed midway)."""
    global _installed, _optimizer_hook, _pending_loss
    with _lock:
        if _optimizer_hook is not None:
            _optimizer_hook.remove()
            _optimizer_hook = None
        _pending_loss = None
        if _flush_loss_guarded in _api.step_boundary_hooks:
            _api.step_boundary_hooks.remove(_flush_loss_guarded)
        atexit.unregister(_flush_loss_guarded)
        while _restore:
            owner, name, original = _restore.pop()
            setattr(owner, name, original)
        _installed = False
