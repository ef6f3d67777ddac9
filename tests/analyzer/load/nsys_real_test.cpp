// A real Nsight Systems SQLite export (docs/benchmarks.md "A real Nsight Systems export against fp8scope"): the syncs
// sample recorded on the H100 by `nsys profile` and exported with `nsys export --type sqlite`, beside the same sample
// recorded by fp8scope in the same session (samples/traces/nsys/, truth.json holds each run's report figures). The two
// tools must agree on what the program did exactly: steps, kernels and host-blocking syncs. The bubble ratio of this
// sample varies from run to run by more than the two tools differ (0.192 to 0.258 over six runs, truth.json), so each
// file is held to its own recorded figure here; docs/benchmarks.md has the comparison.
#include "analysis_test_support.hpp"

#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>

using namespace fp8scope;
using namespace fp8scope::testing;

namespace {

nlohmann::json recorded_figures(const std::string& run)
{
    std::ifstream in(std::string(FP8SCOPE_SAMPLE_TRACES) + "/nsys/truth.json");
    REQUIRE(in);
    return nlohmann::json::parse(in).at("reports").at(run);
}

} // namespace

TEST_CASE("a real nsys export loads and its report agrees with fp8scope's trace of the same program", "[nsys][real]")
{
    const analyzer::TraceModel nsys = load_recorded("nsys/h100-sample-syncs.nsys.sqlite");
    const analyzer::TraceModel ours = load_recorded("nsys/h100-sample-syncs.fp8scope.sqlite");
    CHECK(nsys.meta.producer.find("Nsight Systems") != std::string::npos);
    const analyzer::Report a = analyzer::analyze(nsys);
    const analyzer::Report b = analyzer::analyze(ours);
    // The syncs sample's printed truth: 20 steps (NVTX train_step), 5 kernels and 5 host-blocking syncs per step;
    // the default warm-up leaves 18.
    CHECK(a.steps.steps.size() == 18);
    CHECK(b.steps.steps.size() == 18);
    CHECK(a.launch.kernels == 90);
    CHECK(b.launch.kernels == 90);
    CHECK(a.syncs.total.count == 90);
    CHECK(b.syncs.total.count == 90);
    CHECK(a.syncs.by_api.size() == b.syncs.by_api.size());
    CHECK(a.totals.bubble_ratio == Approx(recorded_figures("nsys-1").at("bubble_ratio").get<double>()).margin(5e-5));
    CHECK(
        b.totals.bubble_ratio == Approx(recorded_figures("fp8scope-1").at("bubble_ratio").get<double>()).margin(5e-5));
}

TEST_CASE("a real nsys export of the host_stall sample: the same bubble ratio within 1 pp", "[nsys][real]")
{
    // host_stall --steps 30 --stall-ms 2 (samples/traces/nsys/host-stall-truth.json): each step's 2 ms
    // host busy-wait is idle time the program sets, so the ratio no longer depends on host jitter. Over 5 rounds per
    // tool the medians were 0.6735 (fp8scope) and 0.6732 (nsys); the kept pair is round 1 of each.
    const analyzer::TraceModel nsys = load_recorded("nsys/h100-sample-host-stall.nsys.sqlite");
    const analyzer::TraceModel ours = load_recorded("nsys/h100-sample-host-stall.fp8scope.sqlite");
    const analyzer::Report a = analyzer::analyze(nsys);
    const analyzer::Report b = analyzer::analyze(ours);
    // The program printed 30 steps of 4 + 4 kernels and one cudaStreamSynchronize; the default warm-up leaves 28.
    CHECK(a.steps.steps.size() == 28);
    CHECK(b.steps.steps.size() == 28);
    CHECK(a.launch.kernels == 28 * 8);
    CHECK(b.launch.kernels == 28 * 8);
    CHECK(a.syncs.total.count == 28);
    CHECK(b.syncs.total.count == 28);
    CHECK(std::abs(a.totals.bubble_ratio - b.totals.bubble_ratio) < 0.01);
    // The planted stalls are host idle in both: 28 of 2 ms, less the 4 x 100 us kernels the GPU still ran at the start
    // of each, so about 1.6 ms per step.
    const auto host = static_cast<size_t>(analyzer::BubbleCause::Host);
    for (const analyzer::Report* report : { &a, &b }) {
        CHECK(report->totals.cause_ns[host] > 28 * 1'500'000);
        CHECK(report->totals.cause_ns[host] < 28 * 2'000'000);
    }
    std::ifstream in(std::string(FP8SCOPE_SAMPLE_TRACES) + "/nsys/host-stall-truth.json");
    REQUIRE(in);
    const auto reports = nlohmann::json::parse(in).at("reports");
    CHECK(a.totals.bubble_ratio == Approx(reports.at("nsys-1").at("bubble_ratio").get<double>()).margin(5e-5));
    CHECK(b.totals.bubble_ratio == Approx(reports.at("fp8scope-1").at("bubble_ratio").get<double>()).margin(5e-5));
}
