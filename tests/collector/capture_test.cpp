// Capture (collector/src/capture/capture.hpp) over a fake host: which events switch the window's activities, flush and
// write rows, the step-counted grace before CUPTI is detached after a window closed by steps, and which step source
// drives the windows. No CUPTI, no GPU.
#include "capture/capture.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::collector;

namespace {

CapturePlan plan_of(const CaptureRequest& request)
{
    const CapturePlanResult result = parse_capture_plan(request);
    REQUIRE(result.plan);
    return *result.plan;
}

// Records what Capture asks of the session, in order, with a clock the test moves.
class FakeHost final : public CaptureHost {
public:
    std::vector<std::string> log;
    std::vector<CaptureWindowRow> rows;
    int64_t now = 0;
    std::optional<int64_t> detach_due;
    bool queue_full = false;
    int detach_soon_calls = 0;

    int64_t now_ns() override { return now; }
    void switch_window(bool on, std::atomic<bool>& recording) override
    {
        recording.store(on);
        log.push_back(on ? "window on" : "window off");
    }
    void flush_completed_records() override { log.push_back("flush"); }
    bool post_window(const CaptureWindowRow& row) override
    {
        log.push_back("row");
        rows.push_back(row);
        return !queue_full;
    }
    void note_first_nvtx_step_range() override { log.push_back("note nvtx step ranges"); }
    void detach_soon() override
    {
        ++detach_soon_calls;
        log.push_back("detach soon");
    }
    std::optional<int64_t> detach_due_ns() override { return detach_due; }
    void warn_once(std::string_view key, std::string_view) override { log.push_back("warn " + std::string(key)); }
};

struct Rig {
    Steps steps;
    FakeHost host;
    Capture capture { steps, host };

    explicit Rig(const CaptureRequest& request)
    {
        capture.begin(plan_of(request), 0);
        host.log.clear();
    }
    // fp8scope_step(step) at `now_ns`, as the C API calls it.
    void marker(int64_t step, int64_t now_ns = 0)
    {
        steps.mark(step);
        capture.on_marker_step(step, now_ns);
    }
    std::vector<std::string> take()
    {
        std::vector<std::string> log;
        log.swap(host.log);
        return log;
    }
};

using Log = std::vector<std::string>;

} // namespace

TEST_CASE("capture: a full capture records throughout and follows no step", "[collector][capture]")
{
    Steps steps;
    FakeHost host;
    Capture capture(steps, host);
    capture.begin(CapturePlan {}, 0);
    CHECK(capture.recording());
    CHECK(capture.allows_stats());
    CHECK(capture.edges_on_steps());
    steps.mark(3);
    capture.on_marker_step(3, 10);
    capture.on_nvtx_step(0);
    capture.tick();
    CHECK(host.log.empty());
    CHECK(capture.never_opened() == std::nullopt);
}

TEST_CASE(
    "capture: a steps window switches the activities at its first step and after its last", "[collector][capture]")
{
    Steps steps;
    FakeHost host;
    Capture capture(steps, host);
    capture.begin(plan_of({ .steps = "2:3" }), 0);
    // No window yet: the kinds enabled at the start go off.
    CHECK(host.log == Log { "window off" });
    CHECK_FALSE(capture.recording());
    CHECK_FALSE(capture.allows_stats());
    host.log.clear();

    steps.mark(1);
    capture.on_marker_step(1, 100);
    CHECK(host.log.empty());
    steps.mark(2);
    capture.on_marker_step(2, 200);
    CHECK(host.log == Log { "window on", "row" });
    CHECK(capture.recording());
    CHECK(host.rows.back().start_ns == 200);
    CHECK_FALSE(host.rows.back().end_ns);
    host.log.clear();

    steps.mark(3);
    capture.on_marker_step(3, 300);
    CHECK(host.log.empty());
    steps.mark(4);
    capture.on_marker_step(4, 400);
    CHECK(host.log == Log { "window off", "flush", "row" });
    CHECK_FALSE(capture.recording());
    CHECK(host.rows.back().end_ns == 400);
    CHECK(capture.grace_steps() == 0);
}

