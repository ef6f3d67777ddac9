// Every table through the real writer (TraceDb, via the scenario builder) and back through the loader, with
// every loaded field compared to what was written.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "loader_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

void check_stats(const TensorStats& loaded, const TensorStatsRow& written)
{
    CHECK(loaded.site_id == written.site_id);
    CHECK(loaded.step == written.step);
    CHECK(loaded.timestamp_ns == written.timestamp_ns);
    CHECK(loaded.device_id == written.device_id);
    CHECK(loaded.stream_id == written.stream_id);
    CHECK(loaded.correlation_id == written.correlation_id);
    CHECK(loaded.dtype == static_cast<int32_t>(written.dtype));
    CHECK(loaded.target_format == static_cast<int32_t>(written.target_format));
    CHECK(loaded.numel == written.numel);
    CHECK(loaded.scale == written.scale);
    CHECK(loaded.scale_inv == written.scale_inv);
    CHECK(loaded.amax == written.amax);
    CHECK(loaded.min_nonzero_abs == written.min_nonzero_abs);
    CHECK(loaded.zeros == written.zeros);
    CHECK(loaded.nans == written.nans);
    CHECK(loaded.infs == written.infs);
    CHECK(loaded.overflows == written.overflows);
    CHECK(loaded.underflows == written.underflows);
    CHECK(loaded.subnormals == written.subnormals);
    CHECK(loaded.saturated == written.saturated);
    CHECK(loaded.sum == written.sum);
    CHECK(loaded.sum_squares == written.sum_squares);
    CHECK(loaded.sum_cubes == written.sum_cubes);
    CHECK(loaded.sum_fourth == written.sum_fourth);
    CHECK(loaded.hist_first_exponent == written.hist_first_exponent);
    CHECK(loaded.exponent_histogram == written.exponent_histogram);
}

// One activity row as written and as loaded, for comparing orders.
struct Written {
    int64_t start_ns, end_ns;
    uint32_t stream_id, correlation_id;
    friend bool operator==(const Written&, const Written&) = default;
};

} // namespace

