"""Fp8Linear: a bias-free Linear whose three GEMMs run in FP8 through torch._scaled_mm, with TransformerEngine-style
delayed scaling.

Rules followed (TransformerEngine, transformer_engine/common/recipe/__init__.py `DelayedScaling` and
pytorch/quantization.py `_default_sf_compute`; see shared/reference/fp8_numerics.md sections 1.1-1.2):
- Formats: E4M3 (max 448) for the forward input and weight, E5M2 (max 57344) for the gradient of the output
  (the HYBRID format). cuBLASLt has no E5M2 x E5M2 GEMM, and none is needed here.
- Per tensor (input, weight, grad_output) an amax history of `amax_history_len` entries and a scale.
- scale = (fp8_max / max(amax_history)) / 2**margin; an amax that is 0, Inf or NaN keeps the previous scale; a
  scale that comes out infinite becomes FLT_MAX. The initial scale is 1.
- Delayed: a cast uses the scale computed from earlier amaxes; the tensor's own amax enters the history only after
  the cast, so it first affects the next step's scale.
- The GEMM receives the dequantisation factors scale_inv = 1/scale (TE passes scale_inv to cuBLASLt as
  A/B_SCALE_POINTER; torch._scaled_mm's scale_a/scale_b mean the same).
- With scaling="current" (TransformerEngine's Float8CurrentScaling) each cast computes the tensor's amax first and
  casts with scale = (fp8_max / amax) / 2**margin: one more reduction per cast, and no history.
- Fast accumulation in the forward GEMM only; dgrad and wgrad accumulate in full precision (TE's
  use_split_accumulator: False for fprop, True for dgrad and wgrad).
- Data parallel (defer_amax=True): DelayedScaling's reduce_amax=True, i.e. every rank's amaxes are reduced (max)
  across the group before the scales are updated, so that all ranks cast with the same scales. Each tensor is cast
  once per step, so deferring its history update to the end of the step gives the scales a single process would
  compute from the same amaxes; reduce_amax_and_update() then does one all-reduce for every layer and tensor.

Everything stays on the device: no .item(), no host sync.
"""

import torch
import torch.nn as nn

try:  # fp8scope (probes/python): TE-exact overflow/underflow of each cast's high-precision input
    import fp8scope
except ImportError:
    fp8scope = None

E4M3 = torch.float8_e4m3fn
E5M2 = torch.float8_e5m2
E4M3_MAX = 448.0
E5M2_MAX = 57344.0
FLT_MAX = torch.finfo(torch.float32).max

# Rows of the amax history and entries of the scale buffer.
INPUT, WEIGHT, GRAD_OUTPUT = 0, 1, 2
TENSOR_NAMES = ("input", "weight", "grad_output")
FP8_MAX_BY_ROW = (E4M3_MAX, E4M3_MAX, E5M2_MAX)


def transpose_fp8(t):
    """A row-major copy of t's transpose. Copied as bytes, so no FP8 copy kernel is needed."""
    return t.view(torch.uint8).t().contiguous().view(t.dtype)


def scaled_mm(a, b_col_major, scale_inv_a, scale_inv_b, fast_accum):
    # torch._scaled_mm(self, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
    # use_fast_accum=False): self row-major, mat2 column-major, all dimensions multiples of 16, per-tensor scales
    # as float32 tensors of one element holding the dequantisation factor.
    return torch._scaled_mm(
        a, b_col_major, scale_inv_a, scale_inv_b, out_dtype=torch.bfloat16, use_fast_accum=fast_accum
    )


