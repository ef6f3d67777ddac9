// Launch statistics (docs/analysis.md "Launch statistics"): one scenario per rule with exact numbers, a model
// built in memory for the sparse correlation-id join, and the recorded FP8 training sample.
#include "classes_test_support.hpp"
#include "fp8scope/analyzer/idle/launch_stats.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

TEST_CASE("launch delay: nearest-rank median, p90, p99 and max of kernel start - launch-call end", "[launch_stats]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    // Ten kernels with delays 10, 20, ..., 100 (listed out of order), each 1000 ns apart.
    const int64_t delays[] = { 30, 100, 10, 50, 70, 20, 90, 40, 80, 60 };
    for (int i = 0; i < 10; ++i) {
        const int64_t api_end = 1000 * (i + 1);
        s.launch(host, { .api_start_ns = api_end - 5, .api_end_ns = api_end },
            { .start_ns = api_end + delays[i], .end_ns = api_end + delays[i] + 100 });
    }
    const TraceModel model = load_scenario(s, "launch_delay");
    const LaunchStats stats = compute_launch_stats(model, make_steps({ { 0, 20000 } }));
    CHECK(stats.launch_delay.count == 10);
    CHECK(stats.launch_delay.min_ns == 10);
    CHECK(stats.launch_delay.median_ns == 50); // rank ceil(0.5 * 10) = 5th value
    CHECK(stats.launch_delay.p90_ns == 90); // 9th
    CHECK(stats.launch_delay.p99_ns == 100); // ceil(9.9) = 10th
    CHECK(stats.launch_delay.max_ns == 100);
    CHECK(stats.kernels == 10);
    CHECK(stats.timed_kernels == 10);
}

TEST_CASE("launch delay can be negative when a kernel starts before its launch call returns", "[launch_stats]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    s.launch(host, { .api_start_ns = 100, .api_end_ns = 200 }, { .start_ns = 150, .end_ns = 160 });
    const TraceModel model = load_scenario(s, "launch_delay_negative");
    const LaunchStats stats = compute_launch_stats(model, make_steps({ { 0, 1000 } }));
    CHECK(stats.launch_delay.median_ns == -50);
    CHECK(stats.launch_delay.max_ns == -50);
    REQUIRE(stats.streams.size() == 1);
    CHECK(stats.streams[0].max_depth == 0); // queued and started at the same instant
}

TEST_CASE("short kernels run for less time than their launch call took", "[launch_stats]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    // Launch calls of 10 ns; kernels of 5 (short), 10 (not: equal), 20 (not) and 9 (short).
    const int64_t durations[] = { 5, 10, 20, 9 };
    for (int i = 0; i < 4; ++i) {
        const int64_t t = 1000 * i;
        s.launch(
            host, { .api_start_ns = t, .api_end_ns = t + 10 }, { .start_ns = t + 50, .end_ns = t + 50 + durations[i] });
    }
    const TraceModel model = load_scenario(s, "launch_short");
    const LaunchStats stats = compute_launch_stats(model, make_steps({ { 0, 2000 }, { 2000, 4000 } }));
    CHECK(stats.short_kernels == 2);
    CHECK(stats.short_share == Approx(0.5));
    REQUIRE(stats.steps.size() == 2);
    CHECK(stats.steps[0].short_kernels == 1);
    CHECK(stats.steps[1].short_kernels == 1);
    CHECK(stats.steps[0].timed_kernels == 2);
}

TEST_CASE("queue depth: +1 at each launch-call end, -1 at each kernel start, time-weighted per step", "[launch_stats]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    // Stream 7: launches end at 100, 110, 120; the kernels start at 200, 300, 400.
    // Depth: [100,110) 1, [110,120) 2, [120,200) 3, [200,300) 2, [300,400) 1, then 0.
    for (int i = 0; i < 3; ++i) {
        s.launch(host, { .api_start_ns = 95 + 10 * i, .api_end_ns = 100 + 10 * i },
            { .start_ns = 200 + 100 * i, .end_ns = 300 + 100 * i, .stream_id = 7 });
    }
    // Stream 9: one kernel queued over [500, 600).
    s.launch(host, { .api_start_ns = 490, .api_end_ns = 500 }, { .start_ns = 600, .end_ns = 700, .stream_id = 9 });
    const TraceModel model = load_scenario(s, "launch_queue_depth");
    const LaunchStats stats = compute_launch_stats(model, make_steps({ { 0, 150 }, { 150, 1000 } }));
    REQUIRE(stats.streams.size() == 2);
    const StreamQueueDepth& s7 = stats.streams[0];
    CHECK(s7.stream_id == 7);
    CHECK(s7.max_depth == 3);
    // Step 0 [0, 150): 10*1 + 10*2 + 30*3 = 120; step 1 [150, 1000): 50*3 + 100*2 + 100*1 = 450.
    CHECK(s7.max_per_step[0] == 3);
    CHECK(s7.max_per_step[1] == 3);
    CHECK(s7.mean_per_step[0] == Approx(120.0 / 150.0));
    CHECK(s7.mean_per_step[1] == Approx(450.0 / 850.0));
    CHECK(s7.mean_depth == Approx(570.0 / 1000.0));
    const StreamQueueDepth& s9 = stats.streams[1];
    CHECK(s9.stream_id == 9);
    CHECK(s9.max_depth == 1);
    CHECK(s9.max_per_step[0] == 0);
    CHECK(s9.mean_depth == Approx(100.0 / 1000.0));
}

