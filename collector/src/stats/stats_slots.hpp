// The statistics engine's slots (stats_engine.cpp launches into them, stats_harvest.cpp turns finished ones into
// rows): pinned result slots, the per-stream scratch, the sites and the sampling state. Private to the collector.
#pragma once

#include "stats/gemm_period.hpp"
#include "stats/stats_engine.hpp"

#include "fp8scope/format/rows.hpp"
#include "fp8scope/probes/block_stats.hpp"
#include "fp8scope/probes/tensor_stats.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace fp8scope::collector::stats {

// Slots of pinned memory the kernels write into. A slot is free, claimed (being launched) or in flight (the
// writer polls it). With every slot in flight a probe is dropped and counted, never waited for.
constexpr size_t kSlots = 2048; // 2,336 bytes each: 4.6 MiB of pinned memory
// A harvest is asked of the writer after this many launches (besides the flusher's every 500 ms): a job probing
// every GEMM of every step fills slots faster than twice a second (seen on the H200: 3,420 samples dropped).
constexpr int64_t kLaunchesPerHarvest = 128;
// Slots for per-block statistics (issue 31): one per sampled operand scaled per row or block.
constexpr size_t kBlockSlots = 256; // 2,328 bytes each
enum SlotState : uint8_t { kFree = 0, kClaimed = 1, kInFlight = 2 };

struct SlotMeta {
    std::atomic<uint8_t> state { kFree };
    bool is_scalar = false;
    uint64_t sequence = 0;
    int64_t site_id = 0; // or, for a scalar, its name's index in Engine::scalar_names
    std::optional<int64_t> step;
    int64_t timestamp_ns = 0;
    int64_t global_tid = 0;
    uint32_t device_id = 0, stream_id = 0;
    schema::Dtype dtype = schema::Dtype::Float32;
    schema::Fp8Format target = schema::Fp8Format::None;
    uint64_t numel = 0;
    bool has_scale = false;
    int64_t block_rows = 0, block_cols = 0; // block slots
};

struct Engine {
    std::once_flag init_once;
    bool ready = false;
    int device = -1;
    probes::StatsResult* results = nullptr; // kSlots, pinned and mapped
    // One kernel scratch per stream (launches on one stream never overlap, so they can share it), allocated and
    // zeroed on the stream's first probe; a fixed table, so a job with very many streams gets a warning.
    struct StreamScratch {
        void* stream = nullptr;
        void* scratch = nullptr;
        void* block_scratch = nullptr; // made on the stream's first per-block probe
    };
    static constexpr size_t kMaxStreams = 32;
    StreamScratch scratches[kMaxStreams];
    size_t stream_count = 0;
    std::mutex scratch_mutex;
    size_t scratch_bytes = 0;
    SlotMeta slots[kSlots];
    std::atomic<size_t> cursor { 0 };
    probes::BlockStatsResult* block_results = nullptr; // kBlockSlots, pinned and mapped
    SlotMeta block_slots[kBlockSlots];
    std::atomic<size_t> block_cursor { 0 };
    std::atomic<uint64_t> next_sequence { 1 };
    // Lost samples (all slots in flight) are dropped records; samples the cap left out are skipped, by design.
    std::atomic<int64_t> lost_full { 0 }, skipped_cap { 0 };
    std::atomic<int64_t> launches_since_harvest { 0 };
    int64_t lost_written = 0, skipped_written = 0; // writer thread

    // Sites, ordinals, scalar names and the GEMM period learner: touched by GEMM calls and probes, never by
    // launches.
    std::mutex sites_mutex;
    std::unordered_map<std::string, std::pair<int64_t, int64_t>> sites; // key -> (id, calls)
    std::unordered_map<std::string, std::pair<int64_t, int32_t>> ordinals; // key -> (step epoch, next ordinal)
    std::unordered_map<std::string, int64_t> scalar_ids;
    std::vector<std::string> scalar_names;
    std::optional<GemmSampler> gemm_sampler; // made by the first GEMM without steps (about 250 KB)

    std::atomic<int64_t> cap_unit { INT64_MIN }; // what probes_in_unit counts: a step, a period or a second
    std::atomic<int64_t> probes_in_unit { 0 };
};

// The one engine, held by the collector (Collector::stats_engine), made on first use and never destroyed (probes may
// arrive during exit).
Engine& engine();

// The session's clock (ns since the session start, never negative).
int64_t now_ns();
// The calling thread's global id, as the trace's rows carry it.
int64_t calling_thread_gtid();
// CUPTI's id of `stream` (0 when CUPTI is detached or cannot say).
uint32_t stream_id_of(void* stream);

// Shared by the per-tensor and the per-block launches (stats_engine.cpp).
bool engine_ready();
// The site's id and how often it was probed before, creating the site (and its row) on first sight.
std::pair<int64_t, int64_t> site_of(Engine& e, const SiteKey& k);
// Whether a probe may go on `stream`: the engine's device, and not a stream being captured into a CUDA graph.
bool usable_stream(const Engine& e, void* stream);
// FP8SCOPE_STATS_CAP: whether one more sample fits the unit's cap (counted as skipped when not).
bool within_cap(Engine& e, int64_t unit);
// A claimed slot's launch: its sequence number, the time, the calling thread, the device and the stream's id.
void stamp_slot(Engine& e, SlotMeta& slot, void* stream);
// Claims a free slot of `slots`, starting at the cursor's next position (each claim moves it on); nullopt when every
// slot is claimed or in flight.
std::optional<size_t> claim_slot(std::span<SlotMeta> slots, std::atomic<size_t>& cursor);
// The scratch of `stream` for the per-tensor kernel (`block` false) or the per-block one, made and zeroed in stream
// order on first use; null when none can be had.
void* scratch_for(Engine& e, void* stream, bool block);

// Writer thread (block_probe.cpp): writes the rows of every finished per-block slot; returns how many are in flight.
size_t harvest_block_slots(TraceDb& db);

} // namespace fp8scope::collector::stats
