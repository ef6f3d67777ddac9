"""The zoo's own count of torch._scaled_mm calls, for the recipe workloads' truth (torchao_rowwise_hf.py,
deepseek_blockwise.py). Independent of fp8scope: a TorchDispatchMode that the workload enters for one step sees every
aten._scaled_mm on the way down (the autograd engine carries the mode into the backward pass) and classifies each
operand by its scale's shape, as torch._scaled_mm documents them:

  one element: tensorwise; (m, 1) / (1, n): rowwise; (m, k/128) / (k/128, n): blockwise 1x128;
  (m/128, k/128) / (k/128, n/128): blockwise 128x128.
"""

import collections

import torch
from torch.utils._python_dispatch import TorchDispatchMode

NAMES = ("tensorwise", "rowwise", "blockwise 1×128", "blockwise 128×128")


def _ceil(a, b):
    return -(-a // b)


def _recipe(scale, outer, inner, mat1):
    """outer: m (mat1) or n (mat2); inner: k."""
    if scale.numel() == 1:
        return "tensorwise"
    s_outer, s_inner = tuple(scale.shape) if mat1 else (scale.shape[1], scale.shape[0])
    if s_outer == outer and s_inner == 1:
        return "rowwise"
    if s_outer == outer and s_inner == _ceil(inner, 128):
        return "blockwise 1×128"
    if s_outer == _ceil(outer, 128) and s_inner == _ceil(inner, 128):
        return "blockwise 128×128"
    return "other"


class ScaledMmCount(TorchDispatchMode):
    """Counts aten._scaled_mm calls (all overloads) and their operands' recipes while entered."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.operands = collections.Counter()
        self.pairs = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.overloadpacket is torch.ops.aten._scaled_mm:
            a, b = args[0], args[1]
            scale_a = args[2] if len(args) > 2 else kwargs["scale_a"]
            scale_b = args[3] if len(args) > 3 else kwargs["scale_b"]
            m, k = a.shape
            n = b.shape[1]
            ra = _recipe(scale_a, m, k, True)
            rb = _recipe(scale_b, n, k, False)
            self.calls += 1
            self.operands[ra] += 1
            self.operands[rb] += 1
            self.pairs[f"{ra} · {rb}"] += 1
        return func(*args, **kwargs)

    def truth(self, step):
        return {"counted_in_step": step, "calls_per_step": self.calls, "operands_per_step": dict(self.operands),
                "pairs_per_step": dict(self.pairs)}
