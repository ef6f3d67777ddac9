#!/usr/bin/env python3
"""Scenarios for the fp8scope Python package, run by python_package_test.cpp as child processes.

usage: package_scenarios.py SCENARIO

Each scenario exercises the package and prints what it observed as `key=value` lines, then every warning the
package raised as `warning: <text>` and their number as `warnings=<n>`. The test checks these lines and the log
that the fake collector (fake_collector.c, named by FAKE_FP8SCOPE_LIB) writes to FAKE_FP8SCOPE_LOG. The
environment (LD_PRELOAD, CUDA_INJECTION64_PATH) is set by the test. Exit 0 unless the package raised.
"""

import ctypes
import os
import sys
import warnings

import torch_hooks_scenarios

HERE = os.path.dirname(os.path.abspath(__file__))


class Device:
    def __init__(self, type_, index=None):
        self.type, self.index = type_, index


class FakeTensor:
    """Just what fp8scope.probe reads from a tensor; dtype is a plain string, as str(torch dtype) prints."""

    def __init__(self, ptr, numel, dtype, device="cuda", contiguous=True):
        self._ptr, self._numel, self.dtype = ptr, numel, dtype
        self.device = Device(device, 0 if device == "cuda" else None)
        self._contiguous = contiguous

    def data_ptr(self):
        return self._ptr

    def numel(self):
        return self._numel

    def is_contiguous(self):
        return self._contiguous


def show(key, value):
    print(f"{key}={value}")


def fake_loaded():
    """Whether the fake collector is mapped into this process."""
    name = os.path.basename(os.environ["FAKE_FP8SCOPE_LIB"])
    with open("/proc/self/maps") as maps:
        return any(line.rstrip().endswith(name) for line in maps)


def use_fake_torch():
    sys.path.insert(0, os.path.join(HERE, "fake_torch"))
    import torch

    return torch


def every_call(fp8scope):
    """One call of each kind, with a CUDA tensor; their results."""
    tensor = FakeTensor(0x1000, 64, "torch.bfloat16")
    return [fp8scope.probe("x", tensor), fp8scope.step(), fp8scope.log_scalar("loss", 1.5),
            fp8scope.log_scalar("loss", FakeTensor(0x2000, 1, "torch.float32"))]


def nothing_loaded(fp8scope):
    show("enabled", fp8scope.enabled())
    show("results", every_call(fp8scope))
    show("annotate_active", fp8scope.torch.annotate(object()).active)
    show("torch_imported", "torch" in sys.modules)


