#!/usr/bin/env python3
"""GPU check of the fp8scope Python package (probes/python) with real PyTorch. Run on the GPU machine:

    fp8scope record -o DIR/pkg-%p.sqlite -- python3 tests/gpu/tools/python_package_check.py --expect-collector
    CUDA_INJECTION64_PATH=$PWD/BUILD/lib/libfp8scope.so python3 tests/gpu/tools/python_package_check.py --expect-collector
    python3 tests/gpu/tools/python_package_check.py        # no collector: every call must be a silent no-op

It calls probe (bf16, fp16, fp32 and FP8 tensors; host and device scales; a non-contiguous and a CPU tensor that
must be skipped with one warning each), step, log_scalar (host numbers and the CUDA loss), and
fp8scope.torch.annotate on a small model built from samples/torch/fp8_linear.py, all inside
torch.cuda.set_sync_debug_mode("error"): a host-device sync caused by the package would raise. It prints a short
summary and one line `FP8SCOPE_PYTHON_CHECK {json}` holding what was called, what the collector accepted, and, per
explicit probe, the values a correct trace must hold (computed by torch after the run, outside the checked region).

Exit codes: 0 ok, 1 a check failed, 2 usage error, 77 no torch or no CUDA device.
"""

import argparse
import json
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "probes" / "python"))
sys.path.insert(0, str(REPO / "samples" / "torch"))

import fp8scope  # noqa: E402  (before torch, to check that importing it imports no torch)

TORCH_IMPORTED_BY_PACKAGE = "torch" in sys.modules
EXIT_SKIP = 77
STEPS = 6
CAST_NAMES = ["fc1.0", "fc1.1", "fc2.0", "fc2.1"]  # per forward: each Fp8Linear casts its input, then its weight
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--expect-collector", action="store_true", help="fail unless the collector is found")
    return p.parse_args()


def probe_inputs(torch, device):
    """Tensors with known contents, made before the checked region: creating a CUDA tensor from Python numbers
    copies from pageable memory, which set_sync_debug_mode("error") would rightly reject."""
    g = torch.Generator(device=device).manual_seed(1234)
    ramp = torch.linspace(-600.0, 600.0, 4096, device=device).to(torch.bfloat16)
    special = (torch.randn(1024, device=device, generator=g) * 4).to(torch.bfloat16)
    special[0], special[1], special[2:10] = float("nan"), float("inf"), 0.0
    half = (torch.randn(2048, device=device, generator=g) * 100).to(torch.float16)
    single = torch.randn(2048, device=device, generator=g) * 1e-3
    scale_device = torch.tensor([2.0], device=device)  # float32, one element: passed as a device pointer
    scale_inv_device = torch.tensor([0.5], device=device)
    e4m3 = (torch.randn(4096, device=device, generator=g) * 100).clamp(-448, 448).to(torch.float8_e4m3fn)
    e5m2 = (torch.randn(4096, device=device, generator=g) * 1000).to(torch.float8_e5m2)
    cases = [
        ("check.bf16_ramp", ramp, 1.0, None, "e4m3"),
        ("check.bf16_special", special, 16.0, None, "e4m3"),
        ("check.f16_device_scale", half, scale_device, None, "e5m2"),
        ("check.f32_device_scale_inv", single, None, scale_inv_device, "e4m3"),
        ("check.fp8_e4m3", e4m3, None, 0.125, None),
        ("check.fp8_e5m2", e5m2, None, scale_inv_device, None),
    ]
    strided = torch.zeros(64, 32, device=device, dtype=torch.bfloat16).t()
    return cases, strided, torch.zeros(16)


def explicit_probes(inputs, failures):
    """The probes, then the two that must be skipped. Returns [(name, accepted, tensor, scale, scale_inv, target)]."""
    cases, strided, host = inputs
    results = []
    for name, tensor, scale, scale_inv, target in cases:
        accepted = fp8scope.probe(name, tensor, scale=scale, scale_inv=scale_inv, target=target, role="other")
        results.append((name, accepted, tensor, scale, scale_inv, target))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        skipped = [fp8scope.probe("check.noncontiguous", strided), fp8scope.probe("check.noncontiguous2", strided),
                   fp8scope.probe("check.cpu", host)]
    if any(skipped):
        failures.append(f"a non-contiguous or CPU tensor was probed: {skipped}")
    expected_warnings = 2 if fp8scope.enabled() else 0  # one per kind of problem; none at all without collector
    if len(caught) != expected_warnings:
        failures.append(f"skipped probes gave {len(caught)} warnings, expected {expected_warnings}: "
                        f"{[str(w.message) for w in caught]}")
    return results


