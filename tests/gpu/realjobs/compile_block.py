#!/usr/bin/env python3
"""A torch.compile'd model (default mode, Inductor's Triton kernels launched through the driver API): a small
transformer-style MLP stack trained with fused AdamW, no host sync inside the loop.

  compile_block.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


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
    p.add_argument("--steps", type=int, default=30)
    args = p.parse_args()
    torch.manual_seed(0)
    d = 768
    model = nn.Sequential(*[Block(d) for _ in range(4)], nn.Linear(d, 1000)).cuda()
    compiled = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(64, 128, d, device="cuda")
    y = torch.randint(0, 1000, (64, 128), device="cuda")
    # Compilation happens in the first two calls (forward and backward graphs); they are steps like the rest.
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        common.mark_step(step)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = compiled(x)
            loss = torch.nn.functional.cross_entropy(logits.float().view(-1, 1000), y.view(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    torch.cuda.synchronize()
    common.print_truth("compile_block", args.steps, final_loss=float(losses[-1]))


if __name__ == "__main__":
    main()
