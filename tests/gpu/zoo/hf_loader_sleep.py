#!/usr/bin/env python3
"""Zoo workload hf_loader_sleep (docs/accuracy.md "Scoreboard"): a transformers LlamaForCausalLM built from a small
config (random weights, nothing downloaded) fed by a torch DataLoader whose Dataset sleeps in __getitem__
(num_workers=0, the dataset yields whole batches, so one batch costs exactly one sleep), bf16 autocast, AdamW, and one
loss.item() per step.

Per step, in order: the step marker, next(loader) (the sleep: the launching thread makes no CUDA call), the batch's
copy from pinned memory (asynchronous), forward, backward, optimizer step, loss.item() (the step's one host sync).
The sleep therefore follows the previous step's closing sync: the report must charge it to host, not to sync.

  hf_loader_sleep.py [--steps N] [--sleep-ms MS]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

BATCH, SEQ, VOCAB = 8, 128, 4096


class SleepyBatches(Dataset):
    """Whole batches of token ids from pinned memory; each __getitem__ sleeps first, as a slow data source would."""

    def __init__(self, batches, sleep_s):
        g = torch.Generator().manual_seed(1)
        self.tokens = torch.randint(0, VOCAB, (batches, BATCH, SEQ), generator=g).pin_memory()
        self.sleep_s = sleep_s
        self.slept_s = []

    def __len__(self):
        return self.tokens.shape[0]

    def __getitem__(self, index):
        t0 = time.perf_counter()
        time.sleep(self.sleep_s)
        self.slept_s.append(time.perf_counter() - t0)
        return self.tokens[index]  # a view of pinned memory: its copy to the GPU is asynchronous


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--sleep-ms", type=float, default=15.0)
    args = p.parse_args()
    z.require_cuda("hf_loader_sleep")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=256, intermediate_size=704, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=SEQ)
    model = LlamaForCausalLM(config).cuda()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    dataset = SleepyBatches(args.steps, args.sleep_ms / 1e3)
    # batch_size=None: the dataset's items are the batches (no collation), one __getitem__ (one sleep) per step.
    loader = DataLoader(dataset, batch_size=None, shuffle=False, num_workers=0)
    batches = iter(loader)
    clock = z.StepClock(args.steps, host=True)  # each step ends in a host sync
    waits_s, losses = [], []
    for step in range(args.steps):
        z.begin_step(clock, step)
        t0 = time.perf_counter()
        tokens = next(batches)
        waits_s.append(time.perf_counter() - t0)
        tokens = tokens.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_ids=tokens, labels=tokens)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(out.loss.item())  # the step's one host sync
    step_ms = clock.finish()
    z.truth("hf_loader_sleep", args.steps,
            "a Hugging Face Llama whose DataLoader sleeps in __getitem__ before each batch (num_workers=0), "
            "one loss.item() per step",
            step_ms,
            planted={"host_stall_ms": args.sleep_ms, "host_stall_where": "between_steps", "host_stall_steps": "all",
                     "syncs_per_step": 1},
            measured={"host_wait_ms_median": z.median_after_warmup(z.ms(waits_s)),
                      "slept_ms_median": z.median_after_warmup(z.ms(dataset.slept_s))},
            recipe="none", final_loss=losses[-1],
            model={"hidden": 256, "layers": 2, "seq": SEQ, "batch": BATCH, "vocab": VOCAB})


if __name__ == "__main__":
    main()
