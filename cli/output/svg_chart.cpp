#include "output/svg_chart.hpp"

#include "output/xml_escape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace fp8scope::cli::svg {

namespace {

constexpr double kWidth = 880;
constexpr double kHeight = 280;
constexpr double kPlotLeft = 76; // room for the y tick labels
constexpr double kPlotRight = kWidth - 16;
constexpr double kPlotBottom = kHeight - 40; // room for the x labels and title
constexpr double kMaxBarWidth = 48; // a few steps should not look like a wall
constexpr double kApproxCharWidth = 6.5; // for laying out legend items at font-size 11
// A transparent rectangle over each bar carries the bar's tooltip and darkens on hover.
constexpr std::string_view kChartStyle = "<style>.hit{fill:transparent}.hit:hover{fill:rgba(0,0,0,.12)}</style>";

std::string open_svg(std::string_view description, double height)
{
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"{}\" "
                       "viewBox=\"0 0 {} {}\" width=\"100%\" font-family=\"sans-serif\" font-size=\"11\">{}\n",
        xml_escaped(description), kWidth, height, kChartStyle);
}

// The legend row above the plot: a swatch per series (only when they are stacked), then the reference line.
std::string legend(const BarChart& chart)
{
    std::string out;
    double x = kPlotLeft;
    const auto advance
        = [&](std::string_view text) { x += 14 + kApproxCharWidth * static_cast<double>(text.size()) + 18; };
    for (size_t i = 0; chart.series.size() > 1 && i < chart.series.size(); ++i) {
        const Series& s = chart.series[i];
        out += fmt::format("<rect x=\"{:.1f}\" y=\"4\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.1f}\" "
                           "y=\"13\">{}</text>\n",
            x, s.color, x + 14, xml_escaped(s.name));
        advance(s.name);
    }
    if (chart.reference)
        out += fmt::format("<line x1=\"{:.1f}\" y1=\"9\" x2=\"{:.1f}\" y2=\"9\" stroke=\"#222\" stroke-width=\"1.5\" "
                           "stroke-dasharray=\"4 3\"/><text x=\"{:.1f}\" y=\"13\">{}</text>\n",
            x, x + 22, x + 28, xml_escaped(chart.reference_label));
    return out;
}

// Grid lines and tick labels from `low` (at the plot's bottom) to `high` (at top_y) in `intervals` equal steps.
std::string y_axis(
    double top_y, double low, double high, int intervals, const std::function<std::string(double)>& format_value)
{
    std::string out;
    for (int i = 0; i <= intervals; ++i) {
        double value = low + (high - low) * i / intervals;
        if (std::abs(value) < (high - low) * 1e-9)
            value = 0; // not -1.1e-16 from the sum
        const double y = kPlotBottom - (kPlotBottom - top_y) * i / intervals;
        out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\"/>"
                           "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
            kPlotLeft, y, kPlotRight, y, value == 0 ? "#666" : "#e4e4e4", kPlotLeft - 6, y + 4,
            xml_escaped(format_value(value)));
    }
    return out;
}

std::string bar_tooltip(const BarChart& chart, const Bar& bar)
{
    std::string text = bar.label + ":";
    if (chart.series.size() == 1)
        return text + " " + chart.format_value(bar.values.empty() ? 0.0 : bar.values.front());
    bool first = true;
    for (size_t s = 0; s < chart.series.size() && s < bar.values.size(); ++s) {
        if (bar.values[s] <= 0)
            continue;
        text += fmt::format("{} {} {}", first ? "" : ",", chart.series[s].name, chart.format_value(bar.values[s]));
        first = false;
    }
    return first ? text + " none" : text;
}

} // namespace

Axis nice_axis(double max_value)
{
    if (!(max_value > 0) || !std::isfinite(max_value))
        return {};
    const double power = std::pow(10.0, std::floor(std::log10(max_value)));
    // Each top with a tick spacing of 1, 2 or 5 x 10^k: 0.2, 0.5, 0.5, 0.5, 1, 1, 1, 2, 2 (x power).
    constexpr std::pair<double, int> kTops[] { { 1.0, 5 }, { 1.5, 3 }, { 2.0, 4 }, { 2.5, 5 }, { 3.0, 3 }, { 4.0, 4 },
        { 5.0, 5 }, { 6.0, 3 }, { 8.0, 4 } };
    for (const auto& [mantissa, intervals] : kTops)
        if (mantissa * power >= max_value * (1 - 1e-12))
            return { mantissa * power, intervals };
    return { 10.0 * power, 5 };
}

