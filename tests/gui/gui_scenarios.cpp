#include "gui_scenarios.hpp"

#include "scenario.hpp"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <catch2/catch.hpp>

#include <filesystem>
#include <mutex>

#include <unistd.h>

namespace fp8scope::testing {

std::string gui_trace_path(const std::string& name)
{
    const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "gui";
    std::filesystem::create_directories(dir);
    // One file per process: CTest runs test cases in parallel, and two rewriting one file would clash.
    const std::filesystem::path path = dir / (name + "-" + std::to_string(::getpid()) + ".sqlite");
    std::filesystem::remove(path);
    return path.string();
}

namespace {

std::string write(const Scenario& s, const std::string& name)
{
    const std::string path = gui_trace_path(name);
    const auto written = s.write_fp8scope(path);
    INFO(path);
    REQUIRE(written.has_value());
    return path;
}

} // namespace

std::string write_layout_trace(const std::string& name)
{
    using T = LayoutTimes;
    Scenario s;
    const HostThread host = s.thread(4242, 4242, "python3");
    for (int step = 0; step < 4; ++step) {
        const int64_t t0 = step * T::kStepNs;
        s.step_marker(host, t0, step);
        s.launch(host, { .api_start_ns = t0 + 2'000, .api_end_ns = t0 + 5'000 },
            { .start_ns = t0 + T::kFirstGap[1], .end_ns = t0 + T::kLaunchGap[0], .name = "gemm_a" });
        s.launch(host, { .api_start_ns = t0 + 305'000, .api_end_ns = t0 + 309'000 },
            { .start_ns = t0 + T::kLaunchGap[1], .end_ns = t0 + T::kSyncGap[0], .name = "gemm_b" });
        s.sync(host, t0 + T::kSync[0], t0 + T::kSync[1], schema::SyncType::StreamSynchronize, 7);
        s.launch(host, { .api_start_ns = t0 + 692'000, .api_end_ns = t0 + 695'000 },
            { .start_ns = t0 + T::kSyncGap[1], .end_ns = t0 + T::kHostGap[0], .name = "elementwise" });
    }
    // The last step ends where the trace does.
    s.nvtx_range(host, 4 * T::kStepNs - 1'000, 4 * T::kStepNs, "end of the loop");
    return write(s, name);
}

std::string write_stats_job(const std::string& name, const std::string& command, bool fp8, int steps)
{
    Scenario s;
    s.session().command_line = command;
    const HostThread host = s.thread(4242, 4242);
    const int64_t site
        = s.tensor_site("gemm 16x16x16", schema::TensorRole::A, fp8 ? schema::Dtype::E4M3 : schema::Dtype::BFloat16, 16,
            16, schema::StatsSource::GemmInterception, "train_step/layer.0");
    for (int step = 0; step < steps; ++step) {
        const int64_t t0 = step * 1'000'000;
        s.step_marker(host, t0, step);
        s.launch(host, { .api_start_ns = t0 + 90'000, .api_end_ns = t0 + 95'000 },
            { .start_ns = t0 + 100'000, .end_ns = t0 + 600'000, .name = "gemm" });
        TensorStatsRow row;
        row.site_id = site;
        row.step = step;
        row.timestamp_ns = t0 + 100'000;
        row.dtype = fp8 ? schema::Dtype::E4M3 : schema::Dtype::BFloat16;
        row.numel = 256;
        row.amax = 2.0 + 0.01 * (step % 3);
        if (fp8)
            row.scale_inv = 1.0 / 128.0;
        s.tensor_stats(row);
        s.scalar(host, t0 + 700'000, "loss", 3.0 - 0.01 * step, step);
    }
    s.nvtx_range(host, steps * 1'000'000 - 1'000, steps * 1'000'000, "end of the loop");
    return write(s, name);
}

std::string write_empty_trace(const std::string& name)
{
    return write(Scenario {}, name);
}

std::shared_ptr<const gui::Session> wait_for_load(gui::SessionLoader& loader, QString& message)
{
    QSignalSpy loaded(&loader, &gui::SessionLoader::loaded);
    QSignalSpy failed(&loader, &gui::SessionLoader::failed);
    QSignalSpy finished(&loader, &gui::SessionLoader::finished);
    for (int waited_ms = 0; finished.isEmpty(); waited_ms += 20) {
        REQUIRE(waited_ms < 60'000);
        finished.wait(20);
    }
    REQUIRE(loaded.count() + failed.count() == 1);
    if (!failed.isEmpty()) {
        message = failed.front().front().toString();
        return nullptr;
    }
    message = loaded.front().at(1).toString();
    return loaded.front().front().value<std::shared_ptr<const gui::Session>>();
}

} // namespace fp8scope::testing

namespace fp8scope::testing {

std::string sample_trace(const std::string& file)
{
    return std::string(FP8SCOPE_SAMPLE_TRACES) + "/" + file;
}

std::shared_ptr<const gui::Session> open_session(const std::string& run, const std::string& ref)
{
    gui::SessionLoader loader;
    loader.open(QString::fromStdString(run), QString::fromStdString(ref));
    QString message;
    auto session = wait_for_load(loader, message);
    INFO(message.toStdString());
    REQUIRE(session);
    return session;
}

std::pair<std::shared_ptr<const gui::Session>, std::shared_ptr<const gui::SessionTimeline>> open_with_timeline(
    const std::string& run)
{
    gui::SessionLoader loader;
    QSignalSpy timeline(&loader, &gui::SessionLoader::timeline_ready);
    loader.open(QString::fromStdString(run));
    QString message;
    auto session = wait_for_load(loader, message);
    INFO(message.toStdString());
    REQUIRE(session);
    REQUIRE(timeline.count() == 1);
    return { session, timeline.front().front().value<std::shared_ptr<const gui::SessionTimeline>>() };
}

namespace {

// What the model testers report (category qt.modeltest), collected by a message handler installed while at least
// one ModelCheck lives. Tests run on one thread; the mutex guards against Qt's own threads logging meanwhile.
std::mutex problems_mutex;
QStringList collected_problems;
int live_checks = 0;
QtMessageHandler previous_handler = nullptr;

void collect(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    if (context.category && QLatin1StringView(context.category) == QLatin1StringView("qt.modeltest")) {
        std::lock_guard lock(problems_mutex);
        collected_problems.push_back(message);
        return;
    }
    if (previous_handler)
        previous_handler(type, context, message);
}

} // namespace

ModelCheck::ModelCheck(QAbstractItemModel* model)
{
    {
        std::lock_guard lock(problems_mutex);
        if (live_checks++ == 0) {
            collected_problems.clear();
            previous_handler = qInstallMessageHandler(collect);
        }
    }
    tester_
        = std::make_unique<QAbstractItemModelTester>(model, QAbstractItemModelTester::FailureReportingMode::Warning);
}

ModelCheck::~ModelCheck()
{
    tester_.reset();
    std::lock_guard lock(problems_mutex);
    if (--live_checks == 0)
        qInstallMessageHandler(previous_handler);
}

QStringList ModelCheck::problems() const
{
    std::lock_guard lock(problems_mutex);
    return collected_problems;
}

} // namespace fp8scope::testing