def preload_calls(fp8scope):
    show("enabled", fp8scope.enabled())
    show("found_via", fp8scope._collector.found_via)
    bf16 = FakeTensor(0x1000, 4096, "torch.bfloat16")
    # No torch imported: the legacy default stream (0) unless a stream is given.
    show("probe_plain", fp8scope.probe("plain", bf16))
    show("probe_value", fp8scope.probe("value", bf16, scale=2.5, target="e4m3", role="input", stream=0x77))
    scale = FakeTensor(0xA000, 1, "torch.float32")
    show("probe_device", fp8scope.probe("device", bf16, scale=scale, target="e5m2", role="gradient", stream=0x77))
    show("probe_device_inv", fp8scope.probe("device_inv", bf16, scale_inv=scale, target="torch.float8_e4m3fn",
                                            role=4, stream=0x77))
    fp8 = FakeTensor(0x3000, 256, "torch.float8_e5m2")
    show("probe_fp8", fp8scope.probe("fp8", fp8, scale_inv=0.25, target="e4m3", stream=0x77))  # own format wins
    show("probe_f16_f32", [fp8scope.probe("f16", FakeTensor(0x4000, 8, "torch.float16"), target="E4M3"),
                           fp8scope.probe("f32", FakeTensor(0x5000, 8, "float32"))])
    # Skipped, each kind of problem warned once.
    strided = FakeTensor(0x6000, 64, "torch.bfloat16", contiguous=False)
    show("probe_strided", [fp8scope.probe("strided", strided), fp8scope.probe("strided2", strided)])
    show("probe_cpu", fp8scope.probe("cpu", FakeTensor(0x7000, 8, "torch.float32", device="cpu")))
    show("probe_int", fp8scope.probe("int", FakeTensor(0x8000, 8, "torch.int32")))
    show("probe_empty", fp8scope.probe("empty", FakeTensor(0x9000, 0, "torch.float32")))
    show("probe_both_scales", fp8scope.probe("both", bf16, scale=1.0, scale_inv=1.0))
    show("probe_bad_scale", fp8scope.probe("bad_scale", bf16, scale=FakeTensor(0xB000, 2, "torch.float32")))
    show("probe_bad_target", fp8scope.probe("bad_target", bf16, target="e3m4"))
    show("probe_zero_scale", [fp8scope.probe("zero_scale", bf16, scale=0.0), fp8scope.probe("", bf16)])
    show("probe_not_a_tensor", fp8scope.probe("not_a_tensor", 42))
    show("steps", [fp8scope.step(), fp8scope.step(), fp8scope.step(10), fp8scope.step(), fp8scope.step(-1)])
    # NaN and Inf pass to the collector as they are: a NaN loss is what the trace must keep (trace format 1.4).
    show("scalars", [fp8scope.log_scalar("lr", 0.001), fp8scope.log_scalar("count", 7),
                     fp8scope.log_scalar("nan_loss", float("nan")), fp8scope.log_scalar("inf_loss", float("-inf")),
                     fp8scope.log_scalar("loss", FakeTensor(0xC000, 1, "torch.float32"), stream=0x77),
                     fp8scope.log_scalar("loss_bf16", FakeTensor(0xD000, 1, "torch.bfloat16"), stream=0x77),
                     fp8scope.log_scalar("bad", FakeTensor(0xE000, 4, "torch.float32")),
                     fp8scope.log_scalar("bad_type", "text")])
    # With torch imported (a stand-in), the stream is PyTorch's current stream on the tensor's device.
    use_fake_torch()
    show("probe_torch_stream", fp8scope.probe("torch_stream", bf16))
    show("scalar_torch_stream", fp8scope.log_scalar("torch_loss", FakeTensor(0xF000, 1, "torch.float16")))
    show("name_with_nul", fp8scope.probe("a\0b", bf16, stream=0x77))


def not_recording(fp8scope):
    show("enabled", fp8scope.enabled())
    show("results", every_call(fp8scope))


def injection_loaded_later(fp8scope):
    path = os.environ["CUDA_INJECTION64_PATH"]
    show("enabled_before", fp8scope.enabled())
    show("step_before", fp8scope.step())  # step 0 goes nowhere, but is counted
    show("loaded_before", fake_loaded())
    # What the CUDA driver does at cuInit: dlopen with RTLD_LOCAL, so the symbols stay out of the global scope.
    ctypes.CDLL(path, mode=os.RTLD_LOCAL)
    show("global_visible", hasattr(ctypes.CDLL(None), "fp8scope_api_version"))
    show("enabled_after", fp8scope.enabled())
    show("found_via", fp8scope._collector.found_via)
    show("step_after", fp8scope.step())
    show("probe_after", fp8scope.probe("late", FakeTensor(0x1000, 8, "torch.float32"), stream=0x77))


def injection_never_loaded(fp8scope):
    show("enabled", fp8scope.enabled())
    show("undecided", fp8scope._collector.undecided())  # CUDA may still come up and the driver load it
    show("results", every_call(fp8scope))  # holds a CUDA tensor: CUDA is up, so the collector will never come
    show("absent", fp8scope._collector.absent())
    show("loaded", fake_loaded())


def version_mismatch(fp8scope):
    show("enabled", [fp8scope.enabled(), fp8scope.enabled()])
    show("results", every_call(fp8scope))


