// The timeline painted offscreen into an image on the scenario of known layout (gui_scenarios.hpp, LayoutTimes):
// the bubbles' pixels have their cause's colour, the sync call's marker is where the sync is, kernels have their
// class's colour, and hovering a kernel draws the flow from its launch call. Rows come from TimelineRows, x from the
// canvas's TimeAxis: the same mapping the canvas paints with.
#include "gui_scenarios.hpp"

#include "models/display_text.hpp"
#include "widgets/timeline/timeline_canvas.hpp"

#include <QApplication>
#include <QImage>
#include <QMouseEvent>
#include <catch2/catch.hpp>

#include <cstdlib>

using namespace fp8scope;
using namespace fp8scope::testing;
using analyzer::BubbleCause;
using analyzer::TrackKind;
using gui::TimelineCanvas;
using T = LayoutTimes;

namespace {

// Step 2 starts at 2 x 10 ms: the first analysed step (0 and 1 are warm-up).
constexpr int64_t kT0 = 2 * T::kStepNs;
constexpr int kPlotWidth = 1000;

struct Painted {
    std::shared_ptr<const gui::Session> session;
    std::shared_ptr<const gui::SessionTimeline> timeline;
    gui::ViewState state;
    TimelineCanvas canvas { state };

    explicit Painted(const std::string& name)
    {
        std::tie(session, timeline) = open_with_timeline(write_layout_trace(name));
        const auto span = session->run->model.time_span_ns().value();
        state.reset({ span.first, span.second }, session->run->report.steps.steps);
        canvas.resize(TimelineCanvas::kGutterWidth + kPlotWidth, 420);
        canvas.set_data(session, timeline);
    }

    // Shows [t0 + from, t0 + to) and paints.
    QImage paint(int64_t from, int64_t to)
    {
        state.set_window({ kT0 + from, kT0 + to });
        return canvas.grab().toImage();
    }

    // The x pixel of the middle of [t0 + from, t0 + to).
    int x_mid(int64_t from, int64_t to) const
    {
        return TimelineCanvas::kGutterWidth + static_cast<int>(canvas.axis().x_of(kT0 + (from + to) / 2));
    }
    int x_at(int64_t at) const { return TimelineCanvas::kGutterWidth + static_cast<int>(canvas.axis().x_of(kT0 + at)); }

    QRect row(TrackKind kind) const
    {
        const gui::TimelineRow* row = canvas.rows().first_row(kind,
            kind == TrackKind::Steps || kind == TrackKind::Syncs || kind == TrackKind::HostThread
                    || kind == TrackKind::Nvtx
                ? std::nullopt
                : std::optional<uint32_t>(0));
        REQUIRE(row);
        return canvas.lane_rect(row->lane).value();
    }
};

QColor pixel(const QImage& image, int x, int y)
{
    return QColor(image.pixel(x, y));
}

// Equal up to the rounding of a colour computed in another space (QColor::darker works in HSV).
bool close_to(const QColor& a, const QColor& b)
{
    return std::abs(a.red() - b.red()) <= 2 && std::abs(a.green() - b.green()) <= 2
        && std::abs(a.blue() - b.blue()) <= 2;
}

} // namespace

TEST_CASE("timeline render: bubbles have their cause's colour at their pixels", "[gui][render]")
{
    Painted painted("render-causes");
    const QImage step = painted.paint(0, T::kStepNs); // one step: 10 us per pixel
    const int bubbles_y = painted.row(TrackKind::Bubbles).center().y();
    CHECK(pixel(step, painted.x_mid(T::kSyncGap[0], T::kSyncGap[1]), bubbles_y) == gui::cause_color(BubbleCause::Sync));
    CHECK(pixel(step, painted.x_mid(T::kHostGap[0], T::kHostGap[1]), bubbles_y) == gui::cause_color(BubbleCause::Host));

    // Zoomed to 500 us, the 10 us launch gap is 20 px wide.
    const QImage zoomed = painted.paint(250'000, 750'000);
    CHECK(pixel(zoomed, painted.x_mid(T::kLaunchGap[0], T::kLaunchGap[1]), bubbles_y)
        == gui::cause_color(BubbleCause::Launch));
    CHECK(
        pixel(zoomed, painted.x_mid(T::kSyncGap[0], T::kSyncGap[1]), bubbles_y) == gui::cause_color(BubbleCause::Sync));
    // Where the GPU is busy the bubble row is empty (white), and the stream shows the kernel's class colour.
    const int busy_x = painted.x_mid(T::kLaunchGap[1], T::kSyncGap[0]); // gemm_b
    CHECK(pixel(zoomed, busy_x, bubbles_y) == QColor(Qt::white));
    CHECK(pixel(zoomed, busy_x, painted.row(TrackKind::GpuStream).center().y())
        == gui::class_color(analyzer::KernelClass::OtherGemm));
}

