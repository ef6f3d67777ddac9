// The viewer on a large trace (docs/benchmarks.md "The viewer on 10 M kernels: open time and frame time"; goals: open
// in <= 5 s until the dashboard shows, and every timeline frame in <= 16 ms). Not a test: it prints figures.
//
//   fp8scope_gui_bench TRACE [--frames N (60)] [--width PX (1920)] [--height PX (1080)]
//
// It drives the real window (gui/widgets/main_window.hpp) on Qt's offscreen platform (unless QT_QPA_PLATFORM says
// otherwise): the time from open() until the dashboard has been painted with the new session, then until the run's
// timeline index is built (it is built after the dashboard shows), then the time of one synchronous repaint of the
// timeline canvas at full, step and kernel zoom, over N windows panned evenly across the trace (so that no cache
// flatters a frame). Each frame is the analyzer's level-of-detail query for every visible lane plus our painting.
#include "widgets/main_window.hpp"
#include "widgets/timeline/timeline_canvas.hpp"
#include "widgets/timeline/timeline_view.hpp"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTabWidget>

#include "peak_rss.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace fp8scope;

namespace {

struct FrameTimes {
    double median_ms = 0, max_ms = 0;
};

// Repaints the canvas once per window of `span_ns`, the windows spread evenly over the trace.
FrameTimes time_frames(gui::MainWindow& window, gui::TimelineCanvas& canvas, int64_t span_ns, int frames)
{
    const gui::TimeWindow bounds = window.view_state().bounds();
    const int64_t room = std::max<int64_t>(0, bounds.end_ns - bounds.start_ns - span_ns);
    std::vector<double> ms;
    QElapsedTimer timer;
    for (int i = 0; i < frames; ++i) {
        const int64_t start = bounds.start_ns + room * i / std::max(1, frames - 1);
        window.view_state().set_window({ start, start + span_ns });
        timer.start();
        canvas.repaint();
        ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
    }
    std::ranges::sort(ms);
    return { ms[ms.size() / 2], ms.back() };
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App cli("The viewer on a large trace: open time and timeline frame times");
    std::string trace;
    int frames = 60, width = 1920, height = 1080;
    cli.add_option("TRACE", trace, "A trace, e.g. from fp8scope_make_large_trace")->required();
    cli.add_option("--frames", frames, "Windows per zoom level")->check(CLI::Range(1, 100000));
    cli.add_option("--width", width, "Window width in pixels")->check(CLI::Range(400, 10000));
    cli.add_option("--height", height, "Window height in pixels")->check(CLI::Range(300, 10000));
    CLI11_PARSE(cli, argc, argv);

    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    int qt_argc = 1;
    QApplication app(qt_argc, argv);
    gui::MainWindow window;
    window.resize(width, height);
    window.show();
    QApplication::processEvents();

    QElapsedTimer clock;
    double dashboard_s = 0, timeline_s = 0;
    bool loaded = false;
    QEventLoop loop;
    QObject::connect(&window, &gui::MainWindow::load_settled, &window, [&](bool ok) {
        loaded = ok;
        if (ok) {
            window.tabs().setCurrentIndex(0);
            window.repaint(); // the dashboard painted with the new session
            dashboard_s = static_cast<double>(clock.nsecsElapsed()) / 1e9;
        }
    });
    QObject::connect(&window, &gui::MainWindow::job_finished, &loop, [&] {
        timeline_s = static_cast<double>(clock.nsecsElapsed()) / 1e9;
        loop.quit();
    });
    clock.start();
    window.open(QString::fromStdString(trace));
    loop.exec();
    if (!loaded || !window.timeline()) {
        std::fprintf(stderr, "gui_bench: %s did not open: %s\n", trace.c_str(), qPrintable(window.banner_text()));
        return 1;
    }
    const gui::AnalysedTrace& run = *window.session()->run;
    fmt::print("trace {}: {} kernels, {} API calls, {} steps\n", trace, run.model.kernels.size(),
        run.model.api_calls.size(), run.report.steps.steps.size());
    fmt::print("open until the dashboard is painted: {:.2f} s\n", dashboard_s);
    fmt::print("open until the timeline index is built: {:.2f} s\n", timeline_s);

    auto* view = window.findChild<gui::TimelineView*>();
    window.tabs().setCurrentWidget(view);
    QApplication::processEvents();
    gui::TimelineCanvas& canvas = view->canvas();
    const gui::TimeWindow bounds = window.view_state().bounds();
    const auto& steps = run.report.steps.steps;
    const analyzer::StepInterval& middle = steps[steps.size() / 2];
    const int64_t step_ns = middle.end_ns - middle.start_ns;
    // Kernel zoom: about 20 kernels of the middle step in view.
    const auto kernels_in_step = std::max<int64_t>(1, run.report.launch.steps[steps.size() / 2].kernels);
    const int64_t kernel_span_ns = std::max<int64_t>(gui::TimeAxis::kMinSpanNs, step_ns * 20 / kernels_in_step);
    fmt::print("timeline canvas {} x {} px, plot {} px wide; {} frames per zoom, ms per frame, median / max:\n",
        canvas.width(), canvas.height(), canvas.plot_rect().width(), frames);
    const struct {
        const char* name;
        int64_t span_ns;
    } zooms[] = { { "full (the whole trace)", bounds.end_ns - bounds.start_ns }, { "step (one step)", step_ns },
        { "kernel (~20 kernels)", kernel_span_ns } };
    for (const auto& zoom : zooms) {
        const FrameTimes t = time_frames(window, canvas, zoom.span_ns, frames);
        fmt::print("  {:<24} window {:>14} ns: {:7.2f} / {:7.2f}\n", zoom.name, zoom.span_ns, t.median_ms, t.max_ms);
    }
    fmt::print("peak RSS: {:.2f} GB\n", bench::peak_rss_gb());
    return 0;
}
