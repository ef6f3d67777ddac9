// `fp8scope export` on every trace in samples/traces/ and on traces that are awkward to lay out: overlapping work on
// one stream, names that JSON must escape.
#include "export_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <limits>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using nlohmann::json;

namespace {

// The sample traces in four groups, so that ctest runs the four test cases below side by side (the traces take about
// a minute serially and grow with every recording): zoo/ a-f, zoo/ g-z, realjobs/, and every other folder. Every
// trace is in exactly one group.
enum class SampleGroup { ZooFirst, ZooRest, RealJobs, Other };

SampleGroup group_of(const std::filesystem::path& relative)
{
    const std::string folder = relative.has_parent_path() ? relative.begin()->string() : "";
    if (folder == "zoo")
        return relative.filename().string() < "g" ? SampleGroup::ZooFirst : SampleGroup::ZooRest;
    return folder == "realjobs" ? SampleGroup::RealJobs : SampleGroup::Other;
}

// Exports every trace of `group` (every FP8SCOPE_SAMPLE_STRIDE-th in name order: 4 in the sanitized build, where the
// export and report of every trace took 19 minutes of CPU, most of its test time; 1, every trace, in the plain one)
// and checks it against the report on the same trace; returns how many traces the group holds.
size_t export_group(SampleGroup group, const std::string& name)
{
    namespace fs = std::filesystem;
    const fs::path root = fs::path(FP8SCOPE_SOURCE_DIR) / "samples" / "traces";
    std::vector<std::string> traces;
    for (const auto& entry : fs::recursive_directory_iterator(root))
        if (entry.path().extension() == ".sqlite" && group_of(entry.path().lexically_relative(root)) == group)
            traces.push_back(entry.path().string());
    std::ranges::sort(traces);
    std::vector<std::string> taken;
    for (size_t i = 0; i < traces.size(); i += FP8SCOPE_SAMPLE_STRIDE)
        taken.push_back(traces[i]);
    const std::string dir = scratch_dir(name);
    for (const std::string& trace : taken) {
        INFO(trace);
        const std::string out = dir + "/" + fs::path(trace).stem().string() + ".json.gz";
        const json doc = export_ok(trace, out);
        const TraceEventSummary summary = check_valid(doc);
        const json report = json::parse(run_fp8scope_ok({ "report", trace, "--format", "json" }));
        CHECK(slices_of(doc, "user_annotation").size() >= report["steps"]["steps"].size());
        const auto bubbles = slices_of(doc, "fp8scope_bubble");
        CHECK(int64_t(bubbles.size()) == report["totals"]["bubbles"].get<int64_t>());
        if (summary.slices_by_cat.contains("kernel") && summary.slices_by_cat.contains("cuda_runtime"))
            CHECK(summary.flows > 0);
        fs::remove(out); // keep the scratch space small
    }
    return traces.size();
}

} // namespace

TEST_CASE(
    "every trace in samples/traces/ exports to a valid trace with the report's steps: zoo a-f", "[export][samples]")
{
    CHECK(export_group(SampleGroup::ZooFirst, "export_samples_zoo1") >= 10);
}

TEST_CASE(
    "every trace in samples/traces/ exports to a valid trace with the report's steps: zoo g-z", "[export][samples]")
{
    CHECK(export_group(SampleGroup::ZooRest, "export_samples_zoo2") >= 10);
}

TEST_CASE(
    "every trace in samples/traces/ exports to a valid trace with the report's steps: realjobs", "[export][samples]")
{
    CHECK(export_group(SampleGroup::RealJobs, "export_samples_realjobs") >= 5);
}

TEST_CASE("every trace in samples/traces/ exports to a valid trace with the report's steps: the other folders",
    "[export][samples]")
{
    CHECK(export_group(SampleGroup::Other, "export_samples_other") >= 10);
}

