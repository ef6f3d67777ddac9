#!/usr/bin/env python3
"""Zoo workload save_every_n (issue 42 item 5, stage zoo-markerless): a checkpoint every N steps. A bf16 MLP (3
Linear+GELU blocks, 1024 -> 2048 wide, a Linear to 128 classes: 4 Linears, 8 parameter tensors, about 21 MB), batch
256, AdamW (foreach), one loss.item() per step; at the end of every N-th step (step % N == N - 1: steps 4, 9, 14, 19
for N 5 and 20 steps) torch.save(model.state_dict(), path) into a temporary folder (one file per save, removed at
the end).

What a save does on the host: torch.save pickles the dict, then, for each storage in turn, copies it to the host
with storage.cpu() (torch/serialization.py _save; PyTorch's default, without
torch.utils.serialization.config.save.use_pinned_memory_for_d2h) and writes it into the zip file. storage.cpu() is a
blocking copy into pageable memory: per storage a cudaMemcpyAsync device-to-host (which returns only when the copy
is done, pageable destination) and a cudaStreamSynchronize (at::cuda::memcpy_and_sync), i.e. 2 host-blocking calls
per storage, 2 x 8 = 16 per save, interleaved with the file writes. The save starts after the step's loss.item(), so
the GPU is idle when it starts and the copies wait for nothing but themselves.

Planted: a periodic host stall, NOT a per-step one. The existing judge (tests/zoo/zoo_judge.cpp judge_idle and
judge_top_recommendation) reads planted.host_stall_ms and measured.slept_ms_median / stall_ms_median /
host_wait_ms_median as a stall of every step, so this job sets none of those: the stall is described by
planted.periodic_stall instead, and measured as measured.save_ms (one per saving step) and save_ms_median.
  periodic_stall: every (N), steps (the saving steps), what, where "between_steps" (after the step's last kernel and
  its loss.item(), before the next step's marker: in the marked step, the save is at its end, and its copies are
  the step's last CUDA activities; between the training work of two steps either way), storages, bytes,
  syncs_per_save (2 per storage) and sync_calls.
  syncs_per_step 1 is the count of a step without a save (loss.item(): one cudaStreamSynchronize), which is the
  median step (4 saving steps of 20); syncs_per_save_step = 1 + syncs_per_save.

Truth (zoo_common.truth): the planted fields above; measured.save_ms, save_ms_median, median_step_ms (host clock:
every step ends in a host sync; saving steps include their save); save_steps; losses, final_loss; marker_host_ns /
marker_clock.

  save_every_n.py [--steps N] [--every K]     prints FP8SCOPE_GROUND_TRUTH last
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/gpu/zoo: zoo_common
import zoo_common as z  # noqa: E402

import torch  # noqa: E402

D, HIDDEN, BATCH, BLOCKS, CLASSES = 1024, 2048, 256, 3, 128


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--every", type=int, default=5)
    args = p.parse_args()
    z.require_cuda("save_every_n")
    torch.manual_seed(0)
    model = z.mlp(D, HIDDEN, CLASSES, blocks=BLOCKS)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    batches = z.teacher_batches(BATCH, D, CLASSES, count=4, seed=1)
    state = model.state_dict()
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in state.values()}
    save_steps = [s for s in range(args.steps) if s % args.every == args.every - 1]
    clock = z.StepClock(args.steps, host=True)  # each step ends in a host sync (and the saving ones in a save)
    marker_ns, losses, save_s = [], [], []
    with tempfile.TemporaryDirectory(prefix="zoo-save-every-n-") as folder:
        for step in range(args.steps):
            z.begin_step(clock, step, marker_ns)
            x, y = batches[step % len(batches)]
            loss = torch.nn.functional.cross_entropy(model(x).float(), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())  # the step's one host sync
            if step in save_steps:  # the planted periodic stall: a checkpoint
                t0 = time.perf_counter()
                torch.save(model.state_dict(), os.path.join(folder, f"checkpoint-{step}.pt"))
                save_s.append(time.perf_counter() - t0)
        step_ms = clock.finish()
    syncs_per_save = 2 * len(storages)
    z.truth("save_every_n", args.steps,
            f"a bf16 MLP trained with AdamW, one loss.item() per step, and torch.save(model.state_dict()) at the end "
            f"of every {args.every}th step (steps {save_steps}): {len(storages)} storages copied to pageable host "
            "memory one by one and written to a file",
            step_ms,
            planted={"syncs_per_step": 1, "sync_calls": ["cudaStreamSynchronize of loss.item()"],
                     "syncs_per_save_step": 1 + syncs_per_save,
                     "periodic_stall": {
                         "every": args.every, "steps": save_steps,
                         "what": "torch.save(model.state_dict(), path) to a local temporary folder",
                         "where": "between_steps",
                         "position": "after the step's loss.item(), before the next step's marker (the end of the "
                                     "marked step); its copies are the step's last CUDA activities",
                         "storages": len(storages), "bytes": sum(storages.values()),
                         "syncs_per_save": syncs_per_save,
                         "sync_calls": ["per storage: cudaMemcpyAsync device-to-host into pageable memory",
                                        "per storage: cudaStreamSynchronize (at::cuda::memcpy_and_sync)"]}},
            measured={"save_ms": [round(t * 1e3, 4) for t in save_s],
                      "save_ms_median": statistics.median(save_s) * 1e3 if save_s else None},
            recipe="none", save_steps=save_steps, losses=losses, final_loss=losses[-1],
            **z.marker_fields(marker_ns))


if __name__ == "__main__":
    main()
