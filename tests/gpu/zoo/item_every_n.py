#!/usr/bin/env python3
"""Zoo workload item_every_n (docs/accuracy.md "Scoreboard"): an MLP training loop that logs its loss with .item() only
every N steps (step % N == N - 1): one host sync in those steps, none in the others. The GEMMs are large enough (batch
4096, width 4096) that the GPU, not the launches, should set the pace: the host then runs ahead between the logging
steps and waits for the GPU at each.

  item_every_n.py [--steps N] [--every E]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, BATCH, CLASSES = 2048, 4096, 128


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--every", type=int, default=10)
    args = p.parse_args()
    z.require_cuda("item_every_n")
    torch.manual_seed(0)
    model = z.mlp(D, 4096, CLASSES, blocks=3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(BATCH, D, device="cuda", generator=g, dtype=torch.bfloat16)
    y = torch.randint(0, CLASSES, (BATCH,), device="cuda", generator=g)
    clock = z.StepClock(args.steps)
    logged, sync_steps = [], []
    for step in range(args.steps):
        z.begin_step(clock, step)
        loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % args.every == args.every - 1:
            logged.append(loss.item())  # the logging step's one host sync
            sync_steps.append(step)
    step_ms = clock.finish()
    z.truth("item_every_n", args.steps,
            f"an MLP loop that reads its loss with .item() only every {args.every} steps",
            step_ms,
            planted={"sync_every": args.every, "sync_steps": sync_steps, "syncs_per_step": 1},
            recipe="none", logged_losses=logged)


if __name__ == "__main__":
    main()
