// GEMM statistics shared by the cuBLAS and cuBLASLt hooks (gemm_hooks.cpp) and by PyTorch's _scaled_mm interception
// (torch_gemm.cpp): a GEMM's operands, the sampling gate, the site's ordinal, and the probes of A, B and D
// (docs/collector.md "Tensor statistics"). Operands are in cuBLAS's terms: column-major unless `row_major`.
#pragma once

#include "stats/gemm_scalars.hpp"
#include "stats/stats_engine.hpp"

#include <library_types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace fp8scope::collector {

std::optional<schema::Dtype> dtype_of(cudaDataType type);

// One matrix operand as cuBLAS sees it (column-major unless `row_major`).
struct Operand {
    const void* data = nullptr;
    cudaDataType type = CUDA_R_32F;
    int64_t rows = 0, cols = 0, ld = 0, batch = 1, batch_stride = 0;
    bool row_major = false;
    probes::ScaleKind scale_kind = probes::ScaleKind::None;
    const float* scale_ptr = nullptr;
    const float* amax_ptr = nullptr; // D only: cuBLASLt's AMAX_D_POINTER, set when D is FP8
    // D only: the GEMM added beta * C (beta a nonzero host scalar): D = alpha * op(A) op(B) + beta * C is not the
    // product alone (Inductor fuses a residual add into a BF16 addmm, which an FP8 _scaled_mm cannot take). The site
    // is named "gemm MxNxK + C", so that compare never matches it with a GEMM that added nothing.
    bool adds_c = false;
    std::optional<schema::ScaleRecipe> recipe; // FP8 operands: how the GEMM scales them
};

// How a GEMM that is to be measured is named and capped: its ordinal, and (no step known) the cap unit its sampling
// gave.
struct GemmSite {
    int32_t ordinal = 0;
    std::optional<int64_t> cap_unit;
};

// Whether GEMMs made now may be measured: not at all (interception off, not recording, an unsampled step), those of
// a sampled step, or, with no step known, those the period learner samples. Checked before reading any cuBLAS
// attribute, so a GEMM of an unsampled step costs a few atomic loads.
enum class GemmGate { Skip, SampledStep, NoSteps };
GemmGate gemm_gate();

int32_t gemm_types(cudaDataType a, cudaDataType b, cudaDataType d);

// The site of a GEMM to be measured, or nullopt when it is not sampled. With no step known every GEMM's key goes
// through the period learner (no CUDA call), and an unsampled GEMM returns here, before any CUDA call.
std::optional<GemmSite> gemm_site(GemmGate gate, std::string_view path, int64_t m, int64_t n, int64_t k, int64_t batch,
    int32_t types, int32_t transposes);

// Statistics for A, B and D of one GEMM (m x n = op(A) m x k times op(B) k x n), named "gemm MxNxK" ("gemm MxNxK + C"
// when d.adds_c); with `groups` > 0 a grouped GEMM, named "grouped gemm G<groups> MxNxK".
void probe_gemm(const Operand& a, const Operand& b, const Operand& d, int64_t m, int64_t n, int64_t k,
    std::string_view path, const GemmSite& site, void* stream,
    schema::StatsSource source = schema::StatsSource::GemmInterception, int32_t groups = 0);

// An FP8 operand as a framework sees it (element (i, j) at data + i * row_stride + j * col_stride) with its scales
// (scale (i', j') at scale + i' * scale_row_stride + j' * scale_col_stride): what per-block statistics need, and
// what cuBLASLt's scale modes do not say.
struct FrameworkOperand {
    const void* data = nullptr;
    int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;
    schema::ScaleRecipe recipe = schema::ScaleRecipe::Tensorwise;
    bool contracted_along_cols = true; // PyTorch's mat1 (m x k); false for mat2 (k x n)
    const float* scale = nullptr;
    int64_t scale_row_stride = 0, scale_col_stride = 0;
};

// Per-block statistics (issue 31) for the operands scaled per row or block of the GEMM that probe_gemm measured last
// on this thread, if its output was `d`: probe_gemm remembers them (thread-local), and the framework's interception,
// right after the op, gives their scales. An operand is matched by its data pointer; one whose contracted dimension
// is not contiguous is skipped with a warning.
void probe_blocks_of_last_gemm(const void* d, std::span<const FrameworkOperand> operands);

// Which GEMMs a framework-level interception need not measure again: the cuBLAS(Lt) hooks note the D of every GEMM
// that ran on this thread, and the interception of PyTorch's _scaled_mm, called right after the op on the same
// thread, asks whether its output was that D (and forgets it). Thread-local; no lock.
void note_library_gemm(const void* d);
bool take_library_gemm(const void* d);

} // namespace fp8scope::collector
