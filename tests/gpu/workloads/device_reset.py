#!/usr/bin/env python3
"""Lifecycle workload: CUDA work, cudaDeviceReset, then death by SIGKILL a second later. The collector flushes and
commits at cudaDeviceReset, so the trace, unfinished, must still hold every kernel (run with the periodic flush off,
FP8SCOPE_FLUSH_PERIOD_MS=0, so that nothing else could have pushed them out)."""

import ctypes
import os
import signal
import time

import torch

KERNELS = 200


def main():
    x = torch.ones(1024, device="cuda")  # one fill kernel
    for _ in range(KERNELS):
        x.add_(1.0)
    torch.cuda.synchronize()
    print(f"{KERNELS + 1} kernels", flush=True)
    cudart = ctypes.CDLL("libcudart.so.13")  # PyTorch's copy, already loaded
    status = cudart.cudaDeviceReset()
    print(f"cudaDeviceReset -> {status}", flush=True)
    time.sleep(1.0)  # the writer commits what the reset flushed
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