std::string bar_chart(const BarChart& chart)
{
    const bool has_legend = chart.series.size() > 1 || chart.reference;
    const double top_y = has_legend ? 26 : 10;
    double max_value = chart.reference.value_or(0.0);
    for (const Bar& bar : chart.bars) {
        double sum = 0;
        for (const double v : bar.values)
            sum += std::max(0.0, v);
        max_value = std::max(max_value, sum);
    }
    const Axis axis = nice_axis(max_value);
    const double y_max = axis.top;
    const double plot_height = kPlotBottom - top_y;
    const auto to_y = [&](double value) { return kPlotBottom - plot_height * std::min(value, y_max) / y_max; };

    std::string out = open_svg(chart.description, kHeight);
    if (has_legend)
        out += legend(chart);
    out += y_axis(top_y, 0, axis.top, axis.intervals, chart.format_value);
    if (chart.bars.empty())
        out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#666\">no steps</text>\n",
            (kPlotLeft + kPlotRight) / 2, (top_y + kPlotBottom) / 2);

    const double slot = (kPlotRight - kPlotLeft) / static_cast<double>(std::max<size_t>(1, chart.bars.size()));
    // Thin bars touch: a gap would be all there is.
    const double bar_width = slot >= 3 ? std::min(kMaxBarWidth, slot * 0.8) : slot;
    // One group per series with the fill set once keeps the file small with hundreds of bars.
    for (size_t s = 0; s < chart.series.size(); ++s) {
        out += fmt::format("<g fill=\"{}\">", chart.series[s].color);
        for (size_t i = 0; i < chart.bars.size(); ++i) {
            const std::vector<double>& values = chart.bars[i].values;
            if (s >= values.size() || !(values[s] > 0))
                continue;
            double below = 0;
            for (size_t k = 0; k < s && k < values.size(); ++k)
                below += std::max(0.0, values[k]);
            const double y_top = to_y(below + values[s]);
            out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>",
                kPlotLeft + slot * static_cast<double>(i) + (slot - bar_width) / 2, y_top, bar_width,
                to_y(below) - y_top);
        }
        out += "</g>\n";
    }
    for (size_t i = 0; i < chart.bars.size(); ++i)
        out += fmt::format("<rect class=\"hit\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"><title>{}</title>"
                           "</rect>\n",
            kPlotLeft + slot * static_cast<double>(i), top_y, slot, plot_height,
            xml_escaped(bar_tooltip(chart, chart.bars[i])));
    if (chart.reference) {
        const double y = to_y(*chart.reference);
        out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#222\" stroke-width=\"1.5\" "
                           "stroke-dasharray=\"6 4\"/>\n",
            kPlotLeft, y, kPlotRight, y);
    }
    if (!chart.bars.empty())
        out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
            kPlotLeft, kPlotBottom + 14, xml_escaped(chart.bars.front().label), kPlotRight, kPlotBottom + 14,
            xml_escaped(chart.bars.back().label));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n</svg>\n",
        (kPlotLeft + kPlotRight) / 2, kHeight - 8, xml_escaped(chart.x_title));
    return out;
}

