#!/usr/bin/env python3
"""Zoo workloads deepseek_blockwise_* (issue 31): a pre-norm MLP-block model trained in BF16, or with its block Linears
running DeepSeek-V3-style fine-grained FP8 (written here with PyTorch ops, through torch._scaled_mm on the H100):

  forward   y  = x W^T   x in 1x128 tiles (one scale per token per 128 channels), W in 128x128 blocks
  dgrad     dx = dy W    dy in 1x128 tiles, W^T in 128x128 blocks
  wgrad     dW = dy^T x  dy^T and x^T in 1x128 tiles along the tokens (128x1 tiles of dy and x)

Every scale is the tile's or block's own amax / 448 (E4M3), recomputed every step. The head stays BF16. Same seed,
data and initial weights in both precisions: twins.

  --precision bf16|fp8
  --plant-drift B:S:F   in either precision, from step S on, channels 128..255 (one 1x128 tile column) of
                        blocks[B].fc1's input are multiplied by F**(step - S + 1), on the device
  --compile             the model under torch.compile (Inductor, default mode; issue 44): the quantization's amaxes,
                        divisions and casts become generated Triton kernels, the GEMMs stay torch._scaled_mm calls.
                        Not with --plant-drift (its step counter is a Python global: a recompile every step)

Its own truth (scaled_mm_count.py): in the last step it counts every torch._scaled_mm (patching the attribute) and classifies
each operand's recipe by its scale's shape; also every step's loss as float.hex(), and the first forward GEMM's
relative error against BF16 (the quantization works). Compiled, the torch._scaled_mm calls are counted in the graphs
Inductor compiles (a backend that wraps Inductor's own), and inductor_kernels says what every generated Triton kernel
does, read from its source (compiled/torchao_compiled_hf.py's reading, the fused-bookkeeping column's truth).

  deepseek_blockwise.py --precision fp8|bf16 [--steps N] [--plant-drift B:S:F | --compile] [--name ZOO_NAME]
                        [--twin ZOO_NAME]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from scaled_mm_count import ScaledMmCount  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compiled"))
import torchao_compiled_hf as compiled_hf  # noqa: E402  (the Inductor source capture and kernel reading)

D, BLOCKS, TOKENS, CLASSES, TILE = 1024, 2, 2048, 512, 128
E4M3_MAX = 448.0
CURRENT_STEP = [0]


def quant_1x128(x):
    """x [R, C] -> E4M3 codes [R, C] and scales [R, C/128] (fp32), one per 1x128 tile: amax / 448."""
    r, c = x.shape
    tiles = x.float().view(r, c // TILE, TILE)
    scale = tiles.abs().amax(dim=-1).clamp(min=1e-12) / E4M3_MAX
    codes = (tiles / scale.unsqueeze(-1)).to(torch.float8_e4m3fn).view(r, c)
    return codes, scale


def quant_128x128(w):
    """w [R, C] -> E4M3 codes and scales [R/128, C/128], one per 128x128 block."""
    r, c = w.shape
    blocks = w.float().view(r // TILE, TILE, c // TILE, TILE)
    scale = blocks.abs().amax(dim=(1, 3)).clamp(min=1e-12) / E4M3_MAX
    codes = (blocks / scale[:, None, :, None]).to(torch.float8_e4m3fn).view(r, c)
    return codes, scale


def mm_1x128_by_128x128(a, b_t):
    """a [M, K] @ b_t.T, with b_t [N, K] (a weight as stored): torch._scaled_mm with a in 1x128 tiles (its scales
    column-major, as cuBLASLt's VEC128 mode takes them) and b in 128x128 blocks."""
    qa, sa = quant_1x128(a)
    qb, sb = quant_128x128(b_t)
    return torch._scaled_mm(qa, qb.t(), sa.t().contiguous().t(), sb.t(), out_dtype=torch.bfloat16)


def mm_1x128_by_1x128(a, b_t):
    """a [M, K] @ b_t.T with both in 1x128 tiles along K (the wgrad GEMM: K is the tokens)."""
    qa, sa = quant_1x128(a)
    qb, sb = quant_1x128(b_t)
    return torch._scaled_mm(qa, qb.t(), sa.t().contiguous().t(), sb.t().contiguous(), out_dtype=torch.bfloat16)


class BlockwiseLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return mm_1x128_by_128x128(x, weight)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        dy = dy.contiguous()
        dx = mm_1x128_by_128x128(dy, weight.t().contiguous())
        dw = mm_1x128_by_1x128(dy.t().contiguous(), x.t().contiguous())
        return dx, dw


class BlockwiseLinear(nn.Module):
    """nn.Linear without bias whose three GEMMs run in blockwise FP8."""

    def __init__(self, linear):
        super().__init__()
        self.weight = linear.weight

    def forward(self, x):
        shape = x.shape
        y = BlockwiseLinearFn.apply(x.reshape(-1, shape[-1]), self.weight)
        return y.view(*shape[:-1], y.shape[-1])


class Block(nn.Module):
    def __init__(self, index, drift):
        super().__init__()
        self.drift = drift if drift and drift[0] == index else None
        self.norm = nn.LayerNorm(D, dtype=torch.bfloat16)
        self.fc1 = nn.Linear(D, 4 * D, bias=False, dtype=torch.bfloat16)
        self.fc2 = nn.Linear(4 * D, D, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        u = self.norm(x)
        if self.drift and CURRENT_STEP[0] >= self.drift[1]:
            gain = torch.ones(u.shape[-1], device=u.device, dtype=u.dtype)
            gain[TILE:2 * TILE] = self.drift[2] ** (CURRENT_STEP[0] - self.drift[1] + 1)
            u = u * gain
        return x + self.fc2(nn.functional.gelu(self.fc1(u)))


class Model(nn.Module):
    def __init__(self, drift):
        super().__init__()
        self.blocks = nn.ModuleList(Block(i, drift) for i in range(BLOCKS))
        self.norm = nn.LayerNorm(D, dtype=torch.bfloat16)
        self.head = nn.Linear(D, CLASSES, dtype=torch.bfloat16)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def to_blockwise(model):
    count = 0
    for block in model.blocks:
        block.fc1 = BlockwiseLinear(block.fc1)
        block.fc2 = BlockwiseLinear(block.fc2)
        count += 2
    return count


def compiled_forward(model, counter):
    """torch.compile(model) with Inductor, through a backend that counts each compiled graph's torch._scaled_mm calls
    (forward and backward: AOTAutograd hands both to Inductor's inner compile) and keeps every generated kernel's
    source. Returns the compiled model and whether the sources are kept."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    captured = compiled_hf.capture_inductor_sources()

    def inner(gm, example_inputs, **kwargs):
        counter.count_graph(gm)
        return compile_fx_inner(gm, example_inputs, **kwargs)

    return torch.compile(model, backend=lambda gm, inputs: compile_fx(gm, inputs, inner_compile=inner)), captured


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--precision", required=True, choices=("bf16", "fp8"))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--plant-drift", metavar="B:S:F")
    p.add_argument("--name")
    p.add_argument("--twin")
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    if args.compile and args.plant_drift:
        p.error("--compile and --plant-drift do not go together (the drift's step counter would recompile every step)")
    drift = None
    if args.plant_drift:
        block, start, factor = args.plant_drift.split(":")
        drift = (int(block), int(start), float(factor))
    z.require_cuda("deepseek_blockwise")
    if args.precision == "fp8" and torch.cuda.get_device_capability() < (9, 0):
        print("deepseek_blockwise: blockwise FP8 needs compute capability 9.0; exiting with code 77", file=sys.stderr)
        sys.exit(77)
    torch.manual_seed(0)
    model = Model(drift).cuda()
    fp8_linears = to_blockwise(model) if args.precision == "fp8" else 0
    # The quantization itself, against BF16 on the first block's weight and a random input.
    probe_x = torch.randn(TOKENS, D, device="cuda", dtype=torch.bfloat16)
    w = model.blocks[0].fc1.weight.detach()
    ref = probe_x.float() @ w.float().t()
    rel_err = ((mm_1x128_by_128x128(probe_x, w).float() - ref).norm() / ref.norm()).item()
    counter = ScaledMmCount()
    forward, captured = model, False
    if args.compile:
        forward, captured = compiled_forward(model, counter)
    annotation = None
    if z.common.fp8scope is not None and not args.compile:
        annotation = z.common.fp8scope.torch.annotate(model, cast_stats=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    batches = z.teacher_batches(TOKENS, D, CLASSES)
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        CURRENT_STEP[0] = step
        z.begin_step(clock, step)
        x, y = batches[step % len(batches)]
        counting = step == args.steps - 1 and not args.compile
        if counting:
            counter.__enter__()
        loss = nn.functional.cross_entropy(forward(x).float(), y)
        if z.common.fp8scope is not None:
            z.common.fp8scope.log_scalar("loss", loss.detach())
        loss.backward()
        if counting:
            counter.__exit__(None, None, None)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    if annotation is not None:
        annotation.remove()
    loss_values = losses.tolist()
    extra = {}
    if args.compile:
        facts = {name: compiled_hf.kernel_facts(name, src) for name, src in sorted(compiled_hf.SOURCES.items())}
        compiled_hf.mark_amax(facts)
        extra["inductor_kernels"] = {
            "source": "torch._inductor.async_compile.AsyncCompile.triton" if captured else "none",
            "generated_in": "this process", "count": len(facts), "kernels": facts}
    drift_truth = "clean"
    if drift:
        drift_truth = {"layer": f"blocks.{drift[0]}.fc1", "tensor": f"blocks.{drift[0]}.fc1 input",
                       "channels": [TILE, 2 * TILE], "onset_step": drift[1], "growth_per_step": drift[2]}
    z.truth(args.name or f"deepseek_blockwise_{args.precision}", args.steps,
            "DeepSeek-V3-style blockwise FP8 (1x128 activations, 128x128 weights)" if args.precision == "fp8"
            else "MLP blocks, BF16", step_ms, drift=drift_truth,
            recipe="blockwise 1×128" if args.precision == "fp8" else "none",
            pair={"role": "run" if args.precision == "fp8" else "reference", "twin": args.twin},
            precision=args.precision, fp8_linears=fp8_linears, first_gemm_rel_err=rel_err,
            scaled_mm=counter.truth(None if args.compile else args.steps - 1), compiled=args.compile, **extra,
            losses_hex=[float(x).hex() for x in loss_values],
            final_loss=loss_values[-1])


if __name__ == "__main__":
    main()
