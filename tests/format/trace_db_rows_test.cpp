// Each add_* lands in its table with the values given, optional fields as NULL, in schema column order.
#include "format_test_support.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

constexpr int64_t kGlobalPid = int64_t { 4242 } << 24;

struct OpenTrace {
    std::string path;
    std::unique_ptr<TraceDb> db;
};

OpenTrace open_trace(std::string_view name)
{
    OpenTrace t { scratch_path(name), nullptr };
    auto db = TraceDb::create(t.path, test_session());
    REQUIRE(db.has_value());
    t.db = std::move(*db);
    return t;
}

void finish(OpenTrace& t)
{
    REQUIRE(t.db->finish({ .reason = "exit", .session_end_ns = 1000 }).has_value());
}

} // namespace

TEST_CASE("add_kernel stores start and duration and a config id in FP8SCOPE_KERNEL")
{
    auto t = open_trace("rows_kernel.sqlite");
    KernelRow k;
    k.start_ns = 1'000'000;
    k.end_ns = 1'004'500;
    k.device_id = 1;
    k.context_id = 2;
    k.stream_id = 7;
    k.correlation_id = 99;
    k.graph_id = 5;
    k.graph_node_id = 6;
    k.config.mangled_name = t.db->intern("_Z6squarePfi");
    k.config.grid = { 80, 2, 1 };
    k.config.block = { 256, 1, 1 };
    k.config.cluster = { 2, 1, 1 };
    k.config.registers_per_thread = 40;
    k.config.static_shared_bytes = 1024;
    k.config.dynamic_shared_bytes = 2048;
    k.config.local_per_thread_bytes = 16;
    k.config.local_total_bytes = 1 << 20;
    k.config.shared_executed_bytes = 32768;
    k.config.launch_type = schema::KernelLaunchType::CooperativeSingleDevice;
    REQUIRE(t.db->add_kernel(k).has_value());
    finish(t);

    SqliteFile file(t.path);
    CHECK(file.rows("SELECT * FROM FP8SCOPE_KERNEL")
        == std::vector<Row> { { "1", "1000000", "4500", "1", "2", "7", "99", "1", "5", "6" } });
    const std::string mangled = file.value("SELECT id FROM StringIds WHERE value = '_Z6squarePfi'");
    const std::string demangled = file.value("SELECT id FROM StringIds WHERE value = 'square(float*, int)'");
    const std::string short_name = file.value("SELECT id FROM StringIds WHERE value = 'square'");
    CHECK(file.rows("SELECT * FROM FP8SCOPE_KERNEL_CONFIG")
        == std::vector<Row> { { "1", mangled, demangled, short_name, "80", "2", "1", "256", "1", "1", "2", "1", "1",
            "40", "1024", "2048", "16", "1048576", "32768", "1" } });
    // No launch latency timestamps were given, so there is no latency row.
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL_LATENCY") == 0);
}

TEST_CASE("kernel launch latency timestamps land in FP8SCOPE_KERNEL_LATENCY keyed by kernel id")
{
    auto t = open_trace("rows_latency.sqlite");
    KernelRow k;
    k.config.mangled_name = t.db->intern("gemm");
    k.start_ns = 100;
    k.end_ns = 200;
    REQUIRE(t.db->add_kernel(k).has_value()); // id 1, no latency
    k.start_ns = 300;
    k.end_ns = 400;
    k.queued_ns = 250;
    k.submitted_ns = 280;
    REQUIRE(t.db->add_kernel(k).has_value()); // id 2
    finish(t);
    SqliteFile file(t.path);
    CHECK(file.rows("SELECT * FROM FP8SCOPE_KERNEL_LATENCY") == std::vector<Row> { { "2", "250", "280" } });
}

