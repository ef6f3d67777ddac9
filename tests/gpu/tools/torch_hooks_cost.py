#!/usr/bin/env python3
"""The host cost of fp8scope's step and loss hooks (docs/python.md, "Steps and loss without code"): a small PyTorch
training loop's host time per step with the hooks installed and without, in interleaved rounds, medians.

    fp8scope record -o /tmp/hooks-%p.sqlite -- python3 tests/gpu/tools/torch_hooks_cost.py
    LD_PRELOAD=build/test/lib/libfp8scope.so PYTHONPATH=probes/python python3 tests/gpu/tools/torch_hooks_cost.py

Options: --steps N (per round, 200), --rounds R (per kind, 7), --optimizers K (1; K optimizers stepped per step),
--accumulate A (1; backward passes per optimizer step), --scaler (a float16 GradScaler loop), --per-call N (the hooks'
own work timed alone, N calls a run, instead of the loop). The model is a small MLP,
so that the loop is bound by its host (the host time per step is then what the job pays). The hooks are put in and
taken out between rounds (fp8scope._torch_hooks.install / uninstall); the job never calls fp8scope.step(), so the
optimizer hook marks its steps. The GPU is synchronized between rounds, never inside one.
"""

import argparse
import statistics
import time

import torch

import fp8scope
from fp8scope import _torch_hooks


def build(args):
    layers = [torch.nn.Linear(256, 256) for _ in range(4)]
    model = torch.nn.Sequential(*[m for layer in layers for m in (layer, torch.nn.ReLU())]).cuda()
    groups = [list(layer.parameters()) for layer in layers]
    per = max(1, len(groups) // args.optimizers)
    optimizers = [torch.optim.SGD([p for g in groups[i * per:(i + 1) * per] for p in g] or groups[-1], lr=1e-3)
                  for i in range(args.optimizers)]
    scaler = torch.amp.GradScaler("cuda") if args.scaler else None
    return model, optimizers, scaler


def run_round(args, model, optimizers, scaler, x):
    """Host seconds per step over one round (the GPU synchronized before and after, not inside)."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        for _ in range(args.accumulate):
            with torch.autocast("cuda", dtype=torch.float16, enabled=scaler is not None):
                loss = model(x).float().pow(2).mean()
            (scaler.scale(loss) if scaler else loss).backward()
        for opt in optimizers:
            if scaler:
                scaler.step(opt)
            else:
                opt.step()
        if scaler:
            scaler.update()
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / args.steps


def per_call(calls, repeats=7):
    """The hooks' own work per call, timed alone (the loop's rounds cannot resolve it): what the backward wrapper
    adds to each backward (mark the step's backward, find the loss, log it: one ctypes call and the collector's
    one-element copy kernel), and what the optimizer post hook adds to each optimizer step (count it, write its
    marker: one ctypes call). Medians over `repeats` runs of `calls` calls, in microseconds."""
    loss = torch.ones((), device="cuda")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1, device="cuda"))], lr=0.1)
    out = {}
    for name, call in (("backward hook (loss logged)", lambda: _torch_hooks._on_backward(loss)),
                       ("optimizer post hook (marker)", lambda: (_torch_hooks._on_backward(None),
                                                                 _torch_hooks._on_optimizer_step(optimizer, (), {})))):
        runs = []
        for _ in range(repeats):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                call()
            runs.append((time.perf_counter() - start) / calls)
        out[name] = statistics.median(runs)
        print(f"  {name:30s} median {out[name] * 1e6:6.2f} us/call   runs: "
              + " ".join(f"{r * 1e6:.2f}" for r in runs))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-call", type=int, default=0,
                        help="time the hooks' own work per call over N calls (markers and losses go to the trace)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--optimizers", type=int, default=1)
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--scaler", action="store_true")
    args = parser.parse_args()

    print(f"collector: {'found via ' + str(fp8scope._collector.found_via) if fp8scope.enabled() else 'NOT FOUND'}; "
          f"torch {torch.__version__}; {torch.cuda.get_device_name()}")
    if not fp8scope.enabled():
        print("  (without a collector the hooks only count steps: run under fp8scope record or LD_PRELOAD)")
    if args.per_call:
        print(f"per call, {args.per_call} calls x 7 runs:")
        per_call(args.per_call)
        return
    model, optimizers, scaler = build(args)
    x = torch.randn(64, 256, device="cuda")
    for _ in range(3):  # warm-up: allocator, cuBLAS handles, autocast caches, both kinds
        _torch_hooks.uninstall()
        run_round(args, model, optimizers, scaler, x)
        _torch_hooks.install(torch)
        run_round(args, model, optimizers, scaler, x)

    per_step = {"without": [], "with": []}
    for _ in range(args.rounds):
        for kind in ("without", "with"):
            if kind == "with":
                _torch_hooks.install(torch)
            else:
                _torch_hooks.uninstall()
            per_step[kind].append(run_round(args, model, optimizers, scaler, x))
    _torch_hooks.install(torch)

    def us(values):
        return " ".join(f"{v * 1e6:.1f}" for v in values)

    print(f"loop: {args.optimizers} optimizer(s), {args.accumulate} backward per step, "
          f"{'GradScaler float16' if scaler else 'float32'}, {args.steps} steps x {args.rounds} rounds per kind")
    for kind, values in per_step.items():
        print(f"  {kind:8s} hooks: median {statistics.median(values) * 1e6:8.1f} us/step   rounds: {us(values)}")
    delta = statistics.median(per_step["with"]) - statistics.median(per_step["without"])
    print(f"  hooks cost: {delta * 1e6:+.1f} us/step "
          f"({delta / statistics.median(per_step['without']) * 100:+.1f}% of the host time per step)")


if __name__ == "__main__":
    main()
