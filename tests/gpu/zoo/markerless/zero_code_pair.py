#!/usr/bin/env python3
"""Zoo workloads zero_code_pair_fp8 and zero_code_pair_bf16 (issue 42 item 5, stage zoo-markerless): an FP8 run and
its BF16 twin for `fp8scope compare`'s loss delta, written as a user would who never heard of fp8scope. NO fp8scope
call of any kind: no import of fp8scope (nor of zoo_common / realjobs/common.py, which import it), no step markers,
no log_scalar, no NVTX. The recorder's own hooks must find the steps and the loss (the zero-code test).

The model, the same in both precisions: 4 bias-free square linears (1024 x 1024, weights drawn from
torch.manual_seed(0) in bf16), each followed by ReLU, trained by AdamW (foreach, lr 1e-3) to regress a fixed random
teacher's output (MSE in fp32), 4 batches of 2048 rows drawn once from a CUDA generator seeded 1 and cycled: the
same seed and the same data in both precisions.

  --precision fp8   each linear's three GEMMs run in FP8 through torch._scaled_mm with tensorwise scales from each
                    tensor's own amax (current scaling, computed on the device): forward E4M3 x E4M3, dgrad and wgrad
                    E5M2 (the gradient) x E4M3, bf16 outputs, as tests/gpu/workloads/zero_code_mlp.py does; 12
                    torch._scaled_mm per step (3 per layer, dgrad of the first layer included)
  --precision bf16  the same linears in plain bf16 (torch.nn.functional.linear)

No host sync in the loop (syncs_per_step 0): the losses stay on the device and are read after the loop.

Truth: one FP8SCOPE_GROUND_TRUTH line printed last (json, the same layout as realjobs/common.py's print_truth,
written here so that nothing imports fp8scope): workload (--name), steps, pattern, planted {syncs_per_step 0,
markers "none", fp8scope_calls "none"}, measured.median_step_ms (CUDA events recorded at each step's start, median
after 2 warm-up steps), step_ms; recipe ("current" for FP8, "none" for BF16), drift "clean", pair {role "run" | "ref",
twin}, losses (per step) and losses_hex, final_loss, scaled_mm_per_step (FP8: 12; BF16: 0), step_start_host_ns /
step_start_clock "perf_counter_ns" (time.perf_counter_ns() at the top of each iteration: there are no markers to
align, these say when each step was issued by the host).

  zero_code_pair.py --precision fp8|bf16 [--steps N] [--name NAME] [--twin NAME]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

LAYERS, DIM, ROWS, BATCHES = 4, 1024, 2048, 4
E4M3_MAX, E5M2_MAX = 448.0, 57344.0
WARMUP = 2


def fp8_cast(t, dtype, fp8_max):
    """t in FP8 with a tensorwise scale from its own amax, and the inverse scale that dequantizes it (on the device)."""
    amax = t.abs().amax().float().clamp(min=1e-12)
    scale = fp8_max / amax
    return (t.float() * scale).clamp(-fp8_max, fp8_max).to(dtype), scale.reciprocal()


def row_major_transpose(t):
    """t's transpose laid out row-major, copied as bytes (FP8 tensors have few copy kernels of their own)."""
    return t.view(torch.uint8).t().contiguous().view(t.dtype)