TEST_CASE("the CUPTI_ACTIVITY_KIND_KERNEL view returns nsys-shaped rows")
{
    auto t = open_trace("rows_kernel_view.sqlite");
    KernelRow k;
    k.start_ns = 5000;
    k.end_ns = 7500;
    k.device_id = 0;
    k.context_id = 1;
    k.stream_id = 13;
    k.correlation_id = 321;
    k.config.mangled_name = t.db->intern("_ZN2at6native18elementwise_kernelILi128ELi4EEEvi");
    k.config.grid = { 1024, 1, 1 };
    k.config.block = { 128, 1, 1 };
    k.config.registers_per_thread = 32;
    REQUIRE(t.db->add_kernel(k).has_value());
    finish(t);

    SqliteFile file(t.path);
    const auto rows = file.rows("SELECT start, end, deviceId, contextId, streamId, correlationId, globalPid, "
                                "(SELECT value FROM StringIds WHERE id = demangledName), "
                                "(SELECT value FROM StringIds WHERE id = shortName), "
                                "(SELECT value FROM StringIds WHERE id = mangledName), launchType, "
                                "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, graphId, clusterX "
                                "FROM CUPTI_ACTIVITY_KIND_KERNEL");
    CHECK(rows
        == std::vector<Row> { { "5000", "7500", "0", "1", "13", "321", std::to_string(kGlobalPid),
            "void at::native::elementwise_kernel<128, 4>(int)", "elementwise_kernel",
            "_ZN2at6native18elementwise_kernelILi128ELi4EEEvi", "0", "32", "1024", "1", "1", "128", "1", "1", "0",
            "0" } });
    // Names are StringIds ids (integers), as in nsys, not text.
    CHECK(file.value("SELECT typeof(demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL") == "integer");
    CHECK(file.value("SELECT typeof(globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL") == "integer");
}

TEST_CASE("add_api writes a CUPTI_ACTIVITY_KIND_RUNTIME row")
{
    auto t = open_trace("rows_api.sqlite");
    ApiRow a;
    a.start_ns = 10;
    a.end_ns = 25;
    a.event_class = schema::EventClass::CudaDriver;
    a.global_tid = schema::global_tid(4242, 4243);
    a.correlation_id = 77;
    a.name = t.db->intern("cuLaunchKernel");
    a.return_value = 700;
    REQUIRE(t.db->add_api(a).has_value());
    finish(t);
    SqliteFile file(t.path);
    CHECK(file.rows("SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME")
        == std::vector<Row> { { "10", "25", "1", std::to_string(schema::global_tid(4242, 4243)), "77",
            std::to_string(a.name.value), "700" } });
}

TEST_CASE("add_sync writes optional stream and event ids as NULL when absent")
{
    auto t = open_trace("rows_sync.sqlite");
    SyncRow s;
    s.start_ns = 100;
    s.end_ns = 900;
    s.device_id = 0;
    s.context_id = 1;
    s.correlation_id = 5;
    s.sync_type = schema::SyncType::ContextSynchronize;
    REQUIRE(t.db->add_sync(s).has_value());
    s.sync_type = schema::SyncType::EventSynchronize;
    s.stream_id = 7;
    s.event_id = 3;
    s.event_sync_id = 0xFFFF'FFFF'FFull;
    s.correlation_id = 6;
    REQUIRE(t.db->add_sync(s).has_value());
    finish(t);
    SqliteFile file(t.path);
    const std::string gpid = std::to_string(kGlobalPid);
    CHECK(file.rows("SELECT * FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")
        == std::vector<Row> { { "100", "900", "0", "1", "NULL", "5", gpid, "4", "NULL", "NULL" },
            { "100", "900", "0", "1", "7", "6", gpid, "1", "3", "1099511627775" } });
    CHECK(t.db->counters().syncs_committed == 2);
}

TEST_CASE("add_memcpy and add_memset write their rows with host device ids as NULL")
{
    auto t = open_trace("rows_copies.sqlite");
    MemcpyRow c;
    c.start_ns = 1;
    c.end_ns = 2;
    c.device_id = 0;
    c.context_id = 1;
    c.stream_id = 7;
    c.correlation_id = 8;
    c.bytes = 5'000'000'000ull;
    c.copy_kind = schema::MemcpyKind::HtoD;
    c.src_kind = schema::MemoryKind::Pinned;
    c.dst_kind = schema::MemoryKind::Device;
    c.dst_device_id = 0;
    c.graph_node_id = 9;
    REQUIRE(t.db->add_memcpy(c).has_value());
    MemsetRow m;
    m.start_ns = 3;
    m.end_ns = 4;
    m.device_id = 1;
    m.context_id = 2;
    m.stream_id = 8;
    m.correlation_id = 10;
    m.value = 255;
    m.bytes = 4096;
    m.mem_kind = schema::MemoryKind::Managed;
    m.graph_node_id = 0;
    REQUIRE(t.db->add_memset(m).has_value());
    finish(t);
    SqliteFile file(t.path);
    const std::string gpid = std::to_string(kGlobalPid);
    CHECK(file.rows("SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY")
        == std::vector<Row> { { "1", "2", "0", "1", "7", "8", gpid, "5000000000", "1", "1", "2", "NULL", "0", "9" } });
    CHECK(file.rows("SELECT * FROM CUPTI_ACTIVITY_KIND_MEMSET")
        == std::vector<Row> { { "3", "4", "1", "2", "8", "10", gpid, "255", "4096", "4", "0" } });
}

