#include "models/view_state.hpp"

#include <algorithm>

namespace fp8scope::gui {

namespace {

// A focused step is shown with this share of its length on either side, so that the gaps at its edges and the
// neighbours' ends stay in view.
constexpr double kStepMargin = 0.05;

} // namespace

ViewState::ViewState(QObject* parent)
    : QObject(parent)
{
}

void ViewState::reset(TimeWindow bounds, std::vector<analyzer::StepInterval> steps)
{
    bounds_ = TimeWindow { bounds.start_ns, std::max(bounds.end_ns, bounds.start_ns + 1) };
    window_ = bounds_;
    steps_ = std::move(steps);
    focused_step_.reset();
    highlighted_cause_.reset();
    selected_site_.reset();
    Q_EMIT reset_done();
    Q_EMIT window_changed(window_);
}

void ViewState::set_window(TimeWindow window)
{
    window.start_ns = std::clamp(window.start_ns, bounds_.start_ns, bounds_.end_ns - 1);
    window.end_ns = std::clamp(window.end_ns, window.start_ns + 1, bounds_.end_ns);
    if (window == window_)
        return;
    window_ = window;
    Q_EMIT window_changed(window_);
}

std::optional<size_t> ViewState::step_position(int64_t step_index) const
{
    const auto it = std::ranges::find(steps_, step_index, &analyzer::StepInterval::index);
    if (it == steps_.end())
        return std::nullopt;
    return static_cast<size_t>(it - steps_.begin());
}

void ViewState::focus_step(int64_t step_index, std::optional<analyzer::BubbleCause> cause)
{
    const std::optional<size_t> position = step_position(step_index);
    if (!position)
        return;
    const analyzer::StepInterval& step = steps_[*position];
    focused_step_ = step_index;
    highlighted_cause_ = cause;
    const auto margin = static_cast<int64_t>(static_cast<double>(step.end_ns - step.start_ns) * kStepMargin);
    Q_EMIT focus_changed(focused_step_, highlighted_cause_);
    set_window(TimeWindow { step.start_ns - margin, step.end_ns + margin });
}

void ViewState::focus_adjacent_step(int direction)
{
    if (steps_.empty())
        return;
    size_t position = direction < 0 ? steps_.size() - 1 : 0;
    if (focused_step_) {
        const size_t current = step_position(*focused_step_).value_or(0);
        if (direction < 0)
            position = current == 0 ? 0 : current - 1;
        else
            position = std::min(current + 1, steps_.size() - 1);
    }
    focus_step(steps_[position].index, highlighted_cause_);
}

void ViewState::select_site(std::optional<int64_t> run_site_id)
{
    if (run_site_id == selected_site_)
        return;
    selected_site_ = run_site_id;
    Q_EMIT site_selected(selected_site_);
}

} // namespace fp8scope::gui
