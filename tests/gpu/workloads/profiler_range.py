"""A small PyTorch loop for --capture-range cudaProfilerApi (tests/gpu/check_capture.py): 30 steps of matmuls, each
marked with fp8scope.step(n); torch.cuda.profiler.start() (cudaProfilerStart) just before step 10's marker and
torch.cuda.profiler.stop() (cudaProfilerStop) just after step 20's, so that steps 10..19 lie wholly inside the
window and step 20 is cut by its end. Prints its truth as one FP8SCOPE_GROUND_TRUTH line."""

import json
import sys

import torch

import fp8scope

START, STOP, STEPS = 10, 20, 30


def main():
    device = torch.device("cuda")
    a = torch.randn(1024, 1024, device=device)
    for step in range(STEPS):
        if step == START:
            torch.cuda.profiler.start()
        fp8scope.step(step)
        if step == STOP:
            torch.cuda.profiler.stop()
        for _ in range(8):
            a = torch.tanh(a @ a) * 0.5
    torch.cuda.synchronize()
    print("FP8SCOPE_GROUND_TRUTH " + json.dumps({"steps": STEPS, "profiler_start_step": START,
                                                "profiler_stop_step": STOP, "value": float(a.sum())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
