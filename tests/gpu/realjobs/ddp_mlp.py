#!/usr/bin/env python3
"""DDP on one host, started by torchrun: each rank trains an MLP wrapped in DistributedDataParallel, all-reduce of
gradients every step, no host sync in the loop. --backend gloo runs both ranks on cuda:0 when the machine has one
GPU (NCCL refuses two ranks on one device); nccl gives each rank its own GPU.

  torchrun --nproc-per-node 2 ddp_mlp.py [--steps N] [--backend gloo|nccl]

Straggler options (the zoo's DDP workloads, tests/gpu/zoo/registry.py; without them the job and its truth are as
above):
  --straggler-rank R        the rank that is planted as the straggler (with one of the two below)
  --straggler-sleep-ms MS   rank R sleeps MS before each forward pass (after the step marker; no CUDA call)
  --straggler-batch-factor F  rank R trains on a batch F times as large: slower in compute, not in the host
  --item                    every rank reads its loss with .item() each step (one host sync per step)
  --name NAME               print the truth as zoo workload NAME, with the zoo's fields (planted, straggler, ...)
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--backend", default="gloo")
    p.add_argument("--straggler-rank", type=int)
    p.add_argument("--straggler-sleep-ms", type=float)
    p.add_argument("--straggler-batch-factor", type=int)
    p.add_argument("--item", action="store_true")
    p.add_argument("--name")
    args = p.parse_args()
    if (args.straggler_rank is None) != (args.straggler_sleep_ms is None and args.straggler_batch_factor is None):
        p.error("--straggler-rank goes with --straggler-sleep-ms or --straggler-batch-factor")
    if args.straggler_sleep_ms is not None and args.straggler_batch_factor is not None:
        p.error("--straggler-sleep-ms and --straggler-batch-factor plant different stragglers: give one")
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group(args.backend)
    torch.manual_seed(rank)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 4096), nn.GELU(),
                          nn.Linear(4096, 1024)).to(device)
    ddp = DDP(model, device_ids=[device.index])
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-4, fused=True)
    straggler = args.straggler_rank is not None and rank == args.straggler_rank
    batch = 128 * (args.straggler_batch_factor if straggler and args.straggler_batch_factor else 1)
    sleep_s = args.straggler_sleep_ms / 1e3 if straggler and args.straggler_sleep_ms else 0.0
    x = torch.randn(batch, 1024, device=device)
    losses = torch.zeros(args.steps, device=device)
    starts = []  # host clock at each step's start (zoo runs: with --item each step ends in a sync)
    slept_s = []
    for step in range(args.steps):
        common.mark_step(step)
        starts.append(time.perf_counter())
        if sleep_s:  # the planted straggler: the launching thread sleeps before the forward pass
            t0 = time.perf_counter()
            time.sleep(sleep_s)
            slept_s.append(time.perf_counter() - t0)
        loss = ddp(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
        if args.item:
            loss.item()  # the step's one host sync
    torch.cuda.synchronize()
    starts.append(time.perf_counter())
    if not args.name:
        common.print_truth("ddp_mlp", args.steps, rank=rank, world_size=dist.get_world_size(), backend=args.backend,
                           final_loss=float(losses[-1]))
    else:
        step_ms = [(starts[i + 1] - starts[i]) * 1e3 for i in range(args.steps)]
        kept = step_ms[2:] if len(step_ms) > 4 else step_ms
        if args.straggler_rank is None:
            planted_straggler = None
        elif args.straggler_sleep_ms:
            planted_straggler = {"rank": args.straggler_rank, "sleep_ms": args.straggler_sleep_ms}
        else:
            planted_straggler = {"rank": args.straggler_rank, "cause": "compute",
                                 "batch_factor": args.straggler_batch_factor}
        planted = {"syncs_per_step": 1 if args.item else 0}  # the loop's own calls (.item()), on the main thread
        if args.backend == "gloo":
            planted["library_syncs"] = ("not counted above: gloo's all-reduce of CUDA tensors copies each gradient "
                                        "bucket through host memory and waits for it on its own threads")
        if sleep_s:
            planted.update(host_stall_ms=args.straggler_sleep_ms, host_stall_where="between_steps",
                           host_stall_steps="all")
        measured = {"median_step_ms": statistics.median(kept), "median_from_step": 2 if len(step_ms) > 4 else 0}
        if slept_s:
            measured["slept_ms_median"] = statistics.median(slept_s) * 1e3
        pattern = f"DDP over {args.backend}, {dist.get_world_size()} ranks, an MLP"
        pattern += ", one .item() per step" if args.item else ", no host sync in the loop"
        if args.straggler_sleep_ms:
            pattern += f"; rank {args.straggler_rank} sleeps {args.straggler_sleep_ms:g} ms before each forward"
        if args.straggler_batch_factor:
            pattern += f"; rank {args.straggler_rank} trains a {args.straggler_batch_factor}x batch"
        sys.stdout.flush()  # the ranks share one pipe: the truth line goes out in one write of its own
        common.print_truth(args.name, args.steps, rank=rank, world_size=dist.get_world_size(), backend=args.backend,
                           pattern=pattern, planted=planted, measured=measured, straggler=planted_straggler,
                           recipe="none", batch=batch, step_ms=[round(t, 4) for t in step_ms],
                           final_loss=float(losses[-1]))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
