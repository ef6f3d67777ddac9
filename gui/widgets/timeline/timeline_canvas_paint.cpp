// TimelineCanvas's painting (timeline_canvas.hpp): the ruler, the rows with their boxes and labels, the sync lines,
// the flows from a launch call to its work, the selection and the gutter. Interaction is in timeline_canvas.cpp.
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

// Boxes narrower than this get no text; a label needs a few characters to say anything.
constexpr double kMinLabelPx = 36;

// The bubble lane's fill shading a device's streams: the cause colour, faint enough that kernels stay readable.
QColor shading(QColor color)
{
    color.setAlpha(48);
    return color;
}

} // namespace

void TimelineCanvas::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!timeline_) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(
            rect(), Qt::AlignCenter, session_ ? u"Building the timeline…"_s : u"Open a trace to see its timeline"_s);
        return;
    }
    const TimeAxis axis = this->axis();
    const QRect plot = plot_rect();
    p.save();
    p.setClipRect(plot);
    // The focused step behind everything: a light band over every row.
    if (const auto focused = state_.focused_step()) {
        if (const auto position = state_.step_position(*focused)) {
            const analyzer::StepInterval& step = state_.steps()[*position];
            const double x0 = plot.left() + std::max(axis.x_of(step.start_ns), -1.0);
            const double x1 = plot.left() + std::min(axis.x_of(step.end_ns), plot.width() + 1.0);
            p.fillRect(QRectF(x0, plot.top(), x1 - x0, plot.height()), QColor(0xff, 0xf6, 0xd5));
        }
    }
    paint_rows(p, axis);
    paint_sync_lines(p, axis);
    paint_flows(p, axis);
    paint_selection(p, axis);
    p.restore();
    paint_ruler(p, axis);
    paint_gutter(p);
}

void TimelineCanvas::paint_ruler(QPainter& p, const TimeAxis& axis) const
{
    const QRect ruler(kGutterWidth, 0, width() - kGutterWidth, kRulerHeight);
    p.fillRect(QRect(0, 0, width(), kRulerHeight), palette().window());
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(0, kRulerHeight - 1, width(), kRulerHeight - 1);
    // A tick every 1, 2 or 5 x 10^k ns, about every 110 px; labels in seconds with as many decimals as the spacing
    // needs, so that two labels never read the same.
    const double tick_ns = std::max(1.0, round_up_125(axis.ns_per_px() * 110.0));
    const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(tick_ns / 1e9) - 1e-9)), 0, 9);
    const auto first = static_cast<int64_t>(std::ceil(static_cast<double>(axis.start_ns) / tick_ns) * tick_ns);
    p.setPen(palette().color(QPalette::WindowText));
    for (double t = static_cast<double>(first); t <= static_cast<double>(axis.end_ns); t += tick_ns) {
        const double x = ruler.left() + axis.x_of(static_cast<int64_t>(t));
        p.drawLine(QPointF(x, kRulerHeight - 6), QPointF(x, kRulerHeight - 1));
        const QString label = QString::number(t / 1e9, 'f', decimals) + u" s"_s;
        if (x + 3 + p.fontMetrics().horizontalAdvance(label) > ruler.right())
            continue; // a label cut by the edge reads as another time
        p.drawText(QRectF(x + 3, 0, 120, kRulerHeight - 4), Qt::AlignLeft | Qt::AlignVCenter, label);
    }
    // The window's span, right-aligned in the gutter's corner.
    p.drawText(QRect(6, 0, kGutterWidth - 12, kRulerHeight), Qt::AlignLeft | Qt::AlignVCenter,
        u"window %1"_s.arg(duration_text(static_cast<double>(axis.span_ns()))));
}

