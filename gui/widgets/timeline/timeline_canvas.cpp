#include "widgets/timeline/timeline_canvas.hpp"

#include "models/display_text.hpp"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;
using analyzer::ItemKind;
using analyzer::ItemRef;
using analyzer::TimelineEntry;
using analyzer::TrackKind;

namespace {

// A press that moves less than this is a click, not a drag.
constexpr int kDragThresholdPx = 4;
// At most this many flows are drawn from one launch call (a CUDA graph launches thousands of kernels).
constexpr size_t kMaxFlows = 64;
// One wheel notch (120 units) zooms by 1.25.
constexpr double kWheelZoomPerUnit = 1.25;
constexpr double kKeyZoom = 1.5;
constexpr double kKeyPanShare = 0.1;

bool is_gpu_work(ItemKind kind)
{
    return kind == ItemKind::Kernel || kind == ItemKind::Memcpy || kind == ItemKind::Memset;
}

} // namespace

TimelineCanvas::TimelineCanvas(ViewState& state, QWidget* parent)
    : QWidget(parent)
    , state_(state)
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(kGutterWidth + 200, kRulerHeight + 4 * TimelineRows::kRowHeight);
    connect(&state_, &ViewState::window_changed, this, qOverload<>(&QWidget::update));
    connect(&state_, &ViewState::focus_changed, this, qOverload<>(&QWidget::update));
}

void TimelineCanvas::set_data(std::shared_ptr<const Session> session, std::shared_ptr<const SessionTimeline> timeline)
{
    session_ = std::move(session);
    timeline_ = std::move(timeline);
    if (timeline_ && (!session_ || timeline_->run != session_->run))
        timeline_.reset();
    rows_ = timeline_ ? TimelineRows(timeline_->index) : TimelineRows();
    hits_.clear();
    hovered_.reset();
    flows_.clear();
    selected_.reset();
    selected_at_.reset();
    offset_ = 0;
    Q_EMIT vertical_range_changed(rows_.height(), plot_rect().height());
    update();
}

QRect TimelineCanvas::plot_rect() const
{
    return QRect(kGutterWidth, kRulerHeight, std::max(1, width() - kGutterWidth), std::max(1, height() - kRulerHeight));
}

TimeAxis TimelineCanvas::axis() const
{
    const TimeWindow window = state_.window();
    return TimeAxis { window.start_ns, std::max(window.end_ns, window.start_ns + 1), plot_rect().width() };
}

std::optional<int> TimelineCanvas::row_top(analyzer::LaneRef lane) const
{
    const TimelineRow* row = rows_.row_of(lane);
    if (!row)
        return std::nullopt;
    return plot_rect().top() + row->y - offset_;
}

std::optional<QRect> TimelineCanvas::lane_rect(analyzer::LaneRef lane) const
{
    const TimelineRow* row = rows_.row_of(lane);
    if (!row)
        return std::nullopt;
    return QRect(plot_rect().left(), plot_rect().top() + row->y - offset_, plot_rect().width(), row->height);
}

void TimelineCanvas::set_vertical_offset(int offset)
{
    offset = std::clamp(offset, 0, std::max(0, rows_.height() - plot_rect().height() + TimelineRows::kRowHeight));
    if (offset == offset_)
        return;
    offset_ = offset;
    Q_EMIT vertical_offset_changed(offset_);
    update();
}

void TimelineCanvas::set_axis(const TimeAxis& axis)
{
    state_.set_window(TimeWindow { axis.start_ns, axis.end_ns });
}

void TimelineCanvas::select(std::optional<ItemRef> item)
{
    selected_ = item;
    selected_at_.reset();
    if (item && timeline_)
        selected_at_ = analyzer::locate(timeline_->index, timeline_->run->model, timeline_->run->report, *item);
    Q_EMIT item_selected(selected_);
    update();
}

std::optional<ItemRef> TimelineCanvas::hovered() const
{
    return hovered_;
}

// ---- interaction

const TimelineCanvas::Hit* TimelineCanvas::hit_at(QPoint pos) const
{
    const TimelineRow* row = rows_.row_at(pos.y() - plot_rect().top() + offset_);
    if (!row || pos.x() < kGutterWidth)
        return nullptr;
    const Hit* best = nullptr;
    for (const Hit& hit : hits_) {
        // Thin items are hard to hit: allow two pixels either side, and prefer the narrowest match (a single item
        // over the fold next to it).
        if (hit.row != row || pos.x() < hit.x0 - 2 || pos.x() > hit.x1 + 2)
            continue;
        if (!best || (hit.x1 - hit.x0) < (best->x1 - best->x0))
            best = &hit;
    }
    return best;
}

void TimelineCanvas::set_hover(const Hit* hit)
{
    const std::optional<ItemRef> item = hit && !hit->entry.folded() ? std::optional(hit->entry.ref) : std::nullopt;
    if (item == hovered_)
        return;
    hovered_ = item;
    flows_.clear();
    if (item && timeline_) {
        const analyzer::TimelineIndex& index = timeline_->index;
        const AnalysedTrace& run = *timeline_->run;
        const auto where = [&](ItemRef ref) { return analyzer::locate(index, run.model, run.report, ref); };
        if (is_gpu_work(item->kind)) {
            if (const auto call = analyzer::launching_call(index, run.model, *item))
                if (const auto from = where(ItemRef { ItemKind::ApiCall, static_cast<uint32_t>(*call) }))
                    if (const auto to = where(*item))
                        flows_.emplace_back(*from, *to);
        } else if (item->kind == ItemKind::ApiCall) {
            const auto from = where(*item);
            for (const ItemRef work : analyzer::launched_work(index, run.model, item->row)) {
                if (!from || flows_.size() == kMaxFlows)
                    break;
                if (const auto to = where(work))
                    flows_.emplace_back(*from, *to);
            }
        }
    }
    update();
}

