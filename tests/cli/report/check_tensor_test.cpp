// `fp8scope check` tensor budgets (--max-saturation, --max-underflow, --no-nonfinite): exit codes, the site and
// step a failure names, the reason when a figure cannot be computed, and bad values. On a scenario with a NaN,
// the recorded demo trace (tensor statistics of FP8 codes) and the real FP8 trace (no tensor statistics).
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kDemoTrace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/scenario-demo.sqlite";
const std::string kFp8Trace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite";

std::string read(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Six marked steps (0..5, warm-up 2 leaves 2..5) of one kernel each; a BF16 tensor cast to E4M3 at a GEMM under
// "train_step/layers.3", sampled every step: 1% saturated and 3% underflowed in step 4, two NaN in step 3.
void write_nan_trace(const std::string& path)
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, s.session().pid, "python");
    const int64_t site = s.tensor_site("gemm 64x64x64", schema::TensorRole::A, schema::Dtype::BFloat16, 64, 64,
        schema::StatsSource::GemmInterception, "train_step/layers.3");
    for (int64_t step = 0; step < 6; ++step) {
        const int64_t t = step * 10'000;
        s.step_marker(host, t, step);
        s.launch(host, { .api_start_ns = t + 100, .api_end_ns = t + 200 },
            { .start_ns = t + 300, .end_ns = t + 9'000, .name = "gemm" });
        TensorStatsRow row;
        row.site_id = site;
        row.step = step;
        row.timestamp_ns = t + 150;
        row.dtype = schema::Dtype::BFloat16;
        row.target_format = schema::Fp8Format::E4M3;
        row.numel = 4096;
        row.scale = 64.0;
        row.scale_inv = 1.0 / 64;
        row.amax = 1.75;
        row.saturated = step == 4 ? 40 : 0;
        row.underflows = step == 4 ? 123 : 0;
        row.nans = step == 3 ? 2 : 0;
        s.tensor_stats(row);
    }
    const auto written = s.write_fp8scope(path);
    REQUIRE(written);
}

} // namespace

TEST_CASE("check --no-nonfinite fails on a NaN and names its step and site, saturation and underflow name theirs",
    "[cli][check][tensor]")
{
    const std::string dir = scratch_dir("check_tensor_nan");
    const std::string trace = dir + "/nan.sqlite";
    write_nan_trace(trace);
    const auto result = run_fp8scope({ "check", trace, "--no-nonfinite", "--max-saturation", "0.01", "--max-underflow",
        "0.02", "--junit", dir + "/check.xml", "--md", dir + "/check.md" });
    INFO(result.out << result.err);
    CHECK(result.exit_code == 1);
    // 40 / 4096 = 0.00977 holds; 123 / 4096 = 0.0300 does not.
    CHECK(result.out.find("ok   max-saturation") != std::string::npos);
    CHECK(result.out.find("worst step 4: 0.00977 in train_step/layers.3 · gemm 64x64x64 #0 · A") != std::string::npos);
    CHECK(result.out.find("FAIL max-underflow") != std::string::npos);
    CHECK(result.out.find("0.03 (budget     0.02; worst step 4: 0.03 in train_step/") != std::string::npos);
    CHECK(result.out.find("FAIL no-nonfinite") != std::string::npos);
    CHECK(result.out.find("first at step 3: 2 NaN/Inf in train_step/layers.3 · gemm 64x64x64 #0 · A")
        != std::string::npos);
    CHECK(result.out.find("1 of 3 budgets hold") != std::string::npos);
    const std::string junit = read(dir + "/check.xml");
    CHECK(junit.find("<failure message=\"no-nonfinite = 1 exceeds the budget 0; first at step 3") != std::string::npos);
    CHECK(read(dir + "/check.md").find("| `no-nonfinite` | 1 | 0 | **FAIL** |") != std::string::npos);
}

TEST_CASE("check on the demo trace: saturation and NaN checks hold, underflow cannot be judged and fails",
    "[cli][check][tensor]")
{
    auto result = run_fp8scope({ "check", kDemoTrace, "--max-saturation", "0.001", "--no-nonfinite" });
    INFO(result.out << result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.out.find("2 of 2 budgets hold") != std::string::npos);
    CHECK(result.out.find("no NaN/Inf in any tensor sample") != std::string::npos);

    result = run_fp8scope({ "check", kDemoTrace, "--max-underflow", "0.01" });
    INFO(result.out << result.err);
    CHECK(result.exit_code == 1);
    CHECK(result.out.find("no tensor sample in the analysed steps can show underflow") != std::string::npos);
}

TEST_CASE("check's tensor budgets fail on a trace without tensor statistics, saying so", "[cli][check][tensor]")
{
    const std::string dir = scratch_dir("check_tensor_none");
    const auto result = run_fp8scope(
        { "check", kFp8Trace, "--no-nonfinite", "--max-bubble-ratio", "0.9", "--junit", dir + "/check.xml" });
    INFO(result.out << result.err);
    CHECK(result.exit_code == 1);
    CHECK(result.out.find("FAIL no-nonfinite") != std::string::npos);
    CHECK(result.out.find("the trace has no tensor statistics") != std::string::npos);
    CHECK(result.out.find("1 of 2 budgets hold") != std::string::npos);
    CHECK(read(dir + "/check.xml").find("<failure message=\"no-nonfinite: the trace has no tensor statistics\"/>")
        != std::string::npos);
}

TEST_CASE(
    "check's tensor budgets outside 0..1 or not numbers are usage errors (exit 2, one line)", "[cli][check][tensor]")
{
    for (const auto& args : std::vector<std::vector<std::string>> { { "--max-saturation", "1.5" },
             { "--max-saturation", "-0.1" }, { "--max-underflow", "2" }, { "--max-underflow", "abc" },
             { "--max-saturation", "nan" }, { "--max-saturation" } }) {
        std::vector<std::string> argv { "check", kDemoTrace };
        argv.insert(argv.end(), args.begin(), args.end());
        const auto result = run_fp8scope(argv);
        INFO(args.front() << " " << (args.size() > 1 ? args[1] : "") << ": " << result.err);
        CHECK(result.exit_code == 2);
        CHECK(result.err.starts_with("fp8scope: usage error: "));
        CHECK(testing::line_count(result.err) <= 2); // the error, and the pointer to --help
        CHECK(result.out.empty());
    }
}
