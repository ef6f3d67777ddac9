#include "capture/capture.hpp"

#include <algorithm>

namespace fp8scope::collector {

Capture::Capture(const Steps& steps, CaptureHost& host)
    : steps_(steps)
    , host_(host)
{
}

// Applies one answer of CaptureWindows; called with mutex_ held.
void Capture::apply(CaptureChange change)
{
    if (change.kind == CaptureChange::Kind::None)
        return;
    const schema::CaptureTrigger trigger = change.window.trigger;
    steps_since_close_
        = change.closed() && (trigger == schema::CaptureTrigger::Steps || trigger == schema::CaptureTrigger::Periodic)
        ? 0
        : -1;
    // recording_ is what an API call's callback asks to keep its row (api_calls.hpp): switch_window turns it on before
    // the kinds and off right after the kernels' kind, so that a launch racing the switch (a time window is switched
    // by the flusher thread) leaves at most a call without its kernel, never a kernel without its call (H100,
    // 2026-11-27: 1 of 19,517 kernels of a time window had no launch call when the flag followed the kinds).
    if (change.opened()) {
        host_.switch_window(true, recording_);
    } else {
        host_.switch_window(false, recording_);
        // The window's records that are complete go to the writer now (flag 0: no wait for the device); kernels
        // still running when it closed were launched with tracing on and arrive with the next periodic flush.
        host_.flush_completed_records();
        // A time window is closed by the flusher thread while the job keeps launching: a launch made between the
        // edge's timestamp and the switch is still recorded (H100, 2026-11-24: one kernel 8 µs after the edge), so
        // the edge is stamped again once the switch is done. Step and profiler windows close in the launching
        // thread, where the first timestamp is already after its last recorded launch.
        if (change.window.trigger == schema::CaptureTrigger::Time)
            if (const int64_t switched_ns = host_.now_ns(); switched_ns >= 0 && change.window.end_ns)
                change.window.end_ns = std::max(*change.window.end_ns, switched_ns);
    }
    if (!host_.post_window(change.window))
        host_.warn_once("capture-window-row", "cannot write a capture window to the trace (its writer queue is full)");
}

// Step `step` began (mutex_ held): the step-counted grace after a window closed by steps (steps_since_close_).
void Capture::on_step(CaptureChange change, int64_t step)
{
    const bool none = change.kind == CaptureChange::Kind::None;
    apply(change);
    if (!none || steps_since_close_ < 0)
        return;
    if (++steps_since_close_ >= kGraceSteps) {
        steps_since_close_ = -1;
        if (!windows_->opens_within(step, kMinDetachedSteps))
            host_.detach_soon();
    }
}

void Capture::begin(const CapturePlan& plan, int64_t now_ns)
{
    if (plan.mode == CaptureMode::Full)
        return;
    std::lock_guard lock(mutex_);
    if (windows_)
        return;
    windows_.emplace(plan);
    stats_outside_.store(plan.stats_outside_windows, std::memory_order_relaxed);
    edges_on_steps_.store(
        plan.mode == CaptureMode::Steps || plan.mode == CaptureMode::Periodic, std::memory_order_relaxed);
    const CaptureChange change = windows_->start(now_ns);
    if (change.kind == CaptureChange::Kind::None) {
        // No window yet: the activities enabled at start go off until one opens.
        host_.switch_window(false, recording_);
    }
    apply(change);
    // Every mode listens: time and profiler windows note their first and last steps too.
    windowed_.store(true, std::memory_order_release);
}

void Capture::finish(int64_t now_ns)
{
    std::lock_guard lock(mutex_);
    if (!windows_)
        return;
    const CaptureChange change = windows_->finish(now_ns);
    if (change.closed() && !host_.post_window(change.window))
        host_.warn_once("capture-window-row", "cannot write a capture window to the trace (its writer queue is full)");
}

void Capture::on_marker_step(int64_t step, int64_t now_ns)
{
    std::lock_guard lock(mutex_);
    if (windows_)
        on_step(windows_->step(step, now_ns), step);
}

void Capture::on_optimizer_step(int64_t step, int64_t now_ns)
{
    if (steps_.marked())
        return;
    std::lock_guard lock(mutex_);
    if (windows_)
        on_step(windows_->step(step, now_ns), step);
}

void Capture::on_nvtx_step(int64_t step)
{
    if (!windowed_.load(std::memory_order_acquire))
        return;
    // CUPTI records no NVTX range outside a window: the trace keeps their count (meta nvtx_step_ranges), written
    // now at the first and when the trace is finished, so that a window that never opened can be explained.
    if (step == 0)
        host_.note_first_nvtx_step_range();
    if (steps_.marked() || steps_.optimizer_driven())
        return;
    const int64_t now_ns = host_.now_ns();
    if (now_ns < 0)
        return;
    std::lock_guard lock(mutex_);
    on_step(windows_->step(step, now_ns), step);
}

void Capture::on_profiler(bool start)
{
    const int64_t now_ns = host_.now_ns();
    if (now_ns < 0)
        return;
    std::lock_guard lock(mutex_);
    if (windows_)
        apply(start ? windows_->profiler_start(now_ns) : windows_->profiler_stop(now_ns));
}

void Capture::tick()
{
    std::lock_guard lock(mutex_);
    if (!windows_ || windows_->plan().mode != CaptureMode::Time)
        return;
    const int64_t now_ns = host_.now_ns();
    if (now_ns >= 0)
        apply(windows_->tick(now_ns));
}

std::optional<std::string> Capture::never_opened() const
{
    std::lock_guard lock(mutex_);
    return windows_ ? windows_->never_opened_text() : std::nullopt;
}

std::optional<int64_t> Capture::grace_steps() const
{
    std::lock_guard lock(mutex_);
    return steps_since_close_ >= 0 ? std::optional(steps_since_close_) : std::nullopt;
}

int Capture::wait_ms(int period_ms) const
{
    std::optional<int64_t> deadline_ns;
    {
        std::lock_guard lock(mutex_);
        if (windows_)
            deadline_ns = windows_->next_deadline_ns();
    }
    // CUPTI is detached after a window at the first tick past its grace: a tick that waited the whole period could
    // come after the next window has opened (steps of 25 ms, 15 steps between windows: H100, 2026-11-24).
    if (const std::optional<int64_t> detach_ns = host_.detach_due_ns())
        deadline_ns = deadline_ns ? std::min(*deadline_ns, *detach_ns) : *detach_ns;
    if (!deadline_ns)
        return period_ms;
    const int64_t now_ns = host_.now_ns();
    if (now_ns < 0)
        return period_ms;
    // Rounded up, so that the flusher wakes at or just after the edge, never spinning before it.
    const int64_t wait_ms = std::max<int64_t>(0, (*deadline_ns - now_ns + 999'999) / 1'000'000);
    return period_ms < 0 ? static_cast<int>(std::min<int64_t>(wait_ms, 60'000))
                         : static_cast<int>(std::min<int64_t>(wait_ms, period_ms));
}

} // namespace fp8scope::collector
