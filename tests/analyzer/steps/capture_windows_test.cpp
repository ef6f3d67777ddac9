// Windowed recordings (docs/analysis.md "Capture windows"): only steps wholly inside a capture window are analysed;
// a step cut by a window's edge is dropped; the time between windows is in no step, so it is never a bubble; a trace
// without windows is analysed as before. Each scenario: steps of 100 ns marked at 0, 100, ..., 900, and in each
// step one kernel from 10 to 60 ns into it (50 ns busy, 50 ns idle), launched 5 ns into the step.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"
#include "fp8scope/format/trace_db.hpp"

#include <catch2/catch.hpp>

#include <functional>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

constexpr int64_t kStepNs = 100;

// Markers for steps 0..9; kernels only in the steps `recorded` says (a windowed trace has none outside its windows).
Scenario ten_steps(const std::function<bool(int64_t)>& recorded = [](int64_t) { return true; })
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    for (int64_t step = 0; step < 10; ++step) {
        const int64_t at = step * kStepNs;
        s.step_marker(host, at, step);
        if (recorded(step))
            s.launch(host, { at + 1, at + 5 }, { .start_ns = at + 10, .end_ns = at + 60 });
    }
    return s;
}

std::vector<int64_t> indices(const StepSet& set)
{
    std::vector<int64_t> out;
    for (const StepInterval& step : set.steps)
        out.push_back(step.index);
    return out;
}

const StepOptions kNoWarmup { .nvtx_pattern = {}, .warmup = 0 };

} // namespace

TEST_CASE("capture windows: steps outside every window are dropped", "[steps][capture]")
{
    Scenario s = ten_steps([](int64_t step) { return (step >= 3 && step <= 5) || step >= 8; });
    s.capture_mode("steps", "--capture-steps 3:5");
    s.capture_window(300, 600, schema::CaptureTrigger::Steps, 3, 5);
    s.capture_window(800, std::nullopt, schema::CaptureTrigger::Steps, 8, std::nullopt); // open when the trace ended
    const TraceModel model = write_and_load(s, "capture-outside");
    REQUIRE(model.capture.windowed);
    REQUIRE(model.capture.windows.size() == 2);
    CHECK(model.capture.windows[1].open_at_end);

    const StepSet steps = find_steps(model, kNoWarmup);
    CHECK(steps.source == StepSource::Markers);
    CHECK(indices(steps) == std::vector<int64_t> { 3, 4, 5, 8, 9 });
    CHECK(steps.outside_windows_excluded == 5); // 0, 1, 2, 6, 7
    CHECK(steps.window_edge_excluded == 0);
    // The last step ends with the trace's last activity (960), inside the open window.
    CHECK(steps.steps.back().end_ns == 960);

    // Warm-up counts from the job's first marked step: steps 0 and 1, which lie outside the windows anyway.
    const StepSet warm = find_steps(model, {});
    CHECK(indices(warm) == std::vector<int64_t> { 3, 4, 5, 8, 9 });
    CHECK(warm.warmup_excluded == 2);
    CHECK(warm.outside_windows_excluded == 3);
}

TEST_CASE("capture windows: a step cut by a window's edge is dropped", "[steps][capture]")
{
    Scenario s = ten_steps([](int64_t step) { return step >= 3 && step <= 6; });
    s.capture_mode("time", "--delay 0.00000035 --duration 0.0000003");
    s.capture_window(350, 650, schema::CaptureTrigger::Time, 4, 6);
    const StepSet steps = find_steps(write_and_load(s, "capture-edge"), kNoWarmup);
    CHECK(indices(steps) == std::vector<int64_t> { 4, 5 });
    CHECK(steps.window_edge_excluded == 2); // step 3 [300, 400) and step 6 [600, 700)
    CHECK(steps.outside_windows_excluded == 5); // 0, 1, 2, 7, 8 (9 would start after the last activity, at 660)
}

TEST_CASE("capture windows: a step the device ran after its window closed lies in the window", "[steps][capture]")
{
    // cudaProfilerStart before step 3's marker, cudaProfilerStop at 605, after step 6's marker and before its work
    // (tests/gpu/workloads/profiler_range.py): steps 3, 4 and 5 were launched in the window, but the device runs
    // behind the host, so their kernels ran [350, 500), [500, 650) and [650, 800), past the window's host end. Each
    // window edge is mapped to the device clock as the steps' are: the window is [300, 800] there, and holds all three
    // (an H200 recording lost its last two steps to the host end).
    Scenario s;
    const auto host = s.thread(4242, 4242);
    for (int64_t step = 0; step < 10; ++step)
        s.step_marker(host, step * kStepNs, step);
    for (int64_t step = 3; step <= 5; ++step)
        s.launch(host, { step * kStepNs + 1, step * kStepNs + 5 },
            { .start_ns = 350 + 150 * (step - 3), .end_ns = 500 + 150 * (step - 3) });
    s.capture_mode("cudaProfilerApi", "--capture-range cudaProfilerApi");
    s.capture_window(300, 605, schema::CaptureTrigger::ProfilerApi, 3, 6);
    const StepSet steps = find_steps(write_and_load(s, "capture-device-lag"), kNoWarmup);
    CHECK(indices(steps) == std::vector<int64_t> { 3, 4, 5 });
    CHECK(steps.window_edge_excluded == 0);
    REQUIRE(steps.steps.size() == 3);
    CHECK(steps.steps[2].start_ns == 650);
    CHECK(steps.steps[2].end_ns == 800);
}

