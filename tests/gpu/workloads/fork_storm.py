#!/usr/bin/env python3
"""Fault-injection workload (docs/reliability.md "The collector under faults"): a fork storm. A small model trains on
the GPU from a DataLoader with 8 worker processes that are started anew every step (one short epoch per step,
persistent_workers=False), so 8 forks happen per step while CUDA and the collector's threads run in the parent.

  fork_storm.py [STEPS]

stdout: 'step <i> loss <repr>' per step (the same on every run), then 'done'. Exit codes: 0 done, 77 no CUDA."""

import sys


def main():
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    if not torch.cuda.is_available():
        print("fork_storm.py: no CUDA device; exiting with code 77", file=sys.stderr)
        return 77
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    generator = torch.Generator().manual_seed(3)
    inputs = torch.randn(64, 256, generator=generator)
    targets = torch.randn(64, 256, generator=generator)
    loader = DataLoader(TensorDataset(inputs, targets), batch_size=64, shuffle=False, num_workers=8,
                        persistent_workers=False)
    torch.manual_seed(11)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        for x, y in loader:  # a new iterator: 8 new worker processes
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
    for i, loss in enumerate(losses):
        print(f"step {i} loss {loss.item()!r}")
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
