// The collector's capture windows as a pure state machine (capture_windows.hpp) and the option parser that record
// and the collector share (capture_plan.hpp): which events open and close a window, with no CUPTI and no GPU.
#include "capture/capture_windows.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace fp8scope;
using namespace fp8scope::collector;

namespace {

CapturePlan plan_of(const CaptureRequest& request)
{
    const CapturePlanResult result = parse_capture_plan(request);
    INFO(result.error);
    REQUIRE(result.plan);
    return *result.plan;
}

std::string error_of(const CaptureRequest& request)
{
    const CapturePlanResult result = parse_capture_plan(request);
    REQUIRE_FALSE(result.plan);
    return result.error;
}

// Feeds steps first..last, step n at 10 * n ns; returns which steps were captured (a window open while they ran).
std::vector<int64_t> captured_steps(
    CaptureWindows& windows, int64_t first, int64_t last, std::vector<CaptureWindowRow>* closed)
{
    std::vector<int64_t> captured;
    for (int64_t step = first; step <= last; ++step) {
        const CaptureChange change = windows.step(step, 10 * step);
        if (change.closed() && closed)
            closed->push_back(change.window);
        if (windows.capturing())
            captured.push_back(step);
    }
    return captured;
}

} // namespace

TEST_CASE("capture plan: every kind of window and its meta text", "[collector][capture]")
{
    CapturePlan steps = plan_of({ .steps = "20:29" });
    CHECK(steps.mode == CaptureMode::Steps);
    CHECK(steps.first_step == 20);
    CHECK(steps.last_step == 29);
    CHECK(steps.mode_name() == "steps");
    CHECK(steps.options == "--capture-steps 20:29");

    const CapturePlan periodic = plan_of({ .every = "1000", .length = "10" });
    CHECK(periodic.mode == CaptureMode::Periodic);
    CHECK(periodic.options == "--capture-every 1000 --capture-length 10");
    CHECK(periodic.in_periodic_window(0));
    CHECK(periodic.in_periodic_window(9));
    CHECK_FALSE(periodic.in_periodic_window(10));
    CHECK(periodic.in_periodic_window(2009));

    CHECK(plan_of({ .range = "cudaProfilerApi" }).mode_name() == "cudaProfilerApi");

    const CapturePlan time = plan_of({ .delay = "2.5", .duration = "10" });
    CHECK(time.mode == CaptureMode::Time);
    CHECK(time.delay_ns == 2'500'000'000);
    CHECK(time.duration_ns == 10'000'000'000);
    CHECK(time.options == "--delay 2.5 --duration 10");
    CHECK_FALSE(plan_of({ .duration = "1" }).delay_ns);

    CHECK(plan_of({}).mode == CaptureMode::Full);
    CHECK(plan_of({}).mode_name() == "full");
    CHECK(plan_of({ .steps = "1:1", .stats_outside_windows = true }).stats_outside_windows);
}

TEST_CASE("capture plan: record passes the plan as one line that reads back to the same plan (issue 46)",
    "[collector][capture]")
{
    const CaptureRequest requests[] = { { .steps = "20:29" }, { .every = "1000", .length = "10" },
        { .range = "cudaProfilerApi" }, { .delay = "2.5", .duration = "10" }, { .delay = "3" },
        { .steps = "1:1", .stats_outside_windows = true }, { .every = "100", .length = "5", .max_size = "64" }, {} };
    for (const CaptureRequest& request : requests) {
        const CapturePlan plan = plan_of(request);
        const std::string text = serialize_capture_plan(plan);
        INFO(text);
        CHECK(text.starts_with("fp8scope-capture-plan/1 mode=" + std::string(plan.mode_name()) + " "));
        CHECK(text.find('\n') == std::string::npos);
        const CapturePlanResult back = deserialize_capture_plan(text);
        INFO(back.error);
        REQUIRE(back.plan);
        CHECK(back.plan->mode == plan.mode);
        CHECK(back.plan->first_step == plan.first_step);
        CHECK(back.plan->last_step == plan.last_step);
        CHECK(back.plan->every == plan.every);
        CHECK(back.plan->length == plan.length);
        CHECK(back.plan->delay_ns == plan.delay_ns);
        CHECK(back.plan->duration_ns == plan.duration_ns);
        CHECK(back.plan->stats_outside_windows == plan.stats_outside_windows);
        CHECK(back.plan->max_bytes == plan.max_bytes);
        CHECK(back.plan->options == plan.options);
    }
    CHECK(serialize_capture_plan(plan_of({ .steps = "20:29" }))
        == "fp8scope-capture-plan/1 mode=steps first=20 last=29 every=0 length=0 delay_ns=0 duration_ns=- "
           "stats_outside=0 options=--capture-steps 20:29");
    // The variable is untrusted: anything else is one error, and the collector records the whole run.
    for (const char* bad : { "", "20:29", "fp8scope-capture-plan/1", "fp8scope-capture-plan/2 mode=steps",
             "fp8scope-capture-plan/1 mode=sometimes first=0 last=0 every=0 length=0 delay_ns=0 duration_ns=- "
             "stats_outside=0 options=",
             "fp8scope-capture-plan/1 mode=steps first=9 last=2 every=0 length=0 delay_ns=0 duration_ns=- "
             "stats_outside=0 options=",
             "fp8scope-capture-plan/1 mode=periodic first=0 last=0 every=4 length=5 delay_ns=0 duration_ns=- "
             "stats_outside=0 options=",
             "fp8scope-capture-plan/1 mode=time first=0 last=0 every=0 length=0 delay_ns=-1 duration_ns=- "
             "stats_outside=0 options=",
             "fp8scope-capture-plan/1 mode=steps first=1 last=2 every=0 length=0 delay_ns=0 duration_ns=- "
             "stats_outside=0",
             // a size bound: too small, not a number, or without periodic windows
             "fp8scope-capture-plan/1 mode=periodic first=0 last=0 every=4 length=2 delay_ns=0 duration_ns=- "
             "stats_outside=0 max_bytes=1024 options=",
             "fp8scope-capture-plan/1 mode=periodic first=0 last=0 every=4 length=2 delay_ns=0 duration_ns=- "
             "stats_outside=0 max_bytes=x options=",
             "fp8scope-capture-plan/1 mode=steps first=1 last=2 every=0 length=0 delay_ns=0 duration_ns=- "
             "stats_outside=0 max_bytes=67108864 options=" }) {
        const CapturePlanResult result = deserialize_capture_plan(bad);
        INFO(bad);
        CHECK_FALSE(result.plan);
        CHECK(result.error.starts_with("FP8SCOPE_CAPTURE_PLAN is not a capture plan ("));
    }
    // The variables a job without record may set by hand, read through one lookup.
    const std::map<std::string, std::string> environment { { "FP8SCOPE_CAPTURE_EVERY", "100" },
        { "FP8SCOPE_CAPTURE_LENGTH", "5" }, { "FP8SCOPE_STATS_OUTSIDE_WINDOWS", "1" } };
    const CaptureRequest by_hand = capture_request_from_variables([&](const char* name) {
        const auto found = environment.find(name);
        return found == environment.end() ? std::string() : found->second;
    });
    const CapturePlan periodic = plan_of(by_hand);
    CHECK(periodic.options == "--capture-every 100 --capture-length 5 --stats-outside-windows");
}

TEST_CASE("capture plan: bad values and senseless combinations are one-line errors", "[collector][capture]")
{
    for (const char* steps : { "20", "20:", ":29", "a:b", "-1:5", "29:20", "1:2:3", " 1:2", "1:99999999999999999999" })
        CHECK(error_of({ .steps = steps }).starts_with("--capture-steps '"));
    CHECK(error_of({ .steps = "29:20" }).find("the first step is after the last") != std::string::npos);
    CHECK(error_of({ .every = "10" }) == "--capture-every N and --capture-length K go together (K steps of every N)");
    CHECK(error_of({ .length = "10" }).starts_with("--capture-every N and --capture-length K go together"));
    CHECK(error_of({ .every = "0", .length = "1" }).starts_with("--capture-every '0'"));
    CHECK(error_of({ .every = "x", .length = "1" }).starts_with("--capture-every 'x'"));
    CHECK(error_of({ .every = "10", .length = "11" }).starts_with("--capture-length '11'"));
    CHECK(error_of({ .every = "10", .length = "0" }).starts_with("--capture-length '0'"));
    CHECK(error_of({ .range = "nvtx" }) == "--capture-range 'nvtx': the only range is cudaProfilerApi");
    for (const char* seconds : { "-1", "x", "inf", "nan", "1e9", "", "+1" })
        if (*seconds)
            CHECK(error_of({ .delay = seconds }).starts_with("--delay '"));
    CHECK(error_of({ .duration = "0" }).starts_with("--duration '0'"));
    CHECK(error_of({ .steps = "1:2", .range = "cudaProfilerApi" }).starts_with("choose one kind of capture window"));
    CHECK(error_of({ .steps = "1:2", .delay = "1" }).starts_with("choose one kind of capture window"));
    CHECK(error_of({ .every = "2", .length = "1", .duration = "1" }).starts_with("choose one kind"));
    CHECK(error_of({ .stats_outside_windows = true }).starts_with("--stats-outside-windows needs a capture window"));
    for (const CaptureRequest& request : { CaptureRequest { .steps = "x" }, CaptureRequest { .every = "1" } })
        CHECK(error_of(request).find('\n') == std::string::npos);
}

TEST_CASE("capture windows: steps A:B open at step A and close when step B+1 begins", "[collector][capture]")
{
    CaptureWindows windows(plan_of({ .steps = "20:29" }));
    CHECK_FALSE(windows.start(0).opened());
    CHECK_FALSE(windows.capturing());
    std::vector<CaptureWindowRow> closed;
    std::vector<int64_t> expected;
    for (int64_t s = 20; s <= 29; ++s)
        expected.push_back(s);
    CHECK(captured_steps(windows, 0, 59, &closed) == expected);
    REQUIRE(closed.size() == 1);
    CHECK(closed[0].id == 1);
    CHECK(closed[0].start_ns == 200); // step 20's own time: the window's edge is the marker
    CHECK(closed[0].end_ns == 300); // step 30's
    CHECK(closed[0].first_step == 20);
    CHECK(closed[0].last_step == 29);
    CHECK(closed[0].trigger == schema::CaptureTrigger::Steps);
    CHECK_FALSE(windows.finish(600).closed());
}

TEST_CASE("capture windows: periodic windows are the steps whose number modulo N is below K", "[collector][capture]")
{
    CaptureWindows windows(plan_of({ .every = "20", .length = "5" }));
    windows.start(0);
    std::vector<CaptureWindowRow> closed;
    CHECK(captured_steps(windows, 0, 59, &closed)
        == std::vector<int64_t> { 0, 1, 2, 3, 4, 20, 21, 22, 23, 24, 40, 41, 42, 43, 44 });
    REQUIRE(closed.size() == 3);
    CHECK(closed[1].id == 2);
    CHECK(closed[1].start_ns == 200);
    CHECK(closed[1].end_ns == 250);
    CHECK(closed[1].first_step == 20);
    CHECK(closed[1].last_step == 24);
    CHECK(closed[2].trigger == schema::CaptureTrigger::Periodic);

    // K = N: one window from the first step on, closed when recording ends.
    CaptureWindows all(plan_of({ .every = "3", .length = "3" }));
    closed.clear();
    CHECK(captured_steps(all, 0, 5, &closed).size() == 6);
    CHECK(closed.empty());
    const CaptureChange last = all.finish(99);
    REQUIRE(last.closed());
    CHECK(last.window.end_ns == 99);
    CHECK(last.window.last_step == 5);
}

TEST_CASE("capture windows: whether a window opens within the next steps (the detach's step-counted grace)",
    "[collector][capture]")
{
    // Periodic 20/3: windows at 0-2, 20-22, ...; the grace after the close at step 3 ends at step 5.
    const CaptureWindows periodic(plan_of({ .every = "20", .length = "3" }));
    CHECK_FALSE(periodic.opens_within(5, 3)); // 6, 7, 8
    CHECK_FALSE(periodic.opens_within(16, 3)); // 17, 18, 19
    CHECK(periodic.opens_within(17, 3)); // 20: not worth detaching
    CHECK(periodic.opens_within(19, 1));
    // Periodic 6/3: windows at 0-2, 6-8; the grace ends at 5, the next window opens at 6.
    CHECK(CaptureWindows(plan_of({ .every = "6", .length = "3" })).opens_within(5, 3));
    const CaptureWindows steps(plan_of({ .steps = "10:19" }));
    CHECK(steps.opens_within(7, 3));
    CHECK_FALSE(steps.opens_within(6, 3));
    CHECK_FALSE(steps.opens_within(21, 3)); // never again
    CHECK_FALSE(CaptureWindows(plan_of({ .delay = "1" })).opens_within(0, 1000)); // time windows: not foreseen
}

TEST_CASE("capture windows: cudaProfilerStart/Stop pairs, repeated calls change nothing", "[collector][capture]")
{
    CaptureWindows windows(plan_of({ .range = "cudaProfilerApi" }));
    CHECK_FALSE(windows.start(0).opened());
    CHECK_FALSE(windows.profiler_stop(5).closed()); // a stop outside a window
    windows.step(0, 8);
    const CaptureChange opened = windows.profiler_start(10);
    REQUIRE(opened.opened());
    CHECK_FALSE(opened.window.end_ns);
    CHECK_FALSE(opened.window.first_step);
    CHECK(windows.capturing());
    CHECK_FALSE(windows.profiler_start(11).opened()); // runtime and driver callbacks both report one start
    windows.step(1, 20);
    windows.step(2, 30);
    CHECK_FALSE(windows.step(3, 35).closed()); // steps never close a profiler window
    const CaptureChange closed = windows.profiler_stop(40);
    REQUIRE(closed.closed());
    CHECK(closed.window.start_ns == 10);
    CHECK(closed.window.end_ns == 40);
    CHECK(closed.window.first_step == 1);
    CHECK(closed.window.last_step == 3);
    CHECK(closed.window.trigger == schema::CaptureTrigger::ProfilerApi);
    CHECK_FALSE(windows.capturing());
    REQUIRE(windows.profiler_start(50).opened());
    CHECK(windows.finish(60).window.id == 2);
    CHECK_FALSE(windows.next_deadline_ns());
}

TEST_CASE("capture windows: --delay and --duration by the clock", "[collector][capture]")
{
    CaptureWindows windows(plan_of({ .delay = "1", .duration = "2" }));
    CHECK_FALSE(windows.start(0).opened());
    CHECK(windows.next_deadline_ns() == 1'000'000'000);
    CHECK_FALSE(windows.tick(999'999'999).opened());
    const CaptureChange opened = windows.tick(1'000'000'100);
    REQUIRE(opened.opened());
    CHECK(opened.window.start_ns == 1'000'000'100); // when the collector noticed: activities start then
    CHECK(windows.next_deadline_ns() == 3'000'000'000);
    windows.step(7, 2'000'000'000);
    const CaptureChange closed = windows.tick(3'000'000'000);
    REQUIRE(closed.closed());
    CHECK(closed.window.first_step == 7);
    CHECK(closed.window.trigger == schema::CaptureTrigger::Time);
    CHECK_FALSE(windows.next_deadline_ns());
    CHECK_FALSE(windows.tick(4'000'000'000).opened()); // one window only

    // No delay: open at the start, to the end of the run without a duration.
    CaptureWindows from_start(plan_of({ .delay = "0" }));
    CHECK(from_start.start(5).opened());
    CHECK_FALSE(from_start.next_deadline_ns());
    CHECK(from_start.finish(100).window.end_ns == 100);

    // A window the clock skipped over entirely (a stalled flusher) is missed, never opened late.
    CaptureWindows missed(plan_of({ .delay = "1", .duration = "1" }));
    missed.start(0);
    CHECK_FALSE(missed.tick(5'000'000'000).opened());
    CHECK_FALSE(missed.next_deadline_ns());
}

TEST_CASE("capture windows: a full capture always records and writes no window", "[collector][capture]")
{
    CaptureWindows windows(CapturePlan {});
    CHECK(windows.capturing());
    CHECK_FALSE(windows.start(0).opened());
    CHECK(windows.step(5, 10).kind == CaptureChange::Kind::None);
    CHECK_FALSE(windows.profiler_start(20).opened());
    CHECK_FALSE(windows.finish(30).closed());
}

// docs/collector.md "Capture windows": `--capture-steps 5:9` on a job without step markers once wrote an empty trace
// and said nothing.
constexpr const char* kNoStepsSentence = "the capture window never opened: no step markers or NVTX step ranges; use "
                                         "--capture-range, --delay/--duration or fp8scope.step()";

TEST_CASE("capture windows: a steps plan whose window never opened says why, and stops once one opens",
    "[collector][capture]")
{
    CaptureWindows windows(plan_of({ .steps = "5:9" }));
    windows.start(0);
    CHECK_FALSE(windows.ever_opened());
    CHECK(windows.never_opened_text() == kNoStepsSentence);

    // Steps that all miss the window: the job marked steps, just not those.
    for (int64_t step = 0; step <= 3; ++step)
        windows.step(step, 10 * step);
    CHECK(windows.steps_seen()->first == 0);
    CHECK(windows.steps_seen()->last == 3);
    CHECK(windows.never_opened_text()
        == "the capture window never opened: the job's steps (0 to 3) all lie outside "
           "--capture-steps 5:9");

    windows.step(5, 50);
    windows.step(10, 100); // closed again: it did open
    CHECK(windows.ever_opened());
    CHECK_FALSE(windows.never_opened_text());
}

TEST_CASE("capture windows: a periodic plan says the same, time, profiler and whole-run plans never do",
    "[collector][capture]")
{
    CaptureWindows periodic(plan_of({ .every = "100", .length = "5", .stats_outside_windows = true }));
    periodic.start(0);
    CHECK(periodic.never_opened_text() == kNoStepsSentence);
    periodic.step(42, 10); // 42 mod 100 >= 5: no window
    // --stats-outside-windows has nothing to do with which steps open a window: left out of the sentence.
    CHECK(periodic.never_opened_text()
        == "the capture window never opened: the job's one step (42) lies outside --capture-every 100 "
           "--capture-length 5");

    // A time window may still be ahead, and a profiler window is the job's own call: no sentence for them.
    CaptureWindows time(plan_of({ .delay = "100" }));
    time.start(0);
    CHECK_FALSE(time.never_opened_text());
    CaptureWindows profiler(plan_of({ .range = "cudaProfilerApi" }));
    profiler.start(0);
    CHECK_FALSE(profiler.never_opened_text());
    CHECK_FALSE(CaptureWindows(CapturePlan {}).never_opened_text());
}

TEST_CASE("capture plan: the never-opened sentence for an unfinished count of NVTX step ranges", "[collector][capture]")
{
    CHECK(capture_never_opened_text("--capture-steps 100:109", StepsSeen { 0, 0, true })
        == "the capture window never opened: the job's steps (from 0 on) all lie outside --capture-steps 100:109");
    CHECK(capture_never_opened_text("--capture-steps 100:109", std::nullopt) == kNoStepsSentence);
}