TEST_CASE("capture: CUPTI is detached kGraceSteps steps after a window closed by steps", "[collector][capture]")
{
    Rig rig({ .steps = "2:3" });
    rig.marker(2);
    rig.marker(3);
    rig.marker(4); // closes the window: the grace starts
    rig.take();
    REQUIRE(Capture::kGraceSteps == 2);

    rig.marker(5);
    CHECK(rig.capture.grace_steps() == 1);
    CHECK(rig.host.detach_soon_calls == 0);
    rig.marker(6);
    CHECK(rig.take() == Log { "detach soon" });
    CHECK(rig.capture.grace_steps() == std::nullopt);
    // Once: later steps ask nothing more.
    rig.marker(7);
    rig.marker(8);
    CHECK(rig.host.detach_soon_calls == 1);
}

TEST_CASE("capture: a window that would open within kMinDetachedSteps keeps CUPTI attached", "[collector][capture]")
{
    REQUIRE(Capture::kMinDetachedSteps == 3);
    SECTION("the next periodic window is near: no detach")
    {
        // Steps 0-1, 6-7, 12-13, ...: the window closes at step 2; the grace ends at step 4; step 6 opens again.
        Rig rig({ .every = "6", .length = "2" });
        for (int64_t step = 0; step <= 5; ++step)
            rig.marker(step);
        CHECK(rig.host.detach_soon_calls == 0);
        CHECK(rig.capture.grace_steps() == std::nullopt);
        rig.marker(6);
        CHECK(rig.capture.recording());
    }
    SECTION("the next periodic window is far: detached at the grace's end")
    {
        // Steps 0-1, 20-21, ...: closes at 2, detached at 4.
        Rig rig({ .every = "20", .length = "2" });
        for (int64_t step = 0; step <= 3; ++step)
            rig.marker(step);
        CHECK(rig.host.detach_soon_calls == 0);
        rig.marker(4);
        CHECK(rig.host.detach_soon_calls == 1);
    }
}

TEST_CASE("capture: a window opening during the grace calls the step grace off", "[collector][capture]")
{
    // Steps 0, 2, 4, ...: every window closes one step after it opened and the next opens a step later.
    Rig rig({ .every = "2", .length = "1" });
    for (int64_t step = 0; step <= 9; ++step)
        rig.marker(step);
    CHECK(rig.host.detach_soon_calls == 0);
}

TEST_CASE("capture: windows by steps change only on steps, time and profiler windows do not", "[collector][capture]")
{
    CHECK(Rig({ .steps = "2:3" }).capture.edges_on_steps());
    CHECK(Rig({ .every = "10", .length = "2" }).capture.edges_on_steps());
    CHECK_FALSE(Rig({ .range = "cudaProfilerApi" }).capture.edges_on_steps());
    CHECK_FALSE(Rig({ .delay = "1", .duration = "1" }).capture.edges_on_steps());
}

