#include "widgets/screenshots.hpp"

#include "widgets/findings_view.hpp"
#include "widgets/main_window.hpp"
#include "widgets/timeline/timeline_canvas.hpp"
#include "widgets/timeline/timeline_view.hpp"

#include <QApplication>
#include <QDir>
#include <QMouseEvent>
#include <QPixmap>
#include <QScrollArea>
#include <QTabWidget>
#include <QTreeView>

#include <algorithm>
#include <cstdio>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

namespace {

// The timeline at step and kernel zoom: the top recommendation's worst step with its cause highlighted, then a
// window around the step's sync call that idled the GPU longest, hovering the kernel that ended the gap (its
// launch flow drawn) with the sync call selected.
template <class Save> void save_timeline_zooms(MainWindow& window, TimelineCanvas& canvas, Save& save)
{
    const auto session = window.session();
    const auto timeline = window.timeline();
    if (!session || !timeline)
        return;
    const AnalysedTrace& run = *session->run;
    ViewState& state = window.view_state();
    if (!run.what_if.recommendations.empty() && run.what_if.recommendations.front().worst_step) {
        const analyzer::Recommendation& top = run.what_if.recommendations.front();
        state.focus_step(top.worst_step->step_index, analyzer::recommendation_cause(top.kind));
        if (const auto position = state.step_position(top.worst_step->step_index))
            canvas.select(analyzer::ItemRef { analyzer::ItemKind::Step, static_cast<uint32_t>(*position) });
        save(u"timeline-step"_s);
    }
    const analyzer::SyncCallReport* worst = nullptr;
    for (const analyzer::SyncCallReport& call : run.report.syncs.calls)
        if (call.step && (!worst || call.idle_caused_ns > worst->idle_caused_ns))
            worst = &call;
    if (!worst || worst->idle_caused_ns == 0)
        return;
    if (worst->step)
        state.focus_step(run.report.steps.steps[*worst->step].index, analyzer::BubbleCause::Sync);
    const int64_t start = worst->start_ns;
    const int64_t end = start + worst->duration_ns + worst->idle_caused_ns;
    const int64_t margin = (end - start) / 2;
    state.set_window(TimeWindow { start - margin, end + margin });
    canvas.select(analyzer::ItemRef { analyzer::ItemKind::Sync, static_cast<uint32_t>(worst->call) });
    canvas.repaint(); // hovering hit-tests the last frame
    // The first bubble charged to the call ends where the GPU resumes: hover the work that starts there.
    const auto bubbles = analyzer::sync_bubbles(timeline->index, worst->call);
    if (!bubbles.empty()) {
        const analyzer::Bubble& bubble = run.report.bubbles.bubbles[bubbles.front()];
        for (const TimelineRow& row : canvas.rows().rows()) {
            const analyzer::TimelineTrack& track = timeline->index.tracks[row.lane.track];
            if (track.kind != analyzer::TrackKind::GpuStream || track.device_id != bubble.device_id)
                continue;
            const auto rect = canvas.lane_rect(row.lane);
            const QPointF at(canvas.plot_rect().left() + canvas.axis().x_of(bubble.end_ns) + 2, rect->center().y());
            QMouseEvent move(QEvent::MouseMove, at, canvas.mapToGlobal(at), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
            QApplication::sendEvent(&canvas, &move);
            if (!canvas.flows().empty())
                break;
        }
    }
    save(u"timeline-sync"_s);
}

} // namespace

int save_screenshots(MainWindow& window, const QString& dir)
{
    QDir().mkpath(dir);
    int failures = 0;
    const auto save = [&](const QString& name) {
        // Layout requests cascade (a chart's new minimum size, then its scroll area's): settle them all first.
        for (int i = 0; i < 20; ++i) {
            QCoreApplication::sendPostedEvents();
            QApplication::processEvents();
        }
        const QString path = QDir(dir).filePath(name + u".png"_s);
        if (!window.grab().save(path)) {
            std::fprintf(stderr, "fp8scope-gui: cannot write %s\n", qPrintable(path));
            ++failures;
        }
    };
    // A scrolled page (the dashboard) is pictured whole: the page alone, at the viewport's width and the height its
    // layout asks for (the window around it would show only its top).
    const auto save_whole = [&](const QString& name) {
        auto* area = qobject_cast<QScrollArea*>(window.tabs().currentWidget());
        if (!area || !area->widget()) {
            save(name);
            return;
        }
        QWidget& page = *area->widget();
        area->setWidgetResizable(false);
        const int width = area->viewport()->width();
        // Wrapped labels make the page's height depend on its width, and the layout's answer on its last pass:
        // resize until it asks for no more.
        for (int pass = 0; pass < 5; ++pass) {
            const int wanted = std::max({ page.hasHeightForWidth() ? page.heightForWidth(width) : 0,
                page.minimumSizeHint().height(), area->viewport()->height() });
            if (page.size() == QSize(width, wanted))
                break;
            page.resize(width, wanted);
            save(name); // settles the layout
        }
        const QString path = QDir(dir).filePath(name + u".png"_s);
        if (!page.grab().save(path))
            ++failures;
        area->setWidgetResizable(true);
    };
    QTabWidget& tabs = window.tabs();
    if (auto* findings = window.findChild<FindingsView*>())
        findings->tree().setCurrentIndex(findings->tree().model()->index(0, 0));
    window.view_state().set_window(window.view_state().bounds());
    for (int i = 0; i < tabs.count(); ++i) {
        tabs.setCurrentIndex(i);
        save_whole(tabs.tabText(i).toLower().remove(u'&'));
    }
    if (auto* timeline = window.findChild<TimelineView*>()) {
        tabs.setCurrentWidget(timeline);
        save_timeline_zooms(window, timeline->canvas(), save);
    }
    tabs.setCurrentIndex(0);
    return failures;
}

} // namespace fp8scope::gui
