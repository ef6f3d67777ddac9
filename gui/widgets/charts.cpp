#include "widgets/charts.hpp"

#include "models/time_axis.hpp"

#include <QtCharts/QAbstractSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

QChartView* make_chart_view(const QString& title, QWidget* parent)
{
    auto* chart = new QChart();
    chart->setTitle(title);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setBackgroundRoundness(0);
    QFont title_font = chart->titleFont();
    title_font.setBold(true);
    chart->setTitleFont(title_font);
    auto* view = new QChartView(chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(260);
    return view;
}

QValueAxis* step_axis(int64_t first_step, int64_t last_step)
{
    auto* axis = new QValueAxis();
    const auto first = static_cast<double>(first_step);
    const auto last = static_cast<double>(std::max(last_step, first_step));
    // Half a step of room either side: a step-shaped series spans [step - 0.5, step + 0.5].
    axis->setRange(first - 0.5, last + 0.5);
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(first);
    axis->setTickInterval(std::max(1.0, round_up_125((last - first) / 10.0)));
    axis->setLabelFormat(u"%d"_s);
    axis->setTitleText(u"step"_s);
    return axis;
}

QValueAxis* value_axis(double min, double max, const QString& title, const QString& label_format, double cap)
{
    auto* axis = new QValueAxis();
    double top = round_up_125(max > 0 ? max * 1.05 : 1.0);
    if (cap > 0)
        top = std::min(top, cap);
    const double bottom = min < 0 ? -round_up_125(-min * 1.05) : 0.0;
    axis->setRange(bottom, top);
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(round_up_125((top - bottom) / 6.0));
    axis->setLabelFormat(label_format);
    axis->setTitleText(title);
    return axis;
}

void clear_chart(QChart& chart, const QString& title)
{
    chart.removeAllSeries();
    for (QAbstractAxis* axis : chart.axes()) {
        chart.removeAxis(axis);
        delete axis;
    }
    chart.setTitle(title);
}

void attach(QChart& chart, QAbstractSeries* series, QValueAxis* x, QValueAxis* y)
{
    chart.addSeries(series);
    if (!chart.axes().contains(x))
        chart.addAxis(x, Qt::AlignBottom);
    if (!chart.axes().contains(y))
        chart.addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
}

DurationUnit duration_unit(double max_ns)
{
    if (max_ns >= 1e9)
        return { 1e9, u"s"_s };
    if (max_ns >= 1e6)
        return { 1e6, u"ms"_s };
    if (max_ns >= 1e3)
        return { 1e3, u"µs"_s };
    return { 1, u"ns"_s };
}

} // namespace fp8scope::gui