TEST_CASE("every table round-trips through the writer and the loader", "[loader]")
{
    const std::string path = scratch_dir("roundtrip") + "/full.sqlite";
    const Scenario scenario = full_scenario();
    REQUIRE(scenario.write_fp8scope(path));

    auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    const TraceModel& model = *loaded;
    CHECK(model.path == path);
    check_common_content(model);

    SECTION("meta")
    {
        const TraceMeta& meta = model.meta;
        CHECK(meta.source == TraceSource::Fp8scope);
        CHECK(meta.schema_major == schema::kMajorVersion);
        CHECK(meta.schema_minor == schema::kMinorVersion);
        CHECK(meta.producer == "scenario builder");
        CHECK(meta.command_line == "scenario");
        CHECK(meta.host == "scenario-host");
        CHECK(meta.pid == 4242);
        CHECK(meta.rank == -1);
        CHECK(meta.world_size == -1);
        CHECK(meta.cuda_runtime_version == 13000);
        CHECK(meta.cuda_driver_version == 13000);
        CHECK(meta.cupti_version == 130001);
        CHECK(meta.session_start_utc_ns == 1'795'219'200'000'000'000);
        CHECK(meta.finished);
        CHECK(meta.finish_reason == "exit");
        CHECK(meta.raw.at("schema_version") == "1.7");
        CHECK(meta.raw.at("pid") == "4242");
        CHECK(meta.raw.at("global_pid") == std::to_string(schema::global_pid(4242)));
        CHECK(meta.raw.at("finished") == "1");
        CHECK(meta.raw.at("session_end_ns") == "3000");
        CHECK(meta.raw.at("dropped_records") == "12");
    }

    SECTION("row counts")
    {
        const auto& counts = model.row_counts;
        CHECK(counts.at("FP8SCOPE_KERNEL") == 4);
        CHECK(counts.at("FP8SCOPE_KERNEL_CONFIG") == 4);
        CHECK(counts.at("FP8SCOPE_KERNEL_LATENCY") == 0);
        CHECK(counts.at("CUPTI_ACTIVITY_KIND_RUNTIME") == 13);
        CHECK(counts.at("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") == 5);
        CHECK(counts.at("CUPTI_ACTIVITY_KIND_MEMCPY") == 3);
        CHECK(counts.at("CUPTI_ACTIVITY_KIND_MEMSET") == 1);
        CHECK(counts.at("NVTX_EVENTS") == 3);
        CHECK(counts.at("ThreadNames") == 2);
        CHECK(counts.at("TARGET_INFO_GPU") == 2);
        CHECK(counts.at("FP8SCOPE_TENSOR_SITE") == 2);
        CHECK(counts.at("FP8SCOPE_TENSOR_STATS") == 2);
        CHECK(counts.at("FP8SCOPE_SCALAR") == 2);
        CHECK(counts.at("FP8SCOPE_STEP_MARKER") == 2);
        CHECK(counts.at("FP8SCOPE_OVERHEAD") == 2);
        CHECK(counts.at("FP8SCOPE_DROPPED") == 2);
        CHECK(counts.at("StringIds") == static_cast<int64_t>(model.strings.size()));
    }

    SECTION("tensor sites and statistics")
    {
        REQUIRE(model.tensor_sites.size() == 2);
        const TensorSite& weight = model.tensor_sites[0];
        CHECK(weight.id == 1);
        CHECK(model.strings[weight.name] == "layer0.fc1.weight");
        REQUIRE(weight.nvtx_path);
        CHECK(model.strings[*weight.nvtx_path] == "step 1/layer0");
        CHECK(weight.ordinal == 0);
        CHECK(weight.rows == 4096);
        CHECK(weight.cols == 1024);
        CHECK(weight.batch == 1);
        CHECK(weight.dtype == static_cast<int32_t>(schema::Dtype::BFloat16));
        CHECK(weight.role == static_cast<int32_t>(schema::TensorRole::Weight));
        CHECK(weight.source == static_cast<int32_t>(schema::StatsSource::GemmInterception));
        CHECK(weight.scale_recipe == static_cast<int32_t>(schema::ScaleRecipe::Rowwise));
        const TensorSite& input = model.tensor_sites[1];
        CHECK(input.id == 2);
        CHECK(model.strings[input.name] == "layer0.fc1.input");
        CHECK_FALSE(input.nvtx_path);
        CHECK(input.rows == 8);
        CHECK(input.cols == 4096);
        CHECK(input.role == static_cast<int32_t>(schema::TensorRole::Input));
        CHECK(input.source == static_cast<int32_t>(schema::StatsSource::ExplicitProbe));
        CHECK_FALSE(input.scale_recipe);

        REQUIRE(model.tensor_stats.size() == 2);
        // Sorted by timestamp: the second row written (1300 ns) comes first.
        check_stats(model.tensor_stats[0], full_scenario_stats(1));
        check_stats(model.tensor_stats[1], full_scenario_stats(0));
    }

    SECTION("scalars, step markers, overhead, dropped records")
    {
        const int64_t main_tid = schema::global_tid(4242, 4242);
        REQUIRE(model.scalars.size() == 2);
        CHECK(model.scalars[0].timestamp_ns == 2990);
        CHECK(model.scalars[0].step == 1);
        CHECK(model.strings[model.scalars[0].name] == "loss");
        CHECK(model.scalars[0].value == 2.5);
        CHECK(model.scalars[0].global_tid == main_tid);
        CHECK(model.scalars[1].timestamp_ns == 2995);
        CHECK_FALSE(model.scalars[1].step);
        CHECK(model.strings[model.scalars[1].name] == "lr");
        CHECK(model.scalars[1].value == 1e-4);

        REQUIRE(model.step_markers.size() == 2);
        CHECK(model.step_markers[0].timestamp_ns == 500);
        CHECK(model.step_markers[0].step == 1);
        CHECK(model.step_markers[0].global_tid == main_tid);
        CHECK(model.step_markers[1].timestamp_ns == 3000);
        CHECK(model.step_markers[1].step == 2);

        REQUIRE(model.overheads.size() == 2);
        CHECK(model.overheads[0].start_ns == 50);
        CHECK(model.overheads[0].end_ns == 60);
        CHECK(model.overheads[0].kind == static_cast<int32_t>(schema::OverheadKind::WriterCommit));
        CHECK(model.overheads[1].start_ns == 100);
        CHECK(model.overheads[1].end_ns == 150);
        CHECK(model.overheads[1].kind == static_cast<int32_t>(schema::OverheadKind::CuptiBufferFlush));

        REQUIRE(model.dropped.size() == 2);
        CHECK(model.dropped[0].timestamp_ns == 2500);
        CHECK(model.dropped[0].source == static_cast<int32_t>(schema::DropSource::CuptiNoBuffer));
        CHECK(model.dropped[0].count == 7);
        CHECK(model.dropped[1].timestamp_ns == 2600);
        CHECK(model.dropped[1].source == static_cast<int32_t>(schema::DropSource::WriterQueueFull));
        CHECK(model.dropped[1].count == 5);
        CHECK(model.dropped_records() == 12);
    }
}

