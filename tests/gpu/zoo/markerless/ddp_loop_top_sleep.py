#!/usr/bin/env python3
"""Zoo workloads ddp_gloo_loop_top_sleep and ddp_nccl_loop_top_sleep (issue 42 item 5): DDP with 2 ranks started by
torchrun, an MLP (1024 -> 4096 -> 4096 -> 1024, fp32, batch 128 rows per rank, fused AdamW), gradients all-reduced
by DDP in the backward pass, and one torch.cuda.synchronize() at the end of each step; no other sync planted.

  --backend gloo   both ranks on cuda:0 (one GPU; gloo all-reduces CUDA tensors by staging each gradient bucket
                   through host memory on its own threads)
  --backend nccl   rank r on cuda:r (needs 2 GPUs; NVLink multicast off, as every DDP job of the zoo)

The planted straggler: rank --straggler-rank (1) sleeps --sleep-ms (5) at the very top of each iteration, right after
the step marker and before its forward pass (time.sleep: no CUDA call), so the other rank waits for it in the
backward's all-reduce.

Per step, in order: the step marker (fp8scope.step, then marker_host_ns), rank 1's sleep (measured), forward,
loss, backward (DDP's bucketed all-reduce), optimizer step, zero_grad, the loss kept on the device,
torch.cuda.synchronize() (the step's one sync the loop makes: cudaDeviceSynchronize). The losses are read after the
loop.

Truth, one line per rank (zoo_common.truth): rank, world_size, backend; straggler {"rank": 1, "sleep_ms": 5,
"where": "loop_top"} on both ranks; planted.syncs_per_step 1 (the loop's own cudaDeviceSynchronize; DDP, gloo and
NCCL make more of their own, not counted: planted.library_syncs says so), and on the sleeping rank only
planted.host_stall_ms, host_stall_where "between_steps" (after the marker, before the step's first launch),
host_stall_steps "all", measured.slept_ms_median; measured.median_step_ms (host clock: every step ends in the
synchronize); marker_host_ns / marker_clock (zoo_common.marker_fields, this rank's markers); losses, final_loss.

  torchrun --standalone --nproc-per-node 2 ddp_loop_top_sleep.py --backend gloo|nccl --name NAME [--steps N]
      [--straggler-rank R] [--sleep-ms MS]     each rank prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys
import time

# NVLink multicast stays off (NVLS, symmetric memory, NVSHMEM), as in tests/gpu/realjobs/ddp_mlp.py.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/gpu/zoo: zoo_common
import zoo_common as z  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

BATCH = 128


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", required=True, choices=("gloo", "nccl"))
    p.add_argument("--name", required=True)
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--straggler-rank", type=int, default=1)
    p.add_argument("--sleep-ms", type=float, default=5.0)
    args = p.parse_args()
    z.require_cuda(args.name)
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    # gloo: both ranks share cuda:0 whatever the machine has; nccl refuses two ranks on one device.
    index = 0 if args.backend == "gloo" else local_rank
    if index >= torch.cuda.device_count():
        z.common.fail(f"rank {rank} needs cuda:{index}; {torch.cuda.device_count()} GPU(s) visible")
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)
    dist.init_process_group(args.backend)
    world_size = dist.get_world_size()
    torch.manual_seed(rank)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 4096), nn.GELU(),
                          nn.Linear(4096, 1024)).to(device)
    ddp = DDP(model, device_ids=[device.index])
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-4, fused=True)
    x = torch.randn(BATCH, 1024, device=device)
    straggler = rank == args.straggler_rank
    sleep_s = args.sleep_ms / 1e3 if straggler else 0.0
    losses = torch.zeros(args.steps, device=device)
    clock = z.StepClock(args.steps, host=True)  # each step ends in a device sync
    marker_ns, slept_s = [], []
    for step in range(args.steps):
        z.begin_step(clock, step, marker_ns)
        if sleep_s:  # the planted straggler: the very top of the iteration, before the forward; no CUDA call
            t0 = time.perf_counter()
            time.sleep(sleep_s)
            slept_s.append(time.perf_counter() - t0)
        loss = ddp(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
        torch.cuda.synchronize()  # the step's one sync
    step_ms = clock.finish()
    values = losses.tolist()
    planted = {"syncs_per_step": 1, "sync_calls": ["cudaDeviceSynchronize of torch.cuda.synchronize()"],
               "library_syncs": "not counted above: DDP and the process group make host-blocking calls of their own"
                                + (" (gloo stages each gradient bucket through host memory and waits for it on its "
                                   "own threads)" if args.backend == "gloo" else "")}
    measured = {}
    if sleep_s:
        planted.update(host_stall_ms=args.sleep_ms, host_stall_where="between_steps", host_stall_steps="all")
        measured["slept_ms_median"] = z.median_after_warmup(z.ms(slept_s))
    pattern = (f"DDP over {args.backend}, {world_size} ranks "
               f"({'both on cuda:0' if args.backend == 'gloo' else 'one GPU each'}), an MLP, one "
               f"torch.cuda.synchronize() per step; rank {args.straggler_rank} sleeps {args.sleep_ms:g} ms at the "
               "very top of each iteration, before its forward")
    z.truth(args.name, args.steps, pattern, step_ms, planted=planted, measured=measured, recipe="none",
            straggler={"rank": args.straggler_rank, "sleep_ms": args.sleep_ms, "where": "loop_top"},
            rank=rank, world_size=world_size, backend=args.backend, batch=BATCH, losses=values,
            final_loss=values[-1], **z.marker_fields(marker_ns))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
