#!/usr/bin/env python3
"""Zoo workload side_stream_prefetch (issue 42 item 5, stage zoo-markerless): the next batch is copied to the GPU on a
side CUDA stream while the current step computes. Batches live in pinned host memory (4 batches of 4096 x 1024 fp32
inputs, 16 MiB each, and their int64 labels, made once before the loop); a bf16 MLP (3 Linear+GELU blocks, width
1024 -> 2048, 128 classes), AdamW (foreach).

Per step, in order: the step marker (fp8scope.step, then marker_host_ns); current_stream().wait_stream(side) (a
cudaEventRecord on the side stream and a cudaStreamWaitEvent on the current one: no host wait); the prefetched
batch's record_stream(current stream) (the caching allocator keeps its memory until the current stream is past its
use); then, unless it is the last step, the next batch's copies issued on the side stream
(`with torch.cuda.stream(side): pinned.cuda(non_blocking=True)`, 2 cudaMemcpyAsync host-to-device from pinned
memory, asynchronous); then forward (the input cast to bf16), loss, backward, optimizer step, zero_grad, the loss
kept on the device. Batch 0 is copied the same way before the loop. No host sync in the loop: planted.syncs_per_step
0; the losses are read after the loop, and the clock is CUDA events.

Truth (zoo_common.truth): planted.syncs_per_step 0, planted.prefetch {stream: "side", copies_per_step 2 (none in
the last step), bytes_per_step, pinned true, wait: "current_stream().wait_stream(side) + record_stream"};
measured.median_step_ms (CUDA events on the current stream); losses, final_loss; marker_host_ns / marker_clock.

  side_stream_prefetch.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/gpu/zoo: zoo_common
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, HIDDEN, ROWS, BLOCKS, CLASSES, BATCHES = 1024, 2048, 4096, 3, 128, 4


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    z.require_cuda("side_stream_prefetch")
    torch.manual_seed(0)
    model = z.mlp(D, HIDDEN, CLASSES, blocks=BLOCKS)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    cpu = torch.Generator().manual_seed(1)
    host = [(torch.randn(ROWS, D, generator=cpu).pin_memory(),
             torch.randint(0, CLASSES, (ROWS,), generator=cpu).pin_memory()) for _ in range(BATCHES)]
    bytes_per_batch = sum(t.numel() * t.element_size() for t in host[0])
    side = torch.cuda.Stream()

    def prefetch(index):
        with torch.cuda.stream(side):
            x, y = host[index % BATCHES]
            return x.cuda(non_blocking=True), y.cuda(non_blocking=True)

    torch.cuda.synchronize()  # set-up done (model, pinned batches) before the first marker
    upcoming = prefetch(0)
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    marker_ns = []
    for step in range(args.steps):
        z.begin_step(clock, step, marker_ns)
        current = torch.cuda.current_stream()
        current.wait_stream(side)
        x, y = upcoming
        x.record_stream(current)
        y.record_stream(current)
        if step + 1 < args.steps:
            upcoming = prefetch(step + 1)
        loss = torch.nn.functional.cross_entropy(model(x.to(torch.bfloat16)).float(), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    values = losses.tolist()
    z.truth("side_stream_prefetch", args.steps,
            "a bf16 MLP whose next batch is copied from pinned memory on a side CUDA stream during the current step "
            "(wait_stream + record_stream before use); no host sync in the loop",
            step_ms,
            planted={"syncs_per_step": 0,
                     "prefetch": {"stream": "side", "copies_per_step": 2, "copies_in_last_step": 0,
                                  "bytes_per_step": bytes_per_batch, "pinned": True,
                                  "wait": "current_stream().wait_stream(side) + record_stream"}},
            recipe="none", losses=values, final_loss=values[-1], rows=ROWS, **z.marker_fields(marker_ns))


if __name__ == "__main__":
    main()
