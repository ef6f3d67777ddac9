#!/usr/bin/env python3
"""Zoo workload graph_replay (docs/accuracy.md "Scoreboard"): an MLP training step (forward, backward, AdamW with
capturable=True) captured once with torch.cuda.graph after a warm-up on a side stream (PyTorch's whole-network capture
recipe, as tests/gpu/realjobs/whatif.py --mode graph) and replayed every step: each step is one input copy into the
static batch and one cudaGraphLaunch, its kernels graph kernels. No host sync in the loop.

  graph_replay.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, BATCH, CLASSES = 1024, 256, 128


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    args = p.parse_args()
    z.require_cuda("graph_replay")
    torch.manual_seed(0)
    model = z.mlp(D, 2048, CLASSES, blocks=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=True, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    batches = [(torch.randn(BATCH, D, device="cuda", generator=g, dtype=torch.bfloat16),
                torch.randint(0, CLASSES, (BATCH,), device="cuda", generator=g)) for _ in range(4)]
    static_x, static_y = (t.clone() for t in batches[0])

    def step_body():
        loss = torch.nn.functional.cross_entropy(model(static_x).float(), static_y)
        loss.backward()
        optimizer.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            step_body()
    torch.cuda.current_stream().wait_stream(side)
    optimizer.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = step_body()
    torch.cuda.synchronize()

    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        z.begin_step(clock, step)
        x, y = batches[step % len(batches)]
        static_x.copy_(x, non_blocking=True)
        static_y.copy_(y, non_blocking=True)
        graph.replay()
        losses[step] = static_loss.detach()
    step_ms = clock.finish()
    z.truth("graph_replay", args.steps,
            "an MLP training step (forward, backward, AdamW capturable) captured once with torch.cuda.graph and "
            "replayed each step; no host sync in the loop",
            step_ms,
            planted={"syncs_per_step": 0, "graph_launches_per_step": 1},
            recipe="none", final_loss=float(losses[-1]))


if __name__ == "__main__":
    main()
