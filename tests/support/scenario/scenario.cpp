// Scenario: the in-memory rows, and write_fp8scope(), which writes them through the real writer (TraceDb).
// write_nsight() is in scenario_nsight.cpp.
#include "scenario.hpp"

#include "fp8scope/format/trace_db.hpp"
#include "scenario_rows.hpp"

#include <algorithm>
#include <utility>

namespace fp8scope::testing {

namespace {

// 2026-11-21T00:00:00Z.
constexpr int64_t kSessionStartUtcNs = 1'795'219'200LL * 1'000'000'000LL;

std::string sync_api_name(schema::SyncType type)
{
    switch (type) {
    case schema::SyncType::EventSynchronize:
        return "cudaEventSynchronize_v3020";
    case schema::SyncType::StreamWaitEvent:
        return "cudaStreamWaitEvent_v3020";
    case schema::SyncType::StreamSynchronize:
        return "cudaStreamSynchronize_v3020";
    case schema::SyncType::ContextSynchronize:
    case schema::SyncType::Unknown:
        break;
    }
    return "cudaDeviceSynchronize_v3020";
}

template <class T> Expected<void> all_ok(const std::vector<T>& rows, auto&& add)
{
    for (const T& row : rows) {
        if (auto ok = add(row); !ok)
            return ok;
    }
    return {};
}

} // namespace

GpuInfoRow default_gpu(int32_t id)
{
    // An H100 SXM5 80 GB as nsys and cudaGetDeviceProperties describe it.
    GpuInfoRow gpu;
    gpu.id = id;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.bus_location = "0000:18:00.0";
    gpu.total_memory_bytes = 85'520'809'984;
    gpu.memory_bandwidth_bytes_per_s = 3'352'320'000'000;
    gpu.clock_rate_hz = 1'980'000'000;
    gpu.sm_count = 132;
    gpu.uuid = "GPU-5fd4a1b2-7c3e-4f10-9a8b-0c1d2e3f4a5b";
    gpu.chip_name = "GH100";
    gpu.compute_major = 9;
    gpu.compute_minor = 0;
    return gpu;
}

Scenario::Scenario()
{
    session_.utc_epoch_ns = kSessionStartUtcNs;
    session_.producer = "scenario builder";
    session_.command_line = "scenario";
    session_.host = "scenario-host";
    session_.pid = 4242;
    session_.cuda_runtime_version = 13000;
    session_.cuda_driver_version = 13000;
    session_.cupti_version = 130001;
    gpus_.push_back(default_gpu(0));
}

void Scenario::add_gpu(GpuInfoRow gpu)
{
    const auto same = std::ranges::find(gpus_, gpu.id, &GpuInfoRow::id);
    if (same != gpus_.end())
        *same = std::move(gpu);
    else
        gpus_.push_back(std::move(gpu));
}

HostThread Scenario::thread(int64_t pid, int64_t tid, std::string name)
{
    const HostThread host { schema::global_tid(pid, tid) };
    if (!name.empty())
        threads_.push_back(Thread { host.global_tid, std::move(name) });
    return host;
}

uint32_t Scenario::launch(HostThread thread, const ApiSpec& api, const KernelSpec& kernel)
{
    const uint32_t correlation_id = next_correlation_id_++;
    apis_.push_back(Api { api, thread.global_tid, correlation_id });
    kernels_.push_back(Kernel { kernel, correlation_id });
    return correlation_id;
}

uint32_t Scenario::memcpy(HostThread thread, const ApiSpec& api, const CopySpec& copy)
{
    const uint32_t correlation_id = next_correlation_id_++;
    apis_.push_back(Api { api, thread.global_tid, correlation_id });
    copies_.push_back(Copy { copy, correlation_id });
    return correlation_id;
}

uint32_t Scenario::memset(HostThread thread, const ApiSpec& api, const MemsetSpec& set)
{
    const uint32_t correlation_id = next_correlation_id_++;
    apis_.push_back(Api { api, thread.global_tid, correlation_id });
    sets_.push_back(Set { set, correlation_id });
    return correlation_id;
}

void Scenario::orphan_kernel(const KernelSpec& kernel)
{
    kernels_.push_back(Kernel { kernel, 0 });
}

uint32_t Scenario::sync(HostThread thread, int64_t start_ns, int64_t end_ns, schema::SyncType type,
    std::optional<uint32_t> stream_id, uint32_t device_id, std::string api_name)
{
    const uint32_t correlation_id = next_correlation_id_++;
    ApiSpec api { .api_start_ns = start_ns,
        .api_end_ns = end_ns,
        .name = api_name.empty() ? sync_api_name(type) : std::move(api_name),
        .event_class = schema::EventClass::CudaRuntime };
    apis_.push_back(Api { std::move(api), thread.global_tid, correlation_id });
    syncs_.push_back(Sync { start_ns, end_ns, type, stream_id, device_id, correlation_id });
    return correlation_id;
}

uint32_t Scenario::api_call(HostThread thread, const ApiSpec& api)
{
    const uint32_t correlation_id = next_correlation_id_++;
    apis_.push_back(Api { api, thread.global_tid, correlation_id });
    return correlation_id;
}

void Scenario::nvtx_range(HostThread thread, int64_t start_ns, int64_t end_ns, std::string text)
{
    nvtx_.push_back(Nvtx { start_ns, end_ns, std::move(text), thread.global_tid });
}

void Scenario::nvtx_mark(HostThread thread, int64_t at_ns, std::string text)
{
    nvtx_.push_back(Nvtx { at_ns, std::nullopt, std::move(text), thread.global_tid });
}

void Scenario::capture_mode(std::string mode, std::string options)
{
    session_.capture_mode = std::move(mode);
    session_.capture_options = std::move(options);
}

void Scenario::capture_window(int64_t start_ns, std::optional<int64_t> end_ns, schema::CaptureTrigger trigger,
    std::optional<int64_t> first_step, std::optional<int64_t> last_step)
{
    capture_windows_.push_back(
        CaptureWindowRow { int64_t(capture_windows_.size()) + 1, start_ns, end_ns, first_step, last_step, trigger });
}

void Scenario::step_marker(HostThread thread, int64_t at_ns, int64_t step)
{
    steps_.push_back(StepMarkerRow { at_ns, step, thread.global_tid });
}

void Scenario::optimizer_step(HostThread thread, int64_t at_ns, int64_t step, bool skipped)
{
    steps_.push_back(StepMarkerRow { at_ns, step, thread.global_tid,
        skipped ? schema::StepMarkerSource::OptimizerSkipped : schema::StepMarkerSource::Optimizer });
}

void Scenario::scalar(HostThread thread, int64_t at_ns, std::string name, double value, std::optional<int64_t> step)
{
    scalars_.push_back(Scalar { at_ns, step, std::move(name), value, thread.global_tid });
}

int64_t Scenario::tensor_site(std::string name, schema::TensorRole role, schema::Dtype dtype, int64_t rows,
    int64_t cols, schema::StatsSource source, std::string nvtx_path)
{
    Site site;
    site.row.id = static_cast<int64_t>(sites_.size()) + 1;
    // The ordinal counts earlier sites of the same shape (docs/collector.md "Tensor statistics": the site of a GEMM is
    // its NVTX path plus its rank among same-shaped GEMMs of the step).
    site.row.ordinal = static_cast<int32_t>(std::ranges::count_if(sites_, [&](const Site& other) {
        return other.row.rows == rows && other.row.cols == cols && other.nvtx_path == nvtx_path;
    }));
    site.row.rows = rows;
    site.row.cols = cols;
    site.row.dtype = dtype;
    site.row.role = role;
    site.row.source = source;
    site.name = std::move(name);
    site.nvtx_path = std::move(nvtx_path);
    sites_.push_back(std::move(site));
    return sites_.back().row.id;
}

void Scenario::tensor_stats(TensorStatsRow row)
{
    stats_.push_back(std::move(row));
}
void Scenario::overhead(const OverheadRow& row)
{
    overheads_.push_back(row);
}
void Scenario::dropped(const DroppedRow& row)
{
    dropped_.push_back(row);
}

Expected<void> Scenario::write_fp8scope(const std::string& path, bool finished) const
{
    auto created = TraceDb::create(path, session_);
    if (!created)
        return std::unexpected(created.error());
    TraceDb& db = **created;

    auto ok = all_ok(gpus_, [&](const GpuInfoRow& gpu) { return db.add_gpu(gpu); });
    if (ok)
        ok = all_ok(threads_, [&](const Thread& t) {
            return db.add_thread_name(ThreadNameRow { db.intern(t.name), std::nullopt, t.global_tid });
        });
    if (ok)
        ok = all_ok(kernels_, [&](const Kernel& k) {
            return db.add_kernel(rows::kernel_row(k.spec, k.correlation_id, db.intern(k.spec.name)));
        });
    if (ok)
        ok = all_ok(apis_, [&](const Api& a) {
            return db.add_api(rows::api_row(a.spec, a.global_tid, a.correlation_id, db.intern(a.spec.name)));
        });
    if (ok)
        ok = all_ok(syncs_, [&](const Sync& s) {
            return db.add_sync(
                rows::sync_row(s.start_ns, s.end_ns, s.type, s.stream_id, s.device_id, s.correlation_id));
        });
    if (ok)
        ok = all_ok(copies_, [&](const Copy& c) { return db.add_memcpy(rows::memcpy_row(c.spec, c.correlation_id)); });
    if (ok)
        ok = all_ok(sets_, [&](const Set& s) { return db.add_memset(rows::memset_row(s.spec, s.correlation_id)); });
    if (ok)
        ok = all_ok(nvtx_, [&](const Nvtx& n) {
            return db.add_nvtx(rows::nvtx_row(n.start_ns, n.end_ns, db.intern(n.text), n.global_tid));
        });
    if (ok)
        ok = all_ok(sites_, [&](const Site& s) {
            TensorSiteRow row = s.row;
            row.name = db.intern(s.name);
            if (!s.nvtx_path.empty())
                row.nvtx_path = db.intern(s.nvtx_path);
            return db.add_tensor_site(row);
        });
    if (ok)
        ok = all_ok(stats_, [&](const TensorStatsRow& row) { return db.add_tensor_stats(row); });
    if (ok)
        ok = all_ok(block_stats_, [&](const BlockStatsRow& row) { return db.add_block_stats(row); });
    if (ok)
        ok = all_ok(scalars_, [&](const Scalar& s) {
            return db.add_scalar(ScalarRow { s.at_ns, s.step, db.intern(s.name), s.value, s.global_tid });
        });
    if (ok)
        ok = all_ok(steps_, [&](const StepMarkerRow& row) { return db.add_step_marker(row); });
    if (ok)
        ok = all_ok(capture_windows_, [&](const CaptureWindowRow& row) { return db.set_capture_window(row); });
    if (ok)
        ok = all_ok(overheads_, [&](const OverheadRow& row) { return db.add_overhead(row); });
    if (ok)
        ok = all_ok(dropped_, [&](const DroppedRow& row) { return db.add_dropped(row); });
    if (ok)
        ok = all_ok(collector_work_, [&](uint32_t id) { return db.add_collector_work(id); });
    if (ok && tensor_stats_skipped_ > 0)
        ok = db.set_tensor_stats_skipped(tensor_stats_skipped_);
    if (!ok)
        return ok;

    if (!finished)
        return db.commit(); // the destructor closes without finishing: meta finished stays 0

    // The session ends with the last thing recorded.
    int64_t end_ns = 0;
    const auto extend = [&](int64_t t) { end_ns = std::max(end_ns, t); };
    for (const Kernel& k : kernels_)
        extend(k.spec.end_ns);
    for (const Api& a : apis_)
        extend(a.spec.api_end_ns);
    for (const Sync& s : syncs_)
        extend(s.end_ns);
    for (const Copy& c : copies_)
        extend(c.spec.end_ns);
    for (const Set& s : sets_)
        extend(s.spec.end_ns);
    for (const Nvtx& n : nvtx_)
        extend(n.end_ns.value_or(n.start_ns));
    return db.finish(FinishInfo { .reason = "exit", .session_end_ns = end_ns });
}

} // namespace fp8scope::testing
