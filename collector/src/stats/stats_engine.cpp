#include "stats/stats_engine.hpp"
#include "stats/stats_slots.hpp"

#include "session/own_work.hpp"
#include "session/warn.hpp"

#include "fp8scope.h"
#include "fp8scope/format/trace_db.hpp"

#include <cuda_runtime_api.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace fp8scope::collector {

namespace {

size_t cap_setting();
bool init_engine(stats::Engine& e);
std::string site_key(const SiteKey& k);

} // namespace

namespace stats {

bool engine_ready()
{
    Engine& e = engine();
    std::call_once(e.init_once, [&e] {
        const OwnWorkScope own_work;
        e.ready = init_engine(e);
        if (!e.ready)
            warn("cannot allocate memory for tensor statistics (no tensor statistics in this trace)");
    });
    return e.ready;
}

namespace {

void* new_scratch(size_t bytes, void* stream)
{
    void* scratch = nullptr;
    if (cudaMalloc(&scratch, bytes) != cudaSuccess) {
        cudaGetLastError();
        warn_once("tensor-stats-memory", "cannot allocate device memory for tensor statistics (samples are lost)");
        return nullptr;
    }
    if (cudaMemsetAsync(scratch, 0, bytes, static_cast<cudaStream_t>(stream)) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(scratch);
        return nullptr;
    }
    return scratch;
}

} // namespace

void* scratch_for(Engine& e, void* stream, bool block)
{
    std::lock_guard lock(e.scratch_mutex);
    for (size_t i = 0; i < e.stream_count; ++i) {
        Engine::StreamScratch& s = e.scratches[i];
        if (s.stream != stream)
            continue;
        if (block && !s.block_scratch)
            s.block_scratch = new_scratch(probes::block_stats_scratch_bytes(), stream);
        return block ? s.block_scratch : s.scratch;
    }
    if (e.stream_count == Engine::kMaxStreams) {
        warn_once("tensor-stats-streams",
            "tensor statistics on more than " + std::to_string(Engine::kMaxStreams)
                + " streams: the others are skipped");
        return nullptr;
    }
    void* scratch = new_scratch(e.scratch_bytes, stream);
    if (!scratch)
        return nullptr;
    Engine::StreamScratch& s = e.scratches[e.stream_count++];
    s = { stream, scratch, block ? new_scratch(probes::block_stats_scratch_bytes(), stream) : nullptr };
    return block ? s.block_scratch : s.scratch;
}

bool usable_stream(const Engine& e, void* stream)
{
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture) != cudaSuccess
        || capture != cudaStreamCaptureStatusNone) {
        cudaGetLastError();
        warn_once("tensor-stats-capture", "GEMMs captured into a CUDA graph get no tensor statistics");
        return false;
    }
    int device = -1;
    if (cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    if (device != e.device) {
        warn_once("tensor-stats-device",
            "tensor statistics are taken on device " + std::to_string(e.device) + " only (a tensor on device "
                + std::to_string(device) + " was skipped)");
        return false;
    }
    return true;
}

std::pair<int64_t, int64_t> site_of(Engine& e, const SiteKey& k)
{
    std::string key = site_key(k);
    std::lock_guard lock(e.sites_mutex);
    auto [it, inserted] = e.sites.try_emplace(std::move(key), int64_t(e.sites.size() + 1), 0);
    const auto result = it->second;
    it->second.second += 1;
    if (inserted) {
        post_stats_rows(
            [site = k, name = std::string(k.name), path = std::string(k.nvtx_path), id = result.first](TraceDb& db) {
                TensorSiteRow row;
                row.id = id;
                row.name = db.intern(name);
                if (!path.empty())
                    row.nvtx_path = db.intern(path);
                row.ordinal = site.ordinal;
                row.rows = site.rows;
                row.cols = site.cols;
                row.batch = site.batch;
                row.dtype = site.dtype;
                row.role = site.role;
                row.source = site.source;
                row.scale_recipe = site.recipe;
                [[maybe_unused]] auto added = db.add_tensor_site(row);
            });
    }
    return result;
}

