// Tensor statistics in the collector (docs/collector.md "Tensor statistics"): the GEMM hooks and the C API describe a
// tensor; this file names its site, samples, launches the statistics kernel on the tensor's own stream into a slot of
// pinned memory, and later (on the writer thread) turns finished slots into rows. Nothing here waits for the GPU: the
// writer polls each slot's sequence number, which the kernel writes last.
#pragma once

#include "stats/gemm_period.hpp"

#include "fp8scope/format/rows.hpp"
#include "fp8scope/probes/block_stats.hpp"
#include "fp8scope/probes/tensor_stats.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace fp8scope {
class TraceDb;
}

namespace fp8scope::collector {

struct SiteKey {
    std::string_view name;
    std::string_view nvtx_path;
    int32_t ordinal = 0;
    int64_t rows = 0, cols = 0, batch = 1;
    schema::Dtype dtype = schema::Dtype::Float32;
    schema::TensorRole role = schema::TensorRole::Other;
    schema::StatsSource source = schema::StatsSource::ExplicitProbe;
    std::optional<schema::ScaleRecipe> recipe; // FP8 GEMM operands: how they are scaled (part of the identity)
};

struct ProbeRequest {
    SiteKey site;
    probes::StatsParams params;
    void* stream = nullptr; // cudaStream_t
    // Set by the GEMM hooks for a GEMM they sampled with no step known (decide_gemm_without_steps): what the cap
    // counts it in. Unset for explicit probes, and for GEMMs when steps are known.
    std::optional<int64_t> cap_unit;
};

// Status codes of probes/include/fp8scope.h (FP8SCOPE_OK, FP8SCOPE_E_*).
int enqueue_probe(const ProbeRequest& request);
// A per-block statistics sample (issue 31) of a GEMM operand scaled per row or block, at the site of its per-tensor
// sample (made just before, on this thread): a row of FP8SCOPE_BLOCK_STATS. Status codes as enqueue_probe.
int enqueue_block_probe(
    const SiteKey& site, std::optional<int64_t> cap_unit, const probes::BlockStatsParams& params, void* stream);
// fp8scope_stats_wanted(): whether enqueue_probe, called now, would get past the capture window and the step
// sampling (probes/include/fp8scope.h).
bool stats_wanted();
// fp8scope_stats_wanted_in_step(boundary): false only when statistics surely cannot be wanted before the next call
// of the same kind (`optimizer`: fp8scope_step_end, else fp8scope_step): that call begins the steps, the capture
// windows change only on steps, and the step now is outside them or not sampled. True when unsure.
bool stats_wanted_in_step(bool optimizer);

// The collector's state as tensor statistics see it, through the collector's one pointer (session/collector.hpp):
// whether a session records in this process; whether the capture windows allow statistics now (inside a window, or
// --stats-outside-windows); the step a probe made now belongs to (capture/steps.hpp: the job's markers, NVTX step
// ranges or the optimizer's step ends; nullopt without any); and rows of the job's making to the writer (false when
// not recording or its queue is full).
bool stats_recording();
bool stats_allowed();
std::optional<int64_t> current_step();
// Whether the steps are begun by the optimizer's step ends (`optimizer`) or by the job's markers, and the capture
// windows change only on steps (Capture::edges_on_steps).
bool steps_begin_at(bool optimizer);
bool post_stats_rows(std::function<void(TraceDb&)> task);

// Sampling (FP8SCOPE_STATS_EVERY, FP8SCOPE_STATS_CAP; docs/collector.md "Tensor statistics"). With steps known:
// whether `step` is sampled (every N-th step). No CUDA call.
bool step_sampled(int64_t step);

// With steps known: the ordinal of a GEMM among those with the same NVTX path and shape in the current step
// (docs/collector.md "Tensor statistics", site identity).
int32_t next_gemm_ordinal(std::string_view nvtx_path, int64_t m, int64_t n, int64_t k, int32_t dtypes);

// With no step known: every GEMM call's key goes through the period learner (gemm_period.hpp), which gives its
// ordinal within the job's repeating GEMM period and whether it is sampled. No CUDA call.
GemmDecision decide_gemm_without_steps(uint64_t key);

// A scalar, stored by the writer. `value_device` non-null: read when `stream` gets there, no sync.
int log_scalar(std::string_view name, double value);
int log_scalar_device(std::string_view name, const void* value_device, schema::Dtype dtype, void* stream);

// Writer thread: writes the rows of every finished slot. `final`: waits (up to a second, polling; never a device
// sync) for slots still in flight, then counts the rest as dropped.
void harvest_tensor_stats(TraceDb& db, bool final);

} // namespace fp8scope::collector
