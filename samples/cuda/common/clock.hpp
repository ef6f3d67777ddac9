// Host clocks for the samples. Printed timestamps use CLOCK_REALTIME because that is CUPTI's default timestamp
// source on Linux (CUPTI documentation, cuptiGetTimestamp), so they can be compared with trace times directly.
// Waiting uses CLOCK_MONOTONIC so that a clock step cannot shorten or stretch a stall.
#pragma once

#include <cstdint>
#include <ctime>

namespace fp8scope::samples {

inline std::int64_t clock_ns(clockid_t clock)
{
    timespec now {};
    clock_gettime(clock, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

inline std::int64_t realtime_ns()
{
    return clock_ns(CLOCK_REALTIME);
}
inline std::int64_t monotonic_ns()
{
    return clock_ns(CLOCK_MONOTONIC);
}

struct HostInterval {
    std::int64_t start_ns = 0; // CLOCK_REALTIME
    std::int64_t end_ns = 0; // CLOCK_REALTIME
    std::int64_t duration_ns() const { return end_ns - start_ns; }
};

// Spins on the host for at least duration_ns without making any CUDA call, and returns the CLOCK_REALTIME bounds
// of the spin.
inline HostInterval busy_wait(std::int64_t duration_ns)
{
    HostInterval interval;
    interval.start_ns = realtime_ns();
    const std::int64_t monotonic_start_ns = monotonic_ns();
    while (monotonic_ns() - monotonic_start_ns < duration_ns) { }
    interval.end_ns = realtime_ns();
    return interval;
}

} // namespace fp8scope::samples