TEST_CASE("add_nvtx stores text as textId and optional fields as NULL")
{
    auto t = open_trace("rows_nvtx.sqlite");
    NvtxRow mark;
    mark.start_ns = 50;
    mark.event_type = schema::NvtxEventType::Mark;
    mark.text = t.db->intern("checkpoint");
    mark.global_tid = 11;
    REQUIRE(t.db->add_nvtx(mark).has_value());
    NvtxRow range;
    range.start_ns = 60;
    range.end_ns = 90;
    range.event_type = schema::NvtxEventType::PushPopRange;
    range.range_id = 4;
    range.category = 2;
    range.color = 0xFF00FF00u;
    range.text = t.db->intern("forward");
    range.global_tid = 11;
    range.end_global_tid = 12;
    range.domain_id = 1;
    REQUIRE(t.db->add_nvtx(range).has_value());
    finish(t);
    SqliteFile file(t.path);
    CHECK(file.rows("SELECT start, end, eventType, rangeId, category, color, text, globalTid, endGlobalTid, "
                    "(SELECT value FROM StringIds WHERE id = textId), domainId FROM NVTX_EVENTS ORDER BY start")
        == std::vector<Row> {
            { "50", "NULL", "34", "NULL", "NULL", "NULL", "NULL", "11", "NULL", "checkpoint", "NULL" },
            { "60", "90", "59", "4", "2", "4278255360", "NULL", "11", "12", "forward", "1" } });
}

TEST_CASE("add_thread_name and add_gpu write their rows")
{
    auto t = open_trace("rows_thread_gpu.sqlite");
    const StringId name = t.db->intern("pt_main_thread");
    REQUIRE(t.db->add_thread_name({ .name = name, .priority = std::nullopt, .global_tid = 77 }).has_value());
    REQUIRE(t.db->add_thread_name({ .name = name, .priority = -5, .global_tid = 78 }).has_value());
    GpuInfoRow g;
    g.id = 0;
    g.name = "NVIDIA H100 80GB HBM3";
    g.bus_location = "0000:1b:00.0";
    g.total_memory_bytes = 85'520'809'984;
    g.memory_bandwidth_bytes_per_s = 3'352'320'000'000;
    g.clock_rate_hz = 1'980'000'000;
    g.sm_count = 132;
    g.uuid = "GPU-12345678-1234-1234-1234-123456789abc";
    g.chip_name = "GH100";
    g.compute_major = 9;
    g.compute_minor = 0;
    REQUIRE(t.db->add_gpu(g).has_value());
    finish(t);
    SqliteFile file(t.path);
    const std::string id = std::to_string(name.value);
    CHECK(file.rows("SELECT * FROM ThreadNames") == std::vector<Row> { { id, "NULL", "77" }, { id, "-5", "78" } });
    CHECK(file.rows("SELECT * FROM TARGET_INFO_GPU")
        == std::vector<Row> { { "0", "NVIDIA H100 80GB HBM3", "0000:1b:00.0", "85520809984", "3352320000000",
            "1980000000", "132", "GPU-12345678-1234-1234-1234-123456789abc", "GH100", "9", "0" } });
}

