#!/usr/bin/env python3
"""Lifecycle workload: torch.profiler starts (and takes CUPTI) before this process makes any CUDA call, as when
a job profiles from its first step. Under fp8scope, whichever subscribes first keeps CUPTI; the other must say so
in one line and the job must run unchanged. Prints the number of CUDA kernels the profiler saw."""

import torch
import torch.profiler

KERNELS = 50


def main():
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        x = torch.ones(1024, device="cuda")
        for _ in range(KERNELS):
            x.add_(1.0)
        torch.cuda.synchronize()
    seen = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    print(f"profiler saw {seen} CUDA events for {KERNELS + 1} kernels", flush=True)


if __name__ == "__main__":
    main()
