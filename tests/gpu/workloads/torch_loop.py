#!/usr/bin/env python3
"""Lifecycle workload: launches small kernels in a loop until killed (default SIGTERM disposition, as Python
leaves it). Prints 'running' once CUDA work has started; syncs every 1000 kernels so that the queue stays short."""

import sys
import time

import torch


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0
    x = torch.zeros(256, device="cuda")
    torch.cuda.synchronize()
    print("running", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(1000):
            x.add_(1.0)
        torch.cuda.synchronize()
        time.sleep(0.001)
    print("not killed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
