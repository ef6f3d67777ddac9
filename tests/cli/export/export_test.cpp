// `fp8scope export --perfetto` on scenario traces: Kineto's layout, the report's steps and bubbles, windows, gzip,
// and bad input (docs/cli.md "export").
#include "export_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <map>
#include <sys/resource.h>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using nlohmann::json;

namespace {

const json* find_slice(const json& doc, const std::string& cat, const std::string& name)
{
    for (const auto& e : doc["traceEvents"])
        if (e["ph"] == "X" && e["cat"] == cat && e["name"] == name)
            return &e;
    return nullptr;
}

std::string metadata_value(const json& doc, const std::string& kind, int64_t pid, int64_t tid)
{
    for (const auto& e : doc["traceEvents"])
        if (e["ph"] == "M" && e["name"] == kind && e["pid"] == pid && (kind.starts_with("process") || e["tid"] == tid))
            return e["args"].begin()->dump();
    return {};
}

// Six steps by step markers, one kernel and its launch per step on device 0 and one on device 1.
testing::Scenario two_device_steps()
{
    testing::Scenario s;
    GpuInfoRow second;
    second.id = 1;
    second.name = "NVIDIA H100 80GB HBM3";
    s.add_gpu(second);
    const auto host = s.thread(4242, 4242, "python");
    for (int64_t step = 0; step < 6; ++step) {
        const int64_t base = 100'000 + step * 100'000;
        s.step_marker(host, base, step);
        s.launch(host, { .api_start_ns = base + 1'000, .api_end_ns = base + 4'000 },
            { .start_ns = base + 10'000, .end_ns = base + 60'000, .name = "gemm_" + std::to_string(step) });
        s.launch(host, { .api_start_ns = base + 5'000, .api_end_ns = base + 8'000 },
            { .start_ns = base + 20'000, .end_ns = base + 50'000, .name = "other_gpu", .device_id = 1 });
    }
    s.step_marker(host, 700'000, 6);
    return s;
}

} // namespace

TEST_CASE("export writes the small scenario in Kineto's layout, with the report's steps and bubbles", "[export]")
{
    const std::string dir = scratch_dir("export_small");
    const std::string trace = dir + "/small.sqlite";
    write_small_trace(trace);
    const json doc = export_ok(trace, dir + "/small.json", { "--warmup", "0" });
    const TraceEventSummary summary = check_valid(doc);

    CHECK(doc["schemaVersion"] == 1);
    CHECK(doc["displayTimeUnit"] == "ns");
    CHECK(doc["baseTimeNanoseconds"].get<int64_t>() > 0);
    CHECK(doc["deviceProperties"][0]["name"] == SmallScenarioFacts::kGpuName);
    CHECK(doc["deviceProperties"][0]["numSms"] == SmallScenarioFacts::kSmCount);
    // HTA finds the rank with the regex "rank":\s+(\d+) on the raw text.
    CHECK(read_export_file(dir + "/small.json").find("\"rank\": 0") != std::string::npos);

    CHECK(summary.slices_by_cat.at("kernel") == SmallScenarioFacts::kKernels);
    CHECK(summary.slices_by_cat.at("cuda_runtime") == SmallScenarioFacts::kApiCalls);
    CHECK(summary.flows == SmallScenarioFacts::kKernels);

    // The GEMM: GPU 0 is pid 0 and stream 7 is tid 7; ts and dur in us with the ns as decimals.
    const json* gemm = find_slice(doc, "kernel", "sm90_xmma_gemm_e4m3bf16_e4m3f32");
    REQUIRE(gemm != nullptr);
    CHECK((*gemm)["pid"] == 0);
    CHECK((*gemm)["tid"] == 7);
    CHECK(json_time_ns((*gemm)["ts"]) == 8'000);
    CHECK(json_time_ns((*gemm)["dur"]) == 50'000);
    CHECK((*gemm)["args"]["stream"] == 7);
    CHECK((*gemm)["args"]["class"] == "FP8 GEMM");
    const json* launch = find_slice(doc, "cuda_runtime", "cudaLaunchKernel");
    REQUIRE(launch != nullptr);
    CHECK((*launch)["args"]["correlation"] == (*gemm)["args"]["correlation"]);
    CHECK((*launch)["pid"] == 4242);
    CHECK((*launch)["tid"] == 4242);
    const json* sync = find_slice(doc, "cuda_runtime", "cudaStreamSynchronize");
    REQUIRE(sync != nullptr);
    CHECK((*sync)["args"]["host_blocking"] == "stream sync");

    CHECK(metadata_value(doc, "process_name", 0, 0) == "\"GPU 0\"");
    CHECK(metadata_value(doc, "process_labels", 0, 0) == json(SmallScenarioFacts::kGpuName).dump());
    CHECK(metadata_value(doc, "thread_name", 0, 7) == "\"stream 7\"");
    CHECK(metadata_value(doc, "thread_name", 4242, 4242) == "\"thread 4242 (python)\"");
    CHECK(metadata_value(doc, "process_name", 4242, 0) == "\"python\"");

    // Steps and bubbles are the report's, to the nanosecond.
    const json report = json::parse(run_fp8scope_ok({ "report", trace, "--format", "json", "--warmup", "0" }));
    const auto steps = slices_of(doc, "user_annotation");
    REQUIRE(steps.size() == report["steps"]["steps"].size());
    for (size_t i = 0; i < steps.size(); ++i) {
        const json& step = report["steps"]["steps"][i];
        CHECK(steps[i]["name"] == "ProfilerStep#" + std::to_string(step["index"].get<int64_t>()));
        CHECK(json_time_ns(steps[i]["ts"]) == step["start_ns"]);
        CHECK(json_time_ns(steps[i]["ts"]) + json_time_ns(steps[i]["dur"]) == step["end_ns"]);
    }
    const auto bubbles = slices_of(doc, "fp8scope_bubble");
    REQUIRE(int64_t(bubbles.size()) == report["totals"]["bubbles"].get<int64_t>());
    std::map<std::string, int64_t> idle_by_cause;
    for (const json& bubble : bubbles) {
        CHECK(bubble["name"] == bubble["args"]["cause"].get<std::string>() + " bubble");
        idle_by_cause[bubble["args"]["cause"]] += json_time_ns(bubble["dur"]);
    }
    for (const auto& [cause, idle_ns] : report["totals"]["idle_by_cause_ns"].items())
        CHECK(idle_by_cause[cause] == idle_ns.get<int64_t>());
    CHECK(idle_by_cause["sync"] > 0); // the scenario's stream sync leaves the GPU idle
}

TEST_CASE("export gzips when the file name ends in .gz, with the same content", "[export]")
{
    const std::string dir = scratch_dir("export_gzip");
    const std::string trace = dir + "/small.sqlite";
    write_small_trace(trace);
    export_ok(trace, dir + "/plain.json");
    export_ok(trace, dir + "/packed.json.gz");
    const std::string raw = read_text_file(dir + "/packed.json.gz");
    REQUIRE(raw.size() > 2);
    CHECK(static_cast<unsigned char>(raw[0]) == 0x1f); // the gzip magic
    CHECK(static_cast<unsigned char>(raw[1]) == 0x8b);
    CHECK(read_export_file(dir + "/packed.json.gz") == read_text_file(dir + "/plain.json"));
    std::vector<std::string> files = record_test::directory_entries(dir); // no temporary file left behind
    std::ranges::sort(files);
    CHECK(files == std::vector<std::string> { "packed.json.gz", "plain.json", "small.sqlite" });
}

TEST_CASE("export takes -o and --output for --perfetto, as report and check do (issue 45)", "[export]")
{
    const std::string dir = scratch_dir("export_output_flag");
    const std::string trace = dir + "/small.sqlite";
    write_small_trace(trace);
    export_ok(trace, dir + "/perfetto.json");
    for (const char* flag : { "-o", "--output" }) {
        INFO(flag);
        const auto result = run_fp8scope({ "export", trace, flag, dir + "/out.json" });
        CHECK(result.exit_code == 0);
        CHECK(read_text_file(dir + "/out.json") == read_text_file(dir + "/perfetto.json"));
    }
}

TEST_CASE("export --steps writes only the time of those steps, and --device only that GPU", "[export]")
{
    const std::string dir = scratch_dir("export_window");
    const std::string trace = dir + "/steps.sqlite";
    REQUIRE(two_device_steps().write_fp8scope(trace));

    const json all = export_ok(trace, dir + "/all.json", { "--warmup", "0" });
    CHECK(check_valid(all).slices_by_cat.at("kernel") == 12);
    CHECK(slices_of(all, "user_annotation").size() == 6);

    const json window = export_ok(trace, dir + "/window.json", { "--warmup", "0", "--steps", "2:3" });
    const TraceEventSummary summary = check_valid(window);
    std::vector<std::string> step_names;
    for (const json& step : slices_of(window, "user_annotation"))
        step_names.push_back(step["name"]);
    CHECK(step_names == std::vector<std::string> { "ProfilerStep#2", "ProfilerStep#3" });
    CHECK(summary.slices_by_cat.at("kernel") == 4);
    CHECK(summary.slices_by_cat.at("cuda_runtime") == 4);
    CHECK(summary.flows == 4);
    for (const json& kernel : slices_of(window, "kernel")) {
        CHECK(json_time_ns(kernel["ts"]) >= 300'000);
        CHECK(json_time_ns(kernel["ts"]) < 500'000);
    }
    CHECK(window["fp8scope"]["window_ns"] == json::array({ 300'000, 500'000 }));

    const json device = export_ok(trace, dir + "/device.json", { "--warmup", "0", "--device", "1" });
    check_valid(device);
    const auto kernels = slices_of(device, "kernel");
    CHECK(kernels.size() == 6);
    for (const json& kernel : kernels)
        CHECK(kernel["pid"] == 1);
    for (const json& bubble : slices_of(device, "fp8scope_bubble"))
        CHECK(bubble["args"]["device"] == 1);
}

TEST_CASE(
    "export --steps keeps the launch call of work queued a step ahead, so HTA and the flow see it", "[export][hta]")
{
    // Found by real HTA on the DDP sample (tests/interop/hta_check.py): a copy queued near the end of step 1 runs in
    // step 2; with --steps 2:3 its call lay outside the window and was left out, so HTA, which keeps GPU work only
    // with its launch call, dropped the copy from step 2, and the copy's flow had no start. It runs on a side stream
    // after step 2's first kernel (310 us), so that step 2 begins on the device before it (two clocks: work launched
    // before a marker and done before the next step's first activity is the previous step's).
    testing::Scenario s = two_device_steps();
    const auto host = s.thread(4242, 4243, "pt_autograd_0");
    s.launch(host, { .api_start_ns = 290'000, .api_end_ns = 292'000, .name = "cudaLaunchKernel_v7000" },
        { .start_ns = 312'000, .end_ns = 318'000, .name = "queued_early", .stream_id = 9 });
    const std::string dir = scratch_dir("export_early_call");
    REQUIRE(s.write_fp8scope(dir + "/early.sqlite"));
    const json window = export_ok(dir + "/early.sqlite", dir + "/early.json", { "--warmup", "0", "--steps", "2:3" });
    const TraceEventSummary summary = check_valid(window);
    const json* early = find_slice(window, "kernel", "queued_early");
    REQUIRE(early != nullptr);
    int64_t calls_with_its_correlation = 0;
    for (const json& call : slices_of(window, "cuda_runtime"))
        if (call["args"]["correlation"] == (*early)["args"]["correlation"]) {
            ++calls_with_its_correlation;
            CHECK(json_time_ns(call["ts"]) == 290'000);
        }
    CHECK(calls_with_its_correlation == 1);
    CHECK(summary.slices_by_cat.at("cuda_runtime") == 5); // the four of steps 2-3 and the early one
    CHECK(summary.flows == 5);
    // A call before the window whose work is outside it too stays out: step 1's own launches.
    CHECK(summary.slices_by_cat.at("kernel") == 5);
}

TEST_CASE("export refuses bad input with the documented exit codes and leaves no file behind", "[export]")
{
    const std::string dir = scratch_dir("export_errors");
    const std::string trace = dir + "/small.sqlite";
    write_small_trace(trace);

    SECTION("a file that is no trace: exit 3, one line")
    {
        write_file(dir + "/junk.sqlite", "not a trace at all");
        check_bad_trace(run_fp8scope({ "export", dir + "/junk.sqlite", "--perfetto", dir + "/out.json" }));
    }
    SECTION("an output that cannot be written: exit 74, one line")
    {
        for (const std::string& out : { dir + "/missing-dir/out.json", dir }) {
            const auto result = run_fp8scope({ "export", trace, "--perfetto", out });
            INFO(result.err);
            CHECK(result.exit_code == 74);
            CHECK(result.out.empty());
            CHECK(testing::line_count(result.err) == 1);
            CHECK(result.err.starts_with("fp8scope: error: cannot write"));
        }
    }
    SECTION("no --perfetto, or a selection that selects nothing: exit 2")
    {
        CHECK(run_fp8scope({ "export", trace }).exit_code == 2);
        const auto result = run_fp8scope({ "export", trace, "--perfetto", dir + "/out.json", "--device", "9" });
        CHECK(result.exit_code == 2);
        CHECK(result.err.find("--device 9") != std::string::npos);
    }
    for (const std::string& name : record_test::directory_entries(dir)) // neither the export nor its temporary file
        CHECK(name.find("out.json") == std::string::npos);
}

TEST_CASE("export exits 74 when the disk fills up while writing, and leaves nothing under the name", "[export]")
{
    const std::string dir = scratch_dir("export_full_disk");
    const std::string trace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite";
    // A file size limit stands for a full disk: write() fails with EFBIG once the export passes 256 KiB (50 MiB in
    // all). The child inherits the limit and the ignored SIGXFSZ; the test's own files are written before.
    rlimit previous {};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &previous) == 0);
    const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = previous;
    limited.rlim_cur = 256 * 1024;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
    const auto result = run_fp8scope({ "export", trace, "--perfetto", dir + "/out.json", "--no-progress" });
    setrlimit(RLIMIT_FSIZE, &previous);
    std::signal(SIGXFSZ, previous_handler);
    INFO(result.err);
    CHECK(result.exit_code == 74);
    CHECK(result.out.empty());
    CHECK(testing::line_count(result.err) == 1);
    CHECK(result.err.starts_with("fp8scope: error: cannot write"));
    CHECK(record_test::directory_entries(dir).empty());
}