TEST_CASE("add_tensor_site and add_tensor_stats write every statistic and the histogram as a blob")
{
    auto t = open_trace("rows_tensor.sqlite");
    TensorSiteRow site;
    site.id = 12;
    site.name = t.db->intern("layer3.fc1.weight");
    site.ordinal = 2;
    site.rows = 4096;
    site.cols = 1024;
    site.batch = 1;
    site.dtype = schema::Dtype::BFloat16;
    site.role = schema::TensorRole::B;
    site.source = schema::StatsSource::GemmInterception;
    REQUIRE(t.db->add_tensor_site(site).has_value());
    site.id = 13;
    site.nvtx_path = t.db->intern("step/forward/layer3");
    site.scale_recipe = schema::ScaleRecipe::Blockwise128x128; // 1.5; site 12 has none (NULL)
    REQUIRE(t.db->add_tensor_site(site).has_value());

    TensorStatsRow s;
    s.site_id = 12;
    s.timestamp_ns = 123456;
    s.device_id = 0;
    s.stream_id = 7;
    s.dtype = schema::Dtype::E4M3;
    s.target_format = schema::Fp8Format::E4M3;
    s.numel = 4'194'304;
    s.amax = 448.0;
    s.zeros = 1;
    s.nans = 2;
    s.infs = 3;
    s.overflows = 4;
    s.underflows = 5;
    s.subnormals = 6;
    s.saturated = 7;
    s.sum = 1.5;
    s.sum_squares = 2.5;
    s.sum_cubes = -3.5;
    s.sum_fourth = 4.5;
    s.hist_first_exponent = -20;
    s.exponent_histogram = { 1, 2, 3 };
    REQUIRE(t.db->add_tensor_stats(s).has_value()); // no step, scale or correlation id
    s.step = 40;
    s.correlation_id = 555;
    s.scale = 0.25;
    s.scale_inv = 4.0;
    s.min_nonzero_abs = 0.125;
    s.exponent_histogram.clear();
    REQUIRE(t.db->add_tensor_stats(s).has_value());
    finish(t);

    SqliteFile file(t.path);
    const std::string name = std::to_string(site.name.value);
    const std::string path = std::to_string(site.nvtx_path->value);
    CHECK(file.rows("SELECT * FROM FP8SCOPE_TENSOR_SITE")
        == std::vector<Row> { { "12", name, "NULL", "2", "4096", "1024", "1", "1", "1", "0", "NULL" },
            { "13", name, path, "2", "4096", "1024", "1", "1", "1", "0", "3" } });
    CHECK(file.rows("SELECT * FROM FP8SCOPE_TENSOR_STATS")
        == std::vector<Row> {
            { "1", "12", "NULL", "123456", "0", "7", "NULL", "3", "1", "4194304", "NULL", "NULL", "448.0", "NULL", "1",
                "2", "3", "4", "5", "6", "7", "1.5", "2.5", "-3.5", "4.5", "-20", "blob:24", "NULL" },
            { "2", "12", "40", "123456", "0", "7", "555", "3", "1", "4194304", "0.25", "4.0", "448.0", "0.125", "1",
                "2", "3", "4", "5", "6", "7", "1.5", "2.5", "-3.5", "4.5", "-20", "blob:0", "NULL" } });
    // Little-endian uint64 counts (docs/trace-format.md).
    CHECK(file.value("SELECT hex(exponentHistogram) FROM FP8SCOPE_TENSOR_STATS WHERE id = 1")
        == "010000000000000002000000000000000300000000000000");
    CHECK(file.value("SELECT typeof(exponentHistogram) FROM FP8SCOPE_TENSOR_STATS WHERE id = 2") == "blob");
}

