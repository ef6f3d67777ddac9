#!/usr/bin/env python3
"""Zoo workload fp16_gradscaler (issue 42 item 5, stage zoo-markerless): fp16 mixed precision with loss scaling. An
MLP with fp32 parameters (4 Linear+GELU blocks, width 1024, then a Linear to 128 classes; batch 256) runs its
forward under torch.autocast("cuda", dtype=torch.float16); torch.amp.GradScaler("cuda") (init_scale 1024,
growth_interval 1000, so the scale never grows in this run) scales the loss: scaler.scale(loss).backward(),
scaler.step(optimizer), scaler.update(); AdamW with foreach=True (not fused: see the sync below).

Planted skipped steps: at --skip-steps (default 6 and 13) the loss is multiplied by float("inf") before
scaler.scale(), so every gradient is inf or NaN, GradScaler finds them in its unscale, skips optimizer.step() and
halves the scale (backoff_factor 0.5). The multiplication is by a Python float: no copy, no sync.

Syncs: the loop reads nothing on the host, but GradScaler.step does. For an optimizer without its own scaling
support (no _step_supports_amp_scaling: every optimizer but the fused ones), step() unscales the gradients
(torch._amp_foreach_non_finite_check_and_unscale_, no sync) and then, in _maybe_opt_step, decides whether to call
optimizer.step() with `sum(v.item() for v in found_inf_per_device.values())`: one .item() per device, here one, in
every step, skipped or not (cudaMemcpyAsync into pinned memory and cudaStreamSynchronize: one host-blocking call).
scaler.scale() and scaler.update() (torch._amp_update_scale_) make none. So planted.syncs_per_step is 1. (A fused
AdamW would take the found_inf tensor itself and make no sync; that is why this job uses foreach.)

Per step, in order: the step marker (fp8scope.step, then marker_host_ns), forward under autocast, the loss (kept
on the device for the truth), the planted inf where planted, scaler.scale(loss).backward(), scaler.step(optimizer)
(its .item()), scaler.update(), zero_grad, and a device copy of the scale after the update (GradScaler's own
scale tensor, cloned: no sync; get_scale() would make one, so it is not called in the loop).

Truth (zoo_common.truth): planted.syncs_per_step 1 with sync_calls, planted.skipped_steps (where inf was planted),
planted.init_scale, backoff_factor; measured.skipped_steps (the steps whose scale fell in the update: what
GradScaler did), measured.scale_per_step (the scale after each step's update), measured.median_step_ms (CUDA-event
clock: the loop's sync sits mid-step); losses (the unscaled loss per step, before the planted inf, read after the
loop), final_loss; marker_host_ns / marker_clock.

  fp16_gradscaler.py [--steps N] [--skip-steps 6,13]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/gpu/zoo: zoo_common
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, BATCH, BLOCKS, CLASSES = 1024, 256, 4, 128
INIT_SCALE, BACKOFF, GROWTH_INTERVAL = 1024.0, 0.5, 1000


def grad_scaler():
    """torch.amp.GradScaler("cuda") (PyTorch 2.3 and newer), else the older torch.cuda.amp.GradScaler."""
    kwargs = {"init_scale": INIT_SCALE, "backoff_factor": BACKOFF, "growth_interval": GROWTH_INTERVAL}
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda", **kwargs)
    return torch.cuda.amp.GradScaler(**kwargs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--name", default="fp16_gradscaler", help="the workload name its truth prints (a zero-code variant)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--skip-steps", default="6,13", help="steps whose loss is multiplied by inf")
    args = p.parse_args()
    skip_steps = sorted({int(s) for s in args.skip_steps.split(",") if s})
    z.require_cuda("fp16_gradscaler")
    torch.manual_seed(0)
    model = z.mlp(D, D, CLASSES, blocks=BLOCKS, dtype=torch.float32)  # fp32 master weights: GradScaler needs them
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True, fused=False)
    scaler = grad_scaler()
    batches = [(x.float(), y) for x, y in z.teacher_batches(BATCH, D, CLASSES, count=4, seed=1)]
    clock = z.StepClock(args.steps)
    marker_ns, losses, scales = [], [], []
    for step in range(args.steps):
        z.begin_step(clock, step, marker_ns)
        x, y = batches[step % len(batches)]
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.float(), y)
        losses.append(loss.detach())
        if step in skip_steps:
            loss = loss * float("inf")  # planted: every gradient inf/NaN, GradScaler skips this step
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # its found_inf .item(): the step's one host sync
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        scales.append(scaler._scale.detach().clone())  # after the update; a device copy, no sync
    step_ms = clock.finish()
    loss_values = torch.stack(losses).tolist()
    scale_values = torch.stack(scales).tolist()
    skipped = [i for i, s in enumerate(scale_values) if s < (scale_values[i - 1] if i else INIT_SCALE)]
    if skipped != skip_steps:
        print(f"fp16_gradscaler: GradScaler skipped steps {skipped}, planted {skip_steps}", file=sys.stderr)
    z.truth(args.name, args.steps,
            f"fp16 autocast with torch.amp.GradScaler (init scale {INIT_SCALE:g}) on an fp32 MLP, AdamW foreach; the "
            f"loss multiplied by inf at steps {skip_steps} so that GradScaler skips them; GradScaler.step's found_inf "
            ".item() is the one sync per step",
            step_ms,
            planted={"syncs_per_step": 1,
                     "sync_calls": ["cudaStreamSynchronize of GradScaler.step's found_inf .item() "
                                    "(torch/amp/grad_scaler.py _maybe_opt_step), in every step, skipped or not"],
                     "skipped_steps": skip_steps, "init_scale": INIT_SCALE, "backoff_factor": BACKOFF,
                     "growth_interval": GROWTH_INTERVAL},
            measured={"skipped_steps": skipped, "scale_per_step": scale_values},
            recipe="none", precision="fp16", losses=loss_values, final_loss=loss_values[-1],
            **z.marker_fields(marker_ns))


if __name__ == "__main__":
    main()
