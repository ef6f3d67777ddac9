#!/usr/bin/env python3
"""Host cost of a tiny-kernel launch, for the collector overhead benchmark (spec, "Performance goals").

Loads libfp8scope_launch_loop.so (bench/gpu/launch_loop.cu) through ctypes and calls its timed launch loop R times,
then prints one JSON line with the median microseconds per launch.

  --mode plain            the loop alone; run it under `fp8scope record -- ...` for the collector's figure
  --mode torch-profiler   the same loop inside torch.profiler.profile(activities=[CPU, CUDA]) with CUDA sync
                          events on (enable_cuda_sync_events), so that it records what fp8scope records
  --loop c                the loop of libfp8scope_launch_loop.so: an empty kernel launched from C (default)
  --loop torch            a PyTorch loop of tiny ops instead: `x.add_(1.0)` on a one-element CUDA tensor, host time
                          per op (each launches one elementwise kernel through PyTorch's dispatcher)

Examples:
  python3 bench/launch_overhead.py --lib build/bench/libfp8scope_launch_loop.so
  build/bin/fp8scope record -o /tmp/t-%p.sqlite -- python3 bench/launch_overhead.py --lib ...
  python3 bench/launch_overhead.py --lib ... --mode torch-profiler --count-profiled

Exit codes: 0 ok, 1 a CUDA error, 2 usage error, 77 no CUDA device.
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import tempfile
import time

EXIT_CUDA_ERROR, EXIT_USAGE, EXIT_NO_DEVICE = 1, 2, 77
NO_DEVICE_ERRORS = {35, 100}  # cudaErrorInsufficientDriver, cudaErrorNoDevice
KERNEL_NAME = "fp8scope_bench_empty"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", default=os.environ.get("FP8SCOPE_LAUNCH_LOOP_LIB"),
                   help="path of libfp8scope_launch_loop.so (default: $FP8SCOPE_LAUNCH_LOOP_LIB)")
    p.add_argument("--mode", choices=("plain", "torch-profiler"), default="plain")
    p.add_argument("--loop", choices=("c", "torch"), default="c")
    p.add_argument("--launches", type=int, default=20000, help="launches per repetition (default 20000)")
    p.add_argument("--reps", type=int, default=5, help="repetitions; the median is reported (default 5)")
    p.add_argument("--count-profiled", action="store_true",
                   help="torch-profiler: also count the kernels and launch calls the profiler recorded")
    args = p.parse_args(argv)
    if not args.lib and args.loop == "c":
        p.error("--lib is required for --loop c (or set FP8SCOPE_LAUNCH_LOOP_LIB)")
    if args.launches < 1 or args.reps < 1:
        p.error("--launches and --reps must be at least 1")
    return args


class LoopError(Exception):
    def __init__(self, code, text):
        super().__init__(f"CUDA error {code} ({text})")
        self.code = code


def load(path):
    lib = ctypes.CDLL(path)
    lib.fp8scope_launch_loop_us.restype = ctypes.c_double
    lib.fp8scope_launch_loop_us.argtypes = [ctypes.c_int]
    lib.fp8scope_launch_loop_warmup_launches.restype = ctypes.c_int
    lib.fp8scope_launch_loop_error_string.restype = ctypes.c_char_p
    lib.fp8scope_launch_loop_error_string.argtypes = [ctypes.c_int]
    return lib


def measure(lib, launches, reps):
    """[us per launch] per repetition; raises LoopError on a CUDA error."""
    values = []
    for _ in range(reps):
        us = lib.fp8scope_launch_loop_us(launches)
        if us < 0:
            code = int(-us)
            raise LoopError(code, lib.fp8scope_launch_loop_error_string(code).decode())
        values.append(us)
    return values


def measure_torch(launches, reps):
    """[us per op] per repetition of a PyTorch loop of tiny in-place adds (one kernel each)."""
    import torch

    x = torch.zeros(1, device="cuda")
    for _ in range(1000):  # warm-up: the kernel is loaded, the caching allocator settled
        x.add_(1.0)
    torch.cuda.synchronize()
    values = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(launches):
            x.add_(1.0)
        values.append((time.perf_counter() - start) * 1e6 / launches)
        torch.cuda.synchronize()  # between repetitions only: the timed loop never waits for the device
    return values


def count_profiled(prof):
    """Kernels named KERNEL_NAME and cudaLaunchKernel calls in the profiler's Chrome trace."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f).get("traceEvents", [])
    kernels = sum(1 for e in events if e.get("cat") == "kernel" and KERNEL_NAME in e.get("name", ""))
    launches = sum(1 for e in events if e.get("cat") == "cuda_runtime" and e.get("name", "").startswith("cudaLaunchKernel"))
    return {"kernels": kernels, "launch_calls": launches}


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    lib = None
    if args.loop == "c":
        try:
            lib = load(args.lib)
        except OSError as error:
            print(f"launch_overhead: cannot load '{args.lib}': {error}", file=sys.stderr)
            return EXIT_USAGE
    result = {"mode": args.mode, "loop": args.loop, "launches": args.launches, "reps": args.reps, "pid": os.getpid()}
    t0 = time.monotonic()

    def run_loop():
        if args.loop == "torch":
            return measure_torch(args.launches, args.reps)
        return measure(lib, args.launches, args.reps)

    try:
        if args.mode == "plain":
            if args.loop == "torch":
                import torch

                if not torch.cuda.is_available():
                    print("launch_overhead: torch sees no CUDA device", file=sys.stderr)
                    return EXIT_NO_DEVICE
            values = run_loop()
        else:
            import torch
            import torch.profiler

            if not torch.cuda.is_available():
                print("launch_overhead: torch sees no CUDA device", file=sys.stderr)
                return EXIT_NO_DEVICE
            torch.zeros(1, device="cuda")  # CUDA initialized before the profiler starts, as in a training job
            activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            # The same activities as fp8scope: Kineto leaves CUPTI's SYNCHRONIZATION records out unless asked.
            config = None
            experimental = getattr(torch.profiler, "_ExperimentalConfig", None)
            if experimental is not None:
                try:
                    config = experimental(enable_cuda_sync_events=True)
                except TypeError:
                    config = None
            result["torch_sync_events"] = config is not None
            with torch.profiler.profile(activities=activities, experimental_config=config) as prof:
                values = run_loop()
            if args.count_profiled:
                result["profiled"] = count_profiled(prof)
    except LoopError as error:
        print(f"launch_overhead: {error}", file=sys.stderr)
        return EXIT_NO_DEVICE if error.code in NO_DEVICE_ERRORS else EXIT_CUDA_ERROR
    result["us_per_launch"] = [round(v, 4) for v in values]
    result["median_us_per_launch"] = round(statistics.median(values), 4)
    warmup = 1000 if args.loop == "torch" else lib.fp8scope_launch_loop_warmup_launches()
    result["kernels_launched"] = args.reps * args.launches + (warmup if args.loop == "torch" else args.reps * warmup)
    result["wall_s"] = round(time.monotonic() - t0, 3)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
