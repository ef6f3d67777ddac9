#!/usr/bin/env python3
"""NaN workload (docs/reliability.md "The collector under faults"): a small training loop whose loss goes NaN, the first
sign of a diverging FP8 run. The loss is logged as a one-element CUDA tensor (read by the collector on the stream, no
sync), and a host scalar `lr` is logged too; from step NAN_FROM on the weights are poisoned with NaN, so the loss is NaN
on the device; at step INF_STEP the host scalar is +Inf. Both are logged through the fp8scope package (a no-op when not
recorded).

  nan_scalars.py [STEPS [NAN_FROM]]

stdout: one line per step ('step N loss <repr>'), then FP8SCOPE_GROUND_TRUTH {json}: the steps, which steps' loss was
NaN (read after the loop), the host scalars logged as NaN and as Inf.
Exit codes: 0 done, 77 no CUDA device."""

import json
import math
import os
import sys

# Deterministic cuBLAS (set before CUDA initializes), so that the traced and untraced runs print the same losses.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def main():
    import torch

    if not torch.cuda.is_available():
        print("nan_scalars.py: no CUDA device; exiting with code 77", file=sys.stderr)
        return 77
    try:
        import fp8scope  # type: ignore
    except ImportError:
        fp8scope = None
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    nan_from = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    inf_step = 5
    torch.manual_seed(3)
    w = torch.randn(256, 256, device="cuda", requires_grad=True)
    x = torch.randn(64, 256, device="cuda")
    target = torch.randn(64, 256, device="cuda")
    losses = torch.zeros(steps, device="cuda")
    host_nan, host_inf = [], []
    for step in range(steps):
        if fp8scope is not None:
            fp8scope.step(step)
        if step == nan_from:
            with torch.no_grad():
                w[0, 0] = float("nan")  # poisoned: every later loss is NaN
        loss = ((x @ w - target) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 1e-3 * w.grad
            w.grad = None
        losses[step].copy_(loss.detach())
        lr = math.inf if step == inf_step else 1e-3
        if step == inf_step:
            host_inf.append(step)
        if fp8scope is not None:
            fp8scope.log_scalar("loss", losses[step])
            fp8scope.log_scalar("lr", lr)
            if step == steps - 1:
                fp8scope.log_scalar("host_nan", float("nan"))
        if step == steps - 1:
            host_nan.append(step)
    values = losses.tolist()
    for step, value in enumerate(values):
        print(f"step {step} loss {value!r}")
    truth = {"steps": steps, "loss_nan_steps": [s for s, v in enumerate(values) if math.isnan(v)],
             "host_nan": {"host_nan": host_nan}, "host_inf": {"lr": host_inf}}
    print("FP8SCOPE_GROUND_TRUTH " + json.dumps(truth), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
