#!/usr/bin/env python3
"""Zoo workload gpu_bound_markers (issue 42 item 5, stage zoo-markerless): a GPU-bound loop whose host runs steps
ahead of the GPU. A large bf16 MLP (8 Linears 4096 x 4096: 7 Linear+GELU blocks and a Linear to 4096 classes, about
134 M parameters) on a batch of 16384 rows, cross-entropy, AdamW (foreach). About 6 x 16384 x 4096^2 x 8 = 1.3e13
FLOPs per step: about 20-30 ms of GPU work on an H100/H200, against a few hundred launches (well under 1 ms of host
work) per step.

Per step: the step marker (fp8scope.step, then marker_host_ns), forward, loss, backward, optimizer step, zero_grad,
the loss kept on the device. No host sync in the loop (planted.syncs_per_step 0): the host queues steps far ahead of
the GPU, until CUDA's launch queue is full, after which launch calls themselves block until the GPU frees room (not a
sync call: a launch that takes long). So the markers (host time) run ahead of the steps' kernels, by up to several
steps; the steps' true boundaries on the GPU are where each step's first kernel runs.

Truth (zoo_common.truth): planted.syncs_per_step 0; measured.median_step_ms and step_ms (CUDA events recorded on
the stream at each step's start: the GPU's step time, since the GPU is the bottleneck), measured.gpu_step_ms_median
(the same), measured.host_loop_ms (perf_counter from the first marker to the end of the last step's launches,
before the final synchronize) and gpu_loop_ms (the sum of the GPU step times): host_loop_ms well below gpu_loop_ms
says the host ran ahead; marker_host_ns / marker_clock; losses (read after the loop), final_loss. Kernels per step
are not stated: cuBLAS picks its kernels (and whether a GEMM takes one or more) by heuristics, and foreach AdamW
splits its tensor lists in chunks, so the count is the trace's to tell.

  gpu_bound_markers.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/gpu/zoo: zoo_common
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, ROWS, BLOCKS = 4096, 16384, 7


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    z.require_cuda("gpu_bound_markers")
    torch.manual_seed(0)
    model = z.mlp(D, D, D, blocks=BLOCKS)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(ROWS, D, device="cuda", generator=g, dtype=torch.bfloat16)
    y = torch.randint(0, D, (ROWS,), device="cuda", generator=g)
    torch.cuda.synchronize()  # set-up done before the first marker
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    marker_ns = []
    for step in range(args.steps):
        z.begin_step(clock, step, marker_ns)
        loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    host_loop_ns = time.perf_counter_ns() - marker_ns[0]
    step_ms = clock.finish()
    values = losses.tolist()
    z.truth("gpu_bound_markers", args.steps,
            f"a GPU-bound bf16 MLP ({BLOCKS + 1} Linears {D} wide, {ROWS} rows), AdamW foreach, no host sync in the "
            "loop: the host queues steps ahead of the GPU",
            step_ms,
            planted={"syncs_per_step": 0},
            measured={"gpu_step_ms_median": z.median_after_warmup(step_ms),
                      "host_loop_ms": host_loop_ns / 1e6, "gpu_loop_ms": sum(step_ms)},
            recipe="none", losses=values, final_loss=values[-1], rows=ROWS, width=D,
            **z.marker_fields(marker_ns))


if __name__ == "__main__":
    main()
