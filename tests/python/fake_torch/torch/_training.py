"""The stand-in torch's training loop parts that fp8scope's step and loss hooks touch (fp8scope/_torch_hooks.py):
torch.autograd.backward (which Tensor.backward calls, looked up at each call as PyTorch's does), optimizers whose
step() runs the global post hooks of torch.optim.optimizer.register_optimizer_step_post_hook, and torch.amp's
GradScaler, whose step() skips the optimizer's step when told that the gradients hold an Inf
(`scaler.found_inf = True`), and torch.cuda.amp's, a subclass as in PyTorch 2.3 and newer. Each records what it did
in `calls` (the stand-in's list): ("backward", tensor), ("optimizer_step", name), ("scaler_skip", name)."""

import types

calls = None  # the stand-in's list, set by torch/__init__.py
_post_hooks = {}


class _RemovableHandle:
    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key

    def remove(self):
        self._hooks.pop(self._key, None)


def register_optimizer_step_post_hook(hook):
    key = object()
    _post_hooks[key] = hook
    return _RemovableHandle(_post_hooks, key)


class Optimizer:
    """step() returns what its closure returns (as PyTorch's optimizers do) and raises when `fail` is set."""

    def __init__(self, name):
        self.name, self.fail = name, False

    def step(self, closure=None):
        if self.fail:
            raise RuntimeError(f"{self.name}.step failed")
        calls.append(("optimizer_step", self.name))
        result = closure() if closure is not None else None
        for hook in list(_post_hooks.values()):
            hook(self, (), {})
        return result


optimizer = types.SimpleNamespace(register_optimizer_step_post_hook=register_optimizer_step_post_hook,
                                  Optimizer=Optimizer)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Returns None as PyTorch's does; raises when the tensor says so (`fail_backward`), as autograd would."""
    calls.append(("backward", tensors))
    if getattr(tensors, "fail_backward", False):
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    return None


class GradScaler:
    def __init__(self, scale=65536.0):
        self.scale_factor, self.found_inf = scale, False

    def scale(self, outputs):
        return outputs.scaled_copy()

    def step(self, optimizer, *args, **kwargs):
        if self.found_inf:
            calls.append(("scaler_skip", optimizer.name))
            return None
        return optimizer.step(*args, **kwargs)


class CudaGradScaler(GradScaler):
    """torch.cuda.amp.GradScaler: a subclass that adds nothing but a deprecation (PyTorch 2.3 and newer)."""
