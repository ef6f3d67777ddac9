// The window driven offscreen: a bad file leaves it usable with the problem in the banner, a good file replaces it,
// and selecting a finding moves the shared view state to its step and cause.
#include "gui_scenarios.hpp"
#include "scenario.hpp"

#include "widgets/findings_view.hpp"
#include "widgets/main_window.hpp"
#include "widgets/timeline/timeline_canvas.hpp"
#include "widgets/timeline/timeline_view.hpp"

#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeView>
#include <QTreeWidget>
#include <catch2/catch.hpp>

#include <limits>

using namespace fp8scope;
using namespace fp8scope::testing;
using gui::MainWindow;

namespace {

// Opens and waits for the background job to end; returns whether a session was loaded.
bool open_and_wait(MainWindow& window, const std::string& run, const std::string& ref = {})
{
    QSignalSpy settled(&window, &MainWindow::load_settled);
    QSignalSpy finished(&window, &MainWindow::job_finished);
    window.open(QString::fromStdString(run), QString::fromStdString(ref));
    for (int waited_ms = 0; finished.isEmpty(); waited_ms += 20) {
        REQUIRE(waited_ms < 60'000);
        finished.wait(20);
    }
    REQUIRE(settled.count() == 1);
    return settled.front().front().toBool();
}

} // namespace

TEST_CASE("window: a bad file shows its problem and leaves the window usable", "[gui][window]")
{
    MainWindow window;
    window.show();
    const std::string missing = gui_trace_path("window-missing");
    CHECK_FALSE(open_and_wait(window, missing));
    CHECK(window.banner_text().contains(QString::fromStdString(missing)));
    CHECK_FALSE(window.session());

    // A good trace after it opens, and the banner goes; its timeline follows.
    CHECK(open_and_wait(window, write_layout_trace("window-good")));
    REQUIRE(window.session());
    CHECK(window.banner_text().isEmpty());
    REQUIRE(window.timeline());
    CHECK(window.timeline()->run == window.session()->run);

    // A trace with no steps after that keeps the good one open.
    const auto good = window.session();
    CHECK_FALSE(open_and_wait(window, write_empty_trace("window-empty")));
    CHECK(window.banner_text().contains(QStringLiteral("no steps")));
    CHECK(window.session() == good);
    for (int i = 0; i < window.tabs().count(); ++i)
        window.tabs().setCurrentIndex(i); // every view still shows the good trace
}

TEST_CASE("window: selecting a finding focuses its step and cause", "[gui][window]")
{
    MainWindow window;
    window.show();
    REQUIRE(open_and_wait(window, sample_trace("compare/h100-drift-fp8.sqlite")));
    const auto& recommendations = window.session()->run->what_if.recommendations;
    REQUIRE_FALSE(recommendations.empty());
    auto* findings = window.findChild<gui::FindingsView*>();
    REQUIRE(findings);
    QTreeView& tree = findings->tree();
    // No reference: the run's own numerics findings first (issue 43: this run is at risk), then the recommendations.
    const auto& numerics = window.session()->run->report.numerics.findings;
    REQUIRE_FALSE(numerics.empty());
    tree.setCurrentIndex(tree.model()->index(0, 0));
    CHECK(window.view_state().focused_step() == numerics.front().onset_step);
    tree.setCurrentIndex(tree.model()->index(static_cast<int>(numerics.size()), 0)); // the top recommendation
    CHECK(window.view_state().focused_step() == recommendations.front().worst_step->step_index);
    CHECK(window.view_state().highlighted_cause() == analyzer::BubbleCause::Launch);
}

TEST_CASE("window: a reference of another job is refused and the run stays", "[gui][window]")
{
    MainWindow window;
    window.show();
    REQUIRE(open_and_wait(window, write_stats_job("window-run", "python3 train.py", true),
        write_stats_job("window-other", "python3 evaluate.py", false)));
    CHECK(window.banner_text().contains(QStringLiteral("different jobs")));
    REQUIRE(window.session());
    CHECK_FALSE(window.session()->compare);
}

TEST_CASE("window: File > Open reference compares the open run and keeps its timeline", "[gui][window]")
{
    MainWindow window;
    window.show();
    REQUIRE(open_and_wait(window, write_stats_job("window-ref-run", "python3 train.py", true)));
    const auto run = window.session()->run;
    const auto timeline = window.timeline();
    REQUIRE(timeline);
    QSignalSpy finished(&window, &MainWindow::job_finished);
    window.open_reference(QString::fromStdString(write_stats_job("window-ref-ref", "python3 train.py", false)));
    for (int waited_ms = 0; finished.isEmpty(); waited_ms += 20) {
        REQUIRE(waited_ms < 60'000);
        finished.wait(20);
    }
    REQUIRE(window.session()->compare);
    CHECK(window.session()->run == run); // not read again
    CHECK(window.timeline() == timeline);
    CHECK(window.banner_text().isEmpty());
}

TEST_CASE(
    "window: the dashboard shows the compare verdict and the timeline the selected item's details", "[gui][window]")
{
    MainWindow window;
    window.show();
    REQUIRE(open_and_wait(
        window, sample_trace("compare/h100-drift-fp8.sqlite"), sample_trace("compare/h100-drift-bf16.sqlite")));
    const auto session = window.session();
    REQUIRE(session->compare);
    // The verdict is the plain-words headline, with how many tensors drift among the matched sites.
    const QString headline = QStringLiteral("DRIFT: blocks.1.fc1&#39;s input");
    const QString verdict = QStringLiteral("%1 drifting tensor(s) among %2 matched sites")
                                .arg(session->compare->flagged.size())
                                .arg(session->compare->sites.size());
    bool found = false, headline_found = false;
    for (const QLabel* label : window.findChildren<QLabel*>()) {
        found = found || label->text().contains(verdict);
        headline_found = headline_found || label->text().contains(headline)
            || label->text().contains(QStringLiteral("DRIFT: blocks.1.fc1's input"));
    }
    CHECK(found);
    CHECK(headline_found);

    // Selecting a sync call on the timeline shows the analyzer's description of it in the details panel.
    auto* view = window.findChild<gui::TimelineView*>();
    REQUIRE(view);
    REQUIRE(window.timeline());
    const analyzer::ItemRef sync { analyzer::ItemKind::Sync, 0 };
    view->canvas().select(sync);
    const analyzer::ItemDetails details
        = analyzer::describe_item(window.timeline()->index, session->run->model, session->run->report, sync);
    auto* fields = view->findChild<QTreeWidget*>();
    REQUIRE(fields);
    REQUIRE(fields->topLevelItemCount() == static_cast<int>(details.fields.size()));
    CHECK(fields->topLevelItem(0)->text(0).toStdString() == details.fields[0].label);
    bool titled = false;
    for (const QLabel* label : view->findChildren<QLabel*>())
        titled = titled || label->text().toStdString() == details.title;
    CHECK(titled);
}

TEST_CASE("window: the dashboard warns about the scalars that went NaN", "[gui][window]")
{
    Scenario s;
    const HostThread host = s.thread(4242, 4242);
    for (int64_t step = 0; step < 4; ++step) {
        s.step_marker(host, step * 1'000'000, step);
        s.launch(host, { .api_start_ns = step * 1'000'000 + 1'000, .api_end_ns = step * 1'000'000 + 2'000 },
            { .start_ns = step * 1'000'000 + 3'000, .end_ns = step * 1'000'000 + 900'000, .name = "gemm" });
        s.scalar(
            host, step * 1'000'000 + 950'000, "loss", step >= 2 ? std::numeric_limits<double>::quiet_NaN() : 3.0, step);
    }
    const std::string path = gui_trace_path("nan_loss");
    REQUIRE(s.write_fp8scope(path));
    MainWindow window;
    window.show();
    REQUIRE(open_and_wait(window, path));
    bool found = false;
    for (const QLabel* label : window.findChildren<QLabel*>())
        found = found || label->text().contains(QStringLiteral("NaN scalars: loss: NaN from step 2 (2 of 4 values)"));
    CHECK(found);
}
