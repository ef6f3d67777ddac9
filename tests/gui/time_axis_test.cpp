// The time<->pixel mapping (gui/models/time_axis.hpp): positions, round trips, zoom around an anchor, pan, and the
// clamps at the trace's bounds and at the narrowest window.
#include "models/time_axis.hpp"

#include <catch2/catch.hpp>

using Catch::Matchers::WithinAbs;
using fp8scope::gui::TimeAxis;

TEST_CASE("time axis maps the window's ends to its pixel edges", "[gui][axis]")
{
    const TimeAxis axis { 1'000, 11'000, 100 }; // 100 ns per pixel
    CHECK(axis.ns_per_px() == 100.0);
    CHECK(axis.x_of(1'000) == 0.0);
    CHECK(axis.x_of(11'000) == 100.0);
    CHECK(axis.x_of(6'050) == 50.5);
    CHECK(axis.x_of(0) == -10.0); // before the window: left of the widget
    CHECK(axis.ns_at(0) == 1'000);
    CHECK(axis.ns_at(100) == 11'000);
    CHECK(axis.ns_at(50.5) == 6'050);
}

TEST_CASE("time axis round trips stay exact at the largest trace times", "[gui][axis]")
{
    constexpr int64_t kFar = int64_t { 1 } << 53; // kMaxTraceTimeNs
    const TimeAxis axis { kFar - 1'000'000, kFar, 1000 };
    for (const int64_t ns : { kFar - 1'000'000, kFar - 123'456, kFar }) {
        const double x = axis.x_of(ns);
        CHECK(axis.ns_at(x) == ns);
    }
}

TEST_CASE("zooming keeps the time under the anchor in place", "[gui][axis]")
{
    const TimeAxis axis { 0, 1'000'000, 1000 };
    const TimeAxis in = axis.zoomed(250, 4.0, 0, 1'000'000);
    CHECK(in.span_ns() == 250'000);
    CHECK(in.width_px == 1000);
    CHECK(in.ns_at(250) == axis.ns_at(250));
    const TimeAxis out = in.zoomed(250, 0.5, 0, 1'000'000);
    CHECK(out.span_ns() == 500'000);
    CHECK(out.ns_at(250) == axis.ns_at(250));
}

TEST_CASE("zoom stops at the trace's span and at the narrowest window", "[gui][axis]")
{
    const TimeAxis axis { 0, 1'000'000, 1000 };
    // Zooming out past the trace shows the whole trace, never beyond.
    const TimeAxis all = axis.zoomed(500, 0.001, 0, 1'000'000);
    CHECK(all.start_ns == 0);
    CHECK(all.end_ns == 1'000'000);
    // Zooming in stops at kMinSpanNs around the anchor.
    const TimeAxis deep = axis.zoomed(500, 1e9, 0, 1'000'000);
    CHECK(deep.span_ns() == TimeAxis::kMinSpanNs);
    CHECK(deep.start_ns <= 500'000);
    CHECK(deep.end_ns >= 500'000);
    // A zoom factor that is no number changes nothing.
    CHECK(axis.zoomed(500, 0.0, 0, 1'000'000) == axis);
    CHECK(axis.zoomed(500, -2.0, 0, 1'000'000) == axis);
}

TEST_CASE("zooming at an edge keeps the window inside the trace", "[gui][axis]")
{
    const TimeAxis axis { 0, 1'000'000, 1000 };
    const TimeAxis left = axis.zoomed(0, 2.0, 0, 1'000'000);
    CHECK(left.start_ns == 0);
    CHECK(left.span_ns() == 500'000);
    const TimeAxis right = axis.zoomed(1000, 2.0, 0, 1'000'000);
    CHECK(right.end_ns == 1'000'000);
    CHECK(right.span_ns() == 500'000);
}

TEST_CASE("panning moves by pixels and stops at the trace's ends", "[gui][axis]")
{
    const TimeAxis axis { 100'000, 200'000, 100 }; // 1 us per pixel
    const TimeAxis later = axis.panned(10, 0, 1'000'000);
    CHECK(later.start_ns == 110'000);
    CHECK(later.end_ns == 210'000);
    const TimeAxis earlier = axis.panned(-1000, 0, 1'000'000);
    CHECK(earlier.start_ns == 0);
    CHECK(earlier.span_ns() == 100'000);
    const TimeAxis end = axis.panned(1e6, 0, 1'000'000);
    CHECK(end.end_ns == 1'000'000);
    CHECK(end.span_ns() == 100'000);
}

TEST_CASE("showing a window clamps it to the bounds", "[gui][axis]")
{
    const TimeAxis axis { 0, 1'000, 500 };
    CHECK(axis.showing(-500, 2'000'000, 0, 1'000'000) == TimeAxis { 0, 1'000'000, 500 });
    // Narrower than the minimum: grows around its centre.
    const TimeAxis narrow = axis.showing(5'000, 5'010, 0, 1'000'000);
    CHECK(narrow.span_ns() == TimeAxis::kMinSpanNs);
    CHECK(narrow.start_ns == 5'005 - TimeAxis::kMinSpanNs / 2);
    // A trace shorter than the minimum window: the window starts at the trace.
    const TimeAxis tiny = axis.showing(0, 10, 0, 10);
    CHECK(tiny.start_ns == 0);
    CHECK(tiny.span_ns() == TimeAxis::kMinSpanNs);
    // Width below one pixel is taken as one.
    CHECK(TimeAxis { 0, 100, 0 }.showing(0, 100, 0, 100).width_px == 1);
}

TEST_CASE("ticks are 1, 2 or 5 times a power of ten", "[gui][axis]")
{
    using fp8scope::gui::round_up_125;
    CHECK(round_up_125(1) == 1);
    CHECK(round_up_125(1.2) == 2);
    CHECK(round_up_125(2) == 2);
    CHECK(round_up_125(3) == 5);
    CHECK(round_up_125(7) == 10);
    CHECK(round_up_125(101.5) == 200);
    CHECK_THAT(round_up_125(0.013), WithinAbs(0.02, 1e-12));
    CHECK(round_up_125(1.1e6) == 2e6);
    CHECK(round_up_125(0) == 1);
    CHECK(round_up_125(-3) == 1);
}
