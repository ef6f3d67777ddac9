// The pieces every Qt Charts plot of the viewer shares: a chart view styled once (no animation, legend below, a
// light theme), an x axis over step numbers, a y axis from 0 with round ticks, and step-shaped series, so that a
// value per step reads as a flat run over its step (and a trace of one step still shows).
#pragma once

#include <QString>
#include <QtCharts/QChartView>

#include <cstdint>
#include <span>

class QAbstractSeries;
class QAreaSeries;
class QLineSeries;
class QValueAxis;

namespace fp8scope::gui {

// A chart view owning a new chart with this title.
QChartView* make_chart_view(const QString& title, QWidget* parent);

// The x axis over steps [first, last], whole numbers, about 10 ticks.
QValueAxis* step_axis(int64_t first_step, int64_t last_step);
// A y axis from `min` (0 unless a series goes below) to a round number above `max` (at most `cap`), with the title.
QValueAxis* value_axis(
    double min, double max, const QString& title, const QString& label_format = QStringLiteral("%.3g"), double cap = 0);

// Empties a chart for new data: deletes its series and its axes (QChart::removeAxis hands an axis back to the caller
// instead of deleting it), and sets the title.
void clear_chart(QChart& chart, const QString& title);

// Adds a series to the chart and attaches it to both axes (which the chart then owns).
void attach(QChart& chart, QAbstractSeries* series, QValueAxis* x, QValueAxis* y);

// A duration scale for a chart's values: the unit whose values are 1 to 1000 for `max_ns`.
struct DurationUnit {
    double ns = 1;
    QString name; // "ns", "µs", "ms", "s"
};
DurationUnit duration_unit(double max_ns);

} // namespace fp8scope::gui
