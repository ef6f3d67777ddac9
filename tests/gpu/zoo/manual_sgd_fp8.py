#!/usr/bin/env python3
"""Zoo workload manual_sgd_fp8 (docs/accuracy.md "Scoreboard"): an FP8 MLP of 4 Fp8Linear layers
(samples/torch/fp8_linear.py: torch._scaled_mm with delayed scaling) trained by a hand-written SGD update under
torch.no_grad (p -= lr * p.grad; no torch.optim, so no optimizer kernels mark the step's end), closed by one
torch.cuda.synchronize() per step. Automatic step detection has only the recurring sync and the GEMM sequence to go by
(docs/accuracy.md "What the zoo found": 10 steps were once found for 40).

  manual_sgd_fp8.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

sys.path.insert(0, z.SAMPLES_TORCH)
import torch  # noqa: E402
from fp8_linear import Fp8Linear  # noqa: E402

D, BATCH, LAYERS = 1024, 256, 4


class Fp8Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(Fp8Linear(D, D, amax_history_len=16) for _ in range(LAYERS))
        g = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for layer in self.layers:  # Fp8Linear leaves its weight uninitialized
                layer.weight.copy_(torch.randn(D, D, generator=g) * D ** -0.5)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < LAYERS - 1:
                x = torch.nn.functional.gelu(x)
        return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--lr", type=float, default=1e-2)
    args = p.parse_args()
    z.require_cuda("manual_sgd_fp8")
    if torch.cuda.get_device_capability() < (8, 9):
        print("manual_sgd_fp8: FP8 needs compute capability 8.9 or newer; exiting with code 77", file=sys.stderr)
        sys.exit(77)
    model = Fp8Mlp().cuda()
    params = list(model.parameters())
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(BATCH, D, device="cuda", generator=g, dtype=torch.bfloat16)
    target = torch.randn(BATCH, D, device="cuda", generator=g, dtype=torch.bfloat16)
    clock = z.StepClock(args.steps, host=True)  # each step ends in a host sync
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        z.begin_step(clock, step)
        loss = (model(x).float() - target.float()).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            for p_ in params:  # the hand-written SGD update: no optimizer kernels
                p_ -= args.lr * p_.grad
                p_.grad = None
        losses[step] = loss.detach()
        torch.cuda.synchronize()  # the step's one host sync
    step_ms = clock.finish()
    z.truth("manual_sgd_fp8", args.steps,
            f"an FP8 MLP ({LAYERS} Fp8Linear, delayed scaling) with a hand-written SGD update (no torch.optim) and "
            "one torch.cuda.synchronize() per step",
            step_ms,
            planted={"syncs_per_step": 1, "optimizer": "none (p -= lr * p.grad under no_grad)"},
            recipe="delayed", drift="clean", final_loss=float(losses[-1]), fp8_linears=LAYERS)


if __name__ == "__main__":
    main()
