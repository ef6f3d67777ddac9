#!/usr/bin/env python3
"""Zoo workloads torchao_compiled_* and fusion_* (issue 44): a mid-size Hugging Face model (from a config, random
weights, nothing downloaded) trained with fused AdamW, in BF16 or with its Linears converted by torchao's
convert_to_float8_training (tensorwise or rowwise recipe), under torch.compile (Inductor, default mode) or eager. The
LM head stays BF16. Same seed, data and initial weights in every variant: twins.

--arch picks the model (ARCHS below): llama (the torchao_compiled_* workloads, and the eager-to-compiled what-if's
fit), and the held-out architectures of the fusion_* workloads, chosen for elementwise work unlike Llama's:
gpt_neox (LayerNorm, GELU, parallel residual, partial rotary), bert (masked LM: LayerNorm, GELU, dropout, learned
positions), opt (ReLU, LayerNorm, dropout, learned positions), qwen2 (RMSNorm, SiLU, grouped-query attention,
biased q/k/v), gemma (GeGLU with tanh GELU, RMSNorm scaled by 1 + w, 256-wide heads) and starcoder2 (LayerNorm,
tanh GELU, biased Linears, grouped-query attention).

Its own truth, besides the step times:
  inductor_kernels  (compiled only) every Triton kernel Inductor generated, read from its source as Inductor hands it
                    to the compiler (torch._inductor.async_compile.AsyncCompile.triton, patched before compiling):
                    per kernel name, whether it casts to float8 (`fp8_cast`: tl.float8e4nv / tl.float8e5 in its
                    source), whether it takes an absolute maximum (`amax`: an abs and a max reduction, or the second
                    stage of a split one, whose name still says abs), and whether it computes or applies a scale
                    (`fp8_scale`: the E4M3 or E5M2 maximum, 448.0 or 57344.0, as a constant). `fp8_bookkeeping` is
                    any of the three: the ground truth the analyzer's reading of kernel names is judged by
                    (docs/analysis.md, kernel classes).
  losses_hex        every step's loss (read with .item() after the loop only).

  torchao_compiled_hf.py --precision bf16|tensorwise|rowwise [--mode compiled|eager] [--steps N] [--size mid|small]
                         [--arch llama|gpt_neox|bert|opt|qwen2|gemma|starcoder2] [--name ZOO_NAME] [--twin ZOO_NAME] [--sources FILE]
    --sources FILE  also writes every generated kernel's source to FILE (JSON, gzip'd when FILE ends in .gz)
    --no-prewarm    compile in this process (the untraced timing runs)
    --facts-out F   (the child) write the kernel truth to F

Compiled, the job first runs 2 steps in a child process without the collector (LD_PRELOAD and CUDA_INJECTION64_PATH
removed, no step markers) that compiles into a fresh Inductor cache (TORCHINDUCTOR_CACHE_DIR) and writes the kernel
truth; the job then compiles from that cache, so that its trace holds no autotuning (Triton's benchmark runs, 43,000
kernels in the first traced rowwise run) and stays small, as a user's second run would.

torchao comes from .torchao/ (tests/gpu/tools/make_torchao.sh), as for torchao_mlp.py.
"""

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

os.environ["TORCHAO_FORCE_SKIP_LOADING_SO_FILES"] = "1"
ZOO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/gpu/zoo: zoo_common
sys.path.insert(0, ZOO)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(ZOO)))

