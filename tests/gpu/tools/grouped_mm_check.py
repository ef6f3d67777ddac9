#!/usr/bin/env python3
"""torch._scaled_grouped_mm under fp8scope (docs/python.md "Scaled GEMMs"): a mixture of experts' forward GEMM, 2D x 3D,
rowwise (G=4 groups of 256 tokens, K=512, N=1024, E4M3 quantized per row as torchao's MoE training does), 6 steps
marked with fp8scope.step, statistics every step. Run under `fp8scope record` by grouped_mm_check.sh; prints the
job's own count of grouped calls as FP8SCOPE_GROUND_TRUTH."""

import json

import torch

import fp8scope

G, M, K, N, STEPS = 4, 256, 512, 1024, 6


def rowwise(x, dim):
    scale = x.abs().amax(dim=dim, keepdim=True).clamp(min=1e-12) / 448.0
    return (x / scale).to(torch.float8_e4m3fn), scale.squeeze(dim).float()


def main():
    torch.manual_seed(0)
    calls = 0
    outs = []
    for step in range(STEPS):
        fp8scope.step(step)
        x = torch.randn(G * M, K, device="cuda") * (1 + step)
        w = torch.randn(G, N, K, device="cuda")
        a, scale_a = rowwise(x, 1)  # (G*M, K), (G*M,)
        w8, scale_b = rowwise(w, 2)  # (G, N, K), (G, N)
        b = w8.transpose(1, 2)  # (G, K, N), column-major as torch requires
        offs = torch.arange(M, G * M + 1, M, device="cuda", dtype=torch.int32)
        out = torch._scaled_grouped_mm(a, b, scale_a, scale_b, offs=offs, out_dtype=torch.bfloat16)
        calls += 1
        outs.append(float(out.float().abs().amax()))
    torch.cuda.synchronize()
    print("FP8SCOPE_GROUND_TRUTH " + json.dumps({"steps": STEPS, "grouped_calls_per_step": 1, "calls": calls,
                                                   "groups": G, "out_amax": outs}))


if __name__ == "__main__":
    main()