def truth(torch, tensor, scale, scale_inv, target):
    """What the trace should hold for one explicit probe (docs/collector.md "Tensor statistics")."""
    value = lambda s: None if s is None else (s.item() if hasattr(s, "item") else float(s))  # noqa: E731
    scale, scale_inv = value(scale), value(scale_inv)
    fp8 = str(tensor.dtype).replace("torch.", "")
    x = tensor.float()
    finite = torch.isfinite(x)
    out = {"dtype": fp8, "numel": tensor.numel(), "scale": scale, "scale_inv": scale_inv,
           "nans": int(torch.isnan(x).sum()), "infs": int(torch.isinf(x).sum()), "zeros": int((x == 0).sum())}
    if fp8.startswith("float8"):
        fmt = "e4m3" if "e4m3" in fp8 else "e5m2"
        codes = x.abs()
        out.update(target=fmt, amax=float(codes[finite].max()) * (scale_inv or 1.0),
                   saturated=int((codes == FP8_MAX[fmt]).sum()))
        return out
    scaled = x * (scale if scale is not None else 1.0 / scale_inv if scale_inv is not None else 1.0)
    nonzero = x[finite & (x != 0)].abs()
    out.update(target=target, amax_finite=float(x[finite].abs().max()),
               min_nonzero_abs=float(nonzero.min()) if nonzero.numel() else None)
    if target is not None:
        out["overflows_finite"] = int((scaled[finite].abs() > FP8_MAX[target]).sum())
    return out


def make_model(torch, fp8_ok, device):
    nn = torch.nn

    if fp8_ok:
        from fp8_linear import Fp8Linear

        linear = lambda i, o: Fp8Linear(i, o)  # noqa: E731
    else:
        linear = lambda i, o: nn.Linear(i, o, bias=False, dtype=torch.bfloat16)  # noqa: E731

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.act, self.fc2 = linear(256, 512), nn.GELU(approximate="tanh"), linear(512, 256)
            self.head = nn.Linear(256, 16, bias=False, dtype=torch.bfloat16)

        def forward(self, x):
            return self.head(self.fc2(self.act(self.fc1(x))))

    torch.manual_seed(0)
    model = Net().to(device)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.05)
    return model


def hooks_left(model):
    attrs = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
    return sum(len(getattr(m, a, {})) for m in model.modules() for a in attrs)


def nvtx_depth(torch):
    """The depth NVTX reports for a new range on this thread (negative when no tool tracks ranges)."""
    depth = torch.cuda.nvtx.range_push("python_package_check.depth")
    torch.cuda.nvtx.range_pop()
    return depth


def train(torch, model, x):
    """STEPS annotated training steps. Returns call counts and the names annotate probed."""
    cast_calls = []
    original_probe = fp8scope._api.probe

    def counting_probe(name, *args, **kwargs):  # annotate calls _api.probe by attribute: this sees its probes
        accepted = original_probe(name, *args, **kwargs)
        cast_calls.append((name, accepted))
        return accepted

    fp8scope._api.probe = counting_probe
    counts = {"steps_accepted": 0, "scalars_accepted": 0, "scalars_called": 0}
    depth_before = nvtx_depth(torch)
    handle = fp8scope.torch.annotate(model)
    counts["annotate_active"] = handle.active
    try:
        for _ in range(STEPS):
            counts["steps_accepted"] += fp8scope.step()  # the beginning of each step
            torch.cuda.nvtx.range_push("train_step")
            loss = model(x).float().pow(2).mean()
            for p in model.parameters():
                p.grad = None
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(p.grad, alpha=-1e-2)
            for name, value in (("loss", loss.detach()), ("lr", 1e-2)):
                counts["scalars_accepted"] += fp8scope.log_scalar(name, value)
                counts["scalars_called"] += 1
            torch.cuda.nvtx.range_pop()
    finally:
        handle.remove()
        fp8scope._api.probe = original_probe
    counts.update(hooks_left=hooks_left(model),
                  nvtx_depth_before=depth_before, nvtx_depth_after=nvtx_depth(torch),
                  cast_calls=len(cast_calls), cast_accepted=sum(a for _, a in cast_calls),
                  cast_names=sorted({n for n, _ in cast_calls}))
    return counts, loss