TEST_CASE("timeline render: the sync call's marker is where the sync is", "[gui][render]")
{
    Painted painted("render-sync");
    const QImage image = painted.paint(250'000, 750'000);
    const QRect syncs = painted.row(TrackKind::Syncs);
    // The call's box spans [480, 690) us in the syncs row, in the sync red.
    CHECK(pixel(image, painted.x_mid(T::kSync[0], T::kSync[1]), syncs.center().y()) == gui::attention_color());
    CHECK(pixel(image, painted.x_at(T::kSync[0]) - 5, syncs.center().y()) == QColor(Qt::white));
    CHECK(pixel(image, painted.x_at(T::kSync[1]) + 5, syncs.center().y()) == QColor(Qt::white));
    // Its marker hangs under the call's end, where the host resumed.
    const int marker_y = syncs.bottom() - 1 + 4;
    CHECK(close_to(pixel(image, painted.x_at(T::kSync[1]), marker_y), gui::attention_color().darker(130)));
    CHECK(pixel(image, painted.x_at(T::kSync[1]) - 20, marker_y) == QColor(Qt::white));
}

TEST_CASE("timeline render: hovering a kernel draws the flow from its launch call", "[gui][render]")
{
    Painted painted("render-flow");
    painted.paint(600'000, 800'000); // the elementwise kernel [700, 750) us and its launch call [692, 695) us
    const QPoint on_kernel(painted.x_mid(700'000, 750'000), painted.row(TrackKind::GpuStream).center().y());
    QMouseEvent move(QEvent::MouseMove, on_kernel, painted.canvas.mapToGlobal(on_kernel), Qt::NoButton, Qt::NoButton,
        Qt::NoModifier);
    QApplication::sendEvent(&painted.canvas, &move);
    REQUIRE(painted.canvas.hovered());
    CHECK(painted.canvas.hovered()->kind == analyzer::ItemKind::Kernel);
    REQUIRE(painted.canvas.flows().size() == 1);
    const auto& [call, work] = painted.canvas.flows().front();
    const analyzer::TimelineLane& call_lane = painted.timeline->index.lane(call.lane);
    CHECK(call_lane.start_ns[call.index] == kT0 + 692'000);
    CHECK(painted.timeline->index.tracks[call.lane.track].kind == TrackKind::HostThread);
    CHECK(painted.timeline->index.lane(work.lane).start_ns[work.index] == kT0 + 700'000);
    // Leaving the kernel clears the flow.
    const QPoint away(painted.x_mid(650'000, 660'000), painted.row(TrackKind::GpuStream).center().y());
    QMouseEvent leave(
        QEvent::MouseMove, away, painted.canvas.mapToGlobal(away), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(&painted.canvas, &leave);
    CHECK(painted.canvas.flows().empty());
}

TEST_CASE("timeline render: wheel and keys zoom and pan the shared window", "[gui][render]")
{
    Painted painted("render-zoom");
    painted.paint(0, T::kStepNs);
    const gui::TimeWindow before = painted.state.window();
    // A notch up over the middle of the plot zooms in by 1.25 around the time under the cursor.
    const QPointF middle(TimelineCanvas::kGutterWidth + kPlotWidth / 2.0, 100);
    QWheelEvent wheel(middle, painted.canvas.mapToGlobal(middle), {}, QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
        Qt::NoScrollPhase, false);
    QApplication::sendEvent(&painted.canvas, &wheel);
    const gui::TimeWindow zoomed = painted.state.window();
    CHECK(zoomed.end_ns - zoomed.start_ns == 8'000'000);
    CHECK((zoomed.start_ns + zoomed.end_ns) / 2 == (before.start_ns + before.end_ns) / 2);
    // Right arrow pans by a tenth of the window; Home shows the whole trace.
    QKeyEvent right(QEvent::KeyPress, Qt::Key_Right, Qt::NoModifier);
    QApplication::sendEvent(&painted.canvas, &right);
    CHECK(painted.state.window().start_ns == zoomed.start_ns + 800'000);
    QKeyEvent home(QEvent::KeyPress, Qt::Key_Home, Qt::NoModifier);
    QApplication::sendEvent(&painted.canvas, &home);
    CHECK(painted.state.window() == painted.state.bounds());
    // PageDown focuses the next step.
    QKeyEvent next(QEvent::KeyPress, Qt::Key_PageDown, Qt::NoModifier);
    QApplication::sendEvent(&painted.canvas, &next);
    CHECK(painted.state.focused_step() == 2);
}
