#include "capture/capture.hpp"

#include "calls/nvtx_paths.hpp"
#include "capture/capture_windows.hpp"
#include "cupti/cupti_api.hpp"
#include "session/session.hpp"
#include "session/warn.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>

namespace fp8scope::collector {
namespace {

// Set once by capture_begin and never freed (events may come until the process is gone).
CaptureWindows* g_windows = nullptr;
std::mutex g_mutex; // window events are rare (steps, profiler calls, the clock): a mutex is cheap enough
std::atomic<bool> g_recording { true };
std::atomic<bool> g_stats_outside { false };
std::atomic<bool> g_markers_seen { false };
std::atomic<bool> g_optimizer_steps_seen { false }; // optimizer step ends drive the steps (capture_on_optimizer_step)
// Steps begun since a window closed on a step, while its detach is pending (-1: none pending). CUPTI stays attached
// for the records of the window's kernels still running; kGraceSteps steps later they are long done, and CUPTI is
// detached then rather than at the 300 ms grace's end, which a fast job's next window may come before
// (docs/benchmarks.md "A grace counted in steps": 12 ms steps, 17 steps between windows kept CUPTI attached
// throughout).
int64_t g_steps_since_close = -1; // under g_mutex
constexpr int64_t kGraceSteps = 2;
// A detach that the next window would undo within this many steps is not worth its re-attach: CUPTI stays attached
// (and the time grace decides).
constexpr int64_t kMinDetachedSteps = 3;

std::string env_value(const char* name)
{
    const char* value = std::getenv(name);
    return value ? value : "";
}

// Applies one answer of CaptureWindows; called with g_mutex held, so that two threads cannot switch the
// activities in the opposite order of their decisions.
void apply(CaptureChange change)
{
    if (change.kind == CaptureChange::Kind::None)
        return;
    const schema::CaptureTrigger trigger = change.window.trigger;
    g_steps_since_close
        = change.closed() && (trigger == schema::CaptureTrigger::Steps || trigger == schema::CaptureTrigger::Periodic)
        ? 0
        : -1;
    // g_recording is what an API call's callback asks to keep its row (api_calls.hpp): set_window_activities turns it
    // on before the kinds and off right after the kernels' kind, so that a launch racing the switch (a time window
    // is switched by the flusher thread) leaves at most a call without its kernel, never a kernel without its call
    // (H100, 2026-11-27: 1 of 19,517 kernels of a time window had no launch call when the flag followed the kinds).
    if (change.opened()) {
        set_window_activities(true, g_recording);
    } else {
        set_window_activities(false, g_recording);
        // The window's records that are complete go to the writer now (flag 0: no wait for the device); kernels
        // still running when it closed were launched with tracing on and arrive with the next periodic flush.
        flush_completed_records();
        // A time window is closed by the flusher thread while the job keeps launching: a launch made between the
        // edge's timestamp and the switch is still recorded (H100, 2026-11-24: one kernel 8 µs after the edge), so
        // the edge is stamped again once the switch is done. Step and profiler windows close in the launching
        // thread, where the first timestamp is already after its last recorded launch.
        if (change.window.trigger == schema::CaptureTrigger::Time)
            if (const int64_t switched_ns = session_now_ns(); switched_ns >= 0 && change.window.end_ns)
                change.window.end_ns = std::max(*change.window.end_ns, switched_ns);
    }
    if (!post_capture_window(change.window))
        warn_once("capture-window-row", "cannot write a capture window to the trace (its writer queue is full)");
}

// Step `step` began (g_mutex held): the step-counted grace after a window closed by steps (g_steps_since_close).
void on_step(CaptureChange change, int64_t step)
{
    const bool none = change.kind == CaptureChange::Kind::None;
    apply(change);
    if (!none || g_steps_since_close < 0)
        return;
    if (++g_steps_since_close >= kGraceSteps) {
        g_steps_since_close = -1;
        if (!g_windows->opens_within(step, kMinDetachedSteps))
            detach_soon();
    }
}

// An NVTX step range was pushed (nvtx_paths.cpp): step = ranges seen - 1, unless the job marks steps itself.
void on_nvtx_step(int64_t step)
{
    // CUPTI records no NVTX range outside a window: the trace keeps their count (meta nvtx_step_ranges), written
    // now at the first and when the trace is finished, so that a window that never opened can be explained.
    if (step == 0)
        post_note_to_writer([](TraceDb& db) { [[maybe_unused]] auto written = db.set_nvtx_step_ranges(1); });
    if (g_markers_seen.load(std::memory_order_relaxed) || g_optimizer_steps_seen.load(std::memory_order_relaxed))
        return;
    const int64_t now_ns = session_now_ns();
    if (now_ns < 0)
        return;
    std::lock_guard lock(g_mutex);
    if (g_windows)
        on_step(g_windows->step(step, now_ns), step);
}

} // namespace

CapturePlan capture_plan_from_environment()
{
    // `fp8scope record` passes the plan it parsed; a job run without it may set the variables by hand.
    const std::string passed = env_value(std::string(kCapturePlanVariable).c_str());
    CapturePlanResult result = passed.empty() ? parse_capture_plan(capture_request_from_variables(env_value))
                                              : deserialize_capture_plan(passed);
    if (!result.plan) {
        warn(std::string(passed.empty() ? "ignoring the FP8SCOPE_CAPTURE_* variables: " : "ignoring ") + result.error
            + " (recording the whole run)");
        return {};
    }
    return *result.plan;
}

void capture_begin(const CapturePlan& plan, int64_t now_ns)
{
    if (plan.mode == CaptureMode::Full)
        return;
    std::lock_guard lock(g_mutex);
    if (g_windows)
        return;
    g_windows = new CaptureWindows(plan);
    g_stats_outside.store(plan.stats_outside_windows, std::memory_order_relaxed);
    const CaptureChange change = g_windows->start(now_ns);
    if (change.kind == CaptureChange::Kind::None) {
        // No window yet: the activities enabled at start go off until one opens.
        set_window_activities(false, g_recording);
    }
    apply(change);
    // Every mode listens: time and profiler windows note their first and last steps too.
    set_step_range_listener(on_nvtx_step);
}

void capture_finish(int64_t now_ns)
{
    std::lock_guard lock(g_mutex);
    if (!g_windows)
        return;
    const CaptureChange change = g_windows->finish(now_ns);
    if (change.closed() && !post_capture_window(change.window))
        warn_once("capture-window-row", "cannot write a capture window to the trace (its writer queue is full)");
}

void capture_on_marker_step(int64_t step, int64_t now_ns)
{
    g_markers_seen.store(true, std::memory_order_relaxed);
    std::lock_guard lock(g_mutex);
    if (g_windows)
        on_step(g_windows->step(step, now_ns), step);
}

void capture_on_optimizer_step(int64_t step, int64_t now_ns)
{
    if (g_markers_seen.load(std::memory_order_relaxed))
        return;
    g_optimizer_steps_seen.store(true, std::memory_order_relaxed);
    std::lock_guard lock(g_mutex);
    if (g_windows)
        on_step(g_windows->step(step, now_ns), step);
}

void capture_on_profiler(bool start)
{
    const int64_t now_ns = session_now_ns();
    if (now_ns < 0)
        return;
    std::lock_guard lock(g_mutex);
    if (g_windows)
        apply(start ? g_windows->profiler_start(now_ns) : g_windows->profiler_stop(now_ns));
}

void capture_tick()
{
    std::lock_guard lock(g_mutex);
    if (!g_windows || g_windows->plan().mode != CaptureMode::Time)
        return;
    const int64_t now_ns = session_now_ns();
    if (now_ns >= 0)
        apply(g_windows->tick(now_ns));
}

std::optional<std::string> capture_never_opened()
{
    std::lock_guard lock(g_mutex);
    return g_windows ? g_windows->never_opened_text() : std::nullopt;
}

bool capture_recording()
{
    return g_recording.load(std::memory_order_acquire);
}

bool capture_allows_stats()
{
    return g_recording.load(std::memory_order_relaxed) || g_stats_outside.load(std::memory_order_relaxed);
}

int capture_wait_ms(int period_ms)
{
    std::optional<int64_t> deadline_ns;
    {
        std::lock_guard lock(g_mutex);
        if (g_windows)
            deadline_ns = g_windows->next_deadline_ns();
    }
    // CUPTI is detached after a window at the first tick past its grace: a tick that waited the whole period could
    // come after the next window has opened (steps of 25 ms, 15 steps between windows: H100, 2026-11-24).
    if (const std::optional<int64_t> detach_ns = detach_due_ns())
        deadline_ns = deadline_ns ? std::min(*deadline_ns, *detach_ns) : *detach_ns;
    if (!deadline_ns)
        return period_ms;
    const int64_t now_ns = session_now_ns();
    if (now_ns < 0)
        return period_ms;
    // Rounded up, so that the flusher wakes at or just after the edge, never spinning before it.
    const int64_t wait_ms = std::max<int64_t>(0, (*deadline_ns - now_ns + 999'999) / 1'000'000);
    return period_ms < 0 ? static_cast<int>(std::min<int64_t>(wait_ms, 60'000))
                         : static_cast<int>(std::min<int64_t>(wait_ms, period_ms));
}

} // namespace fp8scope::collector
