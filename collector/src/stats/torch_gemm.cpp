// fp8scope_scaled_gemm (probes/include/fp8scope.h): a scaled GEMM that a framework reports right after enqueueing it,
// PyTorch's torch._scaled_mm through the Python package's dispatcher interception (docs/python.md). A GEMM that ran
// through cuBLAS or cuBLASLt on this thread was measured by their interception; any other (a CUTLASS kernel) is
// measured here the same way, in cuBLAS's terms: column-major operands, so that its sites read like those of a
// cuBLASLt GEMM of the same shape.
#include "fp8scope.h"

#include "calls/nvtx_paths.hpp"
#include "session/warn.hpp"
#include "stats/gemm_probe.hpp"

#include <cstddef>
#include <optional>
#include <string_view>

#define FP8SCOPE_EXPORT extern "C" __attribute__((visibility("default")))

namespace fp8scope::collector {
namespace {

std::optional<cudaDataType> cuda_type_of(int32_t dtype)
{
    switch (dtype) {
    case FP8SCOPE_DTYPE_F32:
        return CUDA_R_32F;
    case FP8SCOPE_DTYPE_BF16:
        return CUDA_R_16BF;
    case FP8SCOPE_DTYPE_F16:
        return CUDA_R_16F;
    case FP8SCOPE_DTYPE_E4M3:
        return CUDA_R_8F_E4M3;
    case FP8SCOPE_DTYPE_E5M2:
        return CUDA_R_8F_E5M2;
    default:
        return std::nullopt;
    }
}

// The framework's row-major view (element (i, j) at i * row_stride + j * col_stride) as cuBLAS's column-major
// operand: a matrix with unit row stride is itself column-major; one with unit column stride is the column-major
// form of its transpose. Neither: not dense, not measured.
Operand column_major(const fp8scope_gemm_operand& in)
{
    Operand op;
    op.data = in.data;
    op.type = cuda_type_of(in.dtype).value_or(CUDA_R_8I); // a type the statistics do not read: not measured
    if (in.row_stride == 1 && in.col_stride >= in.rows) {
        op.rows = in.rows;
        op.cols = in.cols;
        op.ld = in.col_stride;
    } else {
        op.rows = in.cols;
        op.cols = in.rows;
        op.ld = in.col_stride == 1 ? in.row_stride : -1; // -1: neither layout, so not dense
    }
    if (in.recipe >= FP8SCOPE_RECIPE_TENSORWISE && in.recipe <= FP8SCOPE_RECIPE_NVFP4_16)
        op.recipe = static_cast<schema::ScaleRecipe>(in.recipe);
    if (in.recipe == FP8SCOPE_RECIPE_TENSORWISE && in.scale) {
        op.scale_ptr = static_cast<const float*>(in.scale);
        op.scale_kind = probes::ScaleKind::InvDevicePointer;
    }
    return op;
}

// Per-block statistics for the GEMM just measured (by the cuBLAS(Lt) interception or here): the framework's
// operands with their scales.
void probe_blocks(const fp8scope_scaled_gemm_args& args, int32_t groups)
{
    FrameworkOperand operands[2];
    size_t count = 0;
    for (const auto* in : { &args.a, &args.b }) {
        if (in->recipe < FP8SCOPE_RECIPE_ROWWISE || in->recipe > FP8SCOPE_RECIPE_BLOCKWISE_128X128 || !in->scale)
            continue;
        FrameworkOperand& f = operands[count++];
        f.data = in->data;
        f.rows = in->rows;
        f.cols = in->cols;
        f.row_stride = in->row_stride;
        f.col_stride = in->col_stride;
        f.recipe = static_cast<schema::ScaleRecipe>(in->recipe);
        f.contracted_along_cols = in == &args.a || groups > 0; // a grouped GEMM's B comes transposed
        f.scale = static_cast<const float*>(in->scale);
        f.scale_row_stride = in->scale_row_stride;
        f.scale_col_stride = in->scale_col_stride;
    }
    if (count > 0)
        probe_blocks_of_last_gemm(args.d.data, std::span(operands, count));
}

bool valid(const fp8scope_gemm_operand& op)
{
    return op.rows > 0 && op.cols > 0 && op.recipe >= FP8SCOPE_RECIPE_NONE && op.recipe <= FP8SCOPE_RECIPE_NVFP4_16;
}

// A grouped GEMM (fp8scope_scaled_gemm_args::groups): A rows x K, B^T stacked G*N x K, D rows x N. In cuBLAS's terms
// its A is the stacked B^T read transposed, m = G*N, n = rows; named "grouped gemm G<G> MxNxK", batch G.
int grouped_gemm(const fp8scope_scaled_gemm_args& args, int32_t groups)
{
    const fp8scope_gemm_operand& a = args.a;
    const fp8scope_gemm_operand& b = args.b;
    const fp8scope_gemm_operand& d = args.d;
    if (!valid(a) || !valid(b) || !valid(d) || a.cols != b.cols || b.rows % groups != 0 || d.rows != a.rows
        || d.cols != b.rows / groups)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    const GemmGate gate = gemm_gate();
    if (gate == GemmGate::Skip)
        return FP8SCOPE_E_SAMPLED_OUT;
    const Operand lt_a = column_major(b), lt_b = column_major(a), lt_d = column_major(d);
    const int64_t m = b.rows, n = a.rows, k = a.cols;
    const std::string_view path = current_nvtx_path();
    const auto site = gemm_site(gate, path, m, n, k, groups, gemm_types(lt_a.type, lt_b.type, lt_d.type), 16);
    if (!site)
        return FP8SCOPE_E_SAMPLED_OUT;
    probe_gemm(lt_a, lt_b, lt_d, m, n, k, path, *site, args.stream, schema::StatsSource::TorchScaledMm, groups);
    probe_blocks(args, groups);
    return FP8SCOPE_OK;
}

int scaled_gemm(const fp8scope_scaled_gemm_args* args)
{
    // A caller built before `groups` passes the smaller struct: that field is then 0.
    if (!args || args->struct_size < offsetof(fp8scope_scaled_gemm_args, groups))
        return FP8SCOPE_E_INVALID_ARGUMENT;
    const int32_t groups = args->struct_size >= sizeof(fp8scope_scaled_gemm_args) ? args->groups : 0;
    if (groups < 0)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    if (take_library_gemm(args->d.data)) {
        probe_blocks(*args, groups);
        return FP8SCOPE_LIBRARY_GEMM;
    }
    if (groups > 0)
        return grouped_gemm(*args, groups);
    const fp8scope_gemm_operand& a = args->a;
    const fp8scope_gemm_operand& b = args->b;
    const fp8scope_gemm_operand& d = args->d;
    if (!valid(a) || !valid(b) || !valid(d) || a.cols != b.rows || d.rows != a.rows || d.cols != b.cols)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    const GemmGate gate = gemm_gate();
    if (gate == GemmGate::Skip)
        return FP8SCOPE_E_SAMPLED_OUT;
    // D = A B row-major is D^T = B^T A^T column-major: cuBLAS's A is the framework's B, and m and n swap.
    const Operand lt_a = column_major(b);
    const Operand lt_b = column_major(a);
    const Operand lt_d = column_major(d);
    const int64_t m = d.cols, n = d.rows, k = a.cols;
    // op(A) is m x k: stored k x m (column-major of B itself) means transposed, as PyTorch calls cuBLASLt.
    const int32_t transa = lt_a.rows == m ? 0 : 1;
    const int32_t transb = lt_b.rows == k ? 0 : 1;
    const std::string_view path = current_nvtx_path();
    const auto site
        = gemm_site(gate, path, m, n, k, 1, gemm_types(lt_a.type, lt_b.type, lt_d.type), transa * 16 + transb);
    if (!site)
        return FP8SCOPE_E_SAMPLED_OUT;
    probe_gemm(lt_a, lt_b, lt_d, m, n, k, path, *site, args->stream, schema::StatsSource::TorchScaledMm);
    probe_blocks(*args, 0);
    return FP8SCOPE_OK;
}

} // namespace
} // namespace fp8scope::collector

FP8SCOPE_EXPORT int fp8scope_scaled_gemm(const struct fp8scope_scaled_gemm_args* args)
{
    try {
        return fp8scope::collector::scaled_gemm(args);
    } catch (...) {
        fp8scope::collector::warn_once(
            "c-api-exception", "unexpected error in the fp8scope C API (the call did nothing)");
        return FP8SCOPE_E_INVALID_ARGUMENT;
    }
}

FP8SCOPE_EXPORT int fp8scope_library_gemm(const void* d)
{
    return fp8scope::collector::take_library_gemm(d) ? 1 : 0;
}
