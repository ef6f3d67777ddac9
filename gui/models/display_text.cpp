#include "models/display_text.hpp"

#include "report_html_charts.hpp"
#include "report_palette.hpp"

namespace fp8scope::gui {

QString to_qstring(std::string_view text)
{
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

QString duration_text(double ns)
{
    return to_qstring(cli::compact_duration(ns));
}

QString percent_text(double ratio)
{
    const double percent = 100.0 * ratio;
    if (percent != 0 && percent < 0.1 && percent > -0.1)
        return QString::number(percent, 'g', 2) + u'%';
    return QString::number(percent, 'f', 1) + u'%';
}

QString cause_name(analyzer::BubbleCause cause)
{
    return QString::fromLatin1(analyzer::bubble_cause_name(cause));
}

QColor cause_color(analyzer::BubbleCause cause)
{
    return QColor(QString::fromLatin1(cli::kCauseColors[static_cast<size_t>(cause)]));
}

QColor class_color(analyzer::KernelClass cls)
{
    return QColor(QString::fromLatin1(cli::kClassColors[static_cast<size_t>(cls)]));
}

QColor attention_color()
{
    return cause_color(analyzer::BubbleCause::Sync);
}

} // namespace fp8scope::gui
