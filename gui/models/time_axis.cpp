#include "models/time_axis.hpp"

#include <algorithm>
#include <cmath>

namespace fp8scope::gui {

double TimeAxis::x_of(int64_t ns) const
{
    // Differences first: times reach 2^53, where a double still holds every integer but not their products.
    return static_cast<double>(ns - start_ns) / ns_per_px();
}

int64_t TimeAxis::ns_at(double x) const
{
    return start_ns + std::llround(x * ns_per_px());
}

TimeAxis TimeAxis::showing(int64_t start, int64_t end, int64_t bound_start_ns, int64_t bound_end_ns) const
{
    const int64_t bound_span = std::max<int64_t>(bound_end_ns - bound_start_ns, kMinSpanNs);
    int64_t span = std::clamp<int64_t>(end - start, kMinSpanNs, bound_span);
    // A window narrower than the minimum grows around its centre.
    if (end - start < span)
        start -= (span - (end - start)) / 2;
    start = std::clamp<int64_t>(start, bound_start_ns, std::max(bound_start_ns, bound_end_ns - span));
    return TimeAxis { start, start + span, std::max(width_px, 1) };
}

TimeAxis TimeAxis::zoomed(double anchor_x, double factor, int64_t bound_start_ns, int64_t bound_end_ns) const
{
    if (!(factor > 0) || !std::isfinite(factor))
        return *this;
    const int64_t anchor_ns = ns_at(anchor_x);
    const double new_span = std::max(static_cast<double>(span_ns()) / factor, static_cast<double>(kMinSpanNs));
    const double new_ns_per_px = new_span / std::max(width_px, 1);
    const auto start = anchor_ns - static_cast<int64_t>(std::llround(anchor_x * new_ns_per_px));
    return showing(start, start + static_cast<int64_t>(std::llround(new_span)), bound_start_ns, bound_end_ns);
}

TimeAxis TimeAxis::panned(double dx_px, int64_t bound_start_ns, int64_t bound_end_ns) const
{
    const auto shift = static_cast<int64_t>(std::llround(dx_px * ns_per_px()));
    return showing(start_ns + shift, end_ns + shift, bound_start_ns, bound_end_ns);
}

double round_up_125(double value)
{
    if (!(value > 0) || !std::isfinite(value))
        return 1;
    const double power = std::pow(10.0, std::floor(std::log10(value)));
    for (const double m : { 1.0, 2.0, 5.0 })
        if (m * power >= value * (1 - 1e-9))
            return m * power;
    return 10 * power;
}

} // namespace fp8scope::gui
