"""Scenarios of the step and loss hooks (fp8scope/_torch_hooks.py) for python_torch_hooks_test.cpp, run through
package_scenarios.py. Each starts as `fp8scope record` starts a Python job (fp8scope/_boot first on PYTHONPATH, set by
the test), imports the stand-in torch and runs a training loop on it. Losses get fixed data pointers (0xA0 + n), so
the collector's log names which tensor was logged."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def show(key, value):
    print(f"{key}={value}")


def import_torch():
    sys.path.insert(0, os.path.join(HERE, "fake_torch"))
    import torch

    return torch


def loss(torch, n, dtype=None, numel=1, device="cuda"):
    tensor = torch.Tensor(numel, dtype or torch.float32, device)
    tensor._ptr = 0xA0 + n
    return tensor


def wrapped(torch):
    return hasattr(torch.autograd.backward, "__wrapped__")


def hooks_loop(fp8scope):
    """Every rule on one loop: plain steps, two optimizers, accumulation, evaluation, GradScaler."""
    torch = import_torch()
    show("wrapped", wrapped(torch))
    show("post_hooks", len(torch._training._post_hooks))
    opt, opt_b = torch._training.Optimizer("opt"), torch._training.Optimizer("opt_b")
    for n in range(3):  # steps 0, 1, 2: one backward, one optimizer step
        loss(torch, n).backward()
        opt.step()
    print("phase=two optimizers")  # step 3: two optimizers stepped after one backward
    loss(torch, 3).backward()
    opt.step()
    opt_b.step()
    print("phase=accumulation")  # step 4: three backward passes, one optimizer step
    for n in range(4, 7):
        loss(torch, n).backward()
    opt.step()
    print("phase=evaluation")  # no backward, no optimizer step: no step, no loss
    loss(torch, 7)
    print("phase=not a loss")  # backward of tensors that are not a loss: no scalar (still a backward)
    loss(torch, 8, numel=4).backward()
    loss(torch, 9, device="cpu").backward()
    loss(torch, 10, dtype=torch.int32).backward()
    torch.autograd.backward([loss(torch, 11)])
    opt.step()  # step 5
    print("phase=scaler")  # step 6 stepped by GradScaler: the unscaled loss is logged; step 7 skipped
    scaler = torch.amp.GradScaler()
    torch.autograd.backward(tensors=scaler.scale(loss(torch, 12)))
    show("scaler_step_returns", scaler.step(opt, closure=lambda: "closure result"))
    scaler.found_inf = True
    scaler.scale(loss(torch, 13, dtype=torch.bfloat16)).backward()
    show("skipped_returns", scaler.step(opt))
    print("phase=cuda scaler")  # torch.cuda.amp.GradScaler, a subclass: step 8 skipped, named once
    cuda_scaler = torch.cuda.amp.GradScaler()
    cuda_scaler.found_inf = True
    cuda_scaler.scale(loss(torch, 14)).backward()
    cuda_scaler.step(opt)
    cuda_scaler.step(opt_b)  # the second optimizer of the same step: no second marker
    print("phase=errors")  # torch's own errors pass through unchanged, and count for nothing
    failing = loss(torch, 15)
    failing.fail_backward = True
    try:
        failing.backward()
    except RuntimeError as error:
        show("backward_error", error)
    opt.fail, scaler.found_inf = True, False
    try:
        scaler.step(opt)
    except RuntimeError as error:
        show("step_error", error)
    show("backward_returns", loss(torch, 16).backward())


def hooks_job_instrumented(fp8scope):
    """A job that marks its steps and logs its loss itself: the hooks write neither once it has."""
    torch = import_torch()
    opt = torch._training.Optimizer("opt")
    for n in range(2):
        fp8scope.step()
        value = loss(torch, n)
        value.backward()  # step 0: the hook holds this loss, and drops it at the job's own log_scalar("loss")
        opt.step()  # the job logs its loss after the optimizer step (samples/torch/train.py does)
        fp8scope.log_scalar("loss", value)


def hooks_job_marks_steps(fp8scope):
    """A job that marks its steps but leaves the loss to the hooks, with no optimizer (a hand-written update): each
    loss is logged at the job's next fp8scope.step(), before its marker, and the last one at exit."""
    torch = import_torch()
    for n in range(2):
        fp8scope.step()
        loss(torch, n).backward()


def hooks_old_collector(fp8scope):
    """A collector without fp8scope_step_end: nothing installed, one warning."""
    fp8scope._collector.api().step_end = None
    torch = import_torch()
    show("wrapped", wrapped(torch))
    loss(torch, 0).backward()
    torch._training.Optimizer("opt").step()


def hooks_error(fp8scope):
    """An error of the hooks' own (a tensor-like object that raises when asked its dtype): one warning, the call
    goes on unchanged, and the hooks are quiet from then on."""
    torch = import_torch()

    class Strange:
        def data_ptr(self):
            return 0x1

        @property
        def dtype(self):
            raise ValueError("no dtype")

    show("strange_returns", torch.autograd.backward(Strange()))
    loss(torch, 0).backward()
    torch._training.Optimizer("opt").step()
    show("post_hooks", len(torch._training._post_hooks))


SCENARIOS = {
    f.__name__: f
    for f in (hooks_loop, hooks_job_instrumented, hooks_job_marks_steps, hooks_old_collector, hooks_error)
}
