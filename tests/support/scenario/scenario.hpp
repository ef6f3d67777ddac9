// Scenario builder: writes small synthetic traces with values the test chooses, so that each analyzer rule can
// be tested on a trace with a known answer (Perfetto's "tiny trace, query, expected table" pattern).
//
// A Scenario is an in-memory list of rows. write_fp8scope() writes it through the real writer (TraceDb), so the
// file is exactly what the collector would produce; write_nsight() writes the same rows in Nsight Systems'
// export layout (the tables and columns of `nsys export --type sqlite`), so the nsys import path is tested.
//
//   Scenario s;
//   auto host = s.thread(1234, 1234);
//   s.launch(host, {.api_start_ns = 100, .api_end_ns = 105}, {.start_ns = 110, .end_ns = 150, .name = "gemm"});
//   s.sync(host, 160, 400, schema::SyncType::StreamSynchronize, /*stream*/ 7);
//   REQUIRE(s.write_fp8scope(path));
#pragma once

#include "fp8scope/common/error.hpp"
#include "fp8scope/format/rows.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fp8scope::testing {

struct HostThread {
    int64_t global_tid = 0;
};

struct KernelSpec {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    std::string name = "kernel"; // mangled or plain; plain names are stored as their own demangled form
    uint32_t device_id = 0;
    uint32_t stream_id = 7;
    std::array<int32_t, 3> grid { 1, 1, 1 };
    std::array<int32_t, 3> block { 128, 1, 1 };
    int64_t graph_id = 0;
};

struct ApiSpec {
    int64_t api_start_ns = 0;
    int64_t api_end_ns = 0;
    std::string name = "cudaLaunchKernel_v7000";
    schema::EventClass event_class = schema::EventClass::CudaRuntime;
};

struct CopySpec {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint64_t bytes = 0;
    schema::MemcpyKind kind = schema::MemcpyKind::HtoD;
    schema::MemoryKind src_kind = schema::MemoryKind::Pinned;
    schema::MemoryKind dst_kind = schema::MemoryKind::Device;
    uint32_t device_id = 0;
    uint32_t stream_id = 7;
};

struct MemsetSpec {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint64_t bytes = 0;
    uint32_t value = 0;
    uint32_t device_id = 0;
    uint32_t stream_id = 7;
    schema::MemoryKind mem_kind = schema::MemoryKind::Device;
};

class Scenario {
public:
    Scenario(); // one H100 (device 0), pid 4242, session start 2026-11-21T00:00:00Z, producer "scenario builder"

    SessionInfo& session() { return session_; }
    void add_gpu(GpuInfoRow gpu); // replaces the default GPU with the same id
    HostThread thread(int64_t pid, int64_t tid, std::string name = {});

