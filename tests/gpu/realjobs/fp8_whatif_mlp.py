#!/usr/bin/env python3
"""The FP8 what-if's validation jobs (docs/benchmarks.md "FP8 what-if"): pre-norm MLP blocks trained in BF16, or
with their block Linears converted by torchao's convert_to_float8_training (Float8Linear) to a recipe, run eagerly or
under torch.compile; or with samples/torch/fp8_linear.py's delayed-scaling Fp8Linear (--recipe delayed). The BF16
eager run is what fp8scope records and predicts from; the FP8 runs are measured
untraced and compared with the prediction.

  fp8_whatif_mlp.py --size small|large --precision bf16|fp8 [--recipe tensorwise|rowwise|delayed]
                    [--compile [default|reduce-overhead]] [--steps N]

Sizes (blocks of LayerNorm, Linear d -> 4d, GELU, Linear 4d -> d, residual; a BF16 head):
  small  d 512, 2 blocks, 2048 rows: GEMMs of 2-20 us, launch-bound eagerly (torchao_mlp.py's model)
  large  d 4096, 2 blocks, 8192 rows: GEMMs of 0.4-1.6 ms, GPU-bound, where FP8's GEMM speed-up shows

Prints FP8SCOPE_GROUND_TRUTH with measured.median_step_ms (CUDA events at each step's start, median after 2
warm-up steps; compiled runs compile in a step before the first timed one). No host sync in the loop.

torchao is not installed on the GPU machine: tests/gpu/tools/make_torchao.sh exports its pure-Python float8 path into
.torchao/ at the repository root (or $FP8SCOPE_TORCHAO_DIR), put first on sys.path, with
TORCHAO_FORCE_SKIP_LOADING_SO_FILES=1.
"""

import argparse
import os
import sys

os.environ["TORCHAO_FORCE_SKIP_LOADING_SO_FILES"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "zoo"))
import zoo_common as z  # noqa: E402

sys.path.insert(0, os.environ.get("FP8SCOPE_TORCHAO_DIR", os.path.join(z.REPO, ".torchao")))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

SIZES = {"small": (512, 2, 2048), "large": (4096, 2, 8192)}  # d, blocks, rows
CLASSES = 512


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d, dtype=torch.bfloat16)
        self.fc1 = nn.Linear(d, 4 * d, dtype=torch.bfloat16)
        self.fc2 = nn.Linear(4 * d, d, dtype=torch.bfloat16)

    def forward(self, x):
        return x + self.fc2(nn.functional.gelu(self.fc1(self.norm(x))))


class Model(nn.Module):
    def __init__(self, d, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(blocks))
        self.norm = nn.LayerNorm(d, dtype=torch.bfloat16)
        self.head = nn.Linear(d, CLASSES, dtype=torch.bfloat16)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def to_float8(model, recipe):
    """The block Linears in FP8; the head stays BF16. Returns the count. delayed: samples/torch/fp8_linear.py's
    Fp8Linear (TransformerEngine-style delayed scaling, the training sample's and hf_llama.py --fp8's); otherwise
    torchao's convert_to_float8_training with that recipe."""
    if recipe == "delayed":
        return z.common.to_fp8_linears(model.blocks)
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    from torchao.float8.float8_linear import Float8Linear

    config = Float8LinearConfig.from_recipe_name(recipe)
    convert_to_float8_training(model, config=config, module_filter_fn=lambda module, fqn: fqn != "head")
    return sum(isinstance(m, Float8Linear) for m in model.modules())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", required=True, choices=tuple(SIZES))
    p.add_argument("--precision", required=True, choices=("bf16", "fp8"))
    p.add_argument("--recipe", default="tensorwise", choices=("tensorwise", "rowwise", "delayed"))
    p.add_argument("--compile", nargs="?", const="default", choices=("default", "reduce-overhead"),
                   help="torch.compile the model, in this mode (default: Inductor's default, no CUDA graphs)")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    z.require_cuda("fp8_whatif_mlp")
    if args.precision == "fp8" and torch.cuda.get_device_capability() < (8, 9):
        print("fp8_whatif_mlp: FP8 needs compute capability 8.9 or newer; exiting with code 77", file=sys.stderr)
        sys.exit(77)
    d, blocks, rows = SIZES[args.size]
    torch.manual_seed(0)
    model = Model(d, blocks).cuda()
    fp8_linears = to_float8(model, args.recipe) if args.precision == "fp8" else 0
    forward = torch.compile(model, mode=args.compile) if args.compile else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    teacher = torch.randn(d, CLASSES, device="cuda", generator=g)
    batches = []
    for _ in range(2):
        x = torch.randn(rows, d, device="cuda", generator=g)
        batches.append((x.to(torch.bfloat16), (x @ teacher).argmax(dim=-1)))

    def step(i):
        x, y = batches[i % len(batches)]
        if args.compile == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()  # a new iteration: the graphs' earlier outputs may be reused
        loss = nn.functional.cross_entropy(forward(x).float(), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    if args.compile:
        for i in range(2):  # compilation (forward and backward graphs) before the timed loop
            step(i)
        torch.cuda.synchronize()
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    for i in range(args.steps):
        z.begin_step(clock, i)
        losses[i] = step(i)
    step_ms = clock.finish()
    name = f"fp8_whatif_mlp_{args.size}_{args.precision}" + (f"_{args.recipe}" if args.precision == "fp8" else "") \
        + ({None: "_eager", "default": "_compiled"}.get(args.compile, "_compiled_graphs"))
    z.truth(name, args.steps,
            f"{blocks} MLP blocks of width {d} on {rows} rows in {args.precision}"
            + ((" (samples/torch/fp8_linear.py Fp8Linear, delayed)" if args.recipe == "delayed"
                else f" (torchao Float8Linear, {args.recipe})") if args.precision == "fp8" else "")
            + (f", torch.compile (mode {args.compile})" if args.compile else ", eager") + "; no host sync",
            step_ms, planted={"syncs_per_step": 0},
            recipe=args.recipe if args.precision == "fp8" else "none",
            precision=args.precision, mode=args.compile or "eager", size=args.size,
            fp8_linears=fp8_linears, losses=losses.tolist())


if __name__ == "__main__":
    main()
