#!/usr/bin/env python3
"""Zoo workload grad_accum (docs/accuracy.md "Scoreboard"): gradient accumulation. Each optimizer step runs K
micro-batches (forward and backward, the loss scaled by 1/K), then one AdamW step (foreach) and zero_grad. The step
marker sits at the start of each optimizer step only, so one step holds K forward/backward passes and one optimizer
update: automatic step detection must not cut it into K steps. No host sync in the loop.

  grad_accum.py [--steps N] [--accum K]     prints FP8SCOPE_GROUND_TRUTH last (steps = optimizer steps)
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, MICRO_BATCH, CLASSES = 1024, 64, 128


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--accum", type=int, default=4)
    args = p.parse_args()
    z.require_cuda("grad_accum")
    torch.manual_seed(0)
    model = z.mlp(D, 2048, CLASSES, blocks=3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    micro = [(torch.randn(MICRO_BATCH, D, device="cuda", generator=g, dtype=torch.bfloat16),
              torch.randint(0, CLASSES, (MICRO_BATCH,), device="cuda", generator=g)) for _ in range(args.accum)]
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        z.begin_step(clock, step)
        for x, y in micro:
            loss = torch.nn.functional.cross_entropy(model(x).float(), y) / args.accum
            loss.backward()
            losses[step] += loss.detach()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    step_ms = clock.finish()
    z.truth("grad_accum", args.steps,
            f"gradient accumulation: {args.accum} micro-batches (forward and backward) per AdamW step, a marker per "
            "optimizer step only; no host sync in the loop",
            step_ms,
            planted={"grad_accum": args.accum, "syncs_per_step": 0},
            recipe="none", final_loss=float(losses[-1]), micro_batch=MICRO_BATCH)


if __name__ == "__main__":
    main()
