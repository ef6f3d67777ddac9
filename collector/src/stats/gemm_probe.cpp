// GEMM statistics shared by the cuBLAS/cuBLASLt hooks and the _scaled_mm interception (gemm_probe.hpp).
#include "stats/gemm_probe.hpp"

#include "fp8scope.h"
#include "session/warn.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace fp8scope::collector {
namespace {

thread_local const void* t_library_gemm_d = nullptr;

// The operands scaled per row or block of the GEMM probed last on this thread (probe_blocks_of_last_gemm).
struct PendingOperand {
    const void* data = nullptr;
    std::string name, path;
    SiteKey key; // its views point into name and path
    std::optional<int64_t> cap_unit;
};
struct PendingGemm {
    const void* d = nullptr;
    void* stream = nullptr;
    PendingOperand operands[2];
    int count = 0;
};
thread_local PendingGemm t_pending;

bool per_block(const std::optional<schema::ScaleRecipe>& recipe)
{
    return recipe == schema::ScaleRecipe::Rowwise || recipe == schema::ScaleRecipe::Blockwise1x128
        || recipe == schema::ScaleRecipe::Blockwise128x128;
}

// The kernel's view of a framework operand: rows of contiguous codes along the contracted dimension, blocks of the
// recipe's shape. nullopt when the contracted dimension is not the contiguous one.
std::optional<probes::BlockStatsParams> block_params(const FrameworkOperand& f, schema::Dtype dtype)
{
    probes::BlockStatsParams p;
    p.data = f.data;
    p.dtype = dtype;
    p.scale_inv = f.scale;
    if (f.contracted_along_cols) {
        if (f.col_stride != 1 || f.row_stride != f.cols)
            return std::nullopt;
        p.rows = f.rows;
        p.cols = f.cols;
        p.scale_row_stride = f.scale_row_stride;
        p.scale_col_stride = f.scale_col_stride;
    } else {
        if (f.row_stride != 1 || f.col_stride != f.rows)
            return std::nullopt;
        p.rows = f.cols;
        p.cols = f.rows;
        p.scale_row_stride = f.scale_col_stride;
        p.scale_col_stride = f.scale_row_stride;
    }
    p.block_rows = f.recipe == schema::ScaleRecipe::Blockwise128x128 ? 128 : 1;
    p.block_cols = f.recipe == schema::ScaleRecipe::Rowwise ? p.cols : 128;
    return p;
}

schema::Fp8Format own_format(schema::Dtype dtype)
{
    return dtype == schema::Dtype::E4M3 ? schema::Fp8Format::E4M3
        : dtype == schema::Dtype::E5M2  ? schema::Fp8Format::E5M2
                                        : schema::Fp8Format::None;
}

// Only dense operands are measured: with padding between columns (ld larger than the column) or between batch
// entries, one pass over numel contiguous elements would read bytes that are not the matrix.
bool is_dense(const Operand& op)
{
    const int64_t inner = op.row_major ? op.cols : op.rows;
    return op.ld == inner && (op.batch <= 1 || op.batch_stride == op.rows * op.cols);
}

// Returns enqueue_probe's status, or FP8SCOPE_E_INVALID_ARGUMENT for an operand that is not measured. A measured
// operand scaled per row or block is remembered for probe_blocks_of_last_gemm.
int probe_operand(const Operand& op, schema::TensorRole role, const std::string& name, std::string_view path,
    const GemmSite& site, void* stream, schema::StatsSource source)
{
    const auto dtype = dtype_of(op.type);
    if (!op.data || !dtype || op.rows <= 0 || op.cols <= 0 || op.batch <= 0)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    if (!is_dense(op)) {
        warn_once("gemm-strided",
            "a GEMM operand with padding between columns or batches was not measured "
            "(tensor statistics cover dense operands only)");
        return FP8SCOPE_E_INVALID_ARGUMENT;
    }
    ProbeRequest request;
    request.site = { name, path, site.ordinal, op.rows, op.cols, op.batch, *dtype, role, source, op.recipe };
    request.cap_unit = site.cap_unit;
    request.params.data = op.data;
    request.params.numel = uint64_t(op.rows) * uint64_t(op.cols) * uint64_t(op.batch);
    request.params.dtype = *dtype;
    request.params.target = own_format(*dtype);
    request.params.scale_kind = op.scale_ptr ? op.scale_kind : probes::ScaleKind::None;
    request.params.scale_ptr = op.scale_ptr;
    request.stream = stream;
    const int status = enqueue_probe(request);
    if (status == FP8SCOPE_OK && per_block(op.recipe) && t_pending.count < 2) {
        PendingOperand& pending = t_pending.operands[t_pending.count++];
        pending.data = op.data;
        pending.name = name;
        pending.path = std::string(path);
        pending.key = request.site;
        pending.key.name = pending.name;
        pending.key.nvtx_path = pending.path;
        pending.cap_unit = site.cap_unit;
    }
    return status;
}

// FP8SCOPE_GEMM_STATS=0 turns interception off (the GEMMs still run through these wrappers, untouched).
bool gemm_stats_enabled()
{
    static const bool enabled = [] {
        const char* value = std::getenv("FP8SCOPE_GEMM_STATS");
        return !value || value[0] != '0';
    }();
    return enabled;
}

} // namespace