TEST_CASE("an unfinished trace loads and says it is unfinished", "[loader]")
{
    // A trace closed without finish() stays in WAL mode with no -wal file; the loader must read it without
    // creating -wal or -shm files next to it, whatever characters its name holds.
    const std::string dir = scratch_dir("unfinished");
    for (const std::string name : { "unfinished.sqlite", "odd name %41?x=1#frag.sqlite" }) {
        const std::string path = dir + "/" + name;
        INFO(path);
        REQUIRE(full_scenario().write_fp8scope(path, false));
        REQUIRE_FALSE(std::filesystem::exists(path + "-wal"));
        auto loaded = load_trace(path);
        INFO((loaded ? std::string() : loaded.error().message));
        REQUIRE(loaded);
        CHECK_FALSE(loaded->meta.finished);
        CHECK(loaded->meta.raw.at("finished") == "0");
        CHECK(loaded->meta.finish_reason.empty());
        check_common_content(*loaded);
        CHECK_FALSE(std::filesystem::exists(path + "-wal"));
        CHECK_FALSE(std::filesystem::exists(path + "-shm"));
    }
}

TEST_CASE("an empty trace loads with no activity", "[loader]")
{
    const std::string path = scratch_dir("empty_trace") + "/empty.sqlite";
    REQUIRE(Scenario().write_fp8scope(path));
    auto loaded = load_trace(path);
    REQUIRE(loaded);
    CHECK(loaded->kernels.size() == 0);
    CHECK(loaded->api_calls.size() == 0);
    CHECK_FALSE(loaded->time_span_ns());
    CHECK(loaded->dropped_records() == 0);
    REQUIRE(loaded->gpus.size() == 1);
    CHECK(loaded->gpus[0].name == "NVIDIA H100 80GB HBM3");
}

