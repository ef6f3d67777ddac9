// GEMM statistics shared by the cuBLAS/cuBLASLt hooks and the _scaled_mm interception (gemm_probe.hpp).
#include "stats/gemm_probe.hpp"

#include "capture/capture.hpp"
#include "fp8scope.h"
#include "session/session.hpp"
#include "session/warn.hpp"

#include <cstdlib>
#include <string>

namespace fp8scope::collector {
namespace {

thread_local const void* t_library_gemm_d = nullptr;

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

// Returns enqueue_probe's status, or FP8SCOPE_E_INVALID_ARGUMENT for an operand that is not measured.
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
    return enqueue_probe(request);
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
    if (!gemm_stats_enabled() || !running_session_services() || !capture_allows_stats())
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
    std::string_view path, const GemmSite& site, void* stream, schema::StatsSource source)
{
    const std::string name = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
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

void note_library_gemm(const void* d)
{
    t_library_gemm_d = d;
}

bool take_library_gemm(const void* d)
{
    const bool covered = d != nullptr && t_library_gemm_d == d;
    t_library_gemm_d = nullptr;
    return covered;
}

} // namespace fp8scope::collector