TEST_CASE("add_scalar and add_step_marker and add_overhead and add_dropped write their rows")
{
    auto t = open_trace("rows_misc.sqlite");
    const StringId loss = t.db->intern("loss");
    REQUIRE(t.db->add_scalar({ .timestamp_ns = 10, .step = std::nullopt, .name = loss, .value = 2.75, .global_tid = 3 })
                .has_value());
    REQUIRE(
        t.db->add_scalar({ .timestamp_ns = 20, .step = 1, .name = loss, .value = 2.5, .global_tid = 3 }).has_value());
    REQUIRE(t.db->add_step_marker({ .timestamp_ns = 15, .step = 1, .global_tid = 3 }).has_value());
    REQUIRE(t.db->add_step_marker(
                    { .timestamp_ns = 16, .step = 0, .global_tid = 3, .source = schema::StepMarkerSource::Optimizer })
                .has_value());
    REQUIRE(t.db->add_step_marker({ .timestamp_ns = 17,
                                      .step = 1,
                                      .global_tid = 3,
                                      .source = schema::StepMarkerSource::OptimizerSkipped })
                .has_value());
    REQUIRE(t.db->add_overhead({ .start_ns = 30,
                                   .end_ns = 40,
                                   .kind = schema::OverheadKind::CuptiBufferFlush,
                                   .global_tid = std::nullopt,
                                   .device_id = 0 })
                .has_value());
    REQUIRE(t.db->add_overhead({ .start_ns = 50,
                                   .end_ns = 60,
                                   .kind = schema::OverheadKind::WriterCommit,
                                   .global_tid = 9,
                                   .device_id = std::nullopt })
                .has_value());
    REQUIRE(t.db->add_dropped({ .timestamp_ns = 70,
                                  .source = schema::DropSource::CuptiNoBuffer,
                                  .count = 12,
                                  .device_id = std::nullopt })
                .has_value());
    REQUIRE(t.db->add_dropped(
                    { .timestamp_ns = 80, .source = schema::DropSource::WriterQueueFull, .count = 30, .device_id = 1 })
                .has_value());
    CHECK(t.db->counters().dropped_records == 42);
    finish(t);
    SqliteFile file(t.path);
    const std::string id = std::to_string(loss.value);
    CHECK(file.rows("SELECT * FROM FP8SCOPE_SCALAR")
        == std::vector<Row> { { "10", "NULL", id, "2.75", "3" }, { "20", "1", id, "2.5", "3" } });
    // source (1.7): 0 the job's step beginning, 1 an optimizer step's end, 2 one GradScaler skipped.
    CHECK(file.rows("SELECT * FROM FP8SCOPE_STEP_MARKER")
        == std::vector<Row> { { "15", "1", "3", "0" }, { "16", "0", "3", "1" }, { "17", "1", "3", "2" } });
    CHECK(file.rows("SELECT * FROM FP8SCOPE_OVERHEAD")
        == std::vector<Row> { { "30", "40", "0", "NULL", "0" }, { "50", "60", "5", "9", "NULL" } });
    CHECK(file.rows("SELECT * FROM FP8SCOPE_DROPPED")
        == std::vector<Row> { { "70", "0", "12", "NULL" }, { "80", "2", "30", "1" } });
    CHECK(file.rows("SELECT value, typeof(value) FROM FP8SCOPE_META WHERE key = 'dropped_records'")
        == std::vector<Row> { { "42", "integer" } });
}

TEST_CASE("meta tensor_stats_skipped is 0 from creation, holds the latest total, and is not dropped records")
{
    auto t = open_trace("rows_skipped.sqlite");
    const auto skipped = [&] {
        SqliteFile file(t.path);
        return file.rows("SELECT value, typeof(value) FROM FP8SCOPE_META WHERE key = 'tensor_stats_skipped'");
    };
    CHECK(skipped() == std::vector<Row> { { "0", "integer" } });
    REQUIRE(t.db->set_tensor_stats_skipped(56).has_value());
    REQUIRE(t.db->set_tensor_stats_skipped(112).has_value());
    REQUIRE(t.db->commit().has_value());
    // Committed while recording: a trace whose process dies keeps the count.
    CHECK(skipped() == std::vector<Row> { { "112", "integer" } });
    finish(t);
    CHECK(skipped() == std::vector<Row> { { "112", "integer" } });
    CHECK(t.db->counters().dropped_records == 0);
    SqliteFile file(t.path);
    CHECK(file.rows("SELECT COUNT(*) FROM FP8SCOPE_DROPPED") == std::vector<Row> { { "0" } });
    CHECK(file.rows("SELECT value FROM FP8SCOPE_META WHERE key = 'dropped_records'") == std::vector<Row> { { "0" } });
}