std::string line_chart(const LineChart& chart)
{
    constexpr double kTopY = 26; // below the legend row
    constexpr size_t kMaxDots = 500; // beyond this the line alone: a dot per point would only blur it
    std::vector<const LinePoint*> points;
    for (const LinePoint& p : chart.points)
        if (std::isfinite(p.x) && std::isfinite(p.y))
            points.push_back(&p);
    // The y range covers 0, every value and every reference level, in whole ticks of 1, 2 or 5 x 10^k.
    double low = 0, high = 0;
    for (const LinePoint* p : points) {
        low = std::min(low, p->y);
        high = std::max(high, p->y);
    }
    for (const double level : chart.reference_levels) {
        low = std::min(low, level);
        high = std::max(high, level);
    }
    const Axis axis = nice_axis(std::max(-low, high));
    const double tick = axis.top / axis.intervals;
    low = std::floor(low / tick - 1e-9) * tick;
    high = std::max(std::ceil(high / tick - 1e-9) * tick, low + tick);
    const int intervals = static_cast<int>(std::lround((high - low) / tick));
    const double x_low = points.empty() ? 0 : points.front()->x;
    const double x_high = points.empty() ? 1 : std::max(points.back()->x, x_low + 1);
    const auto to_x = [&](double x) { return kPlotLeft + (kPlotRight - kPlotLeft) * (x - x_low) / (x_high - x_low); };
    const auto to_y = [&](double y) { return kPlotBottom - (kPlotBottom - kTopY) * (y - low) / (high - low); };

    std::string out = open_svg(chart.description, kHeight);
    out += fmt::format("<line x1=\"{}\" y1=\"9\" x2=\"{}\" y2=\"9\" stroke=\"{}\" stroke-width=\"2\"/><text x=\"{}\" "
                       "y=\"13\">{}</text>\n",
        kPlotLeft, kPlotLeft + 22, xml_escaped(chart.color), kPlotLeft + 28, xml_escaped(chart.series_name));
    if (!chart.reference_levels.empty()) {
        const double x = kPlotLeft + 28 + kApproxCharWidth * static_cast<double>(chart.series_name.size()) + 18;
        out += fmt::format("<line x1=\"{:.1f}\" y1=\"9\" x2=\"{:.1f}\" y2=\"9\" stroke=\"#888\" "
                           "stroke-dasharray=\"4 3\"/><text x=\"{:.1f}\" y=\"13\">{}</text>\n",
            x, x + 22, x + 28, xml_escaped(chart.reference_label));
    }
    out += y_axis(kTopY, low, high, intervals, chart.format_value);
    for (const double level : chart.reference_levels)
        out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#888\" "
                           "stroke-dasharray=\"6 4\"/>\n",
            kPlotLeft, to_y(level), kPlotRight, to_y(level));
    if (chart.marker_x) {
        const double x = to_x(*chart.marker_x);
        const bool right_half = x > (kPlotLeft + kPlotRight) / 2; // the label then goes left of the line
        out += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#c62828\" "
                           "stroke-dasharray=\"3 3\"/><text x=\"{:.1f}\" y=\"{}\" fill=\"#c62828\"{}>{}</text>\n",
            x, kTopY, x, kPlotBottom, right_half ? x - 4 : x + 4, kTopY + 11, right_half ? " text-anchor=\"end\"" : "",
            xml_escaped(chart.marker_label));
    }
    std::string line;
    for (const LinePoint* p : points)
        line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", to_x(p->x), to_y(p->y));
    if (!line.empty())
        out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
            xml_escaped(chart.color), line);
    for (size_t i = 0; points.size() <= kMaxDots && i < points.size(); ++i)
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: {}</title></circle>\n",
            to_x(points[i]->x), to_y(points[i]->y), xml_escaped(chart.color), xml_escaped(points[i]->label),
            xml_escaped(chart.format_value(points[i]->y)));
    if (points.empty())
        out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#666\">no values</text>\n",
            (kPlotLeft + kPlotRight) / 2, (kTopY + kPlotBottom) / 2);
    else
        out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
            kPlotLeft, kPlotBottom + 14, xml_escaped(points.front()->label), kPlotRight, kPlotBottom + 14,
            xml_escaped(points.back()->label));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n</svg>\n",
        (kPlotLeft + kPlotRight) / 2, kHeight - 8, xml_escaped(chart.x_title));
    return out;
}

std::string horizontal_bar_chart(
    std::string_view description, const std::vector<HorizontalBar>& bars, std::string_view color)
{
    constexpr double kRowHeight = 34, kLeft = 8, kValueRoom = 170;
    double low = 0, high = 0;
    for (const HorizontalBar& bar : bars) {
        low = std::min(low, bar.value);
        high = std::max(high, bar.value);
    }
    const double span = high - low;
    const double usable = kWidth - kLeft - kValueRoom;
    const double zero_x = span > 0 ? kLeft + usable * -low / span : kLeft;
    const double height = kRowHeight * static_cast<double>(bars.size()) + 8;
    std::string out = open_svg(description, height);
    if (low < 0)
        out += fmt::format(
            "<line x1=\"{:.1f}\" y1=\"0\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#666\"/>\n", zero_x, zero_x, height);
    for (size_t i = 0; i < bars.size(); ++i) {
        const double y = kRowHeight * static_cast<double>(i) + 4;
        // At least 1 px, so that a bar of 0 still shows where it is.
        const double length = std::max(1.0, span > 0 ? usable * std::abs(bars[i].value) / span : 0.0);
        const double x = bars[i].value < 0 ? zero_x - length : zero_x;
        const std::string label = xml_escaped(bars[i].label);
        out += fmt::format("<g><title>{}: {}</title><text x=\"{}\" y=\"{:.1f}\">{}</text>"
                           "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"13\" fill=\"{}\"/>"
                           "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text></g>\n",
            label, xml_escaped(bars[i].value_text), kLeft, y + 11, label, x, y + 15, length,
            xml_escaped(bars[i].color.empty() ? color : bars[i].color), std::max(zero_x, x + length) + 6, y + 26,
            xml_escaped(bars[i].value_text));
    }
    return out + "</svg>\n";
}

} // namespace fp8scope::cli::svg