void TimelineCanvas::paint_rows(QPainter& p, const TimeAxis& axis)
{
    const QRect plot = plot_rect();
    const analyzer::TimelineIndex& index = timeline_->index;
    const AnalysedTrace& run = *timeline_->run;
    const auto highlighted = state_.highlighted_cause();
    hits_.clear();
    bubbles_by_device_.clear();
    visible_syncs_.clear();
    sync_marks_.clear();

    // The bubbles of a device in this window, queried once per frame for the bubble row and the shading.
    const auto device_bubbles = [&](uint32_t device) -> const std::vector<TimelineEntry>& {
        auto [it, inserted] = bubbles_by_device_.try_emplace(device);
        if (inserted)
            if (const TimelineRow* row = rows_.first_row(TrackKind::Bubbles, device))
                analyzer::query(
                    index, row->lane, axis.start_ns, axis.end_ns, plot.width(), analyzer::kFoldMinPx, it->second);
        return it->second;
    };
    const auto x_range = [&](int64_t start, int64_t end) {
        const double x0 = plot.left() + std::max(axis.x_of(start), -2.0);
        const double x1 = plot.left() + std::min(axis.x_of(end), plot.width() + 2.0);
        return std::pair { x0, std::max(x1, x0 + 1.0) }; // every item at least a pixel wide
    };

    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    p.setFont(small);
    const QFontMetrics metrics(small);
    for (const TimelineRow& row : rows_.rows()) {
        const int top = plot.top() + row.y - offset_;
        if (top + row.height < plot.top() || top > plot.bottom())
            continue;
        const analyzer::TimelineTrack& track = index.tracks[row.lane.track];
        // Bubbles shade the streams of their device.
        if (track.kind == TrackKind::GpuStream && track.device_id)
            for (const TimelineEntry& b : device_bubbles(*track.device_id)) {
                const auto [x0, x1] = x_range(b.start_ns, b.end_ns);
                p.fillRect(
                    QRectF(x0, top, x1 - x0, row.height), shading(timeline_color(TrackKind::Bubbles, b.category)));
            }
        const std::vector<TimelineEntry>* entries = &buffer_;
        if (track.kind == TrackKind::Bubbles && track.device_id)
            entries = &device_bubbles(*track.device_id);
        else
            analyzer::query(index, row.lane, axis.start_ns, axis.end_ns, plot.width(), analyzer::kFoldMinPx, buffer_);
        for (const TimelineEntry& e : *entries) {
            const auto [x0, x1] = x_range(e.start_ns, e.end_ns);
            QColor color = timeline_color(track.kind, e.category);
            if (track.kind == TrackKind::Steps)
                color = (e.ref.row % 2 == 0) ? QColor(0xd9, 0xd9, 0xd9) : QColor(0xc4, 0xc4, 0xc4);
            if (track.kind == TrackKind::Bubbles && highlighted && e.category != static_cast<uint8_t>(*highlighted))
                color.setAlpha(70); // the finding's cause stands out
            const QRectF box(x0, top + 2, x1 - x0, row.height - 4);
            if (e.folded()) {
                // A fold: the dominant category's colour, hatched, so that it never passes for one long item.
                p.fillRect(box, color.lighter(115));
                p.fillRect(box, QBrush(color.darker(140), Qt::BDiagPattern));
            } else {
                p.fillRect(box, color);
            }
            if (track.kind == TrackKind::Syncs && !e.folded()) {
                visible_syncs_.push_back(e.ref);
                sync_marks_.emplace_back(x1, top + row.height - 2);
            }
            if (box.width() >= kMinLabelPx || (track.kind == TrackKind::Steps && box.width() >= 14)) {
                QString text = e.folded() ? u"%1 items"_s.arg(e.count)
                                          : to_qstring(analyzer::item_name(run.model, run.report, e.ref));
                const int room = static_cast<int>(box.width()) - 5;
                // A step too narrow for "step 12" still shows its number.
                if (track.kind == TrackKind::Steps && !e.folded() && metrics.horizontalAdvance(text) > room)
                    text = QString::number(run.report.steps.steps[e.ref.row].index);
                const QString shown = metrics.elidedText(text, Qt::ElideRight, room);
                // "ke…" says nothing: draw a label only when a few characters of it fit.
                if (shown == text || shown.size() >= 5) {
                    const bool dark = color.lightnessF() < 0.5 && color.alpha() > 128;
                    p.setPen(dark ? Qt::white : Qt::black);
                    p.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter, shown);
                }
            }
            hits_.push_back(Hit { &row, x0, x1, e });
        }
        // The highlighted cause's bubbles get an outline where there is room for one (narrower ones would turn
        // into black bars).
        if (track.kind == TrackKind::Bubbles && highlighted)
            for (const TimelineEntry& e : *entries)
                if (e.category == static_cast<uint8_t>(*highlighted)) {
                    const auto [x0, x1] = x_range(e.start_ns, e.end_ns);
                    if (x1 - x0 < 8)
                        continue;
                    p.setPen(QPen(timeline_color(TrackKind::Bubbles, e.category).darker(170), 1.5));
                    p.drawRect(QRectF(x0, top + 1.5, x1 - x0, row.height - 3));
                }
    }
}