// At most `cap` samples per unit (a step; without steps a locked GEMM period, else a second). The rest are skipped
// and counted as such: not lost records.
bool within_cap(Engine& e, int64_t unit)
{
    int64_t seen = e.cap_unit.load(std::memory_order_relaxed);
    if (seen != unit && e.cap_unit.compare_exchange_strong(seen, unit))
        e.probes_in_unit.store(0, std::memory_order_relaxed);
    if (e.probes_in_unit.fetch_add(1, std::memory_order_relaxed) < int64_t(cap_setting()))
        return true;
    e.skipped_cap.fetch_add(1, std::memory_order_relaxed);
    return false;
}

void stamp_slot(Engine& e, SlotMeta& slot, void* stream)
{
    slot.sequence = e.next_sequence.fetch_add(1, std::memory_order_relaxed);
    slot.timestamp_ns = now_ns();
    slot.global_tid = calling_thread_gtid();
    slot.device_id = static_cast<uint32_t>(e.device);
    slot.stream_id = stream_id_of(stream);
}

std::optional<size_t> claim_slot(std::span<SlotMeta> slots, std::atomic<size_t>& cursor)
{
    const size_t start = cursor.fetch_add(1, std::memory_order_relaxed);
    for (size_t i = 0; i < slots.size(); ++i) {
        SlotMeta& slot = slots[(start + i) % slots.size()];
        uint8_t expected = kFree;
        if (slot.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire))
            return (start + i) % slots.size();
    }
    return std::nullopt;
}

} // namespace stats

