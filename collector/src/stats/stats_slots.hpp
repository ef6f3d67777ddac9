// The statistics engine's slots (stats_engine.cpp launches into them, stats_harvest.cpp turns finished ones into
// rows): pinned result slots, the per-stream scratch, the sites and the sampling state. Private to the collector.
#pragma once

#include "stats/gemm_period.hpp"

#include "fp8scope/format/rows.hpp"
#include "fp8scope/probes/tensor_stats.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
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
    };
    static constexpr size_t kMaxStreams = 32;
    StreamScratch scratches[kMaxStreams];
    size_t stream_count = 0;
    std::mutex scratch_mutex;
    size_t scratch_bytes = 0;
    SlotMeta slots[kSlots];
    std::atomic<size_t> cursor { 0 };
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

    std::atomic<int64_t> explicit_step { -1 };
    std::atomic<int64_t> cap_unit { INT64_MIN }; // what probes_in_unit counts: a step, a period or a second
    std::atomic<int64_t> probes_in_unit { 0 };
};

// The one engine, made on first use and never destroyed (probes may arrive during exit).
Engine& engine();

// The session's clock (ns since the session start, never negative).
int64_t now_ns();

} // namespace fp8scope::collector::stats
