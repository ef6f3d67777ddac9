#!/usr/bin/env python3
"""Zoo workloads torchao_* (docs/accuracy.md "Scoreboard"): a small pre-norm MLP-block model trained in BF16, or with
its block Linears converted by torchao's convert_to_float8_training (Float8Linear, tensorwise current scaling: each
cast's scale from the tensor's own amax, recomputed every step). The head stays BF16 in both precisions. Same seed,
same data, same initial weights in both precisions, so the two runs are twins.

  --precision bf16|fp8
  --plant-drift B:S:F   in either precision, from step S on, feature 0 of blocks[B].fc1's input (the MLP input, after
                        the LayerNorm) is multiplied by F**(step - S + 1), on the device (no host sync)

The loss goes to fp8scope.log_scalar("loss", ...) (read on the device) and fp8scope.torch.annotate(model) names the
tensor sites; both are no-ops untraced. No host sync in the loop.

torchao is not installed on the GPU machine: tests/gpu/tools/make_torchao.sh exports its pure-Python float8 path into
.torchao/ at the repository root (or $FP8SCOPE_TORCHAO_DIR), which this program puts first on sys.path, with
TORCHAO_FORCE_SKIP_LOADING_SO_FILES=1 (no C++/CUDA extension is loaded).

  torchao_mlp.py --precision fp8|bf16 [--steps N] [--plant-drift B:S:F] [--name ZOO_NAME] [--twin ZOO_NAME]
"""

import argparse
import os
import sys

os.environ["TORCHAO_FORCE_SKIP_LOADING_SO_FILES"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

TORCHAO_DIR = os.environ.get("FP8SCOPE_TORCHAO_DIR", os.path.join(z.REPO, ".torchao"))
sys.path.insert(0, TORCHAO_DIR)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

D, BLOCKS, ROWS, CLASSES = 512, 2, 2048, 512
CURRENT_STEP = [0]


class Block(nn.Module):
    def __init__(self, d, index, drift):
        super().__init__()
        self.index = index
        self.drift = drift if drift and drift[0] == index else None
        self.norm = nn.LayerNorm(d, dtype=torch.bfloat16)
        self.fc1 = nn.Linear(d, 4 * d, dtype=torch.bfloat16)
        self.fc2 = nn.Linear(4 * d, d, dtype=torch.bfloat16)

    def forward(self, x):
        u = self.norm(x)
        if self.drift and CURRENT_STEP[0] >= self.drift[1]:
            # The planted drift: one outlier feature of the MLP input, growing by F per step. Setting gain[0] from a
            # Python float is a pageable host-to-device copy and its stream sync: 2 host-blocking calls per step.
            gain = torch.ones(u.shape[-1], device=u.device, dtype=u.dtype)
            gain[0] = self.drift[2] ** (CURRENT_STEP[0] - self.drift[1] + 1)
            u = u * gain
        return x + self.fc2(nn.functional.gelu(self.fc1(u)))


class Model(nn.Module):
    def __init__(self, drift):
        super().__init__()
        self.blocks = nn.ModuleList(Block(D, i, drift) for i in range(BLOCKS))
        self.norm = nn.LayerNorm(D, dtype=torch.bfloat16)
        self.head = nn.Linear(D, CLASSES, dtype=torch.bfloat16)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def to_float8(model):
    """torchao's float8 training conversion, tensorwise recipe; the head stays BF16. Returns the converted count."""
    import torchao
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    from torchao.float8.float8_linear import Float8Linear

    config = Float8LinearConfig.from_recipe_name("tensorwise")
    convert_to_float8_training(model, config=config, module_filter_fn=lambda module, fqn: fqn != "head")
    count = sum(isinstance(m, Float8Linear) for m in model.modules())
    return count, getattr(torchao, "__version__", "unknown")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--precision", required=True, choices=("bf16", "fp8"))
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--plant-drift", metavar="B:S:F")
    p.add_argument("--name", help="the zoo workload name printed in the truth")
    p.add_argument("--twin", help="the zoo name of the other precision's run")
    args = p.parse_args()
    drift = None
    if args.plant_drift:
        block, start, factor = args.plant_drift.split(":")
        drift = (int(block), int(start), float(factor))
        if not 0 <= drift[0] < BLOCKS:
            p.error(f"--plant-drift: block must be below {BLOCKS}")
    z.require_cuda("torchao_mlp")
    if args.precision == "fp8" and torch.cuda.get_device_capability() < (8, 9):
        print("torchao_mlp: FP8 needs compute capability 8.9 or newer; exiting with code 77", file=sys.stderr)
        sys.exit(77)
    torch.manual_seed(0)
    model = Model(drift).cuda()
    fp8_linears, torchao_version = to_float8(model) if args.precision == "fp8" else (0, None)
    annotation = None
    if z.common.fp8scope is not None:
        annotation = z.common.fp8scope.torch.annotate(model, cast_stats=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    batches = z.teacher_batches(ROWS, D, CLASSES)
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        CURRENT_STEP[0] = step
        z.begin_step(clock, step)
        x, y = batches[step % len(batches)]
        loss = nn.functional.cross_entropy(model(x).float(), y)
        if z.common.fp8scope is not None:
            z.common.fp8scope.log_scalar("loss", loss.detach())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    if annotation is not None:
        annotation.remove()
    name = args.name or f"torchao_mlp_{args.precision}"
    drift_truth = "clean"
    if drift:
        drift_truth = {"layer": f"blocks.{drift[0]}.fc1", "tensor": f"blocks.{drift[0]}.fc1 input", "feature": 0,
                       "onset_step": drift[1], "growth_per_step": drift[2]}
    z.truth(name, args.steps,
            f"a {BLOCKS}-block MLP model in {args.precision}"
            + (" with torchao Float8Linear (tensorwise, current scaling)" if args.precision == "fp8" else "")
            + (f", feature 0 of blocks.{drift[0]}.fc1's input growing {drift[2]:g}x per step from step {drift[1]}"
               if drift else "")
            + ("; 2 host syncs per step from the drift's onset" if drift else "; no host sync"),
            step_ms,
            planted=({"syncs_per_step_from_onset": 2, "sync_steps": "from the drift's onset",
                      "sync_calls": ["cudaMemcpyAsync of gain[0] from pageable memory", "cudaStreamSynchronize"]}
                     if drift else {"syncs_per_step": 0}),
            recipe="current" if args.precision == "fp8" else "none",
            drift=drift_truth,
            pair={"role": "run" if args.precision == "fp8" else "ref", "twin": args.twin} if args.twin else None,
            precision=args.precision, fp8_linears=fp8_linears, torchao_version=torchao_version,
            losses=losses.tolist())


if __name__ == "__main__":
    main()