namespace {

using namespace stats;

// FP8SCOPE_STATS_EVERY and FP8SCOPE_STATS_CAP, read once on first use, with no CUDA call: sampling decisions are
// made before the engine's CUDA set-up (an unsampled GEMM never reaches it).
struct Settings {
    size_t every = 10, cap = 256;
};

size_t env_count(const char* name, size_t fallback)
{
    const char* value = std::getenv(name);
    if (!value || !*value)
        return fallback;
    char* end = nullptr;
    const unsigned long long parsed = std::strtoull(value, &end, 10);
    if (end == value || *end || parsed == 0 || parsed > 1'000'000) {
        warn(std::string("ignoring ") + name + "=" + value + " (expected 1..1000000)");
        return fallback;
    }
    return static_cast<size_t>(parsed);
}

const Settings& settings()
{
    static const Settings s { env_count("FP8SCOPE_STATS_EVERY", 10), env_count("FP8SCOPE_STATS_CAP", 256) };
    return s;
}

size_t cap_setting()
{
    return settings().cap;
}

int64_t steady_now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

bool init_engine(Engine& e)
{
    if (cudaGetDevice(&e.device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    e.scratch_bytes = probes::stats_scratch_bytes();
    void* results = nullptr;
    // A one-time allocation; not a synchronizing call in the trace's sense (no SYNCHRONIZATION record).
    if (cudaHostAlloc(&results, kSlots * sizeof(probes::StatsResult), cudaHostAllocMapped | cudaHostAllocPortable)
        != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    std::memset(results, 0, kSlots * sizeof(probes::StatsResult));
    e.results = static_cast<probes::StatsResult*>(results);
    void* block_results = nullptr;
    if (cudaHostAlloc(
            &block_results, kBlockSlots * sizeof(probes::BlockStatsResult), cudaHostAllocMapped | cudaHostAllocPortable)
        != cudaSuccess) {
        cudaGetLastError();
        return true; // per-tensor statistics still work; per-block probes find no slot
    }
    std::memset(block_results, 0, kBlockSlots * sizeof(probes::BlockStatsResult));
    e.block_results = static_cast<probes::BlockStatsResult*>(block_results);
    return true;
}

std::string site_key(const SiteKey& k)
{
    std::string key;
    key.reserve(k.name.size() + k.nvtx_path.size() + 64);
    key.append(k.name).push_back('\x1f');
    key.append(k.nvtx_path).push_back('\x1f');
    key += std::to_string(k.ordinal) + ',' + std::to_string(k.rows) + ',' + std::to_string(k.cols) + ','
        + std::to_string(k.batch) + ',' + std::to_string(int(k.dtype)) + ',' + std::to_string(int(k.role)) + ','
        + std::to_string(int(k.source)) + ',' + (k.recipe ? std::to_string(int(*k.recipe)) : std::string("-"));
    return key;
}

// Launches the statistics kernel into a claimed slot. Fills `slot` first: the writer may see the slot the
// moment it is marked in flight.
int launch_into(Engine& e, size_t index, const probes::StatsParams& params, void* stream)
{
    SlotMeta& slot = e.slots[index];
    auto cuda_stream = static_cast<cudaStream_t>(stream);
    void* scratch = scratch_for(e, stream, false);
    if (!scratch) {
        slot.state.store(kFree, std::memory_order_release);
        return FP8SCOPE_E_CUDA;
    }
    stamp_slot(e, slot, stream);
    slot.dtype = params.dtype;
    slot.target = params.target;
    slot.numel = params.numel;
    slot.has_scale = params.scale_kind != probes::ScaleKind::None;
    const cudaError_t launched
        = probes::launch_tensor_stats(params, scratch, &e.results[index], slot.sequence, cuda_stream);
    if (launched != cudaSuccess) {
        cudaGetLastError();
        slot.state.store(kFree, std::memory_order_release);
        warn_once("tensor-stats-launch",
            std::string("cannot launch a tensor statistics kernel: ") + cudaGetErrorString(launched)
                + " (that sample is lost)");
        return FP8SCOPE_E_CUDA;
    }
    slot.state.store(kInFlight, std::memory_order_release);
    if (e.launches_since_harvest.fetch_add(1, std::memory_order_relaxed) + 1 >= kLaunchesPerHarvest) {
        e.launches_since_harvest.store(0, std::memory_order_relaxed);
        post_stats_rows([](TraceDb& db) { harvest_tensor_stats(db, false); });
    }
    return FP8SCOPE_OK;
}

// An explicit probe made with no step known, at its site's `site_calls`-th call: its cap unit when sampled.
std::optional<int64_t> probe_unit_without_steps(Engine& e, int64_t site_calls)
{
    const int64_t now_ns = steady_now_ns();
    std::lock_guard lock(e.sites_mutex);
    if (e.gemm_sampler)
        return e.gemm_sampler->probe_unit(site_calls, now_ns);
    return site_calls % int64_t(settings().every) == 0 ? std::optional(cap_unit_of_second(now_ns)) : std::nullopt;
}

// Claims a free slot and launches into it; with every slot in flight the sample is dropped and counted.
int claim_and_launch(Engine& e, bool is_scalar, int64_t site_id, std::optional<int64_t> step,
    const probes::StatsParams& params, void* stream)
{
    const auto index = claim_slot(e.slots, e.cursor);
    if (!index) {
        e.lost_full.fetch_add(1, std::memory_order_relaxed);
        return FP8SCOPE_E_SAMPLED_OUT;
    }
    SlotMeta& slot = e.slots[*index];
    slot.is_scalar = is_scalar;
    slot.site_id = site_id;
    slot.step = step;
    const OwnWorkScope own_work; // the scratch's allocation and memset, and the kernel
    return launch_into(e, *index, params, stream);
}

} // namespace

bool step_sampled(int64_t step)
{
    return step % int64_t(settings().every) == 0;
}

GemmDecision decide_gemm_without_steps(uint64_t key)
{
    Engine& e = engine();
    const int64_t now_ns = steady_now_ns();
    std::lock_guard lock(e.sites_mutex);
    if (!e.gemm_sampler)
        e.gemm_sampler.emplace(int64_t(settings().every));
    return e.gemm_sampler->on_gemm(key, now_ns);
}

int32_t next_gemm_ordinal(std::string_view nvtx_path, int64_t m, int64_t n, int64_t k, int32_t dtypes)
{
    Engine& e = engine();
    std::string key(nvtx_path);
    key += '\x1f' + std::to_string(m) + ',' + std::to_string(n) + ',' + std::to_string(k) + ','
        + std::to_string(dtypes);
    const int64_t epoch = current_step().value_or(-1);
    std::lock_guard lock(e.sites_mutex);
    auto& [seen_epoch, next] = e.ordinals[key];
    if (epoch < 0) // steps ended (not expected): one site per path and shape, never an endless series
        return 0;
    if (seen_epoch != epoch) {
        seen_epoch = epoch;
        next = 0;
    }
    return next++;
}

bool stats_wanted()
{
    if (!stats_recording() || !stats_allowed())
        return false;
    const std::optional<int64_t> step = current_step();
    return !step || step_sampled(*step);
}

bool stats_wanted_in_step(bool optimizer)
{
    return !stats_recording() || !steps_begin_at(optimizer) || stats_wanted();
}

int enqueue_probe(const ProbeRequest& request)
{
    if (!stats_recording())
        return FP8SCOPE_E_NOT_RECORDING;
    if (!request.params.data || request.params.numel == 0)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    if (!stats_allowed()) // outside capture windows (unless --stats-outside-windows)
        return FP8SCOPE_E_SAMPLED_OUT;
    // With steps known, an unsampled step returns here, before any CUDA call or site look-up. (A GEMM with no step
    // known comes here only when its hook sampled it.)
    const std::optional<int64_t> step = current_step();
    if (step && !step_sampled(*step))
        return FP8SCOPE_E_SAMPLED_OUT;
    if (!engine_ready())
        return FP8SCOPE_E_CUDA;
    Engine& e = engine();
    const auto [site_id, calls] = site_of(e, request.site);
    const std::optional<int64_t> unit = step ? std::optional(cap_unit_of_step(*step))
        : request.cap_unit                   ? request.cap_unit
                                             : probe_unit_without_steps(e, calls);
    if (!unit)
        return FP8SCOPE_E_SAMPLED_OUT;
    if (!usable_stream(e, request.stream))
        return FP8SCOPE_E_SAMPLED_OUT;
    if (!within_cap(e, *unit))
        return FP8SCOPE_E_SAMPLED_OUT;
    return claim_and_launch(e, false, site_id, step, request.params, request.stream);
}

int log_scalar(std::string_view name, double value)
{
    if (!stats_recording())
        return FP8SCOPE_E_NOT_RECORDING;
    const int64_t at = now_ns();
    const int64_t gtid = calling_thread_gtid();
    const std::optional<int64_t> step = current_step();
    const bool posted = post_stats_rows([name = std::string(name), value, at, gtid, step](TraceDb& db) {
        [[maybe_unused]] auto added = db.add_scalar({ at, step, db.intern(name), value, gtid });
    });
    return posted ? FP8SCOPE_OK : FP8SCOPE_E_SAMPLED_OUT;
}

int log_scalar_device(std::string_view name, const void* value_device, schema::Dtype dtype, void* stream)
{
    if (!stats_recording())
        return FP8SCOPE_E_NOT_RECORDING;
    if (!value_device
        || (dtype != schema::Dtype::Float32 && dtype != schema::Dtype::BFloat16 && dtype != schema::Dtype::Float16))
        return FP8SCOPE_E_INVALID_ARGUMENT;
    if (!stats_allowed()) // a statistics kernel: it follows the capture windows like the probes
        return FP8SCOPE_E_SAMPLED_OUT;
    if (!engine_ready())
        return FP8SCOPE_E_CUDA;
    Engine& e = engine();
    if (!usable_stream(e, stream))
        return FP8SCOPE_E_SAMPLED_OUT;
    int64_t name_id = 0;
    {
        std::lock_guard lock(e.sites_mutex);
        auto [it, inserted] = e.scalar_ids.try_emplace(std::string(name), int64_t(e.scalar_names.size()));
        if (inserted)
            e.scalar_names.emplace_back(name);
        name_id = it->second;
    }
    // A one-element statistics kernel: its sum is the value (NaN and Inf are told by their counts).
    probes::StatsParams params {};
    params.data = value_device;
    params.numel = 1;
    params.dtype = dtype;
    params.target = schema::Fp8Format::None;
    params.scale_kind = probes::ScaleKind::None;
    return claim_and_launch(e, true, name_id, current_step(), params, stream);
}

} // namespace fp8scope::collector