TEST_CASE("queue depth: launches from two threads that return out of kernel order are sorted first", "[launch_stats]")
{
    Scenario s;
    const auto a = s.thread(10, 10);
    const auto b = s.thread(10, 11);
    // The kernel that starts first (200) was launched by the call that returned last (120).
    s.launch(b, { .api_start_ns = 110, .api_end_ns = 120 }, { .start_ns = 200, .end_ns = 300, .stream_id = 7 });
    s.launch(a, { .api_start_ns = 90, .api_end_ns = 100 }, { .start_ns = 300, .end_ns = 400, .stream_id = 7 });
    const TraceModel model = load_scenario(s, "launch_queue_two_threads");
    const LaunchStats stats = compute_launch_stats(model, make_steps({ { 0, 1000 } }));
    REQUIRE(stats.streams.size() == 1);
    // Depth: [100,120) 1, [120,200) 2, [200,300) 1: 20 + 160 + 100 = 280.
    CHECK(stats.streams[0].max_depth == 2);
    CHECK(stats.streams[0].mean_depth == Approx(280.0 / 1000.0));
}

TEST_CASE("kernels and launches per step, graph kernels and orphans are counted but not timed", "[launch_stats]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    s.launch(host, { .api_start_ns = 100, .api_end_ns = 110 }, { .start_ns = 120, .end_ns = 130 });
    s.launch(host, { .api_start_ns = 200, .api_end_ns = 210, .name = "cudaGraphLaunch_v10000" },
        { .start_ns = 220, .end_ns = 230, .graph_id = 5 });
    s.orphan_kernel({ .start_ns = 300, .end_ns = 310 });
    // Launched in step 0 (by the call's start), runs in step 1.
    s.launch(host, { .api_start_ns = 900, .api_end_ns = 950 }, { .start_ns = 1100, .end_ns = 1200 });
    s.api_call(host, { .api_start_ns = 1300, .api_end_ns = 1310, .name = "cudaEventRecord_v3020" }); // no kernel
    const TraceModel model = load_scenario(s, "launch_per_step");
    const LaunchStats stats = compute_launch_stats(model, make_steps({ { 0, 1000 }, { 1000, 3000 } }));
    REQUIRE(stats.steps.size() == 2);
    CHECK(stats.steps[0].kernels == 3);
    CHECK(stats.steps[0].launches == 3);
    CHECK(stats.steps[0].launches_per_s == Approx(3.0 / 1e-6));
    CHECK(stats.steps[0].timed_kernels == 1);
    CHECK(stats.steps[1].kernels == 1);
    CHECK(stats.steps[1].launches == 0);
    CHECK(stats.kernels == 4);
    CHECK(stats.graph_kernels == 1);
    CHECK(stats.unmatched_kernels == 1);
    CHECK(stats.timed_kernels == 2);
    CHECK(stats.launches == 3);
    CHECK(stats.launches_per_s == Approx(3.0 / 3e-6));
    CHECK(stats.launch_delay.count == 2);
    CHECK(stats.launch_delay.max_ns == 150);
}

TEST_CASE("sparse correlation ids are joined as well as dense ones", "[launch_stats]")
{
    // Built in memory: ids 10^9 apart would make a table indexed by id absurdly large.
    TraceModel model;
    model.strings.values = { "cudaLaunchKernel", "k" };
    for (uint32_t i = 0; i < 4; ++i) {
        const int64_t t = 1000 * i;
        const uint32_t id = 1 + i * 1000000000u;
        model.api_calls.start_ns.push_back(t);
        model.api_calls.end_ns.push_back(t + 10);
        model.api_calls.global_tid.push_back(1);
        model.api_calls.correlation_id.push_back(id);
        model.api_calls.name.push_back(StringRef { 0 });
        model.api_calls.is_driver.push_back(0);
        model.api_calls.return_value.push_back(0);
        model.kernels.start_ns.push_back(t + 10 + i);
        model.kernels.end_ns.push_back(t + 100);
        model.kernels.device_id.push_back(0);
        model.kernels.stream_id.push_back(7);
        model.kernels.correlation_id.push_back(id);
        model.kernels.name.push_back(StringRef { 1 });
        model.kernels.short_name.push_back(StringRef { 1 });
        model.kernels.graph_id.push_back(0);
    }
    const LaunchStats stats = compute_launch_stats(model, make_steps({ { 0, 4000 } }));
    CHECK(stats.timed_kernels == 4);
    CHECK(stats.launch_delay.min_ns == 0);
    CHECK(stats.launch_delay.max_ns == 3);
    CHECK(stats.launches == 4);
}

