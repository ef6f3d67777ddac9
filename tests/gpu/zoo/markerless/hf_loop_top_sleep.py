#!/usr/bin/env python3
"""Zoo workload hf_loop_top_sleep (issue 42 item 5, stage zoo-markerless): a transformers LlamaForCausalLM built from
a small config (hidden 256, 2 layers, vocab 4096, random weights, nothing downloaded), batch 8 x 128 tokens drawn on
the GPU each step (torch.randint on a CUDA generator: one kernel, no copy), bf16 autocast, AdamW (PyTorch's default
implementation, foreach), and one loss.item() per step.

The planted stall is a plain time.sleep(0.015) at the very top of each iteration, not inside a DataLoader: the
launching thread makes no CUDA call while it sleeps. This reproduces a hidden job where, without the job's markers,
the analyzer called the sleep in-step framework work: a bare sleep has no loader frame, no copy and no sync right
before it, only the previous step's loss.item().

Per step, in order: the step marker (fp8scope.step, then marker_host_ns), the sleep (measured), the token batch
(torch.randint on the GPU), forward under autocast, backward, optimizer step, zero_grad, loss.item() (the step's
one host sync: cudaMemcpyAsync into pinned memory and cudaStreamSynchronize, one host-blocking call). The sleep
therefore lies between the previous step's closing sync and this step's first launch: host_stall_where
"between_steps".

Truth (zoo_common.truth): planted.host_stall_ms (the sleep asked for), host_stall_where "between_steps",
host_stall_steps "all", syncs_per_step 1; measured.slept_ms_median (the sleep as measured around time.sleep, the
figure the judge compares with), measured.median_step_ms (host clock: every step ends in the .item());
marker_host_ns / marker_clock (zoo_common.marker_fields); losses (per step, read on the host by the .item() the step
makes anyway), final_loss.

  hf_loop_top_sleep.py [--steps N] [--sleep-ms MS]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/gpu/zoo: zoo_common
import zoo_common as z  # noqa: E402

import torch  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

BATCH, SEQ, VOCAB, HIDDEN, LAYERS = 8, 128, 4096, 256, 2


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--name", default="hf_loop_top_sleep", help="the workload name its truth prints (a zero-code variant)")
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--sleep-ms", type=float, default=15.0)
    args = p.parse_args()
    z.require_cuda("hf_loop_top_sleep")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=704, num_hidden_layers=LAYERS,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=SEQ)
    model = LlamaForCausalLM(config).cuda()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator(device="cuda").manual_seed(1)
    sleep_s = args.sleep_ms / 1e3
    clock = z.StepClock(args.steps, host=True)  # each step ends in a host sync
    marker_ns, slept_s, losses = [], [], []
    for step in range(args.steps):
        z.begin_step(clock, step, marker_ns)
        t0 = time.perf_counter()
        time.sleep(sleep_s)  # the planted stall: the loop's very top, no CUDA call
        slept_s.append(time.perf_counter() - t0)
        tokens = torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda", generator=g)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_ids=tokens, labels=tokens)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(out.loss.item())  # the step's one host sync
    step_ms = clock.finish()
    z.truth(args.name, args.steps,
            f"a Hugging Face Llama (hidden {HIDDEN}, {LAYERS} layers) whose loop sleeps {args.sleep_ms:g} ms at the "
            "very top of each iteration (no DataLoader), token batch drawn on the GPU, bf16 autocast, AdamW, one "
            "loss.item() per step",
            step_ms,
            planted={"host_stall_ms": args.sleep_ms, "host_stall_where": "between_steps", "host_stall_steps": "all",
                     "syncs_per_step": 1, "sync_calls": ["cudaStreamSynchronize of loss.item()"]},
            measured={"slept_ms_median": z.median_after_warmup(z.ms(slept_s))},
            recipe="none", losses=losses, final_loss=losses[-1],
            model={"hidden": HIDDEN, "layers": LAYERS, "seq": SEQ, "batch": BATCH, "vocab": VOCAB},
            **z.marker_fields(marker_ns))


if __name__ == "__main__":
    main()
