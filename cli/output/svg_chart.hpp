// Small inline SVG charts for the HTML reports: vertical (optionally stacked) bars with an optional reference line,
// labelled horizontal bars, and a line for a signed series over steps. No script: tooltips are SVG <title>
// elements, which browsers show on hover. Every label is escaped (xml_escape.hpp), since labels carry kernel names
// and NVTX paths from an untrusted trace.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::cli::svg {

struct Series {
    std::string name; // legend text
    std::string color; // CSS colour, e.g. "#d62728"
};

struct Bar {
    std::string label; // tooltip title, e.g. "step 12"
    std::vector<double> values; // one per series, >= 0; stacked in series order
};

struct BarChart {
    std::string description; // aria-label of the chart
    std::vector<Series> series; // one: plain bars; several: stacked bars with a legend
    std::vector<Bar> bars;
    std::function<std::string(double)> format_value; // y ticks and tooltips
    std::optional<double> reference; // a dashed horizontal line at this value
    std::string reference_label; // in the legend row, next to a dashed sample
    std::string x_title; // under the x axis, e.g. "step 2 to 29"
};

std::string bar_chart(const BarChart& chart);

struct HorizontalBar {
    std::string label; // above the bar
    double value = 0; // negative values extend left of a zero line
    std::string value_text; // right of the bar
    std::string color = {}; // CSS colour of this bar; empty: the chart's
};

// One row per bar, in the order given; bar lengths are relative to the range of the values and 0. With a negative
// value the zero line moves right and is drawn.
std::string horizontal_bar_chart(
    std::string_view description, const std::vector<HorizontalBar>& bars, std::string_view color);

struct LinePoint {
    std::string label; // tooltip title and x-axis end label, e.g. "step 12"
    double x = 0; // in increasing order
    double y = 0; // may be negative; points with a non-finite x or y are left out
};

struct LineChart {
    std::string description; // aria-label of the chart
    std::string series_name; // legend text
    std::string color; // CSS colour of the line
    std::vector<LinePoint> points;
    std::vector<double> reference_levels; // dashed horizontal lines, e.g. a threshold and its negative
    std::string reference_label; // in the legend row, next to a dashed sample
    std::optional<double> marker_x; // a vertical line at this x, e.g. an onset
    std::string marker_label; // written beside it
    std::function<std::string(double)> format_value; // y ticks and tooltips
    std::string x_title;
};

// A line over the points, with a dot (and a tooltip) per point; the y axis spans 0, the values and the reference
// levels. For signed series such as a log2 ratio, which bars from 0 up cannot show.
std::string line_chart(const LineChart& chart);

// A y axis from 0 to `top` in `intervals` equal steps of 1, 2 or 5 x 10^k: top is the smallest of 1, 1.5, 2, 2.5, 3,
// 4, 5, 6, 8 x 10^k that is >= the largest value (1 for a value <= 0 or not finite), so at most a third of the axis
// is empty.
struct Axis {
    double top = 1;
    int intervals = 5;
};
Axis nice_axis(double max_value);

} // namespace fp8scope::cli::svg
