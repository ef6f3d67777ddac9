// The background loader (gui/models/session_loader.hpp): a good trace, every kind of bad input the issue names
// (missing, not SQLite, no steps, a reference of another job) giving a message that names the problem, and the
// generation counter and Cancel dropping stale results.
#include "gui_scenarios.hpp"

#include <QFile>
#include <QSignalSpy>
#include <QThreadPool>
#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::testing;
using gui::SessionLoader;

namespace {

QString q(const std::string& text)
{
    return QString::fromStdString(text);
}

// Lets every background job finish and delivers what they posted.
void drain()
{
    QThreadPool::globalInstance()->waitForDone();
    for (int i = 0; i < 10; ++i)
        QCoreApplication::processEvents();
}

} // namespace

TEST_CASE("loader: a trace loads and is analysed in the background", "[gui][loader]")
{
    SessionLoader loader;
    QSignalSpy progress(&loader, &SessionLoader::progress);
    QSignalSpy timeline(&loader, &SessionLoader::timeline_ready);
    loader.open(q(write_layout_trace("loader-good")));
    CHECK(loader.busy());
    QString message;
    const auto session = wait_for_load(loader, message);
    REQUIRE(session);
    CHECK(message.isEmpty());
    CHECK_FALSE(loader.busy());
    CHECK(session->run->report.steps.steps.size() == 2);
    CHECK_FALSE(session->ref);
    CHECK_FALSE(progress.isEmpty());
    CHECK(progress.back().front().toInt() == SessionLoader::kProgressMax);
    // The run's timeline index comes after the session: steps, the device's bubbles, its stream, the thread's API
    // calls, its syncs and its NVTX range.
    REQUIRE(timeline.count() == 1);
    const auto index = timeline.front().front().value<std::shared_ptr<const gui::SessionTimeline>>();
    CHECK(index->run == session->run);
    CHECK(index->index.tracks.size() == 6);
}

TEST_CASE("loader: bad files give a message naming the file and the problem", "[gui][loader]")
{
    SessionLoader loader;
    QString message;

    SECTION("missing")
    {
        const std::string path = gui_trace_path("loader-missing");
        loader.open(q(path));
        CHECK_FALSE(wait_for_load(loader, message));
        CHECK(message.contains(q(path)));
    }
    SECTION("not SQLite")
    {
        const std::string path = gui_trace_path("loader-text");
        QFile file(q(path));
        REQUIRE(file.open(QIODevice::WriteOnly));
        file.write("this is not a trace\n");
        file.close();
        loader.open(q(path));
        CHECK_FALSE(wait_for_load(loader, message));
        CHECK(message.contains(q(path)));
    }
    SECTION("no steps")
    {
        const std::string path = write_empty_trace("loader-empty");
        loader.open(q(path));
        CHECK_FALSE(wait_for_load(loader, message));
        CHECK(message == q(path + ": no steps: the trace has no activity to analyse"));
    }
    CHECK_FALSE(loader.busy());
}

TEST_CASE("loader: a reference of another job is refused with compare's message", "[gui][loader]")
{
    const std::string run = write_stats_job("loader-run", "python3 train.py", true);
    const std::string other = write_stats_job("loader-other-job", "python3 evaluate.py", false);
    SessionLoader loader;
    QString message;

    SECTION("given with the run: the run opens, with a warning")
    {
        loader.open(q(run), q(other));
        const auto session = wait_for_load(loader, message);
        REQUIRE(session);
        CHECK_FALSE(session->ref);
        CHECK_FALSE(session->compare);
        CHECK(message.contains(QStringLiteral("different jobs")));
        CHECK(message.contains(q(other)));
    }
    SECTION("opened as the reference of an open run: refused, the run stays")
    {
        loader.open(q(run));
        const auto session = wait_for_load(loader, message);
        REQUIRE(session);
        loader.open_reference(session, q(other));
        CHECK_FALSE(wait_for_load(loader, message));
        CHECK(message.contains(QStringLiteral("different jobs")));
    }
}