TEST_CASE("a runtime call and a driver call with the kernel's correlation id: the runtime call is the launch call",
    "[launch_stats]")
{
    // Dense ids (a table indexed by id) and sparse ids (sorted array) must agree.
    for (const uint32_t id : { 5u, 3000000000u }) {
        TraceModel model;
        model.strings.values = { "cuLaunchKernel", "cudaLaunchKernel", "k" };
        const auto api = [&](int64_t start_ns, int64_t end_ns, uint8_t driver) {
            model.api_calls.start_ns.push_back(start_ns);
            model.api_calls.end_ns.push_back(end_ns);
            model.api_calls.global_tid.push_back(1);
            model.api_calls.correlation_id.push_back(id);
            model.api_calls.name.push_back(StringRef { driver ? 0u : 1u });
            model.api_calls.is_driver.push_back(driver);
            model.api_calls.return_value.push_back(0);
        };
        api(100, 200, 0); // cudaLaunchKernel [100, 200)
        api(110, 150, 1); // the cuLaunchKernel inside it
        model.kernels.start_ns.push_back(230);
        model.kernels.end_ns.push_back(240);
        model.kernels.device_id.push_back(0);
        model.kernels.stream_id.push_back(7);
        model.kernels.correlation_id.push_back(id);
        model.kernels.name.push_back(StringRef { 2 });
        model.kernels.short_name.push_back(StringRef { 2 });
        model.kernels.graph_id.push_back(0);
        const LaunchStats stats = compute_launch_stats(model, make_steps({ { 0, 1000 } }));
        INFO("correlation id " << id);
        CHECK(stats.launch_delay.max_ns == 30);
        CHECK(stats.short_kernels == 1); // 10 ns kernel, 100 ns runtime call
        CHECK(stats.launches == 1);
    }
}

TEST_CASE("no steps: nothing is counted", "[launch_stats]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    s.launch(host, { .api_start_ns = 100, .api_end_ns = 110 }, { .start_ns = 120, .end_ns = 130 });
    const TraceModel model = load_scenario(s, "launch_no_steps");
    const LaunchStats stats = compute_launch_stats(model, StepSet {});
    CHECK(stats.kernels == 0);
    CHECK(stats.launch_delay.count == 0);
    CHECK(stats.launches_per_s == 0.0);
    REQUIRE(stats.streams.size() == 1);
    CHECK(stats.streams[0].mean_depth == 0.0);
}

TEST_CASE("the recorded FP8 training sample: every kernel in the steps has its launch call", "[launch_stats][sample]")
{
    const TraceModel model = load_sample("h100-train-fp8.sqlite");
    const StepSet steps = nvtx_steps(model, "train_step");
    const LaunchStats stats = compute_launch_stats(model, steps);
    CHECK(stats.kernels == 46107);
    CHECK(stats.unmatched_kernels == 0);
    CHECK(stats.timed_kernels + stats.graph_kernels == stats.kernels);
    CHECK(stats.launch_delay.count == stats.timed_kernels);
    CHECK(stats.launch_delay.median_ns <= stats.launch_delay.p90_ns);
    CHECK(stats.launch_delay.p90_ns <= stats.launch_delay.p99_ns);
    CHECK(stats.launch_delay.p99_ns <= stats.launch_delay.max_ns);
    CHECK(stats.launches > 0);
    // By the call's start, not the kernel's: a launch at the end of a step whose kernel starts after it counts.
    CHECK(stats.launches <= static_cast<int64_t>(model.kernels.size()));
    REQUIRE_FALSE(stats.streams.empty());
    int64_t max_depth = 0;
    for (const StreamQueueDepth& stream : stats.streams)
        max_depth = std::max(max_depth, stream.max_depth);
    CHECK(max_depth >= 1);
    INFO("median delay " << stats.launch_delay.median_ns << " ns, short share " << stats.short_share << ", launches/s "
                         << stats.launches_per_s << ", max depth " << max_depth);
    CHECK(stats.short_share >= 0.0);
}
