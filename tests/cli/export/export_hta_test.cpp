// Holistic Trace Analysis' idle time breakdown, rebuilt from the export (hta_idle.hpp), against the report's own
// idle time by cause on a scenario where the two definitions must agree (docs/export.md "Holistic Trace Analysis").
#include "export_test_support.hpp"
#include "hta_idle.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using nlohmann::json;

namespace {

constexpr int64_t kUs = 1'000;
constexpr int64_t kSteps = 5;
constexpr int64_t kStepUs = 1'000;
constexpr int64_t kFirstStepUs = 10'000;

// Five ProfilerStep#N NVTX ranges of 1 ms on one thread and one stream, each with the same six kernels and the same
// five gaps, one of each kind (offsets in us from the step's start):
//   K1 [0, 100)                                launched by a call [-20, -15) (in the previous step)
//   gap  50 us, host:       K2 [150, 250)      launched [130, 135), after K1 ended
//   gap 150 us, sync:       K3 [400, 450)      a cudaStreamSynchronize [240, 252) drains K2; launched [380, 385)
//   gap  50 us, dependency: K4 [500, 600)      launched [386, 390), long before K3 ended
//   gap  20 us, dependency: K5 [620, 700)      launched [391, 395)
//   gap 200 us, host:       K6 [900, 1000)     launched [880, 885), after a silence
// The launch latency is 15 us for four kernels of six, so the report's epsilon is 15 us.
// The step ends where K6 ends and the next step's K1 starts, so that neither tool sees idle time at step edges. Times
// are whole microseconds: HTA rounds to them.
testing::Scenario hta_scenario()
{
    testing::Scenario s;
    s.session().rank = 0;
    s.session().world_size = 1;
    const auto host = s.thread(4242, 4242, "python");
    auto launch = [&](int64_t call_us, int64_t call_end_us, int64_t start_us, int64_t end_us, const char* name) {
        s.launch(host, { .api_start_ns = call_us * kUs, .api_end_ns = call_end_us * kUs },
            { .start_ns = start_us * kUs, .end_ns = end_us * kUs, .name = name });
    };
    for (int64_t step = 0; step < kSteps; ++step) {
        const int64_t b = kFirstStepUs + step * kStepUs;
        s.nvtx_range(host, b * kUs, (b + kStepUs) * kUs, "ProfilerStep#" + std::to_string(step));
        launch(b - 20, b - 15, b, b + 100, "k1_gemm");
        launch(b + 130, b + 135, b + 150, b + 250, "k2_gemm");
        s.sync(host, (b + 240) * kUs, (b + 252) * kUs, schema::SyncType::StreamSynchronize, 7u);
        launch(b + 380, b + 385, b + 400, b + 450, "k3_cast");
        launch(b + 386, b + 390, b + 500, b + 600, "k4_after_event");
        launch(b + 391, b + 395, b + 620, b + 700, "k5_after_event");
        launch(b + 880, b + 885, b + 900, b + 1'000, "k6_gemm");
    }
    return s;
}

} // namespace

TEST_CASE("HTA's idle time breakdown rebuilt from the export matches the report's idle time by cause", "[export][hta]")
{
    const std::string dir = scratch_dir("export_hta");
    const std::string trace = dir + "/hta.sqlite";
    REQUIRE(hta_scenario().write_fp8scope(trace));
    // Every step is exported: HTA leaves out the last ProfilerStep (include_last_profiler_step=False), so its figures
    // cover steps 0-3, and the report is asked for those.
    const json doc = export_ok(trace, dir + "/hta.json.gz", { "--warmup", "0" });
    check_valid(doc);
    const auto hta = hta_idle_time_breakdown(doc);
    REQUIRE(hta.size() == 1);
    REQUIRE(hta.contains(7));
    const HtaStreamIdle& idle = hta.at(7);

    // HTA per step: host wait 50 + 150 + 200 us, kernel wait 20 us, other 50 us; four steps.
    CHECK(idle.host_wait_us == 4 * 400);
    CHECK(idle.kernel_wait_us == 4 * 20);
    CHECK(idle.other_us == 4 * 50);

    const json report
        = json::parse(run_fp8scope_ok({ "report", trace, "--format", "json", "--warmup", "0", "--steps", "0:3" }));
    REQUIRE(report["steps"]["source"] == "nvtx");
    REQUIRE(report["steps"]["steps"].size() == 4);
    const json& by_cause = report["totals"]["idle_by_cause_ns"];
    const int64_t sync = by_cause["sync"], dependency = by_cause["dependency"];
    const int64_t launch = by_cause["launch"], host = by_cause["host"], comm = by_cause["comm"];
    CHECK(sync == 4 * 150 * kUs);
    CHECK(dependency == 4 * 70 * kUs);
    CHECK(launch + host == 4 * 250 * kUs);
    CHECK(comm == 0);

    // The mapping docs/export.md gives: HTA's host wait is the device waiting for the CPU (sync, launch, host); its
    // kernel wait and other are work already queued (dependency); the totals are the same idle time.
    CHECK(std::llround(idle.host_wait_us * kUs) == sync + launch + host);
    CHECK(std::llround((idle.kernel_wait_us + idle.other_us) * kUs) == dependency);
    CHECK(std::llround(idle.total() * kUs) == report["totals"]["idle_ns"].get<int64_t>());
}