TEST_CASE("meta holds the session fields with integers as INTEGER and the session start time")
{
    auto t = open_trace("rows_meta.sqlite");
    finish(t);
    SqliteFile file(t.path);
    const auto meta = [&](const char* key) {
        return file.rows(std::string("SELECT value, typeof(value) FROM FP8SCOPE_META WHERE key = '") + key + "'");
    };
    using R = std::vector<Row>;
    CHECK(meta("producer") == R { { "fp8scope 0.1.0 (writer test)", "text" } });
    CHECK(meta("tool_version") == R { { FP8SCOPE_VERSION, "text" } });
    CHECK(meta("command_line") == R { { "python train.py --fp8", "text" } });
    CHECK(meta("host") == R { { "node07", "text" } });
    CHECK(meta("pid") == R { { "4242", "integer" } });
    CHECK(meta("global_pid") == R { { std::to_string(kGlobalPid), "integer" } });
    CHECK(meta("rank") == R { { "3", "integer" } });
    CHECK(meta("world_size") == R { { "8", "integer" } });
    CHECK(meta("cuda_runtime_version") == R { { "13000", "integer" } });
    CHECK(meta("cuda_driver_version") == R { { "13010", "integer" } });
    CHECK(meta("cupti_version") == R { { "26", "integer" } });
    CHECK(meta("session_start_utc_ns") == R { { "1795219200123456789", "integer" } });
    CHECK(meta("finished") == R { { "1", "integer" } });
    CHECK(meta("finish_reason") == R { { "exit", "text" } });
    CHECK(meta("session_end_ns") == R { { "1000", "integer" } });
    CHECK(file.rows("SELECT utcEpochNs, utcTime FROM TARGET_INFO_SESSION_START_TIME")
        == R { { "1795219200123456789", "2026-11-21T00:00:00.123456789Z" } });
    // Local time depends on the machine's zone; its form does not.
    const std::string local = file.value("SELECT localTime FROM TARGET_INFO_SESSION_START_TIME");
    REQUIRE(local.size() == std::string("2026-11-21T00:00:00.123456789+00:00").size());
    CHECK(local.substr(19, 10) == ".123456789");
}

TEST_CASE("kernel ids stay sequential across batched inserts and latency rows point at their kernels")
{
    // 1000 kernels and API rows: many full multi-row batches, then a partial one flushed by the commit.
    auto t = open_trace("rows_batches.sqlite");
    const StringId name = t.db->intern("k");
    const StringId api_name = t.db->intern("cudaLaunchKernel_v7000");
    for (int i = 1; i <= 1000; ++i) {
        KernelRow k;
        k.config.mangled_name = name;
        k.start_ns = i * 1000;
        k.end_ns = k.start_ns + i;
        k.correlation_id = static_cast<uint32_t>(i);
        if (i % 7 == 0) {
            k.queued_ns = k.start_ns - 300;
            k.submitted_ns = k.start_ns - 200;
        }
        REQUIRE(t.db->add_api({ .start_ns = k.start_ns - 500,
                                  .end_ns = k.start_ns - 400,
                                  .event_class = schema::EventClass::CudaRuntime,
                                  .global_tid = 5,
                                  .correlation_id = k.correlation_id,
                                  .name = api_name,
                                  .return_value = 0 })
                    .has_value());
        REQUIRE(t.db->add_kernel(k).has_value());
    }
    CHECK(t.db->counters().kernels_committed == 0);
    REQUIRE(t.db->commit().has_value());
    CHECK(t.db->counters().kernels_committed == 1000);
    finish(t);
    SqliteFile file(t.path);
    // id i has start i*1000, duration i and correlation id i: no row moved, none lost.
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL WHERE start = id * 1000 AND duration = id "
                       "AND correlationId = id")
        == 1000);
    CHECK(file.rows("SELECT min(id), max(id) FROM FP8SCOPE_KERNEL") == std::vector<Row> { { "1", "1000" } });
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL_LATENCY AS l JOIN FP8SCOPE_KERNEL AS k "
                       "ON k.id = l.kernelId WHERE l.queued = k.start - 300 AND l.submitted = k.start - 200 "
                       "AND k.id % 7 = 0")
        == 142);
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL_LATENCY") == 142);
    CHECK(file.integer("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN FP8SCOPE_KERNEL AS k "
                       "ON k.correlationId = r.correlationId WHERE r.start = k.start - 500")
        == 1000);
}