SIZES = {  # Llama's: layers, hidden, ffn, heads, vocab, batch, seq
    "mid": (4, 2048, 5632, 16, 32000, 4, 1024),
    "small": (2, 512, 1536, 8, 8192, 8, 256),
}
ARCHS = ("llama", "gpt_neox", "bert", "opt", "qwen2", "gemma", "starcoder2")
HELD_OUT = {  # the held-out architectures, one size each: (model class, config) from transformers; batch, seq
    "gpt_neox": ("GPTNeoXForCausalLM", "GPTNeoXConfig", dict(
        vocab_size=32000, hidden_size=1536, num_hidden_layers=4, num_attention_heads=12, intermediate_size=6144,
        max_position_embeddings=1024, rotary_pct=0.25, use_parallel_residual=True), 4, 1024),
    "bert": ("BertForMaskedLM", "BertConfig", dict(
        vocab_size=32000, hidden_size=1024, num_hidden_layers=6, num_attention_heads=16, intermediate_size=4096,
        max_position_embeddings=512), 16, 512),
    "opt": ("OPTForCausalLM", "OPTConfig", dict(
        vocab_size=32000, hidden_size=1536, num_hidden_layers=4, num_attention_heads=12, ffn_dim=6144,
        word_embed_proj_dim=1536, max_position_embeddings=1024), 4, 1024),
    "qwen2": ("Qwen2ForCausalLM", "Qwen2Config", dict(
        vocab_size=32000, hidden_size=1536, num_hidden_layers=4, num_attention_heads=12, num_key_value_heads=2,
        intermediate_size=4096, max_position_embeddings=1024), 4, 1024),
    "gemma": ("GemmaForCausalLM", "GemmaConfig", dict(
        vocab_size=32000, hidden_size=1536, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=8,
        head_dim=256, intermediate_size=6144, max_position_embeddings=1024), 4, 1024),
    "starcoder2": ("Starcoder2ForCausalLM", "Starcoder2Config", dict(
        vocab_size=32000, hidden_size=1536, num_hidden_layers=4, num_attention_heads=12, num_key_value_heads=4,
        intermediate_size=6144, max_position_embeddings=1024), 4, 1024),
}

SOURCES = {}  # kernel name -> source


def capture_inductor_sources():
    """Patches Inductor's AsyncCompile.triton, which every generated Triton kernel passes through with its name and
    source, to keep both. Returns False when this PyTorch has no such entry point."""
    try:
        from torch._inductor import async_compile
    except ImportError:
        return False
    original = getattr(async_compile.AsyncCompile, "triton", None)
    if original is None:
        return False

    def triton(self, kernel_name, source_code, *args, **kwargs):
        SOURCES.setdefault(kernel_name, source_code)
        return original(self, kernel_name, source_code, *args, **kwargs)

    async_compile.AsyncCompile.triton = triton
    return True


FP8_TYPES = re.compile(r"tl\.float8e4nv|tl\.float8e5\b|tl\.float8e4b8|tl\.float8e5b16")
MAX_REDUCE = re.compile(r"triton_helpers\.max2\(|tl\.max\(|triton_helpers\.maximum\(")
ABS = re.compile(r"tl_math\.abs\(|tl\.abs\(|libdevice\.abs\(")


FP8_MAX = re.compile(r"[^0-9.](448\.0|57344\.0)\b")


def kernel_facts(name, source):
    """What a generated kernel does, read from its source: the truth for one kernel name."""
    body = source.split("def " + name, 1)[-1] if ("def " + name) in source else source
    fp8_cast = bool(FP8_TYPES.search(body))
    reduction = name.startswith(("triton_red_", "triton_per_"))
    has_abs = bool(ABS.search(body))
    max_reduce = reduction and bool(MAX_REDUCE.search(body))
    return {"fp8_cast": fp8_cast, "fp8_scale": bool(FP8_MAX.search(body)), "abs": has_abs,
            "max_reduction": max_reduce, "reduction": reduction}


def mark_amax(facts):
    """amax: an abs feeding a max reduction; and the second stage of a split one (a max reduction with no abs whose
    name says abs: Inductor names a kernel after the ATen ops of the nodes it computes, and a split reduction's
    stages come from the same abs/max nodes)."""
    for name, f in facts.items():
        ops = name.split("_fused_", 1)[-1]
        f["amax"] = f["max_reduction"] and (f["abs"] or "_abs_" in "_" + ops + "_")
        f["fp8_bookkeeping"] = f["fp8_cast"] or f["fp8_scale"] or f["amax"]


def to_float8(model, recipe, vocab):
    """Every Linear but the LM head (the one whose outputs are the vocabulary), as torchao's recipes leave it."""
    import torchao
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training
    from torchao.float8.float8_linear import Float8Linear

    convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name(recipe),
                               module_filter_fn=lambda module, fqn: getattr(module, "out_features", 0) != vocab)
    return sum(isinstance(m, Float8Linear) for m in model.modules()), getattr(torchao, "__version__", "unknown")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--precision", required=True, choices=("bf16", "tensorwise", "rowwise"))
    p.add_argument("--mode", default="compiled", choices=("compiled", "eager"))
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--size", default="mid", choices=tuple(SIZES))
    p.add_argument("--arch", default="llama", choices=ARCHS)
    p.add_argument("--name")
    p.add_argument("--twin")
    p.add_argument("--sources")
    p.add_argument("--no-prewarm", action="store_true")
    p.add_argument("--facts-out")
    return p.parse_args()


