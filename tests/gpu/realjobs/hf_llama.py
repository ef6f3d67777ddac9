#!/usr/bin/env python3
"""A Hugging Face transformers model trained from a config (random weights, nothing downloaded): a small Llama,
bf16 autocast, AdamW (foreach, the default), the loss read with .item() every step as a typical loop logs it.

  hf_llama.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH {"steps": N, ...}

For compare (docs/analysis.md "Compare"), the same model as an FP8 + BF16 pair:
  --layers N            decoder layers (default 4)
  --fp8                 every Linear of the decoder layers becomes samples/torch/fp8_linear.py's Fp8Linear (delayed
                        scaling through torch._scaled_mm); the LM head stays BF16
  --plant-drift L:S:F   from step S on, feature 0 of layer L's MLP input is multiplied by F**(step - S + 1), in
                        either precision (a forward pre-hook on model.layers[L].mlp)
  --annotate            fp8scope.torch.annotate(model): NVTX module names for the tensor sites
  --log-loss            the loss also as an fp8scope scalar (read on the device)
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples", "torch"))

CURRENT_STEP = [0]


def to_fp8(model):
    """Replaces every nn.Linear of the decoder layers by an Fp8Linear holding the same weights."""
    return common.to_fp8_linears(p for layer in model.model.layers for p in (layer.self_attn, layer.mlp))


def plant_drift(model, spec):
    layer, start, factor = spec
    common.plant_input_drift(model.model.layers[layer].mlp, start, factor, lambda: CURRENT_STEP[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--fp8", action="store_true")
    p.add_argument("--plant-drift", metavar="L:S:F")
    p.add_argument("--annotate", action="store_true")
    p.add_argument("--log-loss", action="store_true")
    args = p.parse_args()
    drift = None
    if args.plant_drift:
        layer, start, factor = args.plant_drift.split(":")
        drift = (int(layer), int(start), float(factor))
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=8000, hidden_size=512, intermediate_size=1376, num_hidden_layers=args.layers,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=512)
    model = LlamaForCausalLM(config).cuda()
    fp8_linears = to_fp8(model) if args.fp8 else 0
    if drift:
        plant_drift(model, drift)
    if args.annotate and common.fp8scope is not None:
        common.fp8scope.torch.annotate(model, cast_stats=False)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(1)
    clock = common.StepClock()
    losses = []
    for step in range(args.steps):
        CURRENT_STEP[0] = step
        common.mark_step(step)
        tokens = torch.randint(0, config.vocab_size, (8, 256), generator=g).cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_ids=tokens, labels=tokens)
        if args.log_loss and common.fp8scope is not None:
            common.fp8scope.log_scalar("loss", out.loss.detach())
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(out.loss.item())  # the host sync of each step
        clock.tick()
    common.print_truth("hf_llama", args.steps, clock.times, final_loss=losses[-1], losses=losses,
                       parameters=sum(p.numel() for p in model.parameters()), layers=args.layers,
                       precision="fp8" if args.fp8 else "bf16", fp8_linears=fp8_linears,
                       planted_drift=({"layer": drift[0], "site": f"model.layers.{drift[0]}.mlp", "from_step": drift[1],
                                       "factor_per_step": drift[2]} if drift else None))


if __name__ == "__main__":
    main()
