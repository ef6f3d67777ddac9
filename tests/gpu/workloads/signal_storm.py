#!/usr/bin/env python3
"""Fault-injection workload (docs/reliability.md "The collector under faults"): GEMM work on the GPU while SIGTERM,
SIGINT and SIGUSR1 arrive by the thousand. The job handles all three itself (counting them, as a training script that
checkpoints on SIGUSR1 or stops cleanly on SIGTERM does), so it runs to its end whatever arrives.

  signal_storm.py [ITERATIONS]

stdout: 'running' once CUDA work has started, then 'checksum <repr>' (the same on every run), then 'done'.
stderr: how many signals of each kind arrived (this differs from run to run: signals coalesce).
Exit codes: 0 done, 77 no CUDA device."""

import signal
import sys
import time


def main():
    import torch

    if not torch.cuda.is_available():
        print("signal_storm.py: no CUDA device; exiting with code 77", file=sys.stderr)
        return 77
    counts = {signal.SIGTERM: 0, signal.SIGINT: 0, signal.SIGUSR1: 0}

    def handler(signum, _frame):
        counts[signum] += 1

    for sig in counts:
        signal.signal(sig, handler)
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    torch.manual_seed(7)
    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda") / 32
    torch.cuda.synchronize()
    print("running", flush=True)
    for i in range(iterations):
        a = torch.tanh(a @ b)
        if i % 50 == 0:
            torch.cuda.synchronize()
            time.sleep(0.002)  # room for the signals to land between launches and inside syncs
    checksum = float(a.double().sum().item())
    print(f"checksum {checksum!r}")
    print("done", flush=True)
    print("signals " + " ".join(f"{signal.Signals(s).name}={n}" for s, n in counts.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