def make_model(torch):
    class Fp8Linear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(64, torch.bfloat16)

        def forward(self, x):
            x.to(torch.float8_e4m3fn)  # cast 0: the input
            self.weight.to(torch.float8_e4m3fn)  # cast 1: the weight, a Parameter
            x.to(torch.float32)  # not FP8: not measured
            x.to(torch.float8_e4m3fn).to(torch.float8_e5m2)  # cast 2; FP8 to FP8 is not measured
            torch.empty(16, torch.float8_e5m2).copy_(x)  # cast 3, through copy_
            return x.add(x)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = Fp8Linear()
            self.fc2 = Fp8Linear()

        def forward(self, x):
            return self.fc2(self.fc1(x))

    class Container(torch.nn.Module):  # like nn.ModuleList: holds modules, never called
        pass

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = Container()
            self.blocks.b0 = Block()
            self.fail = False

        def forward(self, x):
            x = self.blocks.b0(x).type(torch.float8_e5m2)  # a cast of the root itself: "Model.0"
            if self.fail:
                raise RuntimeError("forward failed")
            return x

    return Model()


def nvtx_calls(torch):
    calls = [" ".join(call) for call in torch.calls if call[0] in ("push", "pop", "mode_enter", "mode_exit")]
    torch.calls.clear()
    return "|".join(calls)


def annotate(fp8scope):
    torch = use_fake_torch()
    model = make_model(torch)
    handle = fp8scope.torch.annotate(model)
    show("active", handle.active)
    show("hooks", model.hook_count())
    x = torch.Tensor(32, torch.bfloat16)
    model(x)
    show("forward_nvtx", nvtx_calls(torch))
    x.to(torch.float8_e4m3fn)  # outside any module: not measured
    b0 = model.blocks.b0
    for module in (model, b0, b0.fc2):  # autograd order: outer modules' output gradients arrive first
        module.fire_backward_pre()
    b0.fc2.fire_backward()
    b0.fc1.fire_backward_pre()  # its gradient never reaches its input: no backward hook; b0's closes its range
    b0.fire_backward()
    model.fire_backward()
    show("backward_nvtx", nvtx_calls(torch))
    model.fail = True
    try:
        model(x)
    except RuntimeError as error:
        show("forward_error", error)
    show("failed_forward_nvtx", nvtx_calls(torch))
    show("second_annotate_active", fp8scope.torch.annotate(model).active)
    handle.remove()
    show("hooks_after_remove", model.hook_count())
    model.fail = False
    model(x)
    show("removed_nvtx", nvtx_calls(torch))
    with fp8scope.torch.annotate(model, cast_stats=False, backward=False) as plain:
        show("plain_hooks", model.hook_count())
        model.blocks.b0.fc1(x)
        show("plain_nvtx", nvtx_calls(torch))
    show("plain_hooks_after", model.hook_count() if not plain.active else "still active")


def annotate_unwanted(fp8scope):
    """FAKE_FP8SCOPE_STATS_WANTED=0: outside a capture window or a sampled step."""
    torch = use_fake_torch()
    model = make_model(torch)
    show("stats_wanted", fp8scope.stats_wanted())
    show("active", fp8scope.torch.annotate(model).active)
    model(torch.Tensor(32, torch.bfloat16))
    show("forward_nvtx", nvtx_calls(torch))
    show("probe", fp8scope.probe("direct", torch.Tensor(16, torch.bfloat16)))


def annotate_windows(fp8scope):
    """Capture windows opening and closing between forwards (FAKE_FP8SCOPE_RECORDING / _STATS_WANTED changed in
    this process's environment, which the stand-in collector reads at every call)."""
    torch = use_fake_torch()
    model = make_model(torch)
    x = torch.Tensor(32, torch.bfloat16)

    def phase(label, recording, stats_wanted):
        os.environ["FAKE_FP8SCOPE_RECORDING"] = recording
        os.environ["FAKE_FP8SCOPE_STATS_WANTED"] = stats_wanted
        model(x)
        model.fire_backward_pre()
        model.blocks.b0.fire_backward_pre()
        model.blocks.b0.fire_backward()
        model.fire_backward()
        show(label + "_hooks", model.hook_count())
        show(label + "_nvtx", nvtx_calls(torch))

    os.environ["FAKE_FP8SCOPE_RECORDING"] = "0"
    os.environ["FAKE_FP8SCOPE_STATS_WANTED"] = "0"
    handle = fp8scope.torch.annotate(model)
    show("recording", fp8scope.recording())
    show("active", handle.active)
    show("annotated_hooks", model.hook_count())
    phase("outside", "0", "0")
    phase("window", "1", "0")
    phase("stats_outside", "0", "1")  # --stats-outside-windows: the hooks stay, for the probes' names
    phase("after", "0", "0")
    handle.remove()
    show("removed_hooks", model.hook_count())


