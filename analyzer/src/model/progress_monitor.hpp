// The ProgressHook's caller (progress.hpp): keeps the fractions it reports non-decreasing, calls the hook from one
// thread at a time and not more often than every kMinStep of progress, and remembers a cancel. Loading reads two
// tables on two threads, which count their rows into one monitor.
#pragma once

#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/common/error.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace fp8scope::analyzer::detail {

class ProgressMonitor {
public:
    // Reports below this step of progress are skipped (phase ends are always reported).
    static constexpr double kMinStep = 0.002;

    explicit ProgressMonitor(const ProgressHook& hook)
        : hook_(hook)
    {
    }

    // Reports `fraction` (clamped to [0, 1], never below an earlier report); false once cancelled. `force`: report
    // even a small step, and wait for a hook call running on another thread instead of skipping this report.
    bool report(double fraction, bool force = false);
    bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

    // Row counting for the loader: the rows the tables hold, as they become known, and the rows read. Reading maps to
    // the fractions [0, read_share] of the whole load.
    void set_read_share(double share) { read_share_ = share; }
    void expect_rows(int64_t rows) { expected_rows_.fetch_add(rows, std::memory_order_relaxed); }
    bool rows_read(int64_t rows);

    // ErrorCode::Cancelled with `message`.
    static Error cancelled_error(std::string message) { return Error { ErrorCode::Cancelled, std::move(message) }; }

private:
    const ProgressHook& hook_;
    std::mutex mutex_; // one hook call at a time
    double last_ = 0; // guarded by mutex_
    std::atomic<bool> cancelled_ { false };
    double read_share_ = 1.0;
    std::atomic<int64_t> expected_rows_ { 0 };
    std::atomic<int64_t> read_rows_ { 0 };
};

// Calls monitor->report(fraction) when there is a monitor; false when the work is cancelled.
inline bool report_progress(ProgressMonitor* monitor, double fraction)
{
    return monitor == nullptr || monitor->report(fraction, true);
}

} // namespace fp8scope::analyzer::detail
