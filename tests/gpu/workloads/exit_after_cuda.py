#!/usr/bin/env python3
"""Lifecycle workload: CUDA work, then os._exit(3), which skips atexit handlers and Python's shutdown.
The exit code must stay 3 when traced."""

import os
import sys

import torch

KERNELS = 200


def main():
    x = torch.ones(1024, device="cuda")
    for _ in range(KERNELS):
        x.add_(1.0)  # one kernel each
    torch.cuda.synchronize()
    print(f"value {float(x[0].item()):.1f} after {KERNELS} adds", flush=True)
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    main()
