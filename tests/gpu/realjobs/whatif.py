#!/usr/bin/env python3
"""The CUDA-Graphs what-if, measured (docs/benchmarks.md "CUDA-graph what-if against real graph replays"): one training
step run eagerly, or captured once into a CUDA graph (torch.cuda.graph) and replayed. The analyzer predicts the graph's
step time from a traced eager run; this program measures it untraced.

  whatif.py --workload tiny_fp8|fp8_sample|host_stall|tiny_lm --mode eager|graph [--steps N] [--warmup W]

Workloads:
  tiny_fp8    24 small Fp8Linear layers (samples/torch/fp8_linear.py: torch._scaled_mm with delayed scaling, amax
              history and scale kept on the device): over a thousand tiny kernels per step, launch-bound eagerly.
  fp8_sample  the FP8 training sample's model (samples/torch/train.py --precision fp8), its loss, gradient clipping
              and fused AdamW (capturable).
  host_stall  an MLP step behind a data loader that sleeps 4 ms per batch on the host: graphs cannot remove it.
  tiny_lm     the zoo's small transformer (tests/gpu/zoo/zoo_common.py TinyLM: embedding, 2 bf16
              nn.TransformerEncoderLayer blocks, a linear head), next-token cross-entropy on a fixed batch of 16 x 128
              tokens: attention, layer norms and the head's large GEMM, launch-bound eagerly.

Step time: the median interval between CUDA events recorded at each step's start, over the steps after warm-up
(the GPU-side rate at which steps begin, so a launch-bound loop is timed at the host's pace). Prints
FP8SCOPE_GROUND_TRUTH with median_step_ms, mode and workload. Each step starts with fp8scope.step(i).
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "samples", "torch"))
import common  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

STALL_S = 0.004


def build(workload):
    """(model, make_batch, loss_of(model, batch), optimizer factory args)"""
    torch.manual_seed(0)
    if workload == "tiny_fp8":
        from fp8_linear import Fp8Linear
        model = nn.Sequential(*[Fp8Linear(256, 256) for _ in range(24)]).cuda()
        x = torch.randn(64, 256, device="cuda")

        def batch():
            return (x,)

        def loss_of(m, b):
            return m(b[0]).float().pow(2).mean()
        return model, batch, loss_of, None
    if workload == "fp8_sample":
        import train as sample
        args = sample.parse_args(["--precision", "fp8", "--layers", "4"])
        model = sample.Transformer(args).cuda()
        g = torch.Generator(device="cuda").manual_seed(1)
        tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device="cuda", generator=g)

        def batch():
            return (tokens,)

        def loss_of(m, b):
            inputs, targets = b[0][:, :-1], b[0][:, 1:]
            logits = m(inputs)
            return F.cross_entropy(logits.float().view(-1, args.vocab), targets.reshape(-1))
        return model, batch, loss_of, 1.0
    if workload == "host_stall":
        model = nn.Sequential(nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
                              nn.Linear(2048, 2048)).cuda()
        x = torch.randn(256, 2048, device="cuda")

        def batch():
            time.sleep(STALL_S)  # the data loader: host work outside CUDA that no graph removes
            return (x,)

        def loss_of(m, b):
            return m(b[0]).pow(2).mean()
        return model, batch, loss_of, None
    if workload == "tiny_lm":
        sys.path.insert(0, os.path.join(HERE, "..", "zoo"))
        import zoo_common
        model = zoo_common.TinyLM().cuda()
        g = torch.Generator(device="cuda").manual_seed(1)
        tokens = torch.randint(0, model.vocab, (16, 129), device="cuda", generator=g)

        def batch():
            return (tokens,)

        def loss_of(m, b):
            return m.loss(b[0])
        return model, batch, loss_of, None
    raise SystemExit(f"unknown workload {workload}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workload", required=True, choices=("tiny_fp8", "fp8_sample", "host_stall", "tiny_lm"))
    p.add_argument("--mode", required=True, choices=("eager", "graph"))
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5, help="steps left out of the timing")
    args = p.parse_args()
    model, batch, loss_of, clip = build(args.workload)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=args.mode == "graph",
                                  foreach=True)

    def step_body(b):
        loss = loss_of(model, b)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        return loss

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
    graph = None
    if args.mode == "graph":
        # PyTorch's whole-network capture recipe: warm up on a side stream, then capture one step.
        static = tuple(t.clone() for t in batch())
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                optimizer.zero_grad(set_to_none=True)
                step_body(static)
        torch.cuda.current_stream().wait_stream(side)
        optimizer.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = step_body(static)
        torch.cuda.synchronize()
    for step in range(args.steps):
        common.mark_step(step)
        starts[step].record()
        if graph is not None:
            b = batch()
            for dst, src in zip(static, b):
                if dst.data_ptr() != src.data_ptr():
                    dst.copy_(src, non_blocking=True)
            graph.replay()
        else:
            b = batch()
            step_body(b)
            optimizer.zero_grad(set_to_none=True)
    starts[args.steps].record()
    torch.cuda.synchronize()
    times = [starts[i].elapsed_time(starts[i + 1]) for i in range(args.warmup, args.steps)]
    loss = float(static_loss) if graph is not None else None
    common.print_truth("whatif", args.steps, None, whatif=args.workload, mode=args.mode,
                       median_step_ms=statistics.median(times), step_ms=times, warmup=args.warmup, loss=loss)


if __name__ == "__main__":
    main()
