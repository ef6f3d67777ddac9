#!/usr/bin/env python3
"""A Hugging Face transformers model trained from a config (random weights, nothing downloaded): a small Llama,
bf16 autocast, AdamW (foreach, the default), the loss read with .item() every step as a typical loop logs it.

  hf_llama.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH {"steps": N, ...}
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    args = p.parse_args()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=8000, hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=512)
    model = LlamaForCausalLM(config).cuda()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(1)
    clock = common.StepClock()
    losses = []
    for step in range(args.steps):
        common.mark_step(step)
        tokens = torch.randint(0, config.vocab_size, (8, 256), generator=g).cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_ids=tokens, labels=tokens)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(out.loss.item())  # the host sync of each step
        clock.tick()
    common.print_truth("hf_llama", args.steps, clock.times, final_loss=losses[-1],
                       parameters=sum(p.numel() for p in model.parameters()))


if __name__ == "__main__":
    main()
