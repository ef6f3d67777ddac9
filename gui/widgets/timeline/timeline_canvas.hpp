// The timeline itself: a ruler, a gutter of track names, and one row per lane of the analyzer's timeline index
// (models/timeline_rows.hpp). Each frame asks the analyzer's level-of-detail query for every visible lane, so the
// work per frame scales with pixels, not with the items in view (Tracy's folding; the GUI never walks the model's
// rows). Bubbles are drawn on their device's lane in their cause's colour and shade that device's streams; each
// host-blocking call is a red marker with a line to the bubbles it caused; hovering GPU work draws the flow from
// its launch call (and hovering a launch call, to its work). Zoom and pan with the wheel, a drag or the keys; the
// window is the shared ViewState's, so the step navigator and the findings move it too.
#pragma once

#include "models/time_axis.hpp"
#include "models/timeline_rows.hpp"
#include "models/trace_session.hpp"
#include "models/view_state.hpp"

#include <QWidget>

#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace fp8scope::gui {

class TimelineCanvas : public QWidget {
    Q_OBJECT
public:
    static constexpr int kGutterWidth = 250;
    static constexpr int kRulerHeight = 26;

    TimelineCanvas(ViewState& state, QWidget* parent = nullptr);

    // The session shown and its run's timeline index (null while it is being built).
    void set_data(std::shared_ptr<const Session> session, std::shared_ptr<const SessionTimeline> timeline);

    // The plot area (right of the gutter, below the ruler) and its time<->pixel mapping, x relative to its left.
    QRect plot_rect() const;
    TimeAxis axis() const;
    // Where a lane is drawn now, in widget coordinates; nullopt when the index has no such lane.
    std::optional<QRect> lane_rect(analyzer::LaneRef lane) const;
    const TimelineRows& rows() const { return rows_; }

    int vertical_offset() const { return offset_; }
    void set_vertical_offset(int offset);
    int content_height() const { return rows_.height(); }

    std::optional<analyzer::ItemRef> selected() const { return selected_; }
    void select(std::optional<analyzer::ItemRef> item);
    std::optional<analyzer::ItemRef> hovered() const;
    // The launch flows drawn for the hovered item: (launch call, GPU work) pairs.
    const std::vector<std::pair<analyzer::ItemLocation, analyzer::ItemLocation>>& flows() const { return flows_; }

Q_SIGNALS:
    void item_selected(std::optional<fp8scope::analyzer::ItemRef> item);
    void vertical_range_changed(int content_height, int page_height);
    void vertical_offset_changed(int offset);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    // An entry drawn in the last frame, for hit testing.
    struct Hit {
        const TimelineRow* row;
        double x0, x1;
        analyzer::TimelineEntry entry;
    };

    void paint_ruler(QPainter& p, const TimeAxis& axis) const;
    void paint_rows(QPainter& p, const TimeAxis& axis);
    void paint_sync_lines(QPainter& p, const TimeAxis& axis);
    void paint_flows(QPainter& p, const TimeAxis& axis) const;
    void paint_selection(QPainter& p, const TimeAxis& axis) const;
    void paint_gutter(QPainter& p) const;
    // The x range of an item of a lane, in widget coordinates.
    std::pair<double, double> item_x(const TimeAxis& axis, const analyzer::ItemLocation& at) const;
    // The vertical middle of a lane's row in widget coordinates; nullopt when the index has no such lane.
    std::optional<int> row_top(analyzer::LaneRef lane) const;

    const Hit* hit_at(QPoint pos) const;
    void set_hover(const Hit* hit);
    void set_axis(const TimeAxis& axis);
    QString tooltip_text(const Hit& hit) const;

    ViewState& state_;
    std::shared_ptr<const Session> session_;
    std::shared_ptr<const SessionTimeline> timeline_;
    TimelineRows rows_;
    int offset_ = 0;

    std::vector<Hit> hits_; // the last frame's, by row then x
    std::vector<analyzer::TimelineEntry> buffer_; // reused by every query
    std::map<uint32_t, std::vector<analyzer::TimelineEntry>> bubbles_by_device_; // this frame's
    std::vector<std::pair<double, double>> sync_marks_; // this frame's visible sync calls: (x end, y bottom)
    std::vector<analyzer::ItemRef> visible_syncs_;

    std::optional<analyzer::ItemRef> hovered_;
    std::vector<std::pair<analyzer::ItemLocation, analyzer::ItemLocation>> flows_;
    std::optional<analyzer::ItemRef> selected_;
    std::optional<analyzer::ItemLocation> selected_at_;

    // A drag in progress: where it started and what was shown then.
    std::optional<QPoint> press_pos_;
    TimeAxis press_axis_;
    int press_offset_ = 0;
    bool dragging_ = false;
};

} // namespace fp8scope::gui
