#include "models/session_loader.hpp"

#include "fp8scope/analyzer/trace_loader.hpp"

#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>

#include <variant>

namespace fp8scope::gui {

namespace {

using namespace Qt::StringLiterals;

// The share of the progress bar each stage takes (thousandths): reading dominates, analysis is about a third of it
// (docs/benchmarks.md, `fp8scope info` against `fp8scope report` on 10 M kernels).
struct Stage {
    int from, to;
};

void report(QPromise<LoadOutcome>& promise, int value, const QString& text)
{
    promise.setProgressValueAndText(value, text);
}

// Loads and analyses one trace; nullptr with `problem` set when it cannot be shown.
std::shared_ptr<const AnalysedTrace> load_and_analyse(
    QPromise<LoadOutcome>& promise, const QString& path, const QString& what, Stage stage, QString& problem)
{
    report(promise, stage.from, u"Reading %1 (%2)"_s.arg(what, path));
    auto model = analyzer::load_trace(path.toStdString());
    if (!model) {
        problem = QString::fromStdString(model.error().message);
        return nullptr;
    }
    if (promise.isCanceled())
        return nullptr;
    report(promise, stage.from + (stage.to - stage.from) * 3 / 4, u"Analysing %1"_s.arg(what));
    auto analysed = Session::analyse(std::move(*model), problem);
    if (!analysed)
        return nullptr;
    return std::make_shared<const AnalysedTrace>(std::move(*analysed));
}

// Compares the session's run with its reference; the analyzer's refusal message when it cannot.
QString compare_into(Session& session, const QString& run_path, const QString& ref_path)
{
    const analyzer::CompareInput input { session.run->model, session.run->report, session.ref->model,
        session.ref->report };
    auto outcome = analyzer::compare_runs(input, Session::options());
    if (auto* refusal = std::get_if<analyzer::CompareRefusal>(&outcome))
        return u"%1 cannot be compared with %2: %3"_s.arg(ref_path, run_path, QString::fromStdString(refusal->message));
    session.compare = std::move(std::get<analyzer::CompareResult>(outcome));
    return {};
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
        QString problem;
        auto session = std::make_shared<Session>();
        session->run = load_and_analyse(
            promise, run_path, u"the run"_s, with_ref ? Stage { 0, 450 } : Stage { 0, 1000 }, problem);
        if (!session->run) {
            promise.addResult(LoadOutcome { nullptr, problem });
            return;
        }
        QString warning;
        if (with_ref) {
            session->ref = load_and_analyse(promise, ref_path, u"the reference"_s, Stage { 450, 950 }, problem);
            if (promise.isCanceled())
                return;
            if (!session->ref) {
                warning = u"The reference was not opened: %1"_s.arg(problem);
            } else {
                report(promise, 950, u"Comparing the run with its reference"_s);
                warning = compare_into(*session, run_path, ref_path);
                if (!warning.isEmpty())
                    session->ref = nullptr;
            }
        }
        report(promise, kProgressMax, u"Done"_s);
        promise.addResult(LoadOutcome { std::move(session), warning });
    });
}

void SessionLoader::open_reference(std::shared_ptr<const Session> current, const QString& ref_path)
{
    if (!current || !current->run) {
        Q_EMIT failed(u"Open a trace before its reference"_s);
        return;
    }
    start([current, ref_path](QPromise<LoadOutcome>& promise) {
        QString problem;
        auto session = std::make_shared<Session>();
        session->run = current->run;
        session->ref = load_and_analyse(promise, ref_path, u"the reference"_s, Stage { 0, 900 }, problem);
        if (!session->ref) {
            promise.addResult(LoadOutcome { nullptr, problem });
            return;
        }
        report(promise, 900, u"Comparing the run with its reference"_s);
        problem = compare_into(*session, QString::fromStdString(current->run->model.path), ref_path);
        if (!problem.isEmpty()) {
            promise.addResult(LoadOutcome { nullptr, problem });
            return;
        }
        report(promise, kProgressMax, u"Done"_s);
        promise.addResult(LoadOutcome { std::move(session), {} });
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
    connect(watcher, &QFutureWatcherBase::finished, this,
        [this, watcher, generation] { job_finished(watcher, generation); });
    QFuture<LoadOutcome> future = QtConcurrent::run([job = std::move(job)](QPromise<LoadOutcome>& promise) {
        promise.setProgressRange(0, kProgressMax);
        job(promise);
    });
    watcher->setFuture(future);
}

void SessionLoader::cancel()
{
    if (!watcher_)
        return;
    drop_running();
    Q_EMIT canceled();
}

void SessionLoader::drop_running()
{
    ++generation_;
    if (!watcher_)
        return;
    // The job sees isCanceled() between its stages; whatever it still delivers belongs to an old generation.
    watcher_->future().cancel();
    watcher_ = nullptr;
}

void SessionLoader::job_finished(QFutureWatcher<LoadOutcome>* watcher, uint64_t generation)
{
    watcher->deleteLater();
    const QFuture<LoadOutcome> future = watcher->future();
    if (generation != generation_ || future.isCanceled() || future.resultCount() == 0)
        return; // stale: a later request or a cancel superseded it
    watcher_ = nullptr;
    LoadOutcome outcome = future.result();
    if (outcome.session)
        Q_EMIT loaded(outcome.session, outcome.message);
    else
        Q_EMIT failed(outcome.message);
}

} // namespace fp8scope::gui
