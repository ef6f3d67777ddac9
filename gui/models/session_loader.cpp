#include "models/session_loader.hpp"

#include "fp8scope/analyzer/load/trace_loader.hpp"

#include <QtConcurrent/QtConcurrentRun>

#include <numeric>
#include <variant>
#include <vector>

namespace fp8scope::gui {

namespace {

using namespace Qt::StringLiterals;

// Relative cost of each stage: the analyzer's figures, shared with the CLI's progress bar (progress.hpp).
constexpr double kLoadWeight = analyzer::StageWeight::kLoad, kAnalyseWeight = analyzer::StageWeight::kAnalyse,
                 kCompareWeight = analyzer::StageWeight::kCompare, kTimelineWeight = analyzer::StageWeight::kTimeline;

// One job's progress bar: its stages laid end to end over [0, kProgressMax], each taking its weight's share. The
// hooks run on the analyzer's threads (one at a time, as progress.hpp promises); QPromise's progress is thread-safe.
class JobProgress {
public:
    JobProgress(QPromise<LoadOutcome>& promise, std::vector<double> weights)
        : promise_(promise)
        , weights_(std::move(weights))
        , total_(std::accumulate(weights_.begin(), weights_.end(), 0.0))
    {
    }

    // Starts the next stage with this text and returns its hook: fraction -> bar, false once cancelled.
    analyzer::ProgressHook next(const QString& text)
    {
        const double from = done_ / total_;
        const double to = (done_ + weights_.at(stage_)) / total_;
        done_ += weights_.at(stage_++);
        promise_.setProgressValueAndText(static_cast<int>(from * SessionLoader::kProgressMax), text);
        return [&promise = promise_, from, to](double fraction) {
            promise.setProgressValue(static_cast<int>((from + (to - from) * fraction) * SessionLoader::kProgressMax));
            return !promise.isCanceled();
        };
    }
    // Passes over a stage that will not run (a trace that failed to load is not analysed).
    void skip() { done_ += weights_.at(stage_++); }

private:
    QPromise<LoadOutcome>& promise_;
    std::vector<double> weights_;
    double total_;
    double done_ = 0;
    size_t stage_ = 0;
};

QString to_qstring(const std::string& text)
{
    return QString::fromStdString(text);
}

// Loads and analyses one trace (two stages of `progress`). nullptr with `problem` set when it cannot be shown, or
// with `problem` empty when the job was cancelled.
std::shared_ptr<const AnalysedTrace> load_and_analyse(
    JobProgress& progress, const QString& path, const QString& what, QString& problem)
{
    auto model = analyzer::load_trace(path.toStdString(), progress.next(u"Reading %1 %2"_s.arg(what, path)));
    if (!model) {
        if (model.error().code != ErrorCode::Cancelled)
            problem = to_qstring(model.error().message);
        progress.skip();
        return nullptr;
    }
    auto analysed = AnalysedTrace::analyse(std::move(*model), progress.next(u"Analysing %1"_s.arg(what)));
    if (!analysed) {
        if (analysed.error().code != ErrorCode::Cancelled)
            problem = to_qstring(analysed.error().message);
        return nullptr;
    }
    return std::make_shared<const AnalysedTrace>(std::move(*analysed));
}

// Compares the session's run with its reference; the analyzer's refusal when it cannot. An FP8 run opened as the
// reference of a run without FP8 GEMMs becomes the run (as `fp8scope compare` does, and the dashboard says so).
QString compare_into(Session& session)
{
    analyzer::CompareOptions options = Session::options();
    if (analyzer::fp8_given_as_reference(
            { session.run->model, session.run->report, session.ref->model, session.ref->report })) {
        std::swap(session.run, session.ref);
        options.swapped = true;
    }
    const analyzer::CompareInput input { session.run->model, session.run->report, session.ref->model,
        session.ref->report };
    auto outcome = analyzer::compare_runs(input, options);
    if (auto* refusal = std::get_if<analyzer::CompareRefusal>(&outcome))
        return u"%1 cannot be compared with %2: %3"_s.arg(
            to_qstring(session.ref->model.path), to_qstring(session.run->model.path), to_qstring(refusal->message));
    auto& result = std::get<analyzer::CompareResult>(outcome);
    // The compare dashboard shows drift and loss: without them (no tensor statistics, no site in common) the viewer
    // refuses as before; `fp8scope compare` shows the performance alone.
    if (!result.numerics_compared())
        return u"%1 cannot be compared with %2: %3"_s.arg(to_qstring(session.ref->model.path),
            to_qstring(session.run->model.path), to_qstring(result.numerics_not_compared));
    session.compare = std::move(result);
    return {};
}

// The run's timeline index, the job's last result.
void build_timeline(QPromise<LoadOutcome>& promise, JobProgress& progress, std::shared_ptr<const AnalysedTrace> run)
{
    auto index = analyzer::build_timeline(run->model, run->report, progress.next(u"Building the timeline"_s));
    if (!index)
        return; // cancelled: the only way it fails
    auto timeline = std::make_shared<SessionTimeline>(SessionTimeline { std::move(run), std::move(*index) });
    promise.addResult(LoadOutcome { nullptr, std::move(timeline), {} });
}

} // namespace

SessionLoader::SessionLoader(QObject* parent)
    : QObject(parent)
{
}

SessionLoader::~SessionLoader()
{
    drop_running();
}

void SessionLoader::open(const QString& run_path, const QString& ref_path)
{
    start([run_path, ref_path](QPromise<LoadOutcome>& promise) {
        const bool with_ref = !ref_path.isEmpty();
        JobProgress progress(promise,
            with_ref ? std::vector { kLoadWeight, kAnalyseWeight, kLoadWeight, kAnalyseWeight, kCompareWeight,
                kTimelineWeight }
                     : std::vector { kLoadWeight, kAnalyseWeight, kTimelineWeight });
        QString problem;
        auto session = std::make_shared<Session>();
        session->run = load_and_analyse(progress, run_path, u"the run"_s, problem);
        if (!session->run) {
            if (!problem.isEmpty())
                promise.addResult(LoadOutcome { nullptr, nullptr, problem });
            return;
        }
        QString warning;
        if (with_ref) {
            session->ref = load_and_analyse(progress, ref_path, u"the reference"_s, problem);
            if (promise.isCanceled())
                return;
            progress.next(u"Comparing the run with its reference"_s);
            if (!session->ref) {
                warning = u"The reference was not opened: %1"_s.arg(problem);
            } else {
                warning = compare_into(*session);
                if (!warning.isEmpty())
                    session->ref = nullptr;
            }
        }
        promise.addResult(LoadOutcome { session, nullptr, warning });
        build_timeline(promise, progress, session->run);
    });
}

void SessionLoader::open_reference(std::shared_ptr<const Session> current, const QString& ref_path)
{
    if (!current || !current->run) {
        Q_EMIT failed(u"Open a trace before its reference"_s);
        return;
    }
    start([current, ref_path](QPromise<LoadOutcome>& promise) {
        JobProgress progress(promise, { kLoadWeight, kAnalyseWeight, kCompareWeight, kTimelineWeight });
        QString problem;
        auto session = std::make_shared<Session>();
        session->run = current->run;
        session->ref = load_and_analyse(progress, ref_path, u"the reference"_s, problem);
        if (!session->ref) {
            if (!problem.isEmpty())
                promise.addResult(LoadOutcome { nullptr, nullptr, problem });
            return;
        }
        progress.next(u"Comparing the run with its reference"_s);
        problem = compare_into(*session);
        promise.addResult(
            problem.isEmpty() ? LoadOutcome { session, nullptr, {} } : LoadOutcome { nullptr, nullptr, problem });
        // The reference was the FP8 run and became the run: the timeline shows it.
        if (problem.isEmpty() && session->run != current->run)
            build_timeline(promise, progress, session->run);
    });
}

void SessionLoader::start(Job job)
{
    drop_running();
    const uint64_t generation = ++generation_;
    auto* watcher = new QFutureWatcher<LoadOutcome>(this);
    watcher_ = watcher;
    connect(watcher, &QFutureWatcherBase::progressValueChanged, this, [this, watcher, generation](int value) {
        if (generation == generation_)
            Q_EMIT progress(value, watcher->progressText());
    });
    connect(watcher, &QFutureWatcherBase::resultReadyAt, this, [this, watcher, generation](int index) {
        if (generation == generation_ && !watcher->isCanceled())
            deliver(watcher->resultAt(index));
    });
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != generation_)
            return; // stale: a later request or a cancel superseded it
        watcher_ = nullptr;
        Q_EMIT finished();
    });
    watcher->setFuture(QtConcurrent::run([job = std::move(job)](QPromise<LoadOutcome>& promise) {
        promise.setProgressRange(0, kProgressMax);
        job(promise);
    }));
}

void SessionLoader::deliver(const LoadOutcome& outcome)
{
    if (outcome.session)
        Q_EMIT loaded(outcome.session, outcome.message);
    else if (outcome.timeline)
        Q_EMIT timeline_ready(outcome.timeline);
    else
        Q_EMIT failed(outcome.message);
}

void SessionLoader::cancel()
{
    if (!watcher_)
        return;
    drop_running();
    Q_EMIT canceled();
    Q_EMIT finished();
}

void SessionLoader::drop_running()
{
    ++generation_;
    if (!watcher_)
        return;
    // The job's progress hooks return false from now on, and the analyzer stops within a few thousand rows.
    watcher_->future().cancel();
    watcher_ = nullptr;
}

} // namespace fp8scope::gui