TEST_CASE("capture: time and profiler windows have no step grace", "[collector][capture]")
{
    SECTION("profiler")
    {
        Rig rig({ .range = "cudaProfilerApi" });
        rig.host.now = 10;
        rig.capture.on_profiler(true);
        rig.host.now = 20;
        rig.capture.on_profiler(false);
        CHECK(rig.take() == Log { "window on", "row", "window off", "flush", "row" });
        for (int64_t step = 0; step < 5; ++step)
            rig.marker(step);
        CHECK(rig.capture.grace_steps() == std::nullopt);
        CHECK(rig.host.detach_soon_calls == 0);
    }
    SECTION("time: the edge is stamped again once the switch is done")
    {
        Rig rig({ .delay = "1", .duration = "1" });
        rig.host.now = 1'000'000'000;
        rig.capture.tick();
        CHECK(rig.take() == Log { "window on", "row" });
        rig.host.now = 2'000'000'500; // the flusher woke 500 ns after the edge
        rig.capture.tick();
        CHECK(rig.take() == Log { "window off", "flush", "row" });
        CHECK(rig.host.rows.back().end_ns == 2'000'000'500);
        CHECK(rig.capture.grace_steps() == std::nullopt);
    }
}

TEST_CASE("capture: NVTX step ranges drive the windows until the job marks steps", "[collector][capture]")
{
    Rig rig({ .steps = "1:1" });
    rig.capture.on_nvtx_step(rig.steps.count_nvtx_range()); // step 0: its count is noted in the trace at once
    CHECK(rig.take() == Log { "note nvtx step ranges" });
    rig.capture.on_nvtx_step(rig.steps.count_nvtx_range()); // step 1 opens the window
    CHECK(rig.take() == Log { "window on", "row" });
    // The job marks a step: NVTX ranges are no longer followed.
    rig.marker(1);
    rig.capture.on_nvtx_step(rig.steps.count_nvtx_range());
    CHECK(rig.take().empty());
    rig.marker(2);
    CHECK(rig.take() == Log { "window off", "flush", "row" });
}

TEST_CASE("capture: optimizer step ends drive the windows, unless the job marks steps", "[collector][capture]")
{
    Rig rig({ .steps = "1:1" });
    REQUIRE(rig.steps.begin_optimizer_step(1));
    rig.capture.on_optimizer_step(1, 10);
    CHECK(rig.take() == Log { "window on", "row" });
    // NVTX step ranges after the first optimizer step end are not followed.
    rig.capture.on_nvtx_step(rig.steps.count_nvtx_range());
    CHECK(rig.take() == Log { "note nvtx step ranges" });
    rig.marker(5); // the job's markers take over
    CHECK(rig.take() == Log { "window off", "flush", "row" });
    rig.capture.on_optimizer_step(1, 20);
    CHECK(rig.take().empty());
}

TEST_CASE("capture: a window that never opened says why, and the end closes an open one", "[collector][capture]")
{
    SECTION("never opened")
    {
        Rig rig({ .steps = "5:6" });
        rig.capture.finish(100);
        CHECK(rig.take().empty());
        REQUIRE(rig.capture.never_opened());
        CHECK_FALSE(rig.capture.never_opened()->empty());
    }
    SECTION("open at the end")
    {
        Rig rig({ .steps = "0:9" });
        rig.marker(0, 5);
        rig.take();
        rig.capture.finish(100);
        CHECK(rig.take() == Log { "row" });
        CHECK(rig.host.rows.back().end_ns == 100);
        CHECK(rig.capture.never_opened() == std::nullopt);
    }
    SECTION("a row the writer cannot take warns once")
    {
        Rig rig({ .steps = "0:0" });
        rig.host.queue_full = true;
        rig.marker(0);
        CHECK(rig.take() == Log { "window on", "row", "warn capture-window-row" });
    }
}

TEST_CASE("capture: the flusher wakes at the time window's edges and when a detach is due", "[collector][capture]")
{
    SECTION("time window")
    {
        Rig rig({ .delay = "2", .duration = "1" });
        rig.host.now = 500'000'000;
        CHECK(rig.capture.wait_ms(500) == 500);
        rig.host.now = 1'800'000'000;
        CHECK(rig.capture.wait_ms(500) == 200);
        CHECK(rig.capture.wait_ms(-1) == 200);
    }
    SECTION("a detach due")
    {
        Rig rig({ .steps = "0:0" });
        CHECK(rig.capture.wait_ms(500) == 500);
        rig.host.detach_due = 30'000'000;
        rig.host.now = 10'000'000;
        CHECK(rig.capture.wait_ms(500) == 20);
        rig.host.now = -1; // not recording: the period
        CHECK(rig.capture.wait_ms(500) == 500);
    }
    SECTION("stats outside windows")
    {
        Rig rig({ .steps = "3:3", .stats_outside_windows = true });
        CHECK_FALSE(rig.capture.recording());
        CHECK(rig.capture.allows_stats());
    }
}