TEST_CASE("export puts work that overlaps on one stream on an overflow lane, so that every track nests", "[export]")
{
    testing::Scenario s;
    const auto host = s.thread(4242, 4242, "python");
    // A CUDA graph's branches run at once and CUPTI can report them on one stream; the loader leaves them alone.
    const uint32_t graph
        = s.launch(host, { .api_start_ns = 1'000, .api_end_ns = 3'000, .name = "cudaGraphLaunch_v10000" },
            { .start_ns = 10'000, .end_ns = 50'000, .name = "branch_a", .graph_id = 5 });
    s.more_of(graph, { .start_ns = 20'000, .end_ns = 70'000, .name = "branch_b", .graph_id = 5 });
    s.more_of(graph, { .start_ns = 30'000, .end_ns = 40'000, .name = "branch_c", .graph_id = 5 });
    // A start/end NVTX range that crosses a push/pop range on the same thread.
    s.nvtx_range(host, 500, 4'000, "outer");
    s.nvtx_range(host, 2'000, 90'000, "crossing");
    const std::string dir = scratch_dir("export_overlap");
    REQUIRE(s.write_fp8scope(dir + "/graph.sqlite"));
    const json doc = export_ok(dir + "/graph.sqlite", dir + "/graph.json");
    const TraceEventSummary summary = check_valid(doc);
    CHECK(summary.slices_by_cat.at("kernel") == 3);
    // One flow per kernel of the graph launch: the first with the correlation id as its id, as Kineto writes it.
    CHECK(summary.flows == 3);
    int64_t overlap_lanes = 0;
    for (const auto& e : doc["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name"
            && e["args"]["name"].get<std::string>().find("(overlap ") != std::string::npos)
            ++overlap_lanes;
    CHECK(overlap_lanes >= 1);
    for (const json& kernel : slices_of(doc, "kernel")) {
        CHECK(kernel["args"]["stream"] == 7); // the stream stays in args for HTA, whatever lane it is drawn on
        CHECK(kernel["args"]["graph id"] == 5);
    }
}

TEST_CASE("export escapes names as JSON and leaves Inf counter values out", "[export]")
{
    testing::Scenario s;
    const auto host = s.thread(4242, 4242, "py\"thon\\");
    const std::string name = "kernel<\"quoted\", back\\slash>\ttab\x01";
    s.launch(
        host, { .api_start_ns = 1'000, .api_end_ns = 3'000 }, { .start_ns = 10'000, .end_ns = 20'000, .name = name });
    s.scalar(host, 5'000, "loss", 2.5, 0);
    s.scalar(host, 6'000, "loss", std::numeric_limits<double>::infinity(), 1);
    const std::string dir = scratch_dir("export_escape");
    REQUIRE(s.write_fp8scope(dir + "/names.sqlite"));
    const std::string said = run_fp8scope_ok({ "export", dir + "/names.sqlite", "--perfetto", dir + "/names.json" });
    CHECK(said.find("1 NaN/Inf counter values left out") != std::string::npos);
    const json doc = json::parse(read_export_file(dir + "/names.json"));
    check_valid(doc);
    const auto kernels = slices_of(doc, "kernel");
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0]["name"] == name);
    int64_t loss_values = 0;
    for (const auto& e : doc["traceEvents"])
        if (e["ph"] == "C" && e["name"] == "loss") {
            CHECK(e["args"]["value"] == 2.5);
            ++loss_values;
        }
    CHECK(loss_values == 1);
}

TEST_CASE("export reads an Nsight Systems export as it reads an fp8scope trace", "[export]")
{
    const std::string dir = scratch_dir("export_nsight");
    REQUIRE(small_scenario().write_nsight(dir + "/nsys.sqlite"));
    const json doc = export_ok(dir + "/nsys.sqlite", dir + "/nsys.json.gz", { "--warmup", "0" });
    const TraceEventSummary summary = check_valid(doc);
    CHECK(summary.slices_by_cat.at("kernel") == SmallScenarioFacts::kKernels);
    CHECK(summary.slices_by_cat.at("cuda_runtime") == SmallScenarioFacts::kApiCalls);
    CHECK(summary.flows == SmallScenarioFacts::kKernels);
    for (const json& call : slices_of(doc, "cuda_runtime"))
        CHECK(call["pid"] == 4242); // from the globalTid, as nsys encodes it
}

TEST_CASE("export gives a stream only to the GPU work that figures count, as HTA reads a stream", "[export][hta]")
{
    // Real HTA (tests/interop/hta_check.py) counted the collector's statistics kernels as GPU work: its temporal
    // breakdown takes every event with args.stream as a GPU event (breakdown_analysis.py), and its iteration filter
    // keeps an event with a stream but no correlation as a CPU op (trace_filter.py), so that 78 ms of statistics work
    // on this trace became busy time that the report leaves out. Only kernels, copies and memsets with a correlation
    // may carry a stream.
    const std::string trace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/realjobs/h100-train-fp8-stats.sqlite";
    const std::string dir = scratch_dir("export_hta_streams");
    const json doc = export_ok(trace, dir + "/stats.json", { "--steps", "10:11" });
    check_valid(doc);
    CHECK_FALSE(slices_of(doc, "fp8scope_collector").empty());
    for (const json& work : slices_of(doc, "fp8scope_collector"))
        CHECK(work["args"].contains("collector stream"));
    int64_t with_stream = 0;
    for (const json& e : doc["traceEvents"]) {
        if (!e.contains("args") || !e["args"].contains("stream"))
            continue;
        INFO(e.dump());
        ++with_stream;
        const std::string cat = e["cat"];
        CHECK((cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset"));
        CHECK(e["args"].contains("correlation"));
    }
    CHECK(with_stream
        == int64_t(slices_of(doc, "kernel").size() + slices_of(doc, "gpu_memcpy").size()
            + slices_of(doc, "gpu_memset").size()));
}
