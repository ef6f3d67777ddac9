#!/usr/bin/env python3
"""Zoo workload clip_grad_nonfinite (issue 42 item 5, stage zoo-markerless): gradient clipping that checks for
non-finite norms. A bf16 MLP (4 Linear+GELU blocks, width 1024, 128 classes, batch 256), AdamW (foreach), and per
step torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True) between backward and the
optimizer step, then loss.item().

Which calls sync (torch/nn/utils/clip_grad.py): clip_grad_norm_ computes the total norm on the device
(torch._foreach_norm per device and dtype, torch.stack, torch.linalg.vector_norm), then, because
error_if_nonfinite=True, evaluates `if error_if_nonfinite and torch.logical_or(total_norm.isnan(),
total_norm.isinf()):` - a Python `if` on a 0-d bool tensor, i.e. Tensor.__bool__ -> .item(): a cudaMemcpyAsync into
pinned memory and a cudaStreamSynchronize (one host-blocking call). The clipping itself (clip_coef = max_norm /
(total_norm + 1e-6), clamped to 1, torch._foreach_mul_) stays on the device: PyTorch multiplies by the clamped
coefficient precisely to avoid a host `if`. With error_if_nonfinite=False (the default) the call makes no sync. The
step's loss.item() is the second host-blocking call. So planted.syncs_per_step 2, both after the backward: the
norm check (after the norm kernels) and the loss read (after the optimizer's kernels).

Per step, in order: the step marker (fp8scope.step, then marker_host_ns), forward, loss, backward,
clip_grad_norm_ (sync 1), optimizer step, zero_grad, loss.item() (sync 2).

Truth (zoo_common.truth): planted.syncs_per_step 2 with sync_calls, planted.clip {max_norm 1.0,
error_if_nonfinite true}; measured.median_step_ms (host clock: every step ends in a host sync); losses, final_loss,
grad_norms (the total norm clip_grad_norm_ returned, kept on the device and read after the loop);
marker_host_ns / marker_clock.

  clip_grad_nonfinite.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/gpu/zoo: zoo_common
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, BATCH, BLOCKS, CLASSES = 1024, 256, 4, 128


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    args = p.parse_args()
    z.require_cuda("clip_grad_nonfinite")
    torch.manual_seed(0)
    model = z.mlp(D, D, CLASSES, blocks=BLOCKS)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    batches = z.teacher_batches(BATCH, D, CLASSES, count=4, seed=1)
    clock = z.StepClock(args.steps, host=True)  # each step ends in a host sync
    marker_ns, losses, norms = [], [], []
    for step in range(args.steps):
        z.begin_step(clock, step, marker_ns)
        x, y = batches[step % len(batches)]
        loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)  # sync 1
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        norms.append(norm.detach())
        losses.append(loss.item())  # sync 2
    step_ms = clock.finish()
    norm_values = torch.stack(norms).float().tolist()
    z.truth("clip_grad_nonfinite", args.steps,
            "a bf16 MLP with clip_grad_norm_(max_norm 1.0, error_if_nonfinite=True) and one loss.item() per step: "
            "two host syncs per step",
            step_ms,
            planted={"syncs_per_step": 2,
                     "sync_calls": ["cudaStreamSynchronize of clip_grad_norm_'s non-finite check "
                                    "(Tensor.__bool__ of logical_or(total_norm.isnan(), total_norm.isinf()))",
                                    "cudaStreamSynchronize of loss.item()"],
                     "clip": {"max_norm": 1.0, "error_if_nonfinite": True}},
            recipe="none", losses=losses, final_loss=losses[-1], grad_norms=norm_values,
            **z.marker_fields(marker_ns))


if __name__ == "__main__":
    main()