class Fp8Linear(nn.Module):
    def __init__(self, in_features, out_features, amax_history_len=16, margin=0, scaling="delayed", defer_amax=False):
        super().__init__()
        if scaling not in ("delayed", "current"):
            raise ValueError("scaling must be 'delayed' or 'current'")
        if defer_amax and scaling != "delayed":
            raise ValueError("defer_amax needs delayed scaling")
        self.defer_amax = defer_amax
        self.scaling = scaling
        if in_features % 16 or out_features % 16:
            raise ValueError("Fp8Linear needs in_features and out_features to be multiples of 16")
        self.in_features = in_features
        self.out_features = out_features
        self.margin = margin
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=torch.bfloat16))
        # float32 buffers: rows INPUT, WEIGHT, GRAD_OUTPUT; history column 0 is the newest amax.
        self.register_buffer("amax_history", torch.zeros(3, amax_history_len, dtype=torch.float32))
        self.register_buffer("scale", torch.ones(3, dtype=torch.float32))
        if defer_amax:
            # This step's amax per row, waiting for reduce_amax_and_update(); not saved with the model.
            self.register_buffer("pending_amax", torch.zeros(3, dtype=torch.float32), persistent=False)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, margin={self.margin}, " \
            f"amax_history_len={self.amax_history.shape[1]}"

    def forward(self, x):
        # The autograd Function works on 2-D tensors and returns a fresh tensor, never a view, so that autograd's
        # rules for views made inside a custom Function never apply; the reshapes happen out here.
        y = _Fp8LinearFunction.apply(x.reshape(-1, self.in_features), self.weight, self)
        return y.view(*x.shape[:-1], self.out_features)

    @torch.no_grad()
    def quantize(self, t, row, dtype, fp8_max):
        """Casts t to FP8 with the current (delayed) scale, then records t's amax and updates the scale.

        Returns the FP8 tensor (same layout as t) and the scale_inv that dequantises it."""
        if self.scaling == "current":
            # Current scaling: the scale comes from this tensor's own amax, reduced before the cast (an extra
            # reduction per cast); the history and the delayed scale are not used.
            amax = t.abs().amax().float()
            scale = torch.where(amax > 0.0, (fp8_max / amax) / (2.0**self.margin), torch.ones_like(amax))
            scale = torch.where(torch.isfinite(scale), scale, torch.full_like(scale, FLT_MAX))
            self.scale[row].copy_(scale)
        scale = self.scale[row]
        if fp8scope is not None:
            # Before the cast, with the scale the cast uses (a device tensor: no sync): overflow = |t| >
            # fp8_max / scale, underflow = nonzero t that becomes 0 (TransformerEngine's definitions).
            fp8scope.probe(TENSOR_NAMES[row], t, scale=scale, target="e4m3" if dtype == E4M3 else "e5m2",
                           role=("input", "weight", "gradient")[row])
        scale_inv = scale.reciprocal()  # a new tensor: the update below does not change it
        # In float32, as TE's cast kernels compute: bf16 * a float32 0-dim tensor would stay bf16. Out of place: for a
        # float32 input t.float() is t itself, and an in-place multiply would change the caller's tensor.
        t_fp8 = (t.float() * scale).clamp_(-fp8_max, fp8_max).to(dtype)
        if self.scaling == "delayed":
            if self.defer_amax:
                self.pending_amax[row].copy_(t.abs().amax().float())
            else:
                self._update_scale(row, t.abs().amax().float(), fp8_max)
        return t_fp8, scale_inv

    def _update_scale(self, row, amax, fp8_max):
        history = self.amax_history[row]
        history.copy_(torch.roll(history, 1, 0))
        history[0].copy_(amax)
        amax_max = history.amax()
        scale = self.scale[row]
        new_scale = (fp8_max / amax_max) / (2.0**self.margin)
        new_scale = torch.where(amax_max > 0.0, new_scale, scale)
        new_scale = torch.where(torch.isfinite(amax_max), new_scale, scale)
        new_scale = torch.where(torch.isinf(new_scale), torch.full_like(new_scale, FLT_MAX), new_scale)
        scale.copy_(new_scale)


@torch.no_grad()
def reduce_amax_and_update(layers, all_reduce_max):
    """Data-parallel delayed scaling: every layer's pending amaxes (one per tensor) in one tensor, reduced (max) across
    the ranks by all_reduce_max(tensor) in place, then each layer's histories and scales updated from the result.
    Every rank then holds the same histories and scales, as TransformerEngine's amax reduction ensures."""
    amaxes = torch.stack([layer.pending_amax for layer in layers])
    all_reduce_max(amaxes)
    for layer, amax in zip(layers, amaxes):
        for row, fp8_max in enumerate(FP8_MAX_BY_ROW):
            layer._update_scale(row, amax[row], fp8_max)


class _Fp8LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, module):
        x_fp8, x_scale_inv = module.quantize(x.contiguous(), INPUT, E4M3, E4M3_MAX)
        w_fp8, w_scale_inv = module.quantize(weight, WEIGHT, E4M3, E4M3_MAX)
        # y = x W^T: W^T of a row-major (out, in) weight is column-major, as mat2 must be.
        y = scaled_mm(x_fp8, w_fp8.t(), x_scale_inv, w_scale_inv, fast_accum=True)
        ctx.save_for_backward(x_fp8, w_fp8, x_scale_inv, w_scale_inv)
        ctx.module = module
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x_fp8, w_fp8, x_scale_inv, w_scale_inv = ctx.saved_tensors
        g_fp8, g_scale_inv = ctx.module.quantize(grad_output.contiguous(), GRAD_OUTPUT, E5M2, E5M2_MAX)
        # dgrad: dx (M, in) = g (M, out) @ W (out, in); W as column-major is the transpose of a row-major W^T.
        dx = scaled_mm(g_fp8, transpose_fp8(w_fp8).t(), g_scale_inv, w_scale_inv, fast_accum=False)
        # wgrad: dW (out, in) = g^T (out, M) @ x (M, in); both operands need a transposed FP8 copy.
        dw = scaled_mm(transpose_fp8(g_fp8), transpose_fp8(x_fp8).t(), g_scale_inv, x_scale_inv, fast_accum=False)
        return dx, dw, None
