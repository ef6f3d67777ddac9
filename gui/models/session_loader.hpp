// Loads and analyses traces in the background (QtConcurrent), so that the window stays responsive while a large
// trace is read, with progress and Cancel. Every request gets a new generation; a result whose generation is not
// the latest is dropped (Hotspot's pattern), so a slow first load can never replace a later one.
#pragma once

#include "models/trace_session.hpp"

#include <QFutureWatcher>
#include <QPromise>
#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>

namespace fp8scope::gui {

// What a background job hands back: a session, or the reason there is none. `message` beside a session is a
// warning (a reference given on the command line that cannot be compared: the run is still shown).
struct LoadOutcome {
    std::shared_ptr<const Session> session;
    QString message;
};

class SessionLoader : public QObject {
    Q_OBJECT
public:
    explicit SessionLoader(QObject* parent = nullptr);
    ~SessionLoader() override;

    // Loads `run_path` and, when given, `ref_path`, analyses both and compares them. The current session stays in
    // place until the new one is ready.
    void open(const QString& run_path, const QString& ref_path = {});
    // Loads `ref_path` as the reference of `current`'s run and compares (the run is not read again).
    void open_reference(std::shared_ptr<const Session> current, const QString& ref_path);
    // Stops waiting for the running job: its result, whenever it comes, is dropped.
    void cancel();

    bool busy() const { return watcher_ != nullptr; }
    uint64_t generation() const { return generation_; }
    // Progress is reported in thousandths.
    static constexpr int kProgressMax = 1000;

Q_SIGNALS:
    void progress(int value, const QString& stage);
    // A new session; `warning` is empty or one line to show beside it.
    void loaded(std::shared_ptr<const Session> session, const QString& warning);
    // The request failed; the current session is unchanged. `message` names the file and the problem.
    void failed(const QString& message);
    void canceled();

private:
    using Job = std::function<void(QPromise<LoadOutcome>&)>;
    void start(Job job);
    // Stops waiting for the running job, if any, without a signal (a new request, or the loader going away).
    void drop_running();
    void job_finished(QFutureWatcher<LoadOutcome>* watcher, uint64_t generation);

    QFutureWatcher<LoadOutcome>* watcher_ = nullptr; // the latest job's
    uint64_t generation_ = 0;
};

} // namespace fp8scope::gui

// Sessions travel in signals (and through QSignalSpy in the tests).
Q_DECLARE_METATYPE(std::shared_ptr<const fp8scope::gui::Session>)
