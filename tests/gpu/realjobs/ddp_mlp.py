#!/usr/bin/env python3
"""DDP on one host, started by torchrun: each rank trains an MLP wrapped in DistributedDataParallel, all-reduce of
gradients every step, no host sync in the loop. --backend gloo runs both ranks on cuda:0 when the machine has one
GPU (NCCL refuses two ranks on one device); nccl gives each rank its own GPU.

  torchrun --nproc-per-node 2 ddp_mlp.py [--steps N] [--backend gloo|nccl]
"""

import argparse
import os
import sys

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
    args = p.parse_args()
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
    x = torch.randn(128, 1024, device=device)
    losses = torch.zeros(args.steps, device=device)
    for step in range(args.steps):
        common.mark_step(step)
        loss = ddp(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    torch.cuda.synchronize()
    common.print_truth("ddp_mlp", args.steps, rank=rank, world_size=dist.get_world_size(), backend=args.backend,
                       final_loss=float(losses[-1]))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
