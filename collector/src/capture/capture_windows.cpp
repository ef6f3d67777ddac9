#include "capture/capture_windows.hpp"

#include <algorithm>
#include <utility>

namespace fp8scope::collector {

CaptureWindows::CaptureWindows(CapturePlan plan)
    : plan_(std::move(plan))
{
}

schema::CaptureTrigger CaptureWindows::trigger() const
{
    switch (plan_.mode) {
    case CaptureMode::Periodic:
        return schema::CaptureTrigger::Periodic;
    case CaptureMode::ProfilerApi:
        return schema::CaptureTrigger::ProfilerApi;
    case CaptureMode::Time:
        return schema::CaptureTrigger::Time;
    case CaptureMode::Full:
    case CaptureMode::Steps:
        break;
    }
    return schema::CaptureTrigger::Steps;
}

CaptureChange CaptureWindows::open(int64_t now_ns, std::optional<int64_t> first_step)
{
    open_ = true;
    current_ = CaptureWindowRow { next_id_++, now_ns, std::nullopt, first_step, first_step, trigger() };
    return { CaptureChange::Kind::Opened, current_ };
}

CaptureChange CaptureWindows::close(int64_t now_ns)
{
    open_ = false;
    current_.end_ns = now_ns;
    return { CaptureChange::Kind::Closed, current_ };
}

CaptureChange CaptureWindows::start(int64_t now_ns)
{
    return tick(now_ns);
}

CaptureChange CaptureWindows::step(int64_t step, int64_t now_ns)
{
    if (!steps_seen_)
        steps_seen_ = StepsSeen { step, step, false };
    steps_seen_->first = std::min(steps_seen_->first, step);
    steps_seen_->last = std::max(steps_seen_->last, step);
    bool wanted = open_;
    if (plan_.mode == CaptureMode::Steps)
        wanted = step >= plan_.first_step && step <= plan_.last_step;
    else if (plan_.mode == CaptureMode::Periodic)
        wanted = plan_.in_periodic_window(step);
    if (wanted && !open_ && (plan_.mode == CaptureMode::Steps || plan_.mode == CaptureMode::Periodic))
        return open(now_ns, step);
    if (!wanted && open_)
        return close(now_ns);
    if (open_) { // a step begun inside the window (time and profiler windows: the first one may be cut)
        if (!current_.first_step)
            current_.first_step = step;
        current_.last_step = step;
    }
    return {};
}

bool CaptureWindows::opens_within(int64_t step, int64_t count) const
{
    for (int64_t next = step + 1; next <= step + count; ++next) {
        if (plan_.mode == CaptureMode::Periodic && plan_.in_periodic_window(next))
            return true;
        if (plan_.mode == CaptureMode::Steps && next == plan_.first_step)
            return true;
    }
    return false;
}

CaptureChange CaptureWindows::profiler_start(int64_t now_ns)
{
    if (plan_.mode != CaptureMode::ProfilerApi || open_)
        return {};
    return open(now_ns, std::nullopt);
}

CaptureChange CaptureWindows::profiler_stop(int64_t now_ns)
{
    if (plan_.mode != CaptureMode::ProfilerApi || !open_)
        return {};
    return close(now_ns);
}

CaptureChange CaptureWindows::tick(int64_t now_ns)
{
    if (plan_.mode != CaptureMode::Time)
        return {};
    const bool past_end = plan_.duration_ns && now_ns >= plan_.delay_ns + *plan_.duration_ns;
    if (!open_ && !time_window_done_ && past_end) {
        time_window_done_ = true; // the clock was not looked at within the window (a stalled flusher): missed
        return {};
    }
    if (!open_ && !time_window_done_ && now_ns >= plan_.delay_ns && !past_end) {
        time_window_done_ = true;
        return open(now_ns, std::nullopt);
    }
    if (open_ && past_end)
        return close(now_ns);
    return {};
}

CaptureChange CaptureWindows::finish(int64_t now_ns)
{
    if (!open_)
        return {};
    return close(now_ns);
}

std::optional<int64_t> CaptureWindows::next_deadline_ns() const
{
    if (plan_.mode != CaptureMode::Time)
        return std::nullopt;
    if (!open_ && !time_window_done_)
        return plan_.delay_ns;
    if (open_ && plan_.duration_ns)
        return plan_.delay_ns + *plan_.duration_ns;
    return std::nullopt;
}

std::optional<std::string> CaptureWindows::never_opened_text() const
{
    if ((plan_.mode != CaptureMode::Steps && plan_.mode != CaptureMode::Periodic) || ever_opened())
        return std::nullopt;
    return capture_never_opened_text(plan_.options, steps_seen_);
}

} // namespace fp8scope::collector