TEST_CASE("rows written out of start order load sorted, equal starts in file order", "[loader]")
{
    // Two orders a trace can hold: a few sorted sequences interleaved (each stream's kernels in launch order; the
    // loader merges them), and a reversed table with more such sequences than the loader merges (it sorts those).
    // Equal starts on different streams must keep their file order either way, and every column must move with its
    // start.
    // Interleaved: groups of four rows 1000 ns apart, on streams 7, 8, 8 and 9; the second and fourth rows of a group
    // start together but lie in different sorted sequences, so the merge itself must put them in file order.
    constexpr int64_t kOffsetNs[] = { 200, 100, 150, 100 };
    constexpr uint32_t kStream[] = { 7, 8, 8, 9 };
    const auto start_of = [&](int i, bool interleaved) -> int64_t {
        return interleaved ? 1000 * (i / 4) + kOffsetNs[i % 4] : 1000 - 10 * (i / 2);
    };
    for (const bool interleaved : { true, false }) {
        INFO((interleaved ? "three streams interleaved" : "40 rows in reverse, 20 distinct starts"));
        Scenario s;
        const HostThread host = s.thread(1, 1);
        std::vector<Written> kernels, calls;
        for (int i = 0; i < 40; ++i) {
            const int64_t start_ns = start_of(i, interleaved);
            // Kernels of one stream never overlap (the loader would clip them): in reverse, each has its own stream.
            const uint32_t stream = interleaved ? kStream[i % 4] : static_cast<uint32_t>(100 + i);
            const uint32_t id = s.launch(host, { .api_start_ns = start_ns - 5, .api_end_ns = start_ns - 5 + i },
                { .start_ns = start_ns, .end_ns = start_ns + 10 + i, .stream_id = stream });
            kernels.push_back({ start_ns, start_ns + 10 + i, stream, id });
            calls.push_back({ start_ns - 5, start_ns - 5 + i, 0, id });
        }
        const auto by_start = [](const Written& w) { return w.start_ns; };
        std::ranges::stable_sort(kernels, {}, by_start);
        std::ranges::stable_sort(calls, {}, by_start);
        const std::string path
            = scratch_dir("out_of_order") + (interleaved ? "/interleaved.sqlite" : "/reversed.sqlite");
        REQUIRE(s.write_fp8scope(path));
        const auto loaded = load_trace(path);
        INFO((loaded ? std::string() : loaded.error().message));
        REQUIRE(loaded);
        CHECK(loaded->clipped_kernels.count == 0);
        const KernelTable& k = loaded->kernels;
        std::vector<Written> loaded_kernels, loaded_calls;
        for (size_t i = 0; i < k.size(); ++i)
            loaded_kernels.push_back({ k.start_ns[i], k.end_ns[i], k.stream_id[i], k.correlation_id[i] });
        const ApiTable& a = loaded->api_calls;
        for (size_t i = 0; i < a.size(); ++i)
            loaded_calls.push_back({ a.start_ns[i], a.end_ns[i], 0, a.correlation_id[i] });
        CHECK(loaded_kernels == kernels);
        CHECK(loaded_calls == calls);
    }
}

TEST_CASE("step markers keep their source: the job's, an optimizer step's end, a skipped one (format 1.7)")
{
    Scenario s;
    const HostThread host = s.thread(4242, 4242, "main");
    s.step_marker(host, 100, 0);
    s.optimizer_step(host, 200, 0);
    s.optimizer_step(host, 300, 1, true);
    const std::string path = scratch_dir("marker_sources") + "/trace.sqlite";
    REQUIRE(s.write_fp8scope(path));
    const auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    REQUIRE(loaded->step_markers.size() == 3);
    const std::vector<StepMarkerSource> expected { StepMarkerSource::Job, StepMarkerSource::Optimizer,
        StepMarkerSource::OptimizerSkipped };
    for (size_t i = 0; i < 3; ++i) {
        CHECK(loaded->step_markers[i].source == expected[i]);
        CHECK(loaded->step_markers[i].timestamp_ns == int64_t(100 * (i + 1)));
    }
    CHECK(loaded->step_markers[2].step == 1);

    // A NULL source (a hand-written row, or an older writer's) is the job's.
    exec_sql(path,
        "UPDATE FP8SCOPE_STEP_MARKER SET source = NULL WHERE timestamp = 300;"
        "INSERT INTO FP8SCOPE_STEP_MARKER (timestamp, step, globalTid, source) VALUES (400, 9, 1, 7);"
        "UPDATE FP8SCOPE_META SET value = value + 1 WHERE key = 'row_count.FP8SCOPE_STEP_MARKER';");
    const auto edited = load_trace(path);
    REQUIRE(edited);
    REQUIRE(edited->step_markers.size() == 4);
    CHECK(edited->step_markers[2].source == StepMarkerSource::Job);
    CHECK(int32_t(edited->step_markers[3].source) == 7); // an unknown source is kept as its number
}
