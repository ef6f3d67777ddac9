#!/usr/bin/env python3
"""Zoo workload varlen (docs/accuracy.md "Scoreboard"): variable sequence lengths. A small transformer (embedding, 2
nn.TransformerEncoderLayer blocks, a linear head; bf16) trained on batches whose sequence length is drawn per step
from {64, 96, 128, 192} with a fixed seed: the kernels' shapes and durations change from step to step (and some
kernel choices with them), so steps are not repetitions of one kernel sequence. No host sync in the loop.

  varlen.py [--steps N] [--seed S]     prints FP8SCOPE_GROUND_TRUTH last (with the drawn lengths)
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

LENGTHS = (64, 96, 128, 192)
BATCH = 16


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    z.require_cuda("varlen")
    torch.manual_seed(0)
    draw = random.Random(args.seed)
    lengths = [draw.choice(LENGTHS) for _ in range(args.steps)]
    model = z.TinyLM().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        z.begin_step(clock, step)
        tokens = torch.randint(0, model.vocab, (BATCH, lengths[step] + 1), device="cuda", generator=g)
        loss = model.loss(tokens)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    z.truth("varlen", args.steps,
            f"a small transformer trained on sequence lengths drawn per step from {list(LENGTHS)}; no host sync",
            step_ms,
            planted={"syncs_per_step": 0, "seq_lengths": lengths},
            recipe="none", final_loss=float(losses[-1]), batch=BATCH)


if __name__ == "__main__":
    main()
