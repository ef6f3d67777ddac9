// Per-block statistics in the collector (issue 31; docs/collector.md "Per-block statistics"): a GEMM operand scaled
// per row or per block, whose scales' layout the framework has given, gets the per-block kernel on its own stream
// into a slot of pinned memory; the writer turns finished slots into FP8SCOPE_BLOCK_STATS rows. As for the
// per-tensor kernel, nothing here waits for the GPU.
#include "stats/stats_engine.hpp"
#include "stats/stats_slots.hpp"

#include "session/own_work.hpp"
#include "session/warn.hpp"

#include "fp8scope.h"
#include "fp8scope/format/trace_db.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <string>

namespace fp8scope::collector {

using namespace stats;

namespace {

int launch_block(Engine& e, size_t index, int64_t site_id, std::optional<int64_t> step,
    const probes::BlockStatsParams& params, void* stream)
{
    SlotMeta& slot = e.block_slots[index];
    const OwnWorkScope own_work; // the scratch's allocation and memset, and the kernel
    void* scratch = scratch_for(e, stream, true);
    if (!scratch) {
        slot.state.store(kFree, std::memory_order_release);
        return FP8SCOPE_E_CUDA;
    }
    slot.is_scalar = false;
    slot.site_id = site_id;
    slot.step = step;
    stamp_slot(e, slot, stream);
    slot.dtype = params.dtype;
    slot.numel = uint64_t(params.rows) * uint64_t(params.cols);
    slot.block_rows = std::min(params.block_rows, params.rows);
    slot.block_cols = std::min(params.block_cols, params.cols);
    const cudaError_t launched = probes::launch_block_stats(
        params, scratch, &e.block_results[index], slot.sequence, static_cast<cudaStream_t>(stream));
    if (launched != cudaSuccess) {
        cudaGetLastError();
        slot.state.store(kFree, std::memory_order_release);
        warn_once("block-stats-launch",
            std::string("cannot launch a per-block statistics kernel: ") + cudaGetErrorString(launched)
                + " (that sample is lost)");
        return FP8SCOPE_E_CUDA;
    }
    slot.state.store(kInFlight, std::memory_order_release);
    return FP8SCOPE_OK;
}

void write_block_slot(const SlotMeta& slot, const probes::BlockStatsResult& r, TraceDb& db)
{
    BlockStatsRow row;
    row.site_id = slot.site_id;
    row.step = slot.step;
    row.timestamp_ns = slot.timestamp_ns;
    row.block_rows = slot.block_rows;
    row.block_cols = slot.block_cols;
    row.blocks = int64_t(r.blocks);
    row.bad_scale_blocks = int64_t(r.bad_scale_blocks);
    row.saturating_blocks = int64_t(r.saturating_blocks);
    row.subnormal_blocks = int64_t(r.subnormal_blocks);
    row.numel = int64_t(r.numel);
    row.zeros = int64_t(r.zeros);
    row.nans = int64_t(r.nans);
    row.infs = int64_t(r.infs);
    row.subnormals = int64_t(r.subnormals);
    row.saturated = int64_t(r.saturated);
    row.amax = r.amax;
    row.block_amax_min = r.block_amax_min;
    row.block_amax_p50 = r.block_amax_p50;
    row.block_amax_p99 = r.block_amax_p99;
    if (!std::isnan(r.scale_inv_min))
        row.scale_inv_min = r.scale_inv_min;
    if (!std::isnan(r.scale_inv_max))
        row.scale_inv_max = r.scale_inv_max;
    int first = 0, last = probes::kHistogramBins - 1;
    while (first <= last && r.exponent_histogram[first] == 0)
        ++first;
    while (last >= first && r.exponent_histogram[last] == 0)
        --last;
    if (first <= last) {
        row.hist_first_exponent = first + probes::kHistogramMinExponent;
        row.exponent_histogram.assign(r.exponent_histogram + first, r.exponent_histogram + last + 1);
    }
    [[maybe_unused]] auto added = db.add_block_stats(row);
}

} // namespace

int enqueue_block_probe(
    const SiteKey& site, std::optional<int64_t> cap_unit, const probes::BlockStatsParams& params, void* stream)
{
    if (!stats_recording())
        return FP8SCOPE_E_NOT_RECORDING;
    if (probes::check_block_params(params) != nullptr) {
        warn_once("block-stats-layout",
            std::string("an operand scaled per row or block was not given per-block statistics: ")
                + probes::check_block_params(params));
        return FP8SCOPE_E_INVALID_ARGUMENT;
    }
    if (!stats_allowed())
        return FP8SCOPE_E_SAMPLED_OUT;
    const std::optional<int64_t> step = current_step();
    if (step && !step_sampled(*step))
        return FP8SCOPE_E_SAMPLED_OUT;
    if (!engine_ready())
        return FP8SCOPE_E_CUDA;
    Engine& e = engine();
    if (!e.block_results)
        return FP8SCOPE_E_CUDA;
    const int64_t site_id = site_of(e, site).first;
    const std::optional<int64_t> unit = step ? std::optional(cap_unit_of_step(*step)) : cap_unit;
    if (!unit || !usable_stream(e, stream) || !within_cap(e, *unit))
        return FP8SCOPE_E_SAMPLED_OUT;
    const auto index = claim_slot(e.block_slots, e.block_cursor);
    if (!index) {
        e.lost_full.fetch_add(1, std::memory_order_relaxed);
        return FP8SCOPE_E_SAMPLED_OUT;
    }
    return launch_block(e, *index, site_id, step, params, stream);
}

size_t stats::harvest_block_slots(TraceDb& db)
{
    Engine& e = engine();
    if (!e.block_results)
        return 0;
    size_t pending = 0;
    for (size_t i = 0; i < kBlockSlots; ++i) {
        SlotMeta& slot = e.block_slots[i];
        if (slot.state.load(std::memory_order_acquire) != kInFlight)
            continue;
        const uint64_t done = std::atomic_ref<uint64_t>(e.block_results[i].sequence).load(std::memory_order_acquire);
        if (done != slot.sequence) {
            ++pending;
            continue;
        }
        write_block_slot(slot, e.block_results[i], db);
        slot.state.store(kFree, std::memory_order_release);
    }
    return pending;
}

} // namespace fp8scope::collector
