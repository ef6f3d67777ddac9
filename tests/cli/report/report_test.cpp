// `fp8scope report` end to end, as a user runs it: on the real H100 traces of samples/traces (figures checked
// against what the recorded programs did), on bad traces (exit 3, one line) and with bad flags (exit 2).
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kFp8Trace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite";
const std::string kSyncsTrace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-sample-syncs.sqlite";

nlohmann::json report_json(const std::vector<std::string>& extra)
{
    std::vector<std::string> args { "report", "--format", "json" };
    args.insert(args.end(), extra.begin(), extra.end());
    const auto result = run_fp8scope(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    REQUIRE(result.err.empty());
    return nlohmann::json::parse(result.out);
}

} // namespace

TEST_CASE("report on the real FP8 trace: NVTX steps, warm-up, bubbles and FP8 kernel classes", "[cli][report]")
{
    const auto json = report_json({ kFp8Trace });
    CHECK(json["schema"] == "fp8scope.report/2");
    CHECK(json["steps"]["source"] == "nvtx");
    CHECK(json["steps"]["warmup_excluded"] == 2);
    CHECK(json["steps"]["steps"].size() == 28); // 30 train_step ranges, 2 warm-up
    const auto& totals = json["totals"];
    const double ratio = totals["bubble_ratio"];
    CHECK(ratio > 0.0);
    CHECK(ratio < 1.0);
    CHECK(totals["busy_ns"].get<int64_t>() + totals["idle_ns"].get<int64_t>() == totals["step_ns"].get<int64_t>());
    // The FP8 sample's GEMMs run in FP8 through torch._scaled_mm, with cast and amax kernels around them.
    CHECK(json["kernel_classes"]["fp8_gemm"]["count"].get<int64_t>() > 0);
    CHECK(json["kernel_classes"]["cast"]["count"].get<int64_t>() > 0);
    CHECK(json["kernel_classes"]["amax_scale"]["count"].get<int64_t>() > 0);
}

TEST_CASE("report on the real syncs sample: its per-step syncs are found and charged", "[cli][report]")
{
    const auto json = report_json({ kSyncsTrace, "--warmup", "0" });
    CHECK(json["steps"]["steps"].size() == 20); // the sample's 20 train_step ranges
    int64_t stream = 0, device = 0, event = 0;
    for (const auto& api : json["syncs"]["by_api"]) {
        const std::string name = api["api"];
        if (name.starts_with("cudaStreamSynchronize"))
            stream += api["count"].get<int64_t>();
        if (name.starts_with("cudaDeviceSynchronize"))
            device += api["count"].get<int64_t>();
        if (name.starts_with("cudaEventSynchronize"))
            event += api["count"].get<int64_t>();
    }
    CHECK(stream == 20);
    CHECK(device == 20);
    CHECK(event == 20);
    CHECK(json["totals"]["idle_by_cause_ns"]["sync"].get<int64_t>() > 0);
}

TEST_CASE("report text names the step source, the thresholds and the bubble ratio", "[cli][report]")
{
    const auto result = run_fp8scope({ "report", kFp8Trace });
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("28 steps from nvtx") != std::string::npos);
    CHECK(result.out.find("launch latency ε") != std::string::npos);
    CHECK(result.out.find("bubble ratio") != std::string::npos);
    CHECK(result.out.find("FP8 GEMM") != std::string::npos);
}

TEST_CASE("report --steps keeps that range of steps", "[cli][report]")
{
    const auto json = report_json({ kFp8Trace, "--steps", "5:9" });
    REQUIRE(json["steps"]["steps"].size() == 5);
    CHECK(json["steps"]["steps"][0]["index"] == 5);
}

TEST_CASE("report on bad traces exits 3 with one line, and with bad flags 2", "[cli][report]")
{
    const std::string dir = scratch_dir("report_bad");
    write_file(dir + "/junk.sqlite", "this is not a database");
    check_bad_trace(run_fp8scope({ "report", dir + "/junk.sqlite" }));
    check_bad_trace(run_fp8scope({ "report", dir + "/missing.sqlite" }));
    for (const auto& args : std::vector<std::vector<std::string>> { { "report", kFp8Trace, "--steps", "9:5" },
             { "report", kFp8Trace, "--steps", "x" }, { "report", kFp8Trace, "--format", "yaml" },
             { "report", kFp8Trace, "--step-pattern", "(" }, { "report" } }) {
        const auto result = run_fp8scope(args);
        INFO(args.back());
        CHECK(result.exit_code == 2);
        CHECK(result.out.empty());
        CHECK(result.err.starts_with("fp8scope: usage error: "));
    }
}

TEST_CASE("report --format md gives the headline table, the syncs and the recommendations", "[cli][report]")
{
    const auto result = run_fp8scope({ "report", kSyncsTrace, "--warmup", "0", "--format", "md" });
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.starts_with("## fp8scope report: `"));
    CHECK(result.out.find("| step time | busy | bubble ratio | sync | dependency | launch | host |")
        != std::string::npos);
    CHECK(result.out.find("| `cudaStreamSynchronize` | 1.0 |") != std::string::npos); // one per step
    CHECK(result.out.find("### Recommendations") != std::string::npos);
}
