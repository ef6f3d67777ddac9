#!/usr/bin/env python3
"""A zero-code FP8 training job for tensor statistics without steps (docs/collector.md "Tensor statistics"): an MLP of 8
layers of one shape, each a bias-free linear whose three GEMMs run in FP8 through torch._scaled_mm (forward E4M3 x E4M3,
dgrad and wgrad E5M2 x E4M3, as samples/torch/fp8_linear.py does), trained for 40 steps. No step markers, no NVTX, no
fp8scope import: under `fp8scope record` the collector must learn the GEMM period by itself.

Scaling is current (each tensor's own amax, computed on the device), so nothing here waits for the GPU until the
end, where the losses are read once. Prints one line `ZERO_CODE_MLP <json>`: steps, layers, GEMM calls per step
(3 per layer, all through cublasLtMatmul), the losses as hex floats (bitwise comparison), and the host time of
each step's start (time.time_ns).

Exit codes: 0 ok, 77 no CUDA device with FP8 GEMMs (compute capability 8.9 or newer)."""

import json
import sys
import time

LAYERS = 8
DIM = 1024  # torch._scaled_mm needs multiples of 16
TOKENS = 2048
STEPS = 40
E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def main():
    import torch

    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 9):
        print("zero_code_mlp: no CUDA device with FP8 GEMMs", file=sys.stderr)
        return 77
    e4m3, e5m2 = torch.float8_e4m3fn, torch.float8_e5m2

    def to_fp8(t, dtype, fp8_max):
        """t cast to FP8 with a scale from its own amax, and the scale_inv that dequantises it (device tensors)."""
        amax = t.abs().amax().float().clamp(min=1e-12)
        scale = fp8_max / amax
        return (t.float() * scale).clamp(-fp8_max, fp8_max).to(dtype), scale.reciprocal()

    def transpose_fp8(t):
        """A row-major copy of t's transpose, copied as bytes (no FP8 copy kernel needed)."""
        return t.view(torch.uint8).t().contiguous().view(t.dtype)

    def scaled_mm(a, b_col_major, scale_inv_a, scale_inv_b, fast_accum):
        return torch._scaled_mm(a, b_col_major, scale_inv_a, scale_inv_b, out_dtype=torch.bfloat16,
                                use_fast_accum=fast_accum)

    class Fp8Matmul(torch.autograd.Function):
        """y = x W^T with three FP8 GEMMs, always all three (dx even for the first layer): 3 GEMMs per layer."""

        @staticmethod
        def forward(ctx, x, weight):
            x8, x_inv = to_fp8(x, e4m3, E4M3_MAX)
            w8, w_inv = to_fp8(weight, e4m3, E4M3_MAX)
            ctx.save_for_backward(x8, w8, x_inv, w_inv)
            return scaled_mm(x8, w8.t(), x_inv, w_inv, fast_accum=True)

        @staticmethod
        def backward(ctx, grad):
            x8, w8, x_inv, w_inv = ctx.saved_tensors
            g8, g_inv = to_fp8(grad.contiguous(), e5m2, E5M2_MAX)
            dx = scaled_mm(g8, transpose_fp8(w8).t(), g_inv, w_inv, fast_accum=False)
            dw = scaled_mm(transpose_fp8(g8), transpose_fp8(x8).t(), g_inv, x_inv, fast_accum=False)
            return dx, dw

    torch.manual_seed(0)
    device = "cuda"
    weights = [torch.nn.Parameter((torch.randn(DIM, DIM, device=device) / DIM**0.5).to(torch.bfloat16))
               for _ in range(LAYERS)]
    optimizer = torch.optim.SGD(weights, lr=0.05)
    target = torch.randn(TOKENS, DIM, device=device)
    losses = []
    step_start_ns = []
    for _ in range(STEPS):
        step_start_ns.append(time.time_ns())
        x = torch.randn(TOKENS, DIM, device=device).to(torch.bfloat16)
        for w in weights:
            x = torch.relu(Fp8Matmul.apply(x, w))
        loss = (x.float() - target).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    values = torch.stack(losses).cpu().tolist()  # the run's only wait for the GPU
    print("ZERO_CODE_MLP " + json.dumps({
        "steps": STEPS,
        "layers": LAYERS,
        "gemm_calls_per_step": 3 * LAYERS,
        "gemm_shape": {"tokens": TOKENS, "dim": DIM},
        "losses": [float(v).hex() for v in values],
        "step_start_unix_ns": step_start_ns,
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
