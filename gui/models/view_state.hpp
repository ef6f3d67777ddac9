// The one view state every view listens to (Hotspot's FilterAndZoomStack): the visible time window, the step in
// focus, the bubble cause to highlight and the selected tensor site. Views change it through these calls and
// redraw on its signals, so that the findings list, the step navigator and the timeline always agree.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"

#include <QObject>

#include <cstdint>
#include <optional>
#include <vector>

namespace fp8scope::gui {

struct TimeWindow {
    int64_t start_ns = 0;
    int64_t end_ns = 1; // exclusive
    friend bool operator==(const TimeWindow&, const TimeWindow&) = default;
};

class ViewState : public QObject {
    Q_OBJECT
public:
    explicit ViewState(QObject* parent = nullptr);

    // A new trace: its whole span, and its analysed steps. Resets the window to the whole span and clears focus.
    void reset(TimeWindow bounds, std::vector<analyzer::StepInterval> steps);

    TimeWindow bounds() const { return bounds_; }
    TimeWindow window() const { return window_; }
    const std::vector<analyzer::StepInterval>& steps() const { return steps_; }
    // The focused step (StepInterval::index), and the cause to highlight in it.
    std::optional<int64_t> focused_step() const { return focused_step_; }
    std::optional<analyzer::BubbleCause> highlighted_cause() const { return highlighted_cause_; }
    std::optional<int64_t> selected_site() const { return selected_site_; } // the run's TensorSite::id

    // Shows [start, end), clamped to the bounds (the timeline's zoom and pan).
    void set_window(TimeWindow window);
    // Shows the step with this index, a little of its neighbours on either side, and highlights `cause` in it. An
    // index the trace does not have changes nothing.
    void focus_step(int64_t step_index, std::optional<analyzer::BubbleCause> cause = std::nullopt);
    // The step before or after the focused one (or the first/last when none is focused).
    void focus_adjacent_step(int direction);
    void select_site(std::optional<int64_t> run_site_id);

    // The position in steps() of the step with this index; nullopt when there is none.
    std::optional<size_t> step_position(int64_t step_index) const;

Q_SIGNALS:
    void reset_done();
    void window_changed(fp8scope::gui::TimeWindow window);
    void focus_changed(std::optional<int64_t> step_index, std::optional<fp8scope::analyzer::BubbleCause> cause);
    void site_selected(std::optional<int64_t> run_site_id);

private:
    TimeWindow bounds_;
    TimeWindow window_;
    std::vector<analyzer::StepInterval> steps_;
    std::optional<int64_t> focused_step_;
    std::optional<analyzer::BubbleCause> highlighted_cause_;
    std::optional<int64_t> selected_site_;
};

} // namespace fp8scope::gui
