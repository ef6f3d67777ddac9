// The window driven offscreen: a bad file leaves it usable with the problem in the banner, a good file replaces it,
// and selecting a finding moves the shared view state to its step and cause.
#include "gui_scenarios.hpp"

#include "widgets/findings_view.hpp"
#include "widgets/main_window.hpp"

#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeView>
#include <catch2/catch.hpp>

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
    tree.setCurrentIndex(tree.model()->index(0, 0)); // no reference: the top recommendation
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
