#!/usr/bin/env python3
"""A tiny torchrun job for trace naming (docs/collector.md "Attaching it"): each rank does a GEMM on cuda:0 (both ranks
share one GPU) and an all-reduce of its result through the gloo backend (on the CPU, so no NCCL and no second GPU
needed).

Run as `torchrun --standalone --nproc-per-node 2 torchrun_ranks.py`. Each rank prints
`TORCHRUN_RANK {"rank": r, "world_size": w, "sum": s}`. With `--launcher-cuda` (used by the check as its own
launcher, `python torchrun_ranks.py --launcher-cuda --standalone --nproc-per-node 2 torchrun_ranks.py`) it instead
initializes CUDA in the launcher process itself, as a launcher importing a CUDA-using module would, and then runs
torch.distributed.run's main with the remaining arguments.

Exit codes: 0 ok, 77 no CUDA device."""

import json
import os
import sys


def worker():
    import torch
    import torch.distributed as dist

    if not torch.cuda.is_available():
        return 77
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(0)
    torch.manual_seed(rank)
    a = torch.randn(256, 256, device="cuda")
    total = (a @ a).sum().reshape(1).cpu()  # a cuBLAS GEMM, then to the CPU for gloo
    dist.all_reduce(total)
    dist.barrier()
    dist.destroy_process_group()
    print("TORCHRUN_RANK " + json.dumps({"rank": rank, "world_size": world_size, "env_rank": os.environ.get("RANK"),
                                         "sum": float(total[0])}), flush=True)
    return 0


def launcher_with_cuda(argv):
    import torch
    from torch.distributed.run import main as torchrun_main

    if not torch.cuda.is_available():
        return 77
    torch.zeros(1, device="cuda")  # the launcher process initializes CUDA: the collector traces it too
    torch.cuda.synchronize()
    sys.argv = ["torchrun", *argv]
    torchrun_main()
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--launcher-cuda":
        sys.exit(launcher_with_cuda(sys.argv[2:]))
    sys.exit(worker())
