#!/usr/bin/env python3
"""Zoo workload eval_every_n (docs/accuracy.md "Scoreboard"): a training loop that evaluates every N steps. Every step
trains one batch (no host sync); in every N-th step (step % N == N - 1), after the optimizer step and inside the same
marked step, an evaluation pass runs: model.eval(), torch.no_grad() forward over 3 held-out batches, and one .item() of
their mean loss (that step's one host sync), then model.train(). The evaluation steps are longer and hold a sync that
the others do not.

  eval_every_n.py [--steps N] [--eval-every E]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, BATCH, CLASSES, EVAL_BATCHES = 1024, 128, 128, 3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--eval-every", type=int, default=5)
    args = p.parse_args()
    z.require_cuda("eval_every_n")
    torch.manual_seed(0)
    model = z.mlp(D, 2048, CLASSES, blocks=3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device="cuda").manual_seed(1)

    def batch():
        return (torch.randn(BATCH, D, device="cuda", generator=g, dtype=torch.bfloat16),
                torch.randint(0, CLASSES, (BATCH,), device="cuda", generator=g))

    train_batch = batch()
    eval_batches = [batch() for _ in range(EVAL_BATCHES)]
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    eval_steps, eval_losses = [], []
    for step in range(args.steps):
        z.begin_step(clock, step)
        x, y = train_batch
        loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
        if step % args.eval_every == args.eval_every - 1:
            model.eval()
            with torch.no_grad():
                held_out = torch.stack([torch.nn.functional.cross_entropy(model(ex).float(), ey)
                                        for ex, ey in eval_batches])
            eval_losses.append(held_out.mean().item())  # this step's one host sync
            eval_steps.append(step)
            model.train()
    step_ms = clock.finish()
    z.truth("eval_every_n", args.steps,
            f"training steps with an evaluation pass (no_grad forward over {EVAL_BATCHES} batches and one .item()) "
            f"inside every {args.eval_every}th step",
            step_ms,
            planted={"eval_every": args.eval_every, "eval_steps": eval_steps, "sync_every": args.eval_every,
                     "syncs_per_step": 1, "eval_batches": EVAL_BATCHES},
            recipe="none", final_loss=float(losses[-1]), eval_losses=eval_losses)


if __name__ == "__main__":
    main()