class Fp8Linear(torch.autograd.Function):
    """y = x W^T with its three GEMMs in FP8 (torch._scaled_mm wants its second operand column-major)."""

    @staticmethod
    def forward(ctx, x, weight):
        x8, x_inv = fp8_cast(x, torch.float8_e4m3fn, E4M3_MAX)
        w8, w_inv = fp8_cast(weight, torch.float8_e4m3fn, E4M3_MAX)
        ctx.save_for_backward(x8, w8, x_inv, w_inv)
        return torch._scaled_mm(x8, w8.t(), x_inv, w_inv, out_dtype=torch.bfloat16,
                                use_fast_accum=True)

    @staticmethod
    def backward(ctx, grad):
        x8, w8, x_inv, w_inv = ctx.saved_tensors
        g8, g_inv = fp8_cast(grad.contiguous(), torch.float8_e5m2, E5M2_MAX)
        dx = torch._scaled_mm(g8, row_major_transpose(w8).t(), g_inv, w_inv,
                              out_dtype=torch.bfloat16)
        dw = torch._scaled_mm(row_major_transpose(g8), row_major_transpose(x8).t(), g_inv, x_inv,
                              out_dtype=torch.bfloat16)
        return dx, dw


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--precision", required=True, choices=("fp8", "bf16"))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--name")
    p.add_argument("--twin")
    args = p.parse_args()
    name = args.name or f"zero_code_pair_{args.precision}"
    if not torch.cuda.is_available() or (args.precision == "fp8" and torch.cuda.get_device_capability() < (8, 9)):
        print(f"{name}: no CUDA device (with FP8 GEMMs); exiting with code 77", file=sys.stderr)
        sys.exit(77)
    torch.manual_seed(0)
    weights = [torch.nn.Parameter((torch.randn(DIM, DIM, device="cuda") / DIM ** 0.5).to(torch.bfloat16))
               for _ in range(LAYERS)]
    optimizer = torch.optim.AdamW(weights, lr=1e-3, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    teacher = torch.randn(DIM, DIM, device="cuda", generator=g) / DIM ** 0.5
    batches = []
    for _ in range(BATCHES):
        x = torch.randn(ROWS, DIM, device="cuda", generator=g)
        batches.append((x.to(torch.bfloat16), torch.tanh(x @ teacher)))
    linear = Fp8Linear.apply if args.precision == "fp8" else torch.nn.functional.linear
    torch.cuda.synchronize()  # set-up done before the loop
    events = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
    losses, issued_ns = [], []
    for step in range(args.steps):
        issued_ns.append(time.perf_counter_ns())
        events[step].record()
        x, target = batches[step % BATCHES]
        for w in weights:
            x = torch.relu(linear(x, w))
        loss = (x.float() - target).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    events[args.steps].record()
    torch.cuda.synchronize()
    step_ms = [events[i].elapsed_time(events[i + 1]) for i in range(args.steps)]
    values = torch.stack(losses).tolist()  # the run's one read of the losses, after the loop
    kept = step_ms[WARMUP:] if len(step_ms) > 2 * WARMUP else step_ms
    truth = {
        "workload": name, "steps": args.steps, "pid": os.getpid(),
        "pattern": f"a zero-code {LAYERS}-layer bias-free ReLU MLP ({DIM} wide, {ROWS} rows) in {args.precision}"
                   + (" (torch._scaled_mm, tensorwise current scaling)" if args.precision == "fp8" else "")
                   + ", AdamW; no fp8scope call, no marker; no host sync in the loop",
        "planted": {"syncs_per_step": 0, "markers": "none", "fp8scope_calls": "none"},
        "measured": {"median_step_ms": statistics.median(kept), "median_from_step": WARMUP if kept is not step_ms
                     else 0},
        "step_ms": [round(t, 4) for t in step_ms],
        "recipe": "current" if args.precision == "fp8" else "none",
        "drift": "clean",
        "pair": {"role": "run" if args.precision == "fp8" else "ref", "twin": args.twin} if args.twin else None,
        "precision": args.precision,
        "scaled_mm_per_step": 3 * LAYERS if args.precision == "fp8" else 0,
        "losses": values, "losses_hex": [float(v).hex() for v in values], "final_loss": values[-1],
        "step_start_host_ns": issued_ns, "step_start_clock": "perf_counter_ns",
        "torch_version": torch.__version__, "device": torch.cuda.get_device_name(),
    }
    sys.stdout.flush()
    print("FP8SCOPE_GROUND_TRUTH " + json.dumps(truth, sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
