// Loads and analyses traces in the background (QtConcurrent), so that the window stays responsive while a large
// trace is read, with progress and Cancel (the analyzer's ProgressHook stops the work within a few thousand rows).
// A job delivers the session as soon as it is analysed, then the run's timeline index, which only the timeline view
// needs. Every request gets a new generation; a result whose generation is not the latest is dropped (Hotspot's
// pattern), so a slow first load can never replace a later one.
#pragma once

#include "models/trace_session.hpp"

#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>

namespace fp8scope::gui {

// One result of a background job: a session (with a warning, or none), the run's timeline, or the reason there is
// no session.
struct LoadOutcome {
    std::shared_ptr<const Session> session;
    std::shared_ptr<const SessionTimeline> timeline;
    QString message; // beside a session: a warning (a reference that cannot be compared); alone: the failure
};

class SessionLoader : public QObject {
    Q_OBJECT
public:
    explicit SessionLoader(QObject* parent = nullptr);
    ~SessionLoader() override;

    // Loads `run_path` and, when given, `ref_path`, analyses both and compares them, then builds the run's timeline.
    // The current session stays in place until the new one is ready.
    void open(const QString& run_path, const QString& ref_path = {});
    // Loads `ref_path` as the reference of `current`'s run and compares (the run is not read again, and its
    // timeline stays valid: none is built).
    void open_reference(std::shared_ptr<const Session> current, const QString& ref_path);
    // Stops the running job: its results, if any come, are dropped.
    void cancel();

    bool busy() const { return watcher_ != nullptr; }
    uint64_t generation() const { return generation_; }
    // Progress is reported in thousandths.
    static constexpr int kProgressMax = 1000;

Q_SIGNALS:
    void progress(int value, const QString& stage);
    // A new session; `warning` is empty or one line to show beside it.
    void loaded(std::shared_ptr<const fp8scope::gui::Session> session, const QString& warning);
    // The timeline of the session loaded last.
    void timeline_ready(std::shared_ptr<const fp8scope::gui::SessionTimeline> timeline);
    // The request failed; the current session is unchanged. `message` names the file and the problem.
    void failed(const QString& message);
    void canceled();
    // The job is over (after its last result, a failure or a cancel).
    void finished();

private:
    using Job = std::function<void(QPromise<LoadOutcome>&)>;
    void start(Job job);
    // Stops waiting for the running job, if any, without a signal (a new request, or the loader going away).
    void drop_running();
    void deliver(const LoadOutcome& outcome);

    QFutureWatcher<LoadOutcome>* watcher_ = nullptr; // the latest job's
    uint64_t generation_ = 0;
};

} // namespace fp8scope::gui

// Sessions travel in signals (and through QSignalSpy in the tests).
Q_DECLARE_METATYPE(std::shared_ptr<const fp8scope::gui::Session>)
Q_DECLARE_METATYPE(std::shared_ptr<const fp8scope::gui::SessionTimeline>)
