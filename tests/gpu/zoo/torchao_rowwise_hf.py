#!/usr/bin/env python3
"""Zoo workloads torchao_rowwise_* (issue 31): a Hugging Face Llama (from a config, random weights, nothing downloaded)
trained in BF16, or with its decoder Linears converted by torchao's convert_to_float8_training with the rowwise recipe
(Float8LinearConfig.from_recipe_name("rowwise"): one scale per row, recomputed every step, scales rounded down to
powers of two). The LM head stays BF16 in both precisions. Same seed, data and initial weights in both: twins.

  --precision bf16|fp8
  --plant-drift L:S:F   in either precision, from step S on, feature 0 of layer L's MLP input is multiplied by
                        F**(step - S + 1) on the device (a forward pre-hook on model.model.layers[L].mlp)

Its own truth (scaled_mm_count.py): in the last step it counts every torch._scaled_mm (patching the attribute) and classifies
each operand's recipe by its scale's shape; the truth prints the count per step and per recipe, and every step's loss
as float.hex() (bitwise comparison of traced and untraced runs). The loss is read with .item() after the loop only.

torchao comes from .torchao/ (tests/gpu/tools/make_torchao.sh), as for torchao_mlp.py.

  torchao_rowwise_hf.py --precision fp8|bf16 [--steps N] [--plant-drift L:S:F] [--name ZOO_NAME] [--twin ZOO_NAME]
"""

import argparse
import os
import sys

os.environ["TORCHAO_FORCE_SKIP_LOADING_SO_FILES"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402
from scaled_mm_count import ScaledMmCount  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

# After transformers: with .torchao's partial torchao on the path, transformers would take torchao as installed and
# import parts of it (its quantizer integration) that .torchao does not hold.
sys.path.insert(0, os.environ.get("FP8SCOPE_TORCHAO_DIR", os.path.join(z.REPO, ".torchao")))

LAYERS, HIDDEN, FFN, VOCAB, BATCH, SEQ = 2, 512, 1536, 8192, 8, 256
CURRENT_STEP = [0]


def to_float8(model):
    import torchao
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    from torchao.float8.float8_linear import Float8Linear

    config = Float8LinearConfig.from_recipe_name("rowwise")
    convert_to_float8_training(model.model.layers, config=config)
    return sum(isinstance(m, Float8Linear) for m in model.modules()), getattr(torchao, "__version__", "unknown")


def plant_drift(model, layer, start, factor):
    z.common.plant_input_drift(model.model.layers[layer].mlp, start, factor, lambda: CURRENT_STEP[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--precision", required=True, choices=("bf16", "fp8"))
    p.add_argument("--steps", type=int, default=16)
    p.add_argument("--plant-drift", metavar="L:S:F")
    p.add_argument("--name")
    p.add_argument("--twin")
    args = p.parse_args()
    z.require_cuda("torchao_rowwise_hf")
    if args.precision == "fp8" and torch.cuda.get_device_capability() < (9, 0):
        print("torchao_rowwise_hf: rowwise FP8 needs compute capability 9.0; exiting with code 77", file=sys.stderr)
        sys.exit(77)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=SEQ)
    model = LlamaForCausalLM(config).to(device="cuda", dtype=torch.bfloat16)
    fp8_linears, torchao_version = to_float8(model) if args.precision == "fp8" else (0, None)
    drift = None
    if args.plant_drift:
        layer, start, factor = args.plant_drift.split(":")
        drift = (int(layer), int(start), float(factor))
        plant_drift(model, *drift)
    annotation = None
    if z.common.fp8scope is not None:
        annotation = z.common.fp8scope.torch.annotate(model, cast_stats=False)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    batches = [torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda", generator=g) for _ in range(4)]
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    counter = ScaledMmCount()
    for step in range(args.steps):
        CURRENT_STEP[0] = step
        z.begin_step(clock, step)
        tokens = batches[step % len(batches)]
        counting = step == args.steps - 1
        if counting:
            counter.__enter__()
        loss = model(input_ids=tokens, labels=tokens).loss
        if z.common.fp8scope is not None:
            z.common.fp8scope.log_scalar("loss", loss.detach().float())
        loss.backward()
        if counting:
            counter.__exit__(None, None, None)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach().float()
    step_ms = clock.finish()
    if annotation is not None:
        annotation.remove()
    loss_values = losses.tolist()
    drift_truth = "clean"
    if drift:
        drift_truth = {"layer": f"layers.{drift[0]}.mlp", "tensor": f"layers.{drift[0]}.mlp input", "feature": 0,
                       "onset_step": drift[1], "growth_per_step": drift[2]}
    z.truth(args.name or f"torchao_rowwise_hf_{args.precision}", args.steps,
            "torchao rowwise FP8 on a Hugging Face Llama" if args.precision == "fp8" else "Hugging Face Llama, BF16",
            step_ms, drift=drift_truth, recipe="rowwise" if args.precision == "fp8" else "none",
            pair={"role": "run" if args.precision == "fp8" else "reference", "twin": args.twin},
            precision=args.precision, fp8_linears=fp8_linears, torchao_version=torchao_version,
            scaled_mm=counter.truth(args.steps - 1), losses_hex=[float(x).hex() for x in loss_values],
            final_loss=loss_values[-1])


if __name__ == "__main__":
    main()
