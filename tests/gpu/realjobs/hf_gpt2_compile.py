#!/usr/bin/env python3
"""A torch.compile'd Hugging Face GPT-2 trained from a config (random weights, nothing downloaded): bf16 autocast,
AdamW, the loss read with .item() every step. The case of a changed number in
docs/benchmarks.md "Never a changed number: the bitwise stage": its last loss under `fp8scope record` (GEMM statistics
on) differed from the untraced run's.

  hf_gpt2_compile.py [--steps N] [--layers N] [--mode default|reduce-overhead|none] [--deterministic]
      prints FP8SCOPE_GROUND_TRUTH {"losses": [...], "final_loss": ..., ...}

--deterministic calls torch.use_deterministic_algorithms(True) (with CUBLAS_WORKSPACE_CONFIG=:4096:8), which also
turns on Inductor's deterministic mode: no launch config chosen by timing, no atomic accumulation.

With TORCHINDUCTOR_CACHE_DIR pointing at an empty folder, Inductor compiles (and autotunes) from scratch; the
truth line then names the autotuned kernels' chosen configs (autotuned: {kernel: config}), read back from that
folder's .best_config files, so that two runs' choices can be compared.
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

if "--deterministic" in sys.argv:
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before cuBLAS starts: its deterministic workspace
import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402


def autotuned_configs():
    """{kernel file stem: chosen config} from the Inductor cache's .best_config files (empty without a cache)."""
    folder = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not folder:
        return {}
    chosen = {}
    for path in sorted(Path(folder).rglob("*.best_config")):
        try:
            config = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        # Only the launch parameters: the file also holds timings and hashes of the run.
        chosen[path.stem] = {k: v for k, v in config.items() if k in ("XBLOCK", "YBLOCK", "R0_BLOCK", "RBLOCK",
                                                                       "num_warps", "num_stages")}
    return chosen


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--mode", choices=("default", "reduce-overhead", "none"), default="default")
    p.add_argument("--deterministic", action="store_true")
    args = p.parse_args()
    if args.deterministic:
        torch.use_deterministic_algorithms(True)
    if not torch.cuda.is_available():
        common.fail("no CUDA device", 77)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=8192, n_positions=512, n_embd=512, n_layer=args.layers, n_head=8)
    model = GPT2LMHeadModel(config).cuda()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    step_fn = model if args.mode == "none" else torch.compile(model, mode=args.mode)
    g = torch.Generator().manual_seed(1)
    clock = common.StepClock()
    losses = []
    for step in range(args.steps):
        common.mark_step(step)
        tokens = torch.randint(0, config.vocab_size, (8, 256), generator=g).cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = step_fn(input_ids=tokens, labels=tokens)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(out.loss.item())  # the host sync of each step
        clock.tick()
    import torch._inductor.config as inductor_config  # noqa: E402  (imported by torch.compile already)
    common.print_truth("hf_gpt2_compile", args.steps, clock.times, final_loss=losses[-1], losses=losses,
                       mode=args.mode, layers=args.layers, autotuned=autotuned_configs(),
                       deterministic=bool(getattr(inductor_config, "deterministic", False)))


if __name__ == "__main__":
    main()