def annotate_without_collector(fp8scope):
    torch = use_fake_torch()
    model = make_model(torch)
    show("active", fp8scope.torch.annotate(model).active)
    show("hooks", model.hook_count())


def annotate_pending(fp8scope):
    torch = use_fake_torch()
    torch.cuda.is_initialized = lambda: False  # the driver may still load the collector
    model = make_model(torch)
    show("active", fp8scope.torch.annotate(model).active)
    torch.cuda.is_initialized = lambda: True  # CUDA came up without it: the hooks stay silent
    model(torch.Tensor(32, torch.bfloat16))
    show("nvtx", nvtx_calls(torch))
    show("absent", fp8scope._collector.absent())


def scaled_mm(fp8scope):
    """The dispatcher interception of torch._scaled_mm (fp8scope/_scaled_gemm.py) on the stand-in torch."""
    torch = use_fake_torch()
    show("installed", [fp8scope.torch.intercept_scaled_mm(), fp8scope.torch.intercept_scaled_mm()])
    show("registered", sorted(f"{name}:{key}:{keyset}" for name, (_, key, keyset) in torch.Library.registered.items()))
    wrapper = torch.Library.registered["_scaled_mm"][0]
    M, f32, e4m3 = torch.Matrix, torch.float32, torch.float8_e4m3fn
    a = M(256, 512, e4m3, ptr=0xA0000)  # mat1, m x k, row-major
    b = M(384, 512, e4m3, ptr=0xB0000).t()  # mat2, k x n, column-major: a weight (n x k) transposed
    one = M(1, 1, f32, ptr=0x51)
    cases = {  # scale_a, scale_b as torch._scaled_mm takes them
        "tensorwise": (one, M(1, 1, f32, ptr=0x52)),
        "rowwise": (M(256, 1, f32, ptr=0x53), M(1, 384, f32, ptr=0x54)),
        "blockwise": (M(256, 4, f32, stride=(1, 256), ptr=0x55), M(3, 4, f32, ptr=0x56).t()),  # 1x128 . 128x128
        "mx": (M(256, 16, torch.float8_e8m0fnu, ptr=0x57), M(16, 384, torch.float8_e8m0fnu, ptr=0x58)),
    }
    for label, (scale_a, scale_b) in cases.items():
        out = wrapper("keys", a, b, scale_a, scale_b, out_dtype=torch.bfloat16)
        show(f"{label}_out", out.shape)
    out = M(256, 384, ptr=0xD0000)
    show("out_overload_returns_out", torch.Library.registered["_scaled_mm.out"][0]("keys", a, b, one, one, out=out)
         is out)
    # A report that fails leaves the op's result alone: one warning, whatever the number of calls.
    show("bad_scale", [wrapper("keys", a, b, "not a tensor", one).shape for _ in range(2)])
    try:
        wrapper("keys", a, b, one, one, raise_in_kernel=True)
    except RuntimeError as error:
        show("kernel_error_passes_through", str(error))
    # A mixture of experts' grouped GEMM: 4 experts' (N=1024, K=512) weights, transposed as torch requires, rowwise.
    grouped = torch.Library.registered["_scaled_grouped_mm"][0]
    x = M(1024, 512, e4m3, ptr=0xC0000)
    w = torch.Stack(4, 1024, 512, e4m3, ptr=0xE0000).transpose(1, 2)
    show("grouped_out", grouped("keys", x, w, M(1024, 1, f32, ptr=0x61), M(4, 1024, f32, ptr=0x62), offs="offs",
                                out_dtype=torch.bfloat16).shape)
    kernels = [c for c in torch.calls if c[0] == "kernel"]
    show("kernel_calls", len(kernels))