    // An API call on `thread` and the GPU work it launched, joined by a fresh correlation id, which is returned.
    uint32_t launch(HostThread thread, const ApiSpec& api, const KernelSpec& kernel);
    // One more kernel of an earlier launch (a CUDA graph's nodes share the graph launch's correlation id).
    void more_of(uint32_t correlation_id, const KernelSpec& kernel)
    {
        kernels_.push_back(Kernel { kernel, correlation_id });
    }
    uint32_t memcpy(HostThread thread, const ApiSpec& api, const CopySpec& copy);
    uint32_t memset(HostThread thread, const ApiSpec& api, const MemsetSpec& set);
    // A kernel with no API call (correlation id 0, as CUPTI reports when it cannot correlate).
    void orphan_kernel(const KernelSpec& kernel);
    // A host-blocking sync: the API call (named after the sync type unless `api_name` is given) and its
    // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION row share [start, end).
    uint32_t sync(HostThread thread, int64_t start_ns, int64_t end_ns, schema::SyncType type,
        std::optional<uint32_t> stream_id = std::nullopt, uint32_t device_id = 0, std::string api_name = {});
    // Any other API call with no GPU work (cudaEventRecord, cudaMalloc, ...).
    uint32_t api_call(HostThread thread, const ApiSpec& api);
    void nvtx_range(HostThread thread, int64_t start_ns, int64_t end_ns, std::string text);
    void nvtx_mark(HostThread thread, int64_t at_ns, std::string text);
    void step_marker(HostThread thread, int64_t at_ns, int64_t step);
    // An optimizer step end (format 1.7): optimizer step `step` ended at `at_ns` (OPTIMIZER), or GradScaler skipped
    // it (`skipped`: OPTIMIZER_SKIPPED), as the Python package's optimizer hook writes them.
    void optimizer_step(HostThread thread, int64_t at_ns, int64_t step, bool skipped = false);
    void scalar(HostThread thread, int64_t at_ns, std::string name, double value, std::optional<int64_t> step = {});
    // Registers a tensor site and returns its id; stats rows then reference it.
    int64_t tensor_site(std::string name, schema::TensorRole role, schema::Dtype dtype, int64_t rows, int64_t cols,
        schema::StatsSource source = schema::StatsSource::ExplicitProbe, std::string nvtx_path = {});
    // The scale recipe of a site made by tensor_site() (format 1.5; none by default).
    void site_recipe(int64_t site_id, schema::ScaleRecipe recipe)
    {
        sites_.at(size_t(site_id - 1)).row.scale_recipe = recipe;
    }
    // Sets a site's ordinal, as the collector numbers a GEMM's A, B and D alike (tensor_site() counts same-shaped
    // sites).
    void site_ordinal(int64_t site_id, int32_t ordinal) { sites_.at(size_t(site_id - 1)).row.ordinal = ordinal; }
    void tensor_stats(TensorStatsRow row); // row.site_id must come from tensor_site()
    // A per-block statistics sample (format 1.6), written after every tensor_stats() row; the collector writes one
    // beside each tensor_stats() sample of an operand scaled per row or block, with the same site, step and time.
    void block_stats(BlockStatsRow row) { block_stats_.push_back(std::move(row)); }
    void overhead(const OverheadRow& row);
    void dropped(const DroppedRow& row);
    // Marks a correlation id as the collector's own CUDA call (FP8SCOPE_COLLECTOR_WORK).
    void collector_work(uint32_t correlation_id) { collector_work_.push_back(correlation_id); }
    void tensor_stats_skipped(int64_t total) { tensor_stats_skipped_ = total; } // meta tensor_stats_skipped
    // A windowed recording: meta capture_mode / capture_options (session()), and its windows, ids 1, 2, ... in call
    // order. `end_ns` unset: the window was still open when the trace ended.
    void capture_mode(std::string mode, std::string options = {});
    void capture_window(int64_t start_ns, std::optional<int64_t> end_ns,
        schema::CaptureTrigger trigger = schema::CaptureTrigger::Steps, std::optional<int64_t> first_step = {},
        std::optional<int64_t> last_step = {});

    // Writes the scenario. `finished = false` leaves the trace as a crashed collector would (meta finished=0).
    Expected<void> write_fp8scope(const std::string& path, bool finished = true) const;
    Expected<void> write_nsight(const std::string& path) const;

private:
    // Plain data with strings still as text; the writers intern them.
    struct Kernel {
        KernelSpec spec;
        uint32_t correlation_id;
    };
    struct Api {
        ApiSpec spec;
        int64_t global_tid;
        uint32_t correlation_id;
    };
    struct Copy {
        CopySpec spec;
        uint32_t correlation_id;
    };
    struct Set {
        MemsetSpec spec;
        uint32_t correlation_id;
    };
    struct Sync {
        int64_t start_ns, end_ns;
        schema::SyncType type;
        std::optional<uint32_t> stream_id;
        uint32_t device_id;
        uint32_t correlation_id;
    };
    struct Nvtx {
        int64_t start_ns;
        std::optional<int64_t> end_ns;
        std::string text;
        int64_t global_tid;
    };
    struct Thread {
        int64_t global_tid;
        std::string name;
    };
    struct Site {
        TensorSiteRow row;
        std::string name;
        std::string nvtx_path;
    };
    struct Scalar {
        int64_t at_ns;
        std::optional<int64_t> step;
        std::string name;
        double value;
        int64_t global_tid;
    };

    SessionInfo session_;
    std::vector<GpuInfoRow> gpus_;
    std::vector<Thread> threads_;
    std::vector<Kernel> kernels_;
    std::vector<Api> apis_;
    std::vector<Copy> copies_;
    std::vector<Set> sets_;
    std::vector<Sync> syncs_;
    std::vector<Nvtx> nvtx_;
    std::vector<StepMarkerRow> steps_;
    std::vector<Scalar> scalars_;
    std::vector<Site> sites_;
    std::vector<TensorStatsRow> stats_;
    std::vector<BlockStatsRow> block_stats_;
    std::vector<OverheadRow> overheads_;
    std::vector<DroppedRow> dropped_;
    std::vector<uint32_t> collector_work_;
    std::vector<CaptureWindowRow> capture_windows_;
    int64_t tensor_stats_skipped_ = 0;
    uint32_t next_correlation_id_ = 1;

    friend class ScenarioWriters;
};

} // namespace fp8scope::testing
