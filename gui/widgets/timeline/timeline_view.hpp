// The Timeline tab: a step navigator (a drop-down of the analysed steps with their figures, previous/next, whole
// trace), a legend of the colours, the timeline canvas with its vertical scroll bar, and a details panel for the
// selected item (the analyzer's describe_item()).
#pragma once

#include "models/steps_model.hpp"
#include "models/trace_session.hpp"
#include "models/view_state.hpp"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QScrollBar;
class QTreeWidget;

namespace fp8scope::gui {

class TimelineCanvas;

class TimelineView : public QWidget {
    Q_OBJECT
public:
    TimelineView(ViewState& state, StepsModel& steps, QWidget* parent = nullptr);

    void set_data(std::shared_ptr<const Session> session, std::shared_ptr<const SessionTimeline> timeline);
    TimelineCanvas& canvas() { return *canvas_; }

private:
    void show_details(std::optional<analyzer::ItemRef> item);
    void sync_navigator(std::optional<int64_t> step_index);

    ViewState& state_;
    StepsModel& steps_;
    std::shared_ptr<const SessionTimeline> timeline_;
    QComboBox* navigator_;
    QLabel* legend_;
    TimelineCanvas* canvas_;
    QScrollBar* scroll_;
    QLabel* details_title_;
    QTreeWidget* details_;
};

} // namespace fp8scope::gui
