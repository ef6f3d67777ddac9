#!/usr/bin/env python3
"""Zoo workload compile_graph_break (issue 42 item 5, stage zoo-markerless): torch.compile (default mode) of a model
whose forward has a data-dependent branch, so Dynamo breaks the graph there and the branch is decided on the host.

The model (fp32, batch 32 x 128 tokens, width 512): a pre-norm MLP block, then

    if torch.isfinite(h).all():      # a 0-d bool tensor in a Python `if`
        h = block1(h)
    else:
        h = torch.zeros_like(h)
    return head(h)

Dynamo cannot trace a Python `if` on a tensor: it compiles the code before it as one graph (returning h and the
condition), runs the `if` eagerly (Tensor.__bool__ -> .item(): cudaMemcpyAsync into pinned memory and
cudaStreamSynchronize, one host-blocking call), and compiles the rest as a second graph (the resume function) for
the branch taken. The input is finite, so the first branch is taken in every step: one resume graph. AOTAutograd
gives each forward graph its backward; the backward runs both without syncing. Fused AdamW outside the compiled
region; the loss is kept on the device. So the loop makes one sync per step (the branch), planted.syncs_per_step 1.
The first steps compile (Dynamo, AOTAutograd and Inductor's Triton kernels) and may sync more; the judge's
warm-up skips them.

Truth (zoo_common.truth): planted.syncs_per_step 1 with sync_calls, planted.compile_mode "default",
planted.graph_break "data-dependent branch on a tensor (if torch.isfinite(h).all())"; measured.graph_breaks (the sum
of torch._dynamo.utils.counters["graph_break"], Dynamo's count of graph breaks it met while compiling, 1 expected;
null where PyTorch does not expose it) and graph_break_reasons (their first 3 reasons, cut to 200 characters),
measured.unique_graphs (counters["stats"]["unique_graphs"], 2 expected, where present); measured.median_step_ms
(CUDA-event clock); losses (read after the loop), final_loss; marker_host_ns / marker_clock.

  compile_graph_break.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/gpu/zoo: zoo_common
import zoo_common as z  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from compile_mlp import Block  # noqa: E402  (the zoo's compiled MLP block: LayerNorm, Linear, GELU, Linear, residual)

D, BATCH, SEQ, CLASSES = 512, 32, 128, 512


class Branchy(nn.Module):
    """Two blocks and a head, with a data-dependent Python branch between the blocks (the graph break)."""

    def __init__(self):
        super().__init__()
        self.block0 = Block(D)
        self.block1 = Block(D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x):
        h = self.block0(x)
        if torch.isfinite(h).all():  # data-dependent: a graph break and a host sync
            h = self.block1(h)
        else:
            h = torch.zeros_like(h)
        return self.head(h)


def dynamo_counts():
    """(graph breaks, their first reasons, unique graphs) from torch._dynamo.utils.counters, None where absent."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None, None, None
    breaks = counters.get("graph_break", {}) if hasattr(counters, "get") else {}
    reasons = [str(reason)[:200] for reason in list(breaks)[:3]]
    stats = counters.get("stats", {}) if hasattr(counters, "get") else {}
    unique = stats.get("unique_graphs") if hasattr(stats, "get") else None
    return int(sum(breaks.values())), reasons, unique


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    args = p.parse_args()
    z.require_cuda("compile_graph_break")
    torch.manual_seed(0)
    model = Branchy().cuda()
    compiled = torch.compile(model)  # mode "default"
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(BATCH, SEQ, D, device="cuda", generator=g)
    y = torch.randint(0, CLASSES, (BATCH, SEQ), device="cuda", generator=g)
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    marker_ns = []
    for step in range(args.steps):
        z.begin_step(clock, step, marker_ns)
        logits = compiled(x)  # the branch's .item(): the step's one host sync
        loss = torch.nn.functional.cross_entropy(logits.view(-1, CLASSES), y.view(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    values = losses.tolist()
    breaks, reasons, unique = dynamo_counts()
    z.truth("compile_graph_break", args.steps,
            "a two-block MLP model under torch.compile (default) whose forward branches on a tensor "
            "(if torch.isfinite(h).all()): a graph break and one host sync per step; fused AdamW outside",
            step_ms,
            planted={"syncs_per_step": 1,
                     "sync_calls": ["cudaStreamSynchronize of Tensor.__bool__ (.item()) at the graph break"],
                     "compile_mode": "default",
                     "graph_break": "data-dependent branch on a tensor (if torch.isfinite(h).all())"},
            measured={"graph_breaks": breaks, "graph_break_reasons": reasons, "unique_graphs": unique},
            recipe="none", losses=values, final_loss=values[-1], **z.marker_fields(marker_ns))


if __name__ == "__main__":
    main()
