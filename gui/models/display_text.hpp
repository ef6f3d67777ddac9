// How the viewer writes figures and colours, as QStrings and QColors. The wording is the presentation library's
// (present/: units, figures, compare and tensor wording), which the CLI uses too, so that a figure reads the same in
// a report and in the viewer; this file only converts. Trace text (kernel names, NVTX paths) is shown as plain text by
// every view, never as rich text.
#pragma once

#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"

#include <QColor>
#include <QString>

#include <string_view>

namespace fp8scope::gui {

QString to_qstring(std::string_view text);
// "850 ns", "12.5 µs", "3.25 ms", "1.5 s": three significant digits (the HTML report's compact_duration).
QString duration_text(double ns);
// "12.3%" of a ratio 0..1, one decimal (two significant digits below 0.1%).
QString percent_text(double ratio);
// "sync", "dependency", ... (the analyzer's names).
QString cause_name(analyzer::BubbleCause cause);
// A DetailField's value as the viewer writes it: times and durations as duration_text(), sizes in binary units.
QString detail_value(const analyzer::DetailField& field);

// The colours of the HTML report (present/include/fp8scope/present/palette.hpp).
QColor cause_color(analyzer::BubbleCause cause);
QColor class_color(analyzer::KernelClass cls);
// The fill of a timeline item: by kernel class on GPU streams (memcpy brown, memset olive), by cause for bubbles,
// the sync red for host-blocking calls, light blue for launch calls, greys for other calls and steps, light purples
// for NVTX ranges.
QColor timeline_color(analyzer::TrackKind kind, uint8_t category);
// Text that needs attention (drift, a loss delta over its threshold, an error): the sync red.
QColor attention_color();

// The series of the tensor view's charts. None is the attention red, which marks a drift's onset on each chart.
enum class TensorSeries { Run, Reference, Saturation, Underflow, Headroom };
QColor tensor_series_color(TensorSeries series);

} // namespace fp8scope::gui
