// The collector's own GPU work (docs/analysis.md "The collector's own GPU work"): marked by correlation id, or named
// in fp8scope::probes in older traces, it is moved out of every figure and reported as its own line.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/load/collector_work.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

TEST_CASE(
    "the collector's marked kernels and memsets are left out of busy time, counts and launches", "[collector_work]")
{
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    // Step [0, 1000): the job's kernels 100-300 and 600-800; the collector's memset 300-350 and statistics kernel
    // 350-500 (launched by the job's thread inside its GEMM hook), and a marked kernel named like any other.
    s.step_marker(t, 0, 0);
    s.launch(t, { 50, 60 }, { 100, 300, "job_gemm" });
    const uint32_t set = s.memset(t, { 280, 290, "cudaMemsetAsync_v3020" }, { 300, 350, 4096 });
    const uint32_t stats = s.launch(t, { 290, 300 }, { 350, 500, "stats_kernel_without_the_namespace" });
    s.launch(t, { 590, 595 }, { 600, 800, "job_gemm" });
    s.step_marker(t, 1000, 1);
    s.launch(t, { 1000, 1010 }, { 1050, 1100, "job_gemm" });
    s.collector_work(set);
    s.collector_work(stats);
    const TraceModel model = write_and_load(s, "collector-work");

    CHECK(model.kernels.size() == 3);
    CHECK(model.memsets.size() == 0);
    CHECK(model.collector_work.size() == 2);
    CHECK(model.collector_api_calls == 2);
    CHECK(model.api_calls.size() == 3);

    ReportOptions options;
    options.steps.warmup = 0;
    const Report report = analyze(model, options);
    REQUIRE(report.steps.steps.size() == 2);
    // Step 0: [0, 1000) busy 200 + 200 = 400 (the collector's 300-500 is idle for the job).
    CHECK(report.bubbles.per_device_step[0].totals.busy_ns == 400);
    CHECK(report.launch.kernels == 3);
    CHECK(report.collector_work.kernels == 1);
    CHECK(report.collector_work.memsets == 1);
    CHECK(report.collector_work.api_calls == 2);
    // 200 ns of collector GPU time in step 0, none in step 1 (which ends at the last activity, 1100).
    CHECK(report.collector_work.time_in_steps_ns == 200);
    CHECK(report.collector_work.time_per_step_ns() == Approx(100.0));
}

TEST_CASE("traces from before the marking: kernels in fp8scope::probes are the collector's", "[collector_work]")
{
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    s.launch(t, { 0, 10 }, { 100, 300, "job_gemm" });
    s.launch(t, { 10, 20 }, { 300, 400, "void fp8scope::probes::detail::stats_kernel<float>(int)" });
    s.launch(t, { 20, 30 }, { 400, 500, "job_gemm" });
    const TraceModel model = write_and_load(s, "collector-work-by-name");
    CHECK(model.kernels.size() == 2);
    CHECK(model.collector_work.size() == 1);
    // The launch call stays: without the table the call is not known to be the collector's.
    CHECK(model.api_calls.size() == 3);
}