def main():
    args = parse_args()
    failures = []
    if TORCH_IMPORTED_BY_PACKAGE:
        failures.append("import fp8scope imported torch")
    try:
        import torch
    except ImportError:
        print("python_package_check: no torch; exiting with code 77", file=sys.stderr)
        return EXIT_SKIP
    if torch.cuda.is_initialized():
        failures.append("import fp8scope initialized CUDA")
    if not torch.cuda.is_available():
        print("python_package_check: no CUDA device; exiting with code 77", file=sys.stderr)
        return EXIT_SKIP
    enabled_before_cuda = fp8scope.enabled()
    device = torch.device("cuda", 0)
    torch.zeros(1, device=device)  # CUDA initializes: an injected collector is loaded now
    enabled = fp8scope.enabled()
    if args.expect_collector and not enabled:
        failures.append("no collector found (run under fp8scope record or with CUDA_INJECTION64_PATH)")
    fp8_ok = torch.cuda.get_device_capability(device) >= (8, 9) and hasattr(torch, "float8_e4m3fn")
    model = make_model(torch, fp8_ok, device)

    inputs = probe_inputs(torch, device)
    x = torch.randn(64, 256, device=device, dtype=torch.bfloat16)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        probes = explicit_probes(inputs, failures)
        counts, loss = train(torch, model, x)
    except RuntimeError as error:  # set_sync_debug_mode("error") raises RuntimeError on a synchronizing call
        failures.append(f"{type(error).__name__} in the checked region: {error}")
        probes, counts, loss = [], {}, None
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()

    if counts:
        if counts["hooks_left"]:
            failures.append(f"{counts['hooks_left']} hooks left after remove()")
        if counts["nvtx_depth_before"] >= 0 and counts["nvtx_depth_after"] != counts["nvtx_depth_before"]:
            failures.append(f"NVTX depth {counts['nvtx_depth_before']} before, {counts['nvtx_depth_after']} after")
        expected_casts = CAST_NAMES if (enabled and fp8_ok) else []
        if counts["cast_names"] != expected_casts or counts["cast_calls"] != len(expected_casts) * STEPS:
            failures.append(f"cast probes {counts['cast_names']} x{counts['cast_calls']}, expected {expected_casts} "
                            f"x{len(expected_casts) * STEPS}")
        if counts["annotate_active"] != enabled:
            failures.append(f"annotate active {counts['annotate_active']} with the collector enabled {enabled}")
        if not enabled and (counts["steps_accepted"] or counts["scalars_accepted"] or any(p[1] for p in probes)):
            failures.append("a call reported success without a collector")
        if args.expect_collector and enabled and not counts["steps_accepted"]:
            failures.append("the collector accepted no step marker (is the process being recorded?)")

    summary = {
        "torch": torch.__version__, "device": torch.cuda.get_device_name(device), "fp8_model": fp8_ok,
        "enabled_before_cuda": enabled_before_cuda, "enabled": enabled, "found_via": fp8scope._collector.found_via,
        "explicit": [{"name": n, "accepted": a, "truth": truth(torch, t, s, si, tg)} for n, a, t, s, si, tg in probes],
        "steps": STEPS, "counts": counts, "final_loss": None if loss is None else float(loss),
        "failures": failures,
    }
    print(f"python_package_check: torch {summary['torch']} on {summary['device']}; collector "
          f"{'found via ' + str(summary['found_via']) if enabled else 'not loaded'} "
          f"(before CUDA init: {enabled_before_cuda})")
    print(f"  explicit probes accepted {sum(p[1] for p in probes)}/{len(probes)}; steps accepted "
          f"{counts.get('steps_accepted')}/{STEPS}; scalars {counts.get('scalars_accepted')}/"
          f"{counts.get('scalars_called')}; cast probes {counts.get('cast_accepted')}/{counts.get('cast_calls')} "
          f"named {counts.get('cast_names')}")
    for failure in failures:
        print(f"  FAIL: {failure}")
    print("FP8SCOPE_PYTHON_CHECK " + json.dumps(summary))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
