#!/usr/bin/env python3
"""Zoo workload loader_workers_slow_collate (data loading, docs/accuracy.md "Scoreboard"): an MLP fed by a DataLoader
with 2 worker processes (fork) whose collate_fn sleeps 30 ms per batch. Two workers deliver a batch every ~15 ms, the
step needs a few ms of GPU time, so after the prefetched batches are used up the training loop waits in next(loader)
every step: host idle that no sync explains. No host sync in the loop (the losses stay on the device until the end).

  loader_workers_slow_collate.py [--steps N] [--collate-ms MS] [--workers W]     prints FP8SCOPE_GROUND_TRUTH last

measured.host_wait_ms_median: time.perf_counter() around next(loader), median after the warm-up steps.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as z  # noqa: E402

import torch  # noqa: E402
from torch.utils.data import DataLoader, Dataset, default_collate  # noqa: E402

D, BATCH, CLASSES = 1024, 256, 64
COLLATE_S = [0.030]  # set from --collate-ms before the workers fork


class Samples(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(n, D, generator=g)
        self.y = torch.randint(0, CLASSES, (n,), generator=g)

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, index):
        return self.x[index], self.y[index]


def slow_collate(samples):
    """Runs in a worker process: a slow host-side transformation of the batch, modelled by a sleep."""
    time.sleep(COLLATE_S[0])
    return default_collate(samples)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--collate-ms", type=float, default=30.0)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    z.require_cuda("loader_workers_slow_collate")
    COLLATE_S[0] = args.collate_ms / 1e3
    torch.manual_seed(0)
    model = z.mlp(D, 2048, CLASSES, blocks=3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    loader = DataLoader(Samples(args.steps * BATCH), batch_size=BATCH, shuffle=False, num_workers=args.workers,
                        collate_fn=slow_collate, pin_memory=False, multiprocessing_context="fork")
    batches = iter(loader)
    clock = z.StepClock(args.steps)
    losses = torch.zeros(args.steps, device="cuda")
    waits_s = []
    for step in range(args.steps):
        z.begin_step(clock, step)
        t0 = time.perf_counter()
        x, y = next(batches)
        waits_s.append(time.perf_counter() - t0)
        # Pinned in this thread, then copied asynchronously: the loop's only waits are in next(loader).
        x = x.pin_memory().to("cuda", non_blocking=True).to(torch.bfloat16)
        y = y.pin_memory().to("cuda", non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses[step] = loss.detach()
    step_ms = clock.finish()
    del batches  # shuts the workers down before the truth line
    waits_ms = z.ms(waits_s)
    z.truth("loader_workers_slow_collate", args.steps,
            f"an MLP fed by a DataLoader with {args.workers} workers whose collate_fn sleeps {args.collate_ms:g} ms "
            "per batch: the loop waits in next(loader); no host sync in the loop",
            step_ms,
            planted={"collate_sleep_ms": args.collate_ms, "loader_workers": args.workers, "syncs_per_step": 0},
            measured={"host_wait_ms_median": z.median_after_warmup(waits_ms),
                      "host_wait_ms": [round(w, 3) for w in waits_ms]},
            recipe="none", final_loss=float(losses[-1]))


if __name__ == "__main__":
    main()
