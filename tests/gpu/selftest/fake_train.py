"""A stand-in for samples/torch/train.py (and the collector), for testing run_all.py without torch or a GPU."""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_trace  # noqa: E402

KERNELS = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64": 12,
           "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
           "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)": 7}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--precision", default="bf16")
    p.add_argument("--profile-torch")
    p.add_argument("--dataloader-workers", type=int, default=0)
    a = p.parse_args()
    if a.precision == "fp8" and os.environ.get("FAKE_FP8_FAILS"):
        print("RuntimeError: fake _scaled_mm failure", file=sys.stderr)
        return 1
    kernels = {name: n * a.steps for name, n in KERNELS.items()}
    print(f"train.py: {a.precision}, {a.steps} steps")
    injected = bool(os.environ.get("CUDA_INJECTION64_PATH"))
    if a.profile_torch:
        # As docs/collector.md says: fp8scope subscribed first, so the profiler gets no CUDA activities.
        if injected:
            print("[W kineto] CUPTI initialization failed - CUDA profiler activities will be missing", file=sys.stderr)
        with open(a.profile_torch, "w") as f:
            json.dump({"kernels": 0 if injected else sum(kernels.values()),
                       "kernels_by_name": {} if injected else kernels}, f)
        print(f"torch.profiler: {sum(kernels.values())} kernels, 2 names -> {a.profile_torch}")
    if injected:
        path = os.environ["FP8SCOPE_OUTPUT"].replace("%p", str(os.getpid()))
        # The trace's demangled name spells the template's closing brackets without the space Kineto writes.
        fake_trace.from_kernel_counts(path, {n.replace("> >", ">>"): c for n, c in kernels.items()}, a.steps)
    losses = [9.0 - i * 0.1 for i in range(a.steps)]
    for i, loss in enumerate(losses):
        print(f"step {i} loss {loss!r} step_ms {40.0 + i % 3:.3f}")
    print("FP8SCOPE_LOSSES [" + ", ".join(repr(x) for x in losses) + "]")
    print("FP8SCOPE_GROUND_TRUTH " + json.dumps({"sample": "torch_train", "steps": a.steps, "median_step_ms": 41.0,
                                                 "losses": losses, "torch_version": "fake", "device": "none"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
