#include "loader_test_support.hpp"

#include "scenario_rows.hpp"

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

namespace fp8scope::testing {

using namespace fp8scope::analyzer;

std::string scratch_dir(const std::string& test_name)
{
    const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "analyzer" / test_name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir.string();
}

void write_file(const std::string& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
}

void exec_sql(const std::string& path, const std::string& sql)
{
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
    char* message = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
    const std::string error = message ? message : "";
    sqlite3_free(message);
    sqlite3_close(db);
    INFO(sql << ": " << error);
    REQUIRE(rc == SQLITE_OK);
}

GpuInfoRow full_scenario_second_gpu()
{
    GpuInfoRow gpu = default_gpu(1);
    gpu.bus_location = "0000:2a:00.0";
    gpu.uuid = "GPU-00000000-0000-0000-0000-000000000001";
    return gpu;
}

TensorStatsRow full_scenario_stats(int which)
{
    TensorStatsRow row;
    if (which == 0) {
        // Every optional field set, a histogram spanning the full uint64 range.
        row.site_id = 1;
        row.step = 1;
        row.timestamp_ns = 1400;
        row.device_id = 0;
        row.stream_id = 7;
        row.correlation_id = 1;
        row.dtype = schema::Dtype::BFloat16;
        row.target_format = schema::Fp8Format::E4M3;
        row.numel = 4096 * 1024;
        row.scale = 2.0;
        row.scale_inv = 0.5;
        row.amax = 3.25;
        row.min_nonzero_abs = 1e-6;
        row.zeros = 10;
        row.nans = 1;
        row.infs = 2;
        row.overflows = 3;
        row.underflows = 4;
        row.subnormals = 5;
        row.saturated = 6;
        row.sum = 12.5;
        row.sum_squares = 100.25;
        row.sum_cubes = -3.5;
        row.sum_fourth = 1e9;
        row.hist_first_exponent = -20;
        row.exponent_histogram = { 1, 2, 3, uint64_t { 1 } << 40, UINT64_MAX };
    } else {
        // Every optional field unset, an empty histogram; earlier than the first, so the loader sorts it first.
        row.site_id = 2;
        row.timestamp_ns = 1300;
        row.device_id = 1;
        row.stream_id = 13;
        row.dtype = schema::Dtype::Float32;
        row.target_format = schema::Fp8Format::None;
        row.numel = 8 * 4096;
        row.hist_first_exponent = 0;
    }
    return row;
}

Scenario full_scenario()
{
    using schema::MemcpyKind, schema::MemoryKind, schema::SyncType;
    Scenario s;
    s.add_gpu(full_scenario_second_gpu());

    const HostThread main = s.thread(4242, 4242, "python");
    const HostThread loader = s.thread(4242, 4250, "pt_data_worker");

    // Correlation ids are handed out in call order: 1, 2, 3, ...
    s.launch(main, { .api_start_ns = 1000, .api_end_ns = 1010 },
        { .start_ns = 1100, .end_ns = 1500, .name = "gemm", .grid = { 132, 1, 1 } }); // 1
    s.launch(main,
        { .api_start_ns = 1020,
            .api_end_ns = 1030,
            .name = "cuLaunchKernel",
            .event_class = schema::EventClass::CudaDriver },
        { .start_ns = 1500, .end_ns = 1600, .name = "_Z9vectorAddPKfS0_Pfi", .device_id = 1, .stream_id = 13 }); // 2
    s.launch(main, { .api_start_ns = 900, .api_end_ns = 905, .name = "cudaGraphLaunch_v10000" },
        { .start_ns = 950, .end_ns = 990, .name = "graph_node_kernel", .graph_id = 77 }); // 3
    s.orphan_kernel({ .start_ns = 2000, .end_ns = 2100, .name = "orphan" });
    s.api_call(loader, { .api_start_ns = 1200, .api_end_ns = 1250, .name = "cudaEventRecord_v3020" }); // 4
    s.sync(main, 1600, 1700, SyncType::StreamSynchronize, 7); // 5
    s.sync(main, 1700, 1800, SyncType::ContextSynchronize); // 6
    s.sync(main, 1800, 1850, SyncType::EventSynchronize); // 7
    s.sync(main, 1850, 1860, SyncType::StreamWaitEvent, 13, 1); // 8
    s.sync(main, 1860, 1870, SyncType::Unknown); // 9
    s.memcpy(main, { .api_start_ns = 2200, .api_end_ns = 2300, .name = "cudaMemcpyAsync_v3020" },
        { .start_ns = 2210,
            .end_ns = 2290,
            .bytes = 1 << 20,
            .kind = MemcpyKind::HtoD,
            .src_kind = MemoryKind::Pinned,
            .dst_kind = MemoryKind::Device }); // 10
    s.memcpy(main, { .api_start_ns = 2400, .api_end_ns = 2600, .name = "cudaMemcpy_v3020" },
        { .start_ns = 2450,
            .end_ns = 2550,
            .bytes = 4096,
            .kind = MemcpyKind::DtoH,
            .src_kind = MemoryKind::Device,
            .dst_kind = MemoryKind::Pageable }); // 11
    s.memcpy(main, { .api_start_ns = 2650, .api_end_ns = 2660, .name = "cudaMemcpyAsync_v3020" },
        { .start_ns = 2700,
            .end_ns = 2750,
            .bytes = 123'456'789'012,
            .kind = MemcpyKind::DtoD,
            .src_kind = MemoryKind::Device,
            .dst_kind = MemoryKind::Device,
            .device_id = 1,
            .stream_id = 13 }); // 12
    s.memset(main, { .api_start_ns = 2800, .api_end_ns = 2810, .name = "cudaMemsetAsync_v3020" },
        { .start_ns = 2805, .end_ns = 2809, .bytes = 256, .value = 0xAB }); // 13
    s.nvtx_range(main, 500, 3000, "step 1");
    s.nvtx_mark(main, 1234, "checkpoint");
    s.nvtx_range(loader, 400, 700, "load batch");

    s.step_marker(main, 3000, 2);
    s.step_marker(main, 500, 1);
    s.scalar(main, 2990, "loss", 2.5, 1);
    s.scalar(main, 2995, "lr", 1e-4);
    const int64_t weight = s.tensor_site("layer0.fc1.weight", schema::TensorRole::Weight, schema::Dtype::BFloat16, 4096,
        1024, schema::StatsSource::GemmInterception, "step 1/layer0");
    const int64_t input = s.tensor_site("layer0.fc1.input", schema::TensorRole::Input, schema::Dtype::Float32, 8, 4096);
    REQUIRE(weight == 1);
    REQUIRE(input == 2);
    s.site_recipe(weight, schema::ScaleRecipe::Rowwise);
    s.tensor_stats(full_scenario_stats(0));
    s.tensor_stats(full_scenario_stats(1));
    s.overhead({ .start_ns = 100,
        .end_ns = 150,
        .kind = schema::OverheadKind::CuptiBufferFlush,
        .global_tid = main.global_tid,
        .device_id = 0 });
    s.overhead({ .start_ns = 50,
        .end_ns = 60,
        .kind = schema::OverheadKind::WriterCommit,
        .global_tid = std::nullopt,
        .device_id = std::nullopt });
    s.dropped({ .timestamp_ns = 2500, .source = schema::DropSource::CuptiNoBuffer, .count = 7, .device_id = 0 });
    s.dropped(
        { .timestamp_ns = 2600, .source = schema::DropSource::WriterQueueFull, .count = 5, .device_id = std::nullopt });
    return s;
}

namespace {

struct Kernel {
    int64_t start_ns, end_ns;
    uint32_t device, stream, correlation;
    std::string name, short_name;
    int64_t graph_id;
};

struct Api {
    int64_t start_ns, end_ns, global_tid;
    uint32_t correlation;
    std::string name;
    bool driver;
};

} // namespace

void check_common_content(const TraceModel& model)
{
    const int64_t main_tid = schema::global_tid(4242, 4242);
    const int64_t loader_tid = schema::global_tid(4242, 4250);

    // Kernels, sorted by start (the graph kernel was added third but starts first).
    const Kernel kernels[] = {
        { 950, 990, 0, 7, 3, "graph_node_kernel", "graph_node_kernel", 77 },
        { 1100, 1500, 0, 7, 1, "gemm", "gemm", 0 },
        { 1500, 1600, 1, 13, 2, "vectorAdd(float const*, float const*, float*, int)", "vectorAdd", 0 },
        { 2000, 2100, 0, 7, 0, "orphan", "orphan", 0 },
    };
    const KernelTable& k = model.kernels;
    REQUIRE(k.size() == std::size(kernels));
    for (size_t i = 0; i < k.size(); ++i) {
        INFO("kernel " << i);
        CHECK(k.start_ns[i] == kernels[i].start_ns);
        CHECK(k.end_ns[i] == kernels[i].end_ns);
        CHECK(k.device_id[i] == kernels[i].device);
        CHECK(k.stream_id[i] == kernels[i].stream);
        CHECK(k.correlation_id[i] == kernels[i].correlation);
        CHECK(model.strings[k.name[i]] == kernels[i].name);
        CHECK(model.strings[k.short_name[i]] == kernels[i].short_name);
        CHECK(k.graph_id[i] == kernels[i].graph_id);
    }

    const Api apis[] = {
        { 900, 905, main_tid, 3, "cudaGraphLaunch_v10000", false },
        { 1000, 1010, main_tid, 1, "cudaLaunchKernel_v7000", false },
        { 1020, 1030, main_tid, 2, "cuLaunchKernel", true },
        { 1200, 1250, loader_tid, 4, "cudaEventRecord_v3020", false },
        { 1600, 1700, main_tid, 5, "cudaStreamSynchronize_v3020", false },
        { 1700, 1800, main_tid, 6, "cudaDeviceSynchronize_v3020", false },
        { 1800, 1850, main_tid, 7, "cudaEventSynchronize_v3020", false },
        { 1850, 1860, main_tid, 8, "cudaStreamWaitEvent_v3020", false },
        { 1860, 1870, main_tid, 9, "cudaDeviceSynchronize_v3020", false },
        { 2200, 2300, main_tid, 10, "cudaMemcpyAsync_v3020", false },
        { 2400, 2600, main_tid, 11, "cudaMemcpy_v3020", false },
        { 2650, 2660, main_tid, 12, "cudaMemcpyAsync_v3020", false },
        { 2800, 2810, main_tid, 13, "cudaMemsetAsync_v3020", false },
    };
    const ApiTable& a = model.api_calls;
    REQUIRE(a.size() == std::size(apis));
    for (size_t i = 0; i < a.size(); ++i) {
        INFO("API call " << i);
        CHECK(a.start_ns[i] == apis[i].start_ns);
        CHECK(a.end_ns[i] == apis[i].end_ns);
        CHECK(a.global_tid[i] == apis[i].global_tid);
        CHECK(a.correlation_id[i] == apis[i].correlation);
        CHECK(model.strings[a.name[i]] == apis[i].name);
        CHECK(a.is_driver[i] == (apis[i].driver ? 1 : 0));
        CHECK(a.return_value[i] == 0);
    }

    const SyncTable& s = model.syncs;
    REQUIRE(s.size() == 5);
    const int64_t sync_starts[] = { 1600, 1700, 1800, 1850, 1860 };
    const int64_t sync_ends[] = { 1700, 1800, 1850, 1860, 1870 };
    const uint32_t sync_devices[] = { 0, 0, 0, 1, 0 };
    const uint32_t sync_streams[] = { 7, SyncTable::kNoStream, SyncTable::kNoStream, 13, SyncTable::kNoStream };
    const schema::SyncType sync_types[] = { schema::SyncType::StreamSynchronize, schema::SyncType::ContextSynchronize,
        schema::SyncType::EventSynchronize, schema::SyncType::StreamWaitEvent, schema::SyncType::Unknown };
    for (size_t i = 0; i < s.size(); ++i) {
        INFO("sync " << i);
        CHECK(s.start_ns[i] == sync_starts[i]);
        CHECK(s.end_ns[i] == sync_ends[i]);
        CHECK(s.device_id[i] == sync_devices[i]);
        CHECK(s.stream_id[i] == sync_streams[i]);
        CHECK(s.correlation_id[i] == 5 + i);
        CHECK(s.sync_type[i] == static_cast<int32_t>(sync_types[i]));
    }

    const MemcpyTable& c = model.memcpys;
    REQUIRE(c.size() == 3);
    using schema::MemcpyKind, schema::MemoryKind;
    const auto kind = [](auto value) { return static_cast<int32_t>(value); };
    CHECK(c.start_ns == std::vector<int64_t> { 2210, 2450, 2700 });
    CHECK(c.end_ns == std::vector<int64_t> { 2290, 2550, 2750 });
    CHECK(c.device_id == std::vector<uint32_t> { 0, 0, 1 });
    CHECK(c.stream_id == std::vector<uint32_t> { 7, 7, 13 });
    CHECK(c.correlation_id == std::vector<uint32_t> { 10, 11, 12 });
    CHECK(c.bytes == std::vector<uint64_t> { 1 << 20, 4096, 123'456'789'012 });
    CHECK(
        c.copy_kind == std::vector<int32_t> { kind(MemcpyKind::HtoD), kind(MemcpyKind::DtoH), kind(MemcpyKind::DtoD) });
    CHECK(c.src_kind
        == std::vector<int32_t> { kind(MemoryKind::Pinned), kind(MemoryKind::Device), kind(MemoryKind::Device) });
    CHECK(c.dst_kind
        == std::vector<int32_t> { kind(MemoryKind::Device), kind(MemoryKind::Pageable), kind(MemoryKind::Device) });

    const MemsetTable& m = model.memsets;
    REQUIRE(m.size() == 1);
    CHECK(m.start_ns[0] == 2805);
    CHECK(m.end_ns[0] == 2809);
    CHECK(m.device_id[0] == 0);
    CHECK(m.stream_id[0] == 7);
    CHECK(m.correlation_id[0] == 13);
    CHECK(m.bytes[0] == 256);
    CHECK(m.mem_kind[0] == kind(MemoryKind::Device));

    const NvtxTable& n = model.nvtx;
    REQUIRE(n.size() == 3);
    CHECK(n.start_ns == std::vector<int64_t> { 400, 500, 1234 });
    CHECK(n.end_ns == std::vector<int64_t> { 700, 3000, NvtxTable::kNoEnd });
    using schema::NvtxEventType;
    CHECK(n.event_type
        == std::vector<int32_t> {
            kind(NvtxEventType::PushPopRange), kind(NvtxEventType::PushPopRange), kind(NvtxEventType::Mark) });
    CHECK(model.strings[n.text[0]] == "load batch");
    CHECK(model.strings[n.text[1]] == "step 1");
    CHECK(model.strings[n.text[2]] == "checkpoint");
    CHECK(n.global_tid == std::vector<int64_t> { loader_tid, main_tid, main_tid });

    REQUIRE(model.thread_names.size() == 2);
    CHECK(model.thread_names[0].global_tid == main_tid);
    CHECK(model.strings[model.thread_names[0].name] == "python");
    CHECK(model.thread_names[1].global_tid == loader_tid);
    CHECK(model.strings[model.thread_names[1].name] == "pt_data_worker");

    REQUIRE(model.gpus.size() == 2);
    for (int32_t id = 0; id < 2; ++id) {
        INFO("GPU " << id);
        const GpuInfo& gpu = model.gpus[static_cast<size_t>(id)];
        const GpuInfoRow expected = id == 0 ? default_gpu(0) : full_scenario_second_gpu();
        CHECK(gpu.id == expected.id);
        CHECK(gpu.name == expected.name);
        CHECK(gpu.bus_location == expected.bus_location);
        CHECK(gpu.total_memory_bytes == expected.total_memory_bytes);
        CHECK(gpu.memory_bandwidth_bytes_per_s == expected.memory_bandwidth_bytes_per_s);
        CHECK(gpu.clock_rate_hz == expected.clock_rate_hz);
        CHECK(gpu.sm_count == expected.sm_count);
        CHECK(gpu.uuid == expected.uuid);
        CHECK(gpu.chip_name == expected.chip_name);
        CHECK(gpu.compute_major == 9);
        CHECK(gpu.compute_minor == 0);
    }

    const auto span = model.time_span_ns();
    REQUIRE(span);
    CHECK(span->first == 400);
    CHECK(span->second == 3000);
}

void check_error(
    const Expected<TraceModel>& result, ErrorCode code, const std::string& path, const std::string& fragment)
{
    REQUIRE_FALSE(result.has_value());
    const Error& error = result.error();
    INFO("message: " << error.message);
    CHECK(error.code == code);
    CHECK(error.message.find('\n') == std::string::npos);
    CHECK(error.message.find(path) != std::string::npos);
    CHECK(error.message.find(fragment) != std::string::npos);
}

} // namespace fp8scope::testing
