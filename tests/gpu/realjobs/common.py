"""Shared by the real-job workloads: step markers through the fp8scope package when it is importable, and the
ground-truth line every workload prints last.

Each workload marks the start of each training step with fp8scope.step(i) (a no-op when the job is not
recorded), so its trace holds the true step boundaries (FP8SCOPE_STEP_MARKER); the analyzer's automatic step
detection is then checked with markers and NVTX hidden from it.
"""

import json
import os
import statistics
import sys
import time

try:
    import fp8scope  # probes/python on PYTHONPATH
except ImportError:  # pragma: no cover - the workloads also run without it
    fp8scope = None


def markers_on():
    """FP8SCOPE_ZOO_MARKERS=0: the job marks no steps (a zero-code run of a marked workload: record's optimizer hook
    then gives the steps; its truth says markers "none")."""
    return os.environ.get("FP8SCOPE_ZOO_MARKERS", "1") != "0"


def mark_step(i):
    if fp8scope is not None and markers_on():
        fp8scope.step(i)


def print_truth(name, steps, step_times_s=None, **extra):
    """FP8SCOPE_GROUND_TRUTH {json}: what the workload did, for the checks."""
    truth = {"workload": name, "steps": steps, "pid": os.getpid()}
    if step_times_s:
        truth["median_step_ms"] = statistics.median(step_times_s) * 1e3
        truth["step_ms"] = [round(t * 1e3, 4) for t in step_times_s]
        truth["step_ms_from"] = 1  # StepClock's first time is step 1's (from step 0's end to step 1's)
    truth.update(extra)
    print("FP8SCOPE_GROUND_TRUTH " + json.dumps(truth, sort_keys=True), flush=True)


class StepClock:
    """Wall-clock step times of a loop, measured between synchronising points the workload already has."""

    def __init__(self):
        self.times = []
        self._last = None

    def tick(self):
        now = time.perf_counter()
        if self._last is not None:
            self.times.append(now - self._last)
        self._last = now


def to_fp8_linears(parents):
    """Replaces every torch.nn.Linear child of each module in `parents` by samples/torch/fp8_linear.py's Fp8Linear
    (delayed scaling) holding the same weights; returns how many. Imports torch and fp8_linear only when called."""
    import torch

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples", "torch"))
    from fp8_linear import Fp8Linear

    count = 0
    for parent in parents:
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear):
                fp8 = Fp8Linear(child.in_features, child.out_features).to(child.weight.device)
                with torch.no_grad():
                    fp8.weight.copy_(child.weight)
                setattr(parent, name, fp8)
                count += 1
    return count


def fail(message, code=1):
    print(f"workload error: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


def plant_input_drift(module, start, factor, current_step):
    """From step `start` on (current_step(): the step running now), feature 0 of `module`'s input is multiplied by
    factor ** (step - start + 1), on the device: a forward pre-hook (the planted drift of hf_llama.py and the zoo's
    torchao_rowwise_hf.py). Imports torch only when called."""
    import torch

    def grow(_module, args):
        step = current_step()
        if step < start:
            return None
        (x,) = args
        gain = torch.ones(x.shape[-1], device=x.device, dtype=x.dtype)
        gain[0] = factor ** (step - start + 1)
        return (x * gain,)

    return module.register_forward_pre_hook(grow)