QString TimelineCanvas::tooltip_text(const Hit& hit) const
{
    const AnalysedTrace& run = *timeline_->run;
    const analyzer::TimelineTrack& track = timeline_->index.tracks[hit.row->lane.track];
    if (hit.entry.folded())
        return u"<b>%1 items</b> folded (each narrower than %2 px here), mostly %3<br>%4 to %5<br>Zoom in to see them "
               "(double-click zooms to the fold)."_s.arg(hit.entry.count)
                   .arg(analyzer::kFoldMinPx)
                   .arg(to_qstring(analyzer::timeline_category_name(track.kind, hit.entry.category)).toHtmlEscaped(),
                       duration_text(static_cast<double>(hit.entry.start_ns)),
                       duration_text(static_cast<double>(hit.entry.end_ns)));
    const analyzer::ItemDetails details
        = analyzer::describe_item(timeline_->index, run.model, run.report, hit.entry.ref);
    QString text = u"<b>%1</b>"_s.arg(to_qstring(details.title).toHtmlEscaped());
    for (const analyzer::DetailField& field : details.fields)
        text += u"<br>%1: %2"_s.arg(to_qstring(field.label).toHtmlEscaped(), detail_value(field).toHtmlEscaped());
    return text;
}

bool TimelineCanvas::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        if (const Hit* hit = hit_at(help->pos()))
            QToolTip::showText(help->globalPos(), tooltip_text(*hit), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void TimelineCanvas::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    Q_EMIT vertical_range_changed(rows_.height(), plot_rect().height());
}

void TimelineCanvas::wheelEvent(QWheelEvent* event)
{
    if (!timeline_)
        return;
    const QPoint delta = event->angleDelta();
    if (event->modifiers() & Qt::ShiftModifier) {
        // Shift+wheel scrolls the tracks (Qt may turn a vertical wheel with Shift into a horizontal one).
        set_vertical_offset(offset_ - (delta.y() != 0 ? delta.y() : delta.x()) / 2);
    } else {
        const double factor = std::pow(kWheelZoomPerUnit, delta.y() / 120.0);
        const TimeWindow bounds = state_.bounds();
        set_axis(axis().zoomed(event->position().x() - kGutterWidth, factor, bounds.start_ns, bounds.end_ns));
    }
    event->accept();
}

void TimelineCanvas::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return;
    press_pos_ = event->position().toPoint();
    press_axis_ = axis();
    press_offset_ = offset_;
    dragging_ = false;
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint pos = event->position().toPoint();
    if (press_pos_ && (event->buttons() & Qt::LeftButton)) {
        const QPoint moved = pos - *press_pos_;
        dragging_ = dragging_ || moved.manhattanLength() >= kDragThresholdPx;
        if (dragging_) {
            const TimeWindow bounds = state_.bounds();
            set_axis(press_axis_.panned(-moved.x(), bounds.start_ns, bounds.end_ns));
            set_vertical_offset(press_offset_ - moved.y());
            setCursor(Qt::ClosedHandCursor);
        }
        return;
    }
    set_hover(hit_at(pos));
}

void TimelineCanvas::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton || !press_pos_)
        return;
    if (!dragging_) {
        const Hit* hit = hit_at(event->position().toPoint());
        select(hit && !hit->entry.folded() ? std::optional(hit->entry.ref) : std::nullopt);
    }
    press_pos_.reset();
    dragging_ = false;
    unsetCursor();
}

void TimelineCanvas::mouseDoubleClickEvent(QMouseEvent* event)
{
    // Zoom to the item or fold under the cursor, with a little room either side.
    const Hit* hit = hit_at(event->position().toPoint());
    if (!hit)
        return;
    const int64_t span = std::max<int64_t>(hit->entry.end_ns - hit->entry.start_ns, TimeAxis::kMinSpanNs);
    const TimeWindow bounds = state_.bounds();
    set_axis(
        axis().showing(hit->entry.start_ns - span / 10, hit->entry.end_ns + span / 10, bounds.start_ns, bounds.end_ns));
}

void TimelineCanvas::keyPressEvent(QKeyEvent* event)
{
    const TimeWindow bounds = state_.bounds();
    const TimeAxis a = axis();
    const double centre = a.width_px / 2.0;
    const double pan = a.width_px * kKeyPanShare * ((event->modifiers() & Qt::ShiftModifier) ? 5 : 1);
    switch (event->key()) {
    case Qt::Key_Left:
    case Qt::Key_A:
        set_axis(a.panned(-pan, bounds.start_ns, bounds.end_ns));
        break;
    case Qt::Key_Right:
    case Qt::Key_D:
        set_axis(a.panned(pan, bounds.start_ns, bounds.end_ns));
        break;
    case Qt::Key_Up:
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        set_axis(a.zoomed(centre, kKeyZoom, bounds.start_ns, bounds.end_ns));
        break;
    case Qt::Key_Down:
    case Qt::Key_S:
    case Qt::Key_Minus:
        set_axis(a.zoomed(centre, 1 / kKeyZoom, bounds.start_ns, bounds.end_ns));
        break;
    case Qt::Key_Home:
    case Qt::Key_0:
        state_.set_window(bounds);
        break;
    case Qt::Key_PageUp:
        state_.focus_adjacent_step(-1);
        break;
    case Qt::Key_PageDown:
        state_.focus_adjacent_step(+1);
        break;
    case Qt::Key_Escape:
        select(std::nullopt);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void TimelineCanvas::leaveEvent(QEvent* event)
{
    set_hover(nullptr);
    QWidget::leaveEvent(event);
}

} // namespace fp8scope::gui