void TimelineCanvas::paint_sync_lines(QPainter& p, const TimeAxis& axis)
{
    // A marker under each sync call's end (where the host resumed), and a line to each bubble the analyzer charged
    // to it (rule 1: the sync drained the queue).
    const analyzer::TimelineIndex& index = timeline_->index;
    const AnalysedTrace& run = *timeline_->run;
    p.setRenderHint(QPainter::Antialiasing, true);
    const QColor red = attention_color();
    for (size_t i = 0; i < visible_syncs_.size(); ++i) {
        const auto [x, y] = sync_marks_[i];
        QPainterPath marker;
        marker.moveTo(x - 5, y + 6);
        marker.lineTo(x + 5, y + 6);
        marker.lineTo(x, y);
        marker.closeSubpath();
        p.fillPath(marker, red.darker(130));
        for (const uint32_t bubble : analyzer::sync_bubbles(index, visible_syncs_[i].row)) {
            const auto at = analyzer::locate(index, run.model, run.report, ItemRef { ItemKind::Bubble, bubble });
            if (!at)
                continue;
            const auto top = row_top(at->lane);
            const auto [bx0, bx1] = item_x(axis, *at);
            p.setPen(QPen(red.darker(130), 1.5, Qt::DashLine));
            p.drawLine(QPointF(x, y + 6), QPointF(std::clamp(x, bx0, bx1), *top + TimelineRows::kRowHeight / 2.0));
        }
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

std::pair<double, double> TimelineCanvas::item_x(const TimeAxis& axis, const analyzer::ItemLocation& at) const
{
    const analyzer::TimelineLane& lane = timeline_->index.lane(at.lane);
    const double x0 = plot_rect().left() + axis.x_of(lane.start_ns[at.index]);
    const double x1 = plot_rect().left() + axis.x_of(lane.end_ns[at.index]);
    return { x0, std::max(x1, x0 + 1.0) };
}

void TimelineCanvas::paint_flows(QPainter& p, const TimeAxis& axis) const
{
    if (flows_.empty())
        return;
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(QPen(QColor(0x33, 0x33, 0x33), 1.5));
    for (const auto& [call, work] : flows_) {
        const auto call_top = row_top(call.lane);
        const auto work_top = row_top(work.lane);
        if (!call_top || !work_top)
            continue;
        // From the launch call's end to the work's start, the launch delay in between.
        const QPointF from(
            item_x(axis, call).second, *call_top + (*work_top > *call_top ? TimelineRows::kRowHeight - 3 : 3));
        const QPointF to(
            item_x(axis, work).first, *work_top + (*work_top > *call_top ? 3 : TimelineRows::kRowHeight - 3));
        p.drawLine(from, to);
        const QPointF direction = (to - from) / std::max(1.0, std::hypot(to.x() - from.x(), to.y() - from.y()));
        const QPointF normal(-direction.y(), direction.x());
        QPainterPath head;
        head.moveTo(to);
        head.lineTo(to - 7 * direction + 4 * normal);
        head.lineTo(to - 7 * direction - 4 * normal);
        head.closeSubpath();
        p.fillPath(head, QColor(0x33, 0x33, 0x33));
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelineCanvas::paint_selection(QPainter& p, const TimeAxis& axis) const
{
    if (!selected_at_)
        return;
    const auto top = row_top(selected_at_->lane);
    if (!top)
        return;
    const auto [x0, x1] = item_x(axis, *selected_at_);
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x0 - 1, *top + 1, x1 - x0 + 2, TimelineRows::kRowHeight - 2));
}

void TimelineCanvas::paint_gutter(QPainter& p) const
{
    const QRect gutter(0, kRulerHeight, kGutterWidth, height() - kRulerHeight);
    p.fillRect(gutter, palette().window());
    p.setClipRect(gutter);
    const QFontMetrics metrics(font());
    for (const TimelineRow& row : rows_.rows()) {
        const int top = kRulerHeight + row.y - offset_;
        if (top + row.height < kRulerHeight || top > height())
            continue;
        if (row.first_of_track) {
            p.setPen(palette().color(QPalette::Mid));
            p.drawLine(0, top - TimelineRows::kTrackGap / 2, width(), top - TimelineRows::kTrackGap / 2);
        }
        QFont f = font();
        f.setBold(row.first_of_track);
        p.setFont(f);
        p.setPen(palette().color(row.first_of_track ? QPalette::WindowText : QPalette::PlaceholderText));
        const int indent = row.first_of_track ? 6 : 18;
        p.drawText(QRect(indent, top, kGutterWidth - indent - 4, row.height), Qt::AlignLeft | Qt::AlignVCenter,
            metrics.elidedText(row.label, Qt::ElideMiddle, kGutterWidth - indent - 8));
    }
    p.setClipping(false);
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(kGutterWidth - 1, 0, kGutterWidth - 1, height());
}

} // namespace fp8scope::gui
