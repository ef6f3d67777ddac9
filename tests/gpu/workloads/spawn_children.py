#!/usr/bin/env python3
"""Lifecycle workload: a CUDA parent starts CHILDREN processes with multiprocessing's 'spawn' start method; each
child does its own CUDA work. Traced, every process that used CUDA must write its own finished trace.
Prints one line per process with a deterministic result; exit code 0 when every child exited 0."""

import multiprocessing
import sys

CHILDREN = 2


def cuda_work(tag):
    import torch

    x = torch.arange(1 << 16, device="cuda", dtype=torch.float32)
    total = float((x * (tag + 1)).sum().item())  # a few kernels and one copy back
    torch.cuda.synchronize()
    return total


def child(index, queue):
    queue.put((index, cuda_work(index + 1)))


def main():
    print(f"parent {cuda_work(0):.1f}", flush=True)
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=child, args=(i, queue)) for i in range(CHILDREN)]
    for p in processes:
        p.start()
    results = dict(queue.get(timeout=120) for _ in processes)
    for p in processes:
        p.join(timeout=120)
    for i in sorted(results):
        print(f"child {i} {results[i]:.1f}")
    codes = [p.exitcode for p in processes]
    print(f"child exit codes {codes}")
    return 0 if all(c == 0 for c in codes) else 1


if __name__ == "__main__":
    sys.exit(main())