def prewarm(args):
    """Compiles in a child process without the collector, into a fresh Inductor cache that this process then uses
    (set before torch is imported); returns the child's kernel truth."""
    cache = tempfile.mkdtemp(prefix="fp8scope-inductor-")
    facts = os.path.join(cache, "kernel-facts.json")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    env.update(TORCHINDUCTOR_CACHE_DIR=cache, FP8SCOPE_ZOO_MARKERS="0")
    argv = [sys.executable, os.path.abspath(__file__), "--precision", args.precision, "--size", args.size, "--arch", args.arch,
            "--steps", "2", "--no-prewarm", "--facts-out", facts] + (["--sources", args.sources] if args.sources else [])
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    with open(facts) as f:
        return json.load(f)


def main():
    args = parse_args()
    compiled = args.mode == "compiled"
    kernels = prewarm(args) if compiled and not args.no_prewarm else None

    import zoo_common as z
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    sys.path.insert(0, os.environ.get("FP8SCOPE_TORCHAO_DIR", os.path.join(REPO, ".torchao")))
    z.require_cuda("torchao_compiled_hf")
    if args.precision != "bf16" and torch.cuda.get_device_capability() < (9, 0):
        print("torchao_compiled_hf: FP8 needs compute capability 9.0; exiting with code 77", file=sys.stderr)
        sys.exit(77)
    captured = capture_inductor_sources() if compiled and kernels is None else False
    torch.manual_seed(0)
    if args.arch == "llama":
        layers, hidden, ffn, heads, vocab, batch, seq = SIZES[args.size]
        config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers,
                             num_attention_heads=heads, num_key_value_heads=heads, max_position_embeddings=seq)
        model = LlamaForCausalLM(config)
    else:
        import transformers

        model_class, config_class, fields, batch, seq = HELD_OUT[args.arch]
        vocab = fields["vocab_size"]
        model = getattr(transformers, model_class)(getattr(transformers, config_class)(**fields))
    model = model.to(device="cuda", dtype=torch.bfloat16)
    fp8_linears, torchao_version = to_float8(model, args.precision, vocab) if args.precision != "bf16" else (0, None)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    step_fn = torch.compile(model) if compiled else model
    g = torch.Generator(device="cuda").manual_seed(1)
    batches = [torch.randint(0, vocab, (batch, seq), device="cuda", generator=g) for _ in range(4)]
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    for step in range(args.steps):
        z.begin_step(clock, step)
        tokens = batches[step % len(batches)]
        loss = step_fn(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach().float()
    step_ms = clock.finish()
    loss_values = losses.tolist()
    if compiled and kernels is None:
        facts = {name: kernel_facts(name, src) for name, src in sorted(SOURCES.items())}
        mark_amax(facts)
        kernels = {"source": "torch._inductor.async_compile.AsyncCompile.triton" if captured else "none",
                   "generated_in": "this process" if args.no_prewarm else "a child process", "count": len(facts),
                   "kernels": facts}
        if args.sources:
            opener = gzip.open if args.sources.endswith(".gz") else open
            with opener(args.sources, "wt") as f:
                json.dump(SOURCES, f)
    if args.facts_out:
        with open(args.facts_out, "w") as f:
            json.dump(kernels, f)
        return
    if kernels is not None and not args.no_prewarm:
        kernels["generated_in"] = "the prewarm child process (the same model, precision and size, 2 steps)"
    # The zoo's recipe names (judged by compare's recipe column): torchao's tensorwise is current scaling, per tensor.
    recipe = {"bf16": "none", "tensorwise": "current", "rowwise": "rowwise"}[args.precision]
    model_name = f"Llama ({args.size})" if args.arch == "llama" else HELD_OUT[args.arch][0]
    z.truth(args.name or f"torchao_compiled_hf_{args.precision}_{args.mode}", args.steps,
            f"Hugging Face {model_name}, {'torch.compile' if compiled else 'eager'}, "
            + ("BF16" if args.precision == "bf16" else f"torchao {args.precision} FP8"),
            step_ms, recipe=recipe, mode=args.mode, size=args.size, arch=args.arch, precision=args.precision,
            pair={"role": "reference" if args.precision == "bf16" else "run", "twin": args.twin} if args.twin else None,
            fp8_linears=fp8_linears, torchao_version=torchao_version, inductor_kernels=kernels,
            losses_hex=[float(x).hex() for x in loss_values], final_loss=loss_values[-1])


if __name__ == "__main__":
    main()