std::optional<schema::Dtype> dtype_of(cudaDataType type)
{
    switch (type) {
    case CUDA_R_32F:
        return schema::Dtype::Float32;
    case CUDA_R_16BF:
        return schema::Dtype::BFloat16;
    case CUDA_R_16F:
        return schema::Dtype::Float16;
    case CUDA_R_8F_E4M3:
        return schema::Dtype::E4M3;
    case CUDA_R_8F_E5M2:
        return schema::Dtype::E5M2;
    default:
        return std::nullopt;
    }
}

GemmGate gemm_gate()
{
    if (!gemm_stats_enabled() || !stats_recording() || !stats_allowed())
        return GemmGate::Skip;
    if (const auto step = current_step())
        return step_sampled(*step) ? GemmGate::SampledStep : GemmGate::Skip;
    return GemmGate::NoSteps;
}

int32_t gemm_types(cudaDataType a, cudaDataType b, cudaDataType d)
{
    return int32_t(a) * 10000 + int32_t(b) * 100 + int32_t(d);
}

std::optional<GemmSite> gemm_site(GemmGate gate, std::string_view path, int64_t m, int64_t n, int64_t k, int64_t batch,
    int32_t types, int32_t transposes)
{
    if (gate == GemmGate::SampledStep)
        return GemmSite { next_gemm_ordinal(path, m, n, k, types), std::nullopt };
    const GemmDecision decision = decide_gemm_without_steps(gemm_call_key(path, m, n, k, batch, types, transposes));
    if (!decision.sampled)
        return std::nullopt;
    return GemmSite { decision.ordinal, decision.cap_unit };
}

void probe_gemm(const Operand& a, const Operand& b, const Operand& d, int64_t m, int64_t n, int64_t k,
    std::string_view path, const GemmSite& site, void* stream, schema::StatsSource source, int32_t groups)
{
    const std::string name = (groups > 0 ? "grouped gemm G" + std::to_string(groups) + " " : std::string("gemm "))
        + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (d.adds_c ? " + C" : "");
    t_pending.count = 0;
    t_pending.d = d.data;
    t_pending.stream = stream;
    probe_operand(a, schema::TensorRole::A, name, path, site, stream, source);
    probe_operand(b, schema::TensorRole::B, name, path, site, stream, source);
    const int d_status = probe_operand(d, schema::TensorRole::D, name, path, site, stream, source);
    // cuBLASLt's own amax of D (before D's scale), with D's statistics: a scalar read in stream order, no sync.
    if (d.amax_ptr && d_status == FP8SCOPE_OK) {
        std::string scalar = "amax_D · ";
        if (!path.empty())
            scalar.append(path).append(" · ");
        scalar += name + " #" + std::to_string(site.ordinal);
        log_scalar_device(scalar, d.amax_ptr, schema::Dtype::Float32, stream);
    }
}

void probe_blocks_of_last_gemm(const void* d, std::span<const FrameworkOperand> operands)
{
    if (d == nullptr || t_pending.d != d) // another GEMM's, or none was measured
        return;
    for (int i = 0; i < t_pending.count; ++i) {
        const PendingOperand& pending = t_pending.operands[i];
        for (const FrameworkOperand& f : operands) {
            if (f.data != pending.data || !per_block(f.recipe) || f.scale == nullptr)
                continue;
            const auto params = block_params(f, pending.key.dtype);
            if (!params) {
                warn_once("block-stats-layout",
                    "an operand scaled per row or block whose contracted dimension is not contiguous was not given "
                    "per-block statistics");
                continue;
            }
            enqueue_block_probe(pending.key, pending.cap_unit, *params, t_pending.stream);
            break;
        }
    }
    t_pending.count = 0;
    t_pending.d = nullptr;
}

void note_library_gemm(const void* d)
{
    t_library_gemm_d = d;
    // A later GEMM: the operands remembered for the one before can no longer be matched to it (an output buffer's
    // address comes back for other GEMMs), so they are forgotten; probe_gemm remembers this one's if it measures it.
    t_pending.count = 0;
    t_pending.d = nullptr;
}

bool take_library_gemm(const void* d)
{
    const bool covered = d != nullptr && t_library_gemm_d == d;
    t_library_gemm_d = nullptr;
    return covered;
}

} // namespace fp8scope::collector
