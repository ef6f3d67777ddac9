"""The zoo's own count of torch._scaled_mm calls, for the recipe workloads' truth (torchao_rowwise_hf.py,
deepseek_blockwise.py). Independent of fp8scope: while entered, ScaledMmCount replaces the Python attribute
torch._scaled_mm (what torchao's Float8Linear and deepseek_blockwise.py call, from any thread, backward included) by a
function that counts the call and then calls the original. A TorchDispatchMode would not do: torchao's FP8 tensors
are subclasses whose own __torch_dispatch__ calls torch._scaled_mm while the mode is switched off. Each operand is
classified by its scale's shape, as torch._scaled_mm documents them. A compiled job's calls are counted in the graphs
Inductor compiles instead (count_graph, from deepseek_blockwise.py --compile's backend):

  one element: tensorwise; (m, 1) / (1, n): rowwise; (m, k/128) / (k/128, n): blockwise 1x128;
  (m/128, k/128) / (k/128, n/128): blockwise 128x128.
"""

import collections

import torch

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


class ScaledMmCount:
    """Counts torch._scaled_mm calls and their operands' recipes while entered."""

    def __init__(self):
        self.calls = 0
        self.operands = collections.Counter()
        self.pairs = collections.Counter()
        self.graphs = 0
        self._original = None

    def _count(self, a, b, scale_a, scale_b):
        m, k = a.shape
        n = b.shape[1]
        ra = _recipe(scale_a, m, k, True)
        rb = _recipe(scale_b, n, k, False)
        self.calls += 1
        self.operands[ra] += 1
        self.operands[rb] += 1
        self.pairs[f"{ra} · {rb}"] += 1

    def count_graph(self, gm):
        """Counts the aten._scaled_mm nodes of a graph Inductor compiles (a compiled job calls torch._scaled_mm from its
        generated code, not through the Python attribute), classifying each operand by its scale's shape as the graph
        has it (node.meta["val"]). A graph that runs once a step adds its calls to the step's count."""
        self.graphs += 1
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target == torch.ops.aten._scaled_mm.default:
                self._count(*(arg.meta["val"] for arg in node.args[:4]))

    def __enter__(self):
        original = self._original = torch._scaled_mm

        def counted(a, b, scale_a=None, scale_b=None, *args, **kwargs):
            self._count(a, b, scale_a, scale_b)
            return original(a, b, scale_a, scale_b, *args, **kwargs)

        torch._scaled_mm = counted
        return self

    def __exit__(self, *exc):
        torch._scaled_mm = self._original
        return False

    def truth(self, step):
        where = {"counted_in_step": step} if step is not None else {
            "counted_in": "the graphs Inductor compiled (their aten._scaled_mm nodes; each graph runs once a step)",
            "graphs": self.graphs}
        return {**where, "calls_per_step": self.calls, "operands_per_step": dict(self.operands),
                "pairs_per_step": dict(self.pairs)}
