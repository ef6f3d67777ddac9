#!/usr/bin/env python3
"""Zoo workload pageable_h2d (data loading, docs/accuracy.md "Scoreboard"): each step copies a 64 MiB pageable (not
pinned) CPU tensor to the GPU with a plain .to("cuda"), then trains an MLP on it. PyTorch makes a blocking copy from
pageable memory (c10::cuda::memcpy_and_sync: cudaMemcpyAsync, itself host-blocking for pageable memory, then
cudaStreamSynchronize): the step's one blocking copy, two host-blocking calls, during which the GPU copies and the host
waits. The same host tensor every step, so no host time goes into making it. No other sync in the loop.

  pageable_h2d.py [--steps N] [--mib M]     prints FP8SCOPE_GROUND_TRUTH last

measured.copy_ms_median: time.perf_counter() around the .to("cuda") call.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

COLUMNS = 4096  # float32 rows of 16 KiB


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--mib", type=int, default=64)
    args = p.parse_args()
    z.require_cuda("pageable_h2d")
    torch.manual_seed(0)
    rows = args.mib * (1 << 20) // (4 * COLUMNS)
    host = torch.randn(rows, COLUMNS)  # pageable: allocated by the CPU allocator, never pinned
    if host.is_pinned():
        z.common.fail("the host tensor is pinned; this workload needs pageable memory")
    model = z.mlp(COLUMNS, 1024, 256, blocks=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    clock = z.StepClock(args.steps, host=True)  # each step begins with a blocking copy
    losses = torch.zeros(args.steps, device="cuda")
    copies_s = []
    for step in range(args.steps):
        z.begin_step(clock, step)
        t0 = time.perf_counter()
        x = host.to("cuda")  # pageable host-to-device: blocks the host until the copy is done
        copies_s.append(time.perf_counter() - t0)
        out = model(x.to(torch.bfloat16))
        loss = out.float().pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    z.truth("pageable_h2d", args.steps,
            f"each step copies a {args.mib} MiB pageable CPU tensor to the GPU (.to('cuda'), blocking), then trains "
            "an MLP on it",
            step_ms,
            # One blocking copy, two host-blocking calls: PyTorch copies pageable memory with cudaMemcpyAsync (which
            # waits for the host side, a pageable async memcpy) and then synchronizes the stream (memcpy_and_sync).
            planted={"syncs_per_step": 2, "blocking_copies_per_step": 1,
                     "sync_calls": ["cudaMemcpyAsync host-to-device from pageable memory", "cudaStreamSynchronize"],
                     "pageable_copy_bytes": host.numel() * host.element_size()},
            measured={"copy_ms_median": z.median_after_warmup(z.ms(copies_s))},
            recipe="none", final_loss=float(losses[-1]))


if __name__ == "__main__":
    main()
