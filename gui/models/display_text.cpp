#include "models/display_text.hpp"

#include "fp8scope/present/palette.hpp"
#include "fp8scope/present/units.hpp"

#include <algorithm>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

QString to_qstring(std::string_view text)
{
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

QString duration_text(double ns)
{
    return to_qstring(present::compact_duration(ns));
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
    return QColor(QString::fromLatin1(present::kCauseColors[static_cast<size_t>(cause)]));
}

QColor class_color(analyzer::KernelClass cls)
{
    return QColor(QString::fromLatin1(present::kClassColors[static_cast<size_t>(cls)]));
}

QString detail_value(const analyzer::DetailField& field)
{
    using Unit = analyzer::DetailField::Unit;
    switch (field.unit) {
    case Unit::Text:
        return to_qstring(field.text);
    case Unit::Time: // since the session start, to the ns: two events 1 µs apart must not read the same
        return QString::number(static_cast<double>(field.value) / 1e9, 'f', 9) + u" s"_s;
    case Unit::Duration:
        return duration_text(static_cast<double>(field.value));
    case Unit::Bytes:
        return to_qstring(present::format_bytes(field.value));
    case Unit::Count:
        break;
    }
    return QString::number(field.value);
}

QColor timeline_color(analyzer::TrackKind kind, uint8_t category)
{
    using analyzer::TrackKind;
    switch (kind) {
    case TrackKind::GpuStream:
        if (category == analyzer::kCategoryMemcpy)
            return QColor(0x8c, 0x56, 0x4b);
        if (category == analyzer::kCategoryMemset)
            return QColor(0xbc, 0xbd, 0x22);
        return class_color(
            static_cast<analyzer::KernelClass>(std::min<size_t>(category, analyzer::kKernelClassCount - 1)));
    case TrackKind::Bubbles:
        return cause_color(
            static_cast<analyzer::BubbleCause>(std::min<size_t>(category, analyzer::kBubbleCauseCount - 1)));
    case TrackKind::Syncs:
        return attention_color();
    case TrackKind::HostThread:
        switch (static_cast<analyzer::ApiCategory>(category)) {
        case analyzer::ApiCategory::Launch:
            return QColor(0xae, 0xc7, 0xe8);
        case analyzer::ApiCategory::Blocking:
            return attention_color();
        case analyzer::ApiCategory::Other:
            break;
        }
        return QColor(0xc7, 0xc7, 0xc7);
    case TrackKind::Nvtx:
        return category == static_cast<uint8_t>(analyzer::NvtxCategory::Mark) ? QColor(0x7f, 0x7f, 0x7f)
                                                                              : QColor(0xc5, 0xb0, 0xd5);
    case TrackKind::Steps:
        break;
    }
    return QColor(0xd9, 0xd9, 0xd9);
}

QColor attention_color()
{
    return cause_color(analyzer::BubbleCause::Sync);
}

QColor tensor_series_color(TensorSeries series)
{
    switch (series) {
    case TensorSeries::Run:
        return QColor(0x1f, 0x77, 0xb4); // tab10 blue
    case TensorSeries::Reference:
        return QColor(0x7f, 0x7f, 0x7f);
    case TensorSeries::Saturation:
        // Okabe-Ito orange: told apart from the onset red also with red-green colour blindness, and from the
        // underflow purple.
        return QColor(0xe6, 0x9f, 0x00);
    case TensorSeries::Underflow:
        return cause_color(analyzer::BubbleCause::Dependency); // purple
    case TensorSeries::Headroom:
        return QColor(0x2c, 0xa0, 0x2c); // tab10 green
    }
    return QColor(0x7f, 0x7f, 0x7f);
}

} // namespace fp8scope::gui
