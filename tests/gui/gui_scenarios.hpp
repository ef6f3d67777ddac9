// Traces with a known layout for the viewer's tests, written through the real writer
// (tests/support/scenario/scenario.hpp) into FP8SCOPE_TEST_TMP/gui/, and helpers that wait for the background loader.
#pragma once

#include "models/session_loader.hpp"

#include <QAbstractItemModel>
#include <QString>
#include <QStringList>

#include <catch2/catch.hpp>

#include <memory>
#include <string>

// QStrings in CHECK messages as text.
namespace Catch {
template <> struct StringMaker<QString> {
    static std::string convert(const QString& text) { return '"' + text.toStdString() + '"'; }
};
} // namespace Catch

namespace fp8scope::testing {

// FP8SCOPE_TEST_TMP/gui/<name>.sqlite (the folder made, the file removed).
std::string gui_trace_path(const std::string& name);

// Four 10 ms steps (fp8scope.step() markers 0-3; the first two are warm-up) on device 0, stream 7, each laid out the
// same way from its start t0 (all times in ns from t0), with the causes the analyzer gives the gaps:
//   host gap             [0, 10'000)           the thread's 9.3 ms silence since the previous step runs into it: `host`
//   kernel "gemm_a"      [10'000, 300'000)     launched at [2'000, 5'000)
//   launch gap           [300'000, 310'000)    the next launch call ends at 309'000: `launch`
//   kernel "gemm_b"      [310'000, 500'000)
//   sync gap             [500'000, 700'000)    cudaStreamSynchronize on the thread [480'000, 690'000): `sync`
//   kernel "elementwise" [700'000, 750'000)    launched at [692'000, 695'000)
//   host gap             [750'000, 10'000'000) the thread is silent for 9.3 ms (> 20 x its median silence): `host`
struct LayoutTimes {
    static constexpr int64_t kStepNs = 10'000'000;
    static constexpr int64_t kFirstGap[2] = { 0, 10'000 };
    static constexpr int64_t kLaunchGap[2] = { 300'000, 310'000 };
    static constexpr int64_t kSync[2] = { 480'000, 690'000 };
    static constexpr int64_t kSyncGap[2] = { 500'000, 700'000 };
    static constexpr int64_t kHostGap[2] = { 750'000, 10'000'000 };
};
std::string write_layout_trace(const std::string& name);

// A job of `steps` 1 ms steps with one FP8 (or BF16, as the reference) GEMM site sampled every step, run by
// `command`. Healthy: compare finds no drift.
std::string write_stats_job(const std::string& name, const std::string& command, bool fp8, int steps = 12);

// A trace with no activity at all: it loads, and has no steps.
std::string write_empty_trace(const std::string& name);

// Waits (processing events) until `loader`'s job is over (the session and its timeline delivered, or a failure);
// returns the session, or null with `message` set. Fails the test after 60 s.
std::shared_ptr<const gui::Session> wait_for_load(gui::SessionLoader& loader, QString& message);

} // namespace fp8scope::testing

namespace fp8scope::testing {

// samples/traces/<file>.
std::string sample_trace(const std::string& file);

// Opens `run` (and `ref`) through the real background loader and waits; REQUIREs a session.
std::shared_ptr<const gui::Session> open_session(const std::string& run, const std::string& ref = {});
// The same, with the run's timeline index; REQUIREs both.
std::pair<std::shared_ptr<const gui::Session>, std::shared_ptr<const gui::SessionTimeline>> open_with_timeline(
    const std::string& run);

// Runs QAbstractItemModelTester on a model for the lifetime of this object and collects what it reports; the test
// CHECKs problems() is empty at the points it cares about (after every reset, and at the end).
class ModelCheck {
public:
    explicit ModelCheck(QAbstractItemModel* model);
    ~ModelCheck();
    QStringList problems() const;

private:
    std::unique_ptr<QObject> tester_;
};

} // namespace fp8scope::testing
