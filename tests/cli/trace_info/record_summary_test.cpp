// The summary `fp8scope record` prints: manifest parsing, the counts read from traces made by the scenario
// builder, and the exact text of the table.
#include "cli_test_support.hpp"
#include "trace_info/record_summary.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace fp8scope;
using namespace fp8scope::cli;
using cli_test::scratch_dir;

TEST_CASE(
    "record summary: parse_manifest keeps each path once, in order, without empty lines", "[cli][record][summary]")
{
    CHECK(parse_manifest("").empty());
    CHECK(parse_manifest("!12\tcannot create trace\n/a.sqlite\n") == std::vector<std::string> { "/a.sqlite" });
    CHECK(count_untraced_processes("!12\tno\n/a.sqlite\n!13\tno") == 2);
    CHECK(count_untraced_processes("/a.sqlite\n") == 0);
    CHECK(parse_manifest("\n\n").empty());
    CHECK(parse_manifest("/a.sqlite\n/b.sqlite\n/a.sqlite\n\n/c.sqlite")
        == std::vector<std::string> { "/a.sqlite", "/b.sqlite", "/c.sqlite" });
}

TEST_CASE(
    "record summary: summarize_trace counts kernels, syncs, memcpys and dropped records", "[cli][record][summary]")
{
    const auto dir = scratch_dir("record_summary_counts");
    auto scenario = cli_test::small_scenario(); // 3 kernels, 1 sync
    const auto host = scenario.thread(4242, 4243);
    scenario.memcpy(host, { .api_start_ns = 80'000, .api_end_ns = 81'000, .name = "cudaMemcpyAsync_v3020" },
        { .start_ns = 82'000, .end_ns = 90'000, .bytes = 4096 });
    scenario.dropped(
        { .timestamp_ns = 1'000, .source = schema::DropSource::BufferPoolExhausted, .count = 5, .device_id = 0 });
    scenario.dropped(
        { .timestamp_ns = 2'000, .source = schema::DropSource::WriterQueueFull, .count = 2, .device_id = {} });
    const auto path = dir + "/counts.sqlite";
    REQUIRE(scenario.write_fp8scope(path));

    const auto summary = summarize_trace(path);
    INFO(summary.error);
    REQUIRE(summary.counts);
    CHECK(summary.path == path);
    CHECK(summary.counts->kernels == 3);
    CHECK(summary.counts->syncs == 1);
    CHECK(summary.counts->memcpys == 1);
    CHECK(summary.counts->dropped_records == 7);
    CHECK(summary.counts->tensor_samples_skipped == 0);
    CHECK(summary.counts->finished);
    REQUIRE(summary.file_bytes);
    CHECK(*summary.file_bytes >= static_cast<int64_t>(std::filesystem::file_size(path)));
}

TEST_CASE("record summary: summarize_trace says when a trace was never closed", "[cli][record][summary]")
{
    const auto dir = scratch_dir("record_summary_unfinished");
    const auto path = dir + "/unfinished.sqlite";
    cli_test::write_small_trace(path, false);
    const auto summary = summarize_trace(path);
    INFO(summary.error);
    REQUIRE(summary.counts);
    CHECK_FALSE(summary.counts->finished);
    CHECK(summary.counts->kernels == 3);
}

TEST_CASE(
    "record summary: summarize_trace returns the loader's error for a bad or missing file", "[cli][record][summary]")
{
    const auto dir = scratch_dir("record_summary_bad");
    const auto corrupt = dir + "/corrupt.sqlite";
    cli_test::write_file(corrupt, std::string(8192, 'x'));
    auto summary = summarize_trace(corrupt);
    CHECK_FALSE(summary.counts);
    CHECK(summary.error.find(corrupt) != std::string::npos);
    CHECK(summary.file_bytes == 8192);

    summary = summarize_trace(dir + "/missing.sqlite");
    CHECK_FALSE(summary.counts);
    CHECK_FALSE(summary.file_bytes);
    CHECK(summary.error.find("missing.sqlite") != std::string::npos);
}

TEST_CASE("record summary: render_record_summary: an aligned table, one line per trace", "[cli][record][summary]")
{
    const std::vector<TraceFileSummary> traces {
        { .path = "/runs/rank0.sqlite",
            .file_bytes = 1'572'864,
            .counts = TraceCounts { .kernels = 120'000,
                .syncs = 12,
                .memcpys = 3,
                .dropped_records = 0,
                .tensor_samples = 603,
                .finished = true,
                .bubbles = "0.312 launch" },
            .error = {} },
        { .path = "/runs/rank1-long-name.sqlite",
            .file_bytes = 32'768,
            .counts = TraceCounts { .kernels = 7, .syncs = 0, .memcpys = 0, .dropped_records = 15, .finished = false },
            .error = {} },
        { .path = "/runs/bad.sqlite",
            .file_bytes = 100,
            .counts = std::nullopt,
            .error = "trace '/runs/bad.sqlite': file is not a database" },
        { .path = "/runs/gone\n.sqlite",
            .file_bytes = std::nullopt,
            .counts = TraceCounts { .kernels = 1, .syncs = 1, .memcpys = 1, .dropped_records = 1, .finished = true },
            .error = {} },
    };
    CHECK(render_record_summary(traces)
        == "fp8scope: 4 traces written\n"
           "  trace                         kernels  syncs  memcpys  dropped  tensor samples  bubble ratio  status     "
           " size\n"
           "  /runs/rank0.sqlite             120000     12        3        0             603  0.312 launch  finished   "
           " 1.5 MiB\n"
           "  /runs/rank1-long-name.sqlite        7      0        0       15               0  -             unfinished "
           " 32.0 KiB\n"
           "  /runs/bad.sqlite              unreadable: trace '/runs/bad.sqlite': file is not a database\n"
           "  /runs/gone\\x0a.sqlite               1      1        1        1               0  -             finished  "
           "  unknown\n");
}

TEST_CASE("record summary: render_record_summary: one trace, singular", "[cli][record][summary]")
{
    const std::vector<TraceFileSummary> traces { { .path = "/t.sqlite",
        .file_bytes = 512,
        .counts = TraceCounts { .kernels = 0, .syncs = 0, .memcpys = 0, .dropped_records = 0, .finished = true },
        .error = {} } };
    CHECK(render_record_summary(traces)
        == "fp8scope: 1 trace written\n"
           "  trace      kernels  syncs  memcpys  dropped  tensor samples  bubble ratio  status    size\n"
           "  /t.sqlite        0      0        0        0               0  -             finished  512 B\n");
}

TEST_CASE("record summary: tensor samples skipped by the cap are shown with the samples, not as dropped",
    "[cli][record][summary]")
{
    const auto dir = scratch_dir("record_summary_skipped");
    auto scenario = cli_test::small_scenario();
    scenario.tensor_stats_skipped(56);
    scenario.dropped(
        { .timestamp_ns = 1'000, .source = schema::DropSource::TensorStatsLost, .count = 2, .device_id = 0 });
    const auto path = dir + "/skipped.sqlite";
    REQUIRE(scenario.write_fp8scope(path));
    const auto summary = summarize_trace(path);
    INFO(summary.error);
    REQUIRE(summary.counts);
    CHECK(summary.counts->tensor_samples_skipped == 56);
    CHECK(summary.counts->dropped_records == 2);

    const std::vector<TraceFileSummary> traces { { .path = "/t.sqlite",
        .file_bytes = 512,
        .counts = TraceCounts { .kernels = 0,
            .syncs = 0,
            .memcpys = 0,
            .dropped_records = 2,
            .tensor_samples = 16,
            .tensor_samples_skipped = 56,
            .finished = true },
        .error = {} } };
    CHECK(render_record_summary(traces)
        == "fp8scope: 1 trace written\n"
           "  trace      kernels  syncs  memcpys  dropped           tensor samples  bubble ratio  status    size\n"
           "  /t.sqlite        0      0        0        2  16 (+56 skipped by cap)  -             finished  512 B\n");
}

TEST_CASE("record summary: the no-trace warning is one line", "[cli][record][summary]")
{
    CHECK(kNoTraceWarning == "fp8scope: warning: no trace was written: the command never initialized CUDA\n");
}

// Issue 25 item 7: a process that did no GPU work (a torch.compile worker) removes its trace and says so in the
// manifest with "-<path>" (collector/src/session/idle_trace.hpp).
TEST_CASE("record summary: a trace its process removed for lack of GPU work is left out and counted",
    "[cli][record][summary]")
{
    const std::string manifest
        = "/runs/job.sqlite\n/runs/job-1.sqlite\n!77\tcannot create trace\n-/runs/job-1.sqlite\n";
    CHECK(parse_manifest(manifest) == std::vector<std::string> { "/runs/job.sqlite" });
    CHECK(removed_traces(manifest) == std::vector<std::string> { "/runs/job-1.sqlite" });
    CHECK(count_untraced_processes(manifest) == 1);
    // A later process that took the freed name lists it again: its trace is there.
    CHECK(parse_manifest(manifest + "/runs/job-1.sqlite\n")
        == std::vector<std::string> { "/runs/job.sqlite", "/runs/job-1.sqlite" });
    CHECK(removed_traces("/a.sqlite\n-\n").empty()); // a bare '-' names nothing

    const std::vector<TraceFileSummary> traces { { .path = "/t.sqlite",
        .file_bytes = 512,
        .counts = TraceCounts { .kernels = 0, .syncs = 0, .memcpys = 0, .dropped_records = 0, .finished = true },
        .error = {} } };
    CHECK(render_record_summary(traces, 1)
        == "fp8scope: 1 trace written\n"
           "  trace      kernels  syncs  memcpys  dropped  tensor samples  bubble ratio  status    size\n"
           "  /t.sqlite        0      0        0        0               0  -             finished  512 B\n"
           "fp8scope: 1 more process initialized CUDA but did no GPU work (a compile worker, a launcher): its empty "
           "trace was removed (FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps it)\n");
    CHECK(render_record_summary(traces, 2).ends_with(
        "fp8scope: 2 more processes initialized CUDA but did no GPU work (a compile worker, a launcher): their empty "
        "traces were removed (FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps them)\n"));
    CHECK(no_gpu_work_warning(1)
        == "fp8scope: warning: no trace was written: the one process that initialized CUDA did no GPU work and "
           "removed its empty trace (FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps it)\n");
    CHECK(no_gpu_work_warning(3).starts_with("fp8scope: warning: no trace was written: the 3 processes that"));
}

TEST_CASE("record summary: the real FP8 trace gets its bubble ratio and top cause", "[cli][record][summary]")
{
    const auto summary = summarize_trace(std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite");
    REQUIRE(summary.counts);
    CHECK(summary.counts->kernels == 46'133);
    // The same figure `fp8scope report` prints for device 0 (0.676, launch-bound: PyTorch's per-op dispatch between
    // launches, docs/analysis.md rule 3; tests/cli/report/report_test.cpp).
    CHECK(summary.counts->bubbles == "0.676 launch");
}

TEST_CASE("record summary: torch.compile's kernels get a note that runs may differ in the last bits, and the way out",
    "[cli][record][summary]")
{
    // Real zoo traces (tests/gpu/zoo): a torch.compile'd MLP, and an eager one.
    const std::string zoo = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/zoo/";
    const auto compiled = summarize_trace(zoo + "compile_default.sqlite");
    const auto eager = summarize_trace(zoo + "eager_mlp_item.sqlite");
    REQUIRE(compiled.counts);
    REQUIRE(eager.counts);
    CHECK(compiled.counts->inductor_kernels > 0);
    CHECK(compiled.counts->inductor_kernels < compiled.counts->kernels); // cuBLAS GEMMs and the optimizer are not
    CHECK(eager.counts->inductor_kernels == 0);
    const std::string note = "kernels came from torch.compile (Inductor)";
    CHECK(render_record_summary({ compiled }).find(note) != std::string::npos);
    CHECK(render_record_summary({ eager }).find(note) == std::string::npos);
    // The way to bitwise numbers that the GPU stage verified (docs/benchmarks.md, "Never a changed number").
    CHECK(render_record_summary({ compiled }).find("torch.use_deterministic_algorithms(True)") != std::string::npos);
}