TEST_CASE("capture windows: the gap between two windows is never a bubble", "[bubbles][capture]")
{
    Scenario s = ten_steps([](int64_t step) { return (step >= 3 && step <= 5) || step >= 8; });
    s.capture_mode("periodic", "--capture-every 5 --capture-length 3");
    s.capture_window(300, 600, schema::CaptureTrigger::Periodic, 3, 5);
    s.capture_window(800, 1000, schema::CaptureTrigger::Periodic, 8, 9);
    const TraceModel model = write_and_load(s, "capture-gap");
    const StepSet steps = find_steps(model, kNoWarmup);
    REQUIRE(indices(steps) == std::vector<int64_t> { 3, 4, 5, 8, 9 });
    const BubbleAnalysis analysis = analyze_bubbles(model, steps, find_host_blocking_calls(model));
    // Steps 3, 4, 5 and 8: 100 ns each, 50 idle; step 9 [900, 960): 10 idle. The 200 ns from 600 to 800, with no
    // activity recorded, count nowhere.
    CHECK(analysis.total.step_ns == 460);
    CHECK(analysis.total.busy_ns == 250);
    CHECK(analysis.total.idle_ns == 210);
}

TEST_CASE("capture windows: a trace without them is analysed as before", "[steps][capture]")
{
    const TraceModel model = write_and_load(ten_steps(), "capture-none");
    CHECK_FALSE(model.capture.windowed);
    CHECK(model.capture.mode == "full");
    CHECK(model.capture.windows.empty());
    const StepSet steps = find_steps(model, kNoWarmup);
    CHECK(steps.steps.size() == 10);
    CHECK(steps.outside_windows_excluded == 0);
    CHECK(steps.window_edge_excluded == 0);
    const BubbleAnalysis analysis = analyze_bubbles(model, steps, find_host_blocking_calls(model));
    CHECK(analysis.total.step_ns == 960);
    CHECK(analysis.total.idle_ns == 460);
}

TEST_CASE("capture windows: a windowed run that never opened one analyses no step", "[steps][capture]")
{
    Scenario s = ten_steps([](int64_t) { return false; });
    s.launch(s.thread(4242, 4242), { 0, 1 }, { .start_ns = 2, .end_ns = 3 }); // some activity: a trace, not empty
    s.capture_mode("cudaProfilerApi", "--capture-range cudaProfilerApi");
    const TraceModel model = write_and_load(s, "capture-never");
    CHECK(model.capture.windowed);
    CHECK(model.capture.windows.empty());
    const StepSet steps = find_steps(model, kNoWarmup);
    CHECK(steps.steps.empty());
    CHECK(steps.outside_windows_excluded == 9); // step 9 would start after the trace's last activity: none
}

TEST_CASE("capture windows: without step structure each window is one step", "[steps][capture]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, { 100, 105 }, { .start_ns = 110, .end_ns = 150 });
    s.launch(host, { 500, 505 }, { .start_ns = 510, .end_ns = 590, .name = "other" });
    s.capture_mode("cudaProfilerApi", "--capture-range cudaProfilerApi");
    s.capture_window(90, 200, schema::CaptureTrigger::ProfilerApi);
    s.capture_window(480, 600, schema::CaptureTrigger::ProfilerApi);
    const StepSet steps = find_steps(write_and_load(s, "capture-whole"), kNoWarmup);
    CHECK(steps.source == StepSource::WholeTrace);
    REQUIRE(steps.steps.size() == 2);
    // Each window, cut to the trace's activity (the first API call at 100, the last kernel's end at 590).
    CHECK(steps.steps[0].start_ns == 100);
    CHECK(steps.steps[0].end_ns == 200);
    CHECK(steps.steps[1].start_ns == 480);
    CHECK(steps.steps[1].end_ns == 590);
}

TEST_CASE("capture windows round-trip through the writer, a closing row replaces the opening one", "[loader][capture]")
{
    const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "steps-bubbles";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / ("capture-roundtrip-" + std::to_string(::getpid()) + ".sqlite")).string();
    std::filesystem::remove(path);
    SessionInfo session;
    session.producer = "capture test";
    session.capture_mode = "periodic";
    session.capture_options = "--capture-every 20 --capture-length 5";
    auto db = TraceDb::create(path, session);
    REQUIRE(db);
    // As the collector writes them: at the opening without an end, at the closing complete, under the same id.
    REQUIRE((*db)->set_capture_window({ 1, 1000, std::nullopt, 0, 0, schema::CaptureTrigger::Periodic }));
    REQUIRE((*db)->set_capture_window({ 1, 1000, 5000, 0, 4, schema::CaptureTrigger::Periodic }));
    REQUIRE((*db)->set_capture_window({ 2, 9000, std::nullopt, 20, 20, schema::CaptureTrigger::Periodic }));
    REQUIRE((*db)->finish({ "exit", 10000 }));
    db->reset();

    const auto model = load_trace(path);
    REQUIRE(model);
    const CaptureInfo& capture = model->capture;
    CHECK(capture.windowed);
    CHECK(capture.mode == "periodic");
    CHECK(capture.options == "--capture-every 20 --capture-length 5");
    REQUIRE(capture.windows.size() == 2);
    CHECK(capture.windows[0].id == 1);
    CHECK(capture.windows[0].start_ns == 1000);
    CHECK(capture.windows[0].end_ns == 5000);
    CHECK_FALSE(capture.windows[0].open_at_end);
    CHECK(capture.windows[0].first_step == 0);
    CHECK(capture.windows[0].last_step == 4);
    CHECK(capture.windows[0].trigger == int32_t(schema::CaptureTrigger::Periodic));
    CHECK(capture.windows[1].open_at_end);
    CHECK(capture.windows[1].end_ns == kMaxTraceTimeNs);
    CHECK(model->row_counts.at("FP8SCOPE_CAPTURE_WINDOW") == 2);
}