def scaled_mm_follow(fp8scope):
    """The wrappers removed at a step's beginning while the collector says no statistics are wanted before the next
    one (FAKE_FP8SCOPE_WANTED_IN_STEP, read at every call), put back when they are; then a PyTorch whose Library
    cannot remove them."""
    torch = use_fake_torch()
    from fp8scope import _scaled_gemm

    fp8scope.torch.intercept_scaled_mm()
    seen = []

    def at(label):
        seen.append(f"{label}:{len(torch.Library.registered)}")

    at("installed")
    os.environ["FAKE_FP8SCOPE_WANTED_IN_STEP"] = "0"
    fp8scope.step(0)  # outside a window: removed
    at("step0")
    fp8scope.step(1)  # still outside: nothing to do
    at("step1")
    os.environ["FAKE_FP8SCOPE_WANTED_IN_STEP"] = "1"
    fp8scope.step(2)  # a sampled step in a window: back
    at("step2")
    _scaled_gemm.follow(_scaled_gemm.OPTIMIZER)  # wanted still: nothing to do
    at("optimizer")
    show("seen", seen)
    show("destroyed", torch.Library.destroyed)
    show("get_kernel_calls", len([c for c in torch.calls if c[0] == "get_kernel"]))
    # The wrapper put back calls the kernel and reports as before.
    a = torch.Matrix(256, 512, torch.float8_e4m3fn, ptr=0xA0000)
    b = torch.Matrix(384, 512, torch.float8_e4m3fn, ptr=0xB0000).t()
    one = torch.Matrix(1, 1, torch.float32, ptr=0x51)
    show("after", torch.Library.registered["_scaled_mm"][0]("keys", a, b, one, one).shape)
    # A Library without _destroy: one warning, and the wrappers stay from then on.
    del torch.Library._destroy
    os.environ["FAKE_FP8SCOPE_WANTED_IN_STEP"] = "0"
    fp8scope.step(3)
    fp8scope.step(4)
    show("kept", len(torch.Library.registered))


def old_torch(fp8scope):
    """A PyTorch without torch.library.get_kernel: annotate installs nothing silently, the explicit call warns once."""
    torch = use_fake_torch()
    del torch.library.get_kernel
    show("annotate_active", fp8scope.torch.annotate(make_model(torch)).active)
    show("explicit", [fp8scope.torch.intercept_scaled_mm(), fp8scope.torch.intercept_scaled_mm()])


def boot(fp8scope):
    """Started with fp8scope/_boot first on PYTHONPATH, as `fp8scope record` starts a Python job: the wrappers are
    installed when the job imports torch, and torch is not imported before."""
    show("torch_before", "torch" in sys.modules)
    sys.path.insert(0, os.path.join(HERE, "fake_torch"))
    import torch

    show("loader", type(torch.__spec__.loader).__name__)
    show("registered", sorted(torch.Library.registered))
    show("resource_reader", hasattr(torch.__spec__.loader, "get_resource_reader"))


SCENARIOS = {f.__name__: f for f in (nothing_loaded, preload_calls, not_recording, injection_loaded_later,
                                     injection_never_loaded, version_mismatch, annotate, annotate_unwanted,
                                     annotate_windows, annotate_without_collector, annotate_pending, scaled_mm,
                                     scaled_mm_follow, old_torch, boot)}
SCENARIOS.update(torch_hooks_scenarios.SCENARIOS)  # the step and loss hooks (python_torch_hooks_test.cpp)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print(f"usage: package_scenarios.py {{{','.join(SCENARIOS)}}}", file=sys.stderr)
        return 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import fp8scope

        show("torch_after_import", "torch" in sys.modules)
        SCENARIOS[sys.argv[1]](fp8scope)
    for warning in caught:
        print(f"warning: {warning.category.__name__}: {warning.message}")
    show("warnings", len(caught))
    return 0


if __name__ == "__main__":
    sys.exit(main())
