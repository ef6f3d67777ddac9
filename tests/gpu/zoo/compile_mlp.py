#!/usr/bin/env python3
"""Zoo workloads compile_default and compile_reduce_overhead (docs/accuracy.md "Scoreboard"): a small pre-norm MLP-block
model under torch.compile, default mode (Inductor's Triton kernels, launched through the driver API) or
mode="reduce-overhead" (the same kernels recorded into CUDA graphs by cudagraph trees and replayed; the first steps
warm up and record). Fused AdamW outside the compiled region, no host sync in the loop. Compilation happens in the
first steps (forward and backward graphs), which are steps like the others.

  compile_mlp.py --mode default|reduce-overhead [--steps N]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

D, BLOCKS, BATCH, SEQ, CLASSES = 512, 2, 32, 128, 512


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", required=True, choices=("default", "reduce-overhead"))
    p.add_argument("--steps", type=int, default=15)
    args = p.parse_args()
    z.require_cuda("compile_mlp")
    torch.manual_seed(0)
    model = nn.Sequential(*[Block(D) for _ in range(BLOCKS)], nn.Linear(D, CLASSES)).cuda()
    compiled = torch.compile(model, mode=args.mode)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(BATCH, SEQ, D, device="cuda", generator=g)
    y = torch.randint(0, CLASSES, (BATCH, SEQ), device="cuda", generator=g)
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    name = "compile_default" if args.mode == "default" else "compile_reduce_overhead"
    for step in range(args.steps):
        z.begin_step(clock, step)
        if args.mode == "reduce-overhead":
            # A new iteration for cudagraph trees: the previous step's graph outputs may be overwritten.
            torch.compiler.cudagraph_mark_step_begin()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = compiled(x)
        loss = torch.nn.functional.cross_entropy(logits.float().view(-1, CLASSES), y.view(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    z.truth(name, args.steps,
            f"a small MLP-block model under torch.compile(mode={args.mode!r}), fused AdamW outside it; the first "
            "steps compile; no host sync in the loop",
            step_ms,
            planted={"syncs_per_step": 0, "compile_mode": args.mode},
            recipe="none", final_loss=float(losses[-1]))


if __name__ == "__main__":
    main()
