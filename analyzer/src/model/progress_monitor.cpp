#include "model/progress_monitor.hpp"

#include <algorithm>

namespace fp8scope::analyzer::detail {

bool ProgressMonitor::report(double fraction, bool force)
{
    if (cancelled())
        return false;
    std::unique_lock lock(mutex_, std::defer_lock);
    if (force)
        lock.lock();
    else if (!lock.try_lock())
        return true; // the other thread is reporting; this one goes on reading
    fraction = std::clamp(fraction, last_, 1.0);
    if (!force && fraction < last_ + kMinStep)
        return true;
    last_ = fraction;
    if (!hook_(fraction))
        cancelled_.store(true, std::memory_order_relaxed);
    return !cancelled();
}

bool ProgressMonitor::rows_read(int64_t rows)
{
    const int64_t read = read_rows_.fetch_add(rows, std::memory_order_relaxed) + rows;
    const int64_t expected = expected_rows_.load(std::memory_order_relaxed);
    // Tables read before their count is known (strings, small tables) can make `read` run ahead: clamp.
    const double share = expected > 0 ? std::min(1.0, static_cast<double>(read) / static_cast<double>(expected)) : 0.0;
    return report(share * read_share_);
}

} // namespace fp8scope::analyzer::detail