TEST_CASE("loader: a reference of the same job is compared", "[gui][loader]")
{
    const std::string run = write_stats_job("loader-same-run", "python3 train.py", true);
    const std::string ref = write_stats_job("loader-same-ref", "python3 train.py", false);
    const auto session = open_session(run, ref);
    REQUIRE(session->ref);
    REQUIRE(session->compare);
    CHECK(session->compare->sites.size() == 1);
    CHECK(session->compare->flagged.empty());
}

TEST_CASE("loader: an FP8 run opened as the reference of a BF16 run becomes the run, and the compare says so "
          "(issue 45)",
    "[gui][loader]")
{
    const std::string bf16 = sample_trace("compare/h100-clean-bf16.sqlite");
    const std::string fp8 = sample_trace("compare/h100-clean-fp8.sqlite");
    const auto session = open_session(bf16, fp8);
    REQUIRE(session->ref);
    REQUIRE(session->compare);
    CHECK(session->run->model.path == fp8);
    CHECK(session->ref->model.path == bf16);
    CHECK(session->compare->identity.swapped);
    CHECK(session->compare->identity.run.fp8);
    CHECK_FALSE(session->compare->identity.ref.fp8);
    CHECK(session->compare->performance.bookkeeping_added_ns > 0); // FP8's price with its signs as they are
    // Opened later as the reference of the open BF16 run: the same, and the new run's timeline follows.
    SessionLoader loader;
    QString message;
    loader.open(q(bf16));
    const auto alone = wait_for_load(loader, message);
    REQUIRE(alone);
    drain(); // the BF16 run's own timeline
    QSignalSpy timeline(&loader, &SessionLoader::timeline_ready);
    loader.open_reference(alone, q(fp8));
    const auto later = wait_for_load(loader, message);
    INFO(message.toStdString());
    REQUIRE(later);
    REQUIRE(later->compare);
    CHECK(later->run->model.path == fp8);
    CHECK(later->compare->identity.swapped);
    drain();
    REQUIRE(timeline.count() == 1);
    CHECK(timeline.front().front().value<std::shared_ptr<const gui::SessionTimeline>>()->run == later->run);
    // The right order: nothing swapped, the same figures.
    const auto in_order = open_session(fp8, bf16);
    REQUIRE(in_order->compare);
    CHECK_FALSE(in_order->compare->identity.swapped);
    CHECK(in_order->compare->performance.step_change_ns == session->compare->performance.step_change_ns);
}

TEST_CASE("loader: a later request supersedes an earlier one", "[gui][loader]")
{
    const std::string first = write_layout_trace("loader-first");
    const std::string second = write_stats_job("loader-second", "python3 train.py", true);
    SessionLoader loader;
    QSignalSpy loaded(&loader, &SessionLoader::loaded);
    loader.open(q(first));
    const uint64_t first_generation = loader.generation();
    loader.open(q(second));
    CHECK(loader.generation() > first_generation);
    drain();
    REQUIRE(loaded.count() == 1);
    const auto session = loaded.front().front().value<std::shared_ptr<const gui::Session>>();
    CHECK(session->run->model.path == second);
}

TEST_CASE("loader: a cancelled load delivers nothing", "[gui][loader]")
{
    SessionLoader loader;
    QSignalSpy loaded(&loader, &SessionLoader::loaded);
    QSignalSpy failed(&loader, &SessionLoader::failed);
    QSignalSpy canceled(&loader, &SessionLoader::canceled);
    loader.open(q(write_layout_trace("loader-cancel")));
    loader.cancel();
    CHECK_FALSE(loader.busy());
    drain();
    CHECK(canceled.count() == 1);
    CHECK(loaded.isEmpty());
    CHECK(failed.isEmpty());
    loader.cancel(); // nothing running: no second signal
    CHECK(canceled.count() == 1);
}
