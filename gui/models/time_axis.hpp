// The time<->pixel mapping of the timeline (Hotspot's TimeLineData idea): a plain value type, a visible window of
// trace time [start_ns, end_ns) spread over width_px pixels. Zoom and pan return new axes clamped to the trace's
// span, so that no view can scroll into nothing or zoom below kMinSpanNs. Unit-tested in tests/gui/time_axis_test.cpp.
#pragma once

#include <cstdint>

namespace fp8scope::gui {

struct TimeAxis {
    // Nanoseconds are the trace's resolution: a window narrower than 100 ns shows nothing more than one of 100 ns.
    static constexpr int64_t kMinSpanNs = 100;

    int64_t start_ns = 0;
    int64_t end_ns = 1; // exclusive; end_ns > start_ns
    int width_px = 1; // >= 1

    int64_t span_ns() const { return end_ns - start_ns; }
    double ns_per_px() const { return static_cast<double>(span_ns()) / width_px; }

    // The x position (in pixels, fractional, may lie outside [0, width_px)) of a time.
    double x_of(int64_t ns) const;
    // The time at x (rounded to the nearest ns).
    int64_t ns_at(double x) const;

    // The axis zoomed by `factor` (> 1 zooms in) around the time under `anchor_x`, which stays under anchor_x.
    // Clamped to the bounds [bound_start_ns, bound_end_ns) and to a span of at least kMinSpanNs.
    TimeAxis zoomed(double anchor_x, double factor, int64_t bound_start_ns, int64_t bound_end_ns) const;
    // The axis moved by dx_px pixels (positive: later times come into view), clamped to the bounds.
    TimeAxis panned(double dx_px, int64_t bound_start_ns, int64_t bound_end_ns) const;
    // A window [start, end) on the same width, clamped to the bounds and to kMinSpanNs.
    TimeAxis showing(int64_t start, int64_t end, int64_t bound_start_ns, int64_t bound_end_ns) const;

    friend bool operator==(const TimeAxis&, const TimeAxis&) = default;
};

// 1, 2 or 5 x 10^k, the smallest at or above `value` (> 0; 1 otherwise): the spacing of axis ticks, time ruler and
// chart axes alike, so that labels read as round numbers.
double round_up_125(double value);

} // namespace fp8scope::gui
