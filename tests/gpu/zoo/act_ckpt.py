#!/usr/bin/env python3
"""Zoo workload act_ckpt (docs/accuracy.md "Scoreboard"): activation checkpointing. The varlen workload's transformer at
a fixed sequence length, each block wrapped in torch.utils.checkpoint (use_reentrant=False): every block's forward runs
a second time inside the backward pass, so a step's kernel sequence is forward, then backward interleaved with
recomputed forwards. No host sync in the loop.

  act_ckpt.py [--steps N] [--seq L]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

BATCH = 16


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--seq", type=int, default=128)
    args = p.parse_args()
    z.require_cuda("act_ckpt")
    torch.manual_seed(0)
    model = z.TinyLM(checkpoint=True).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    tokens = torch.randint(0, model.vocab, (BATCH, args.seq + 1), device="cuda", generator=g)
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        z.begin_step(clock, step)
        loss = model.loss(tokens)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    z.truth("act_ckpt", args.steps,
            f"a small transformer (2 blocks) with torch.utils.checkpoint around each block (use_reentrant=False), "
            f"sequence {args.seq}; no host sync",
            step_ms,
            planted={"syncs_per_step": 0, "checkpointed_blocks": len(model.blocks)},
            recipe="none", final_loss=float(losses[-1]), batch=BATCH, seq=args.seq)


if __name__ == "__main__":
    main()
