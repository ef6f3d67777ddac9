#!/usr/bin/env python3
"""Zoo workload eager_mlp_item (the CUDA-Graphs what-if, docs/analysis.md "What-if estimates"). A plain bf16 MLP of 6
blocks (Linear + GELU, width 1024, batch 64), AdamW(capturable=True, foreach), one loss.item() per step.

  --mode eager   the step runs eagerly: autograd's and the optimizer's Python work leaves the launching thread
                 silent inside the step (between its first and last launch); a graph replay removes that silence.
  --mode graph   the whole step (forward, backward, optimizer step) is captured once with torch.cuda.graph after a
                 warm-up on a side stream (as tests/gpu/realjobs/whatif.py does) and replayed; .item() of the
                 static loss after each replay.

Both modes time each step from its start to the next one's with the host clock (each step ends in the .item(), so
host and GPU agree; median after the warm-up steps, no CUDA call added to the step): run untraced, they give
the eager step and the graph replay that the analyzer's what-if, made from a traced eager run, must predict. The
zoo records --mode eager traced and runs both modes untraced (tests/gpu/check_zoo.py merges eager_ms and
graph_replay_ms into the kept truth).

  eager_mlp_item.py [--mode eager|graph] [--steps N]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, BATCH, BLOCKS, CLASSES = 1024, 64, 6, 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=("eager", "graph"), default="eager")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    z.require_cuda("eager_mlp_item")
    torch.manual_seed(0)
    model = z.mlp(D, D, CLASSES, blocks=BLOCKS)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=True, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(BATCH, D, device="cuda", generator=g, dtype=torch.bfloat16)
    y = torch.randint(0, CLASSES, (BATCH,), device="cuda", generator=g)

    def step_body():
        loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        optimizer.step()
        return loss

    graph = None
    if args.mode == "graph":
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

    clock = z.StepClock(args.steps, host=True)  # each step ends in a host sync
    losses = []
    for step in range(args.steps):
        z.begin_step(clock, step)
        if graph is not None:
            graph.replay()
            losses.append(static_loss.item())  # the step's one host sync
        else:
            loss = step_body()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())  # the step's one host sync
    step_ms = clock.finish()
    z.truth("eager_mlp_item", args.steps,
            f"a plain bf16 MLP ({BLOCKS} Linear+GELU blocks, width {D}, batch {BATCH}), AdamW capturable, one "
            f".item() per step, run {'eagerly' if graph is None else 'as one captured CUDA graph replayed per step'}",
            step_ms,
            planted={"syncs_per_step": 1},
            recipe="none", mode=args.mode, final_loss=losses[-1])


if __name__ == "__main__":
    main()
