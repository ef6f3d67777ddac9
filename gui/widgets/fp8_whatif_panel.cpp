#include "widgets/fp8_whatif_panel.hpp"

#include "models/display_text.hpp"

#include "fp8scope/present/whatif_wording.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <initializer_list>
#include <span>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;
using present::WhatIfColumn;

namespace {

QString escaped(std::string_view text)
{
    return to_qstring(text).toHtmlEscaped();
}

QLabel* text_label(QWidget* parent)
{
    auto* label = new QLabel(parent);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText); // built from escaped text only (escaped())
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

// A read-only table sized to its contents, as the dashboard's compare table is.
QTableWidget* figures_table(std::span<const std::string_view> titles, QWidget* parent)
{
    auto* table = new QTableWidget(parent);
    table->setColumnCount(static_cast<int>(titles.size()));
    QStringList labels;
    for (const std::string_view title : titles)
        labels << to_qstring(title);
    table->setHorizontalHeaderLabels(labels);
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true); // the implementation or the operand: text, elided
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionMode(QAbstractItemView::NoSelection);
    table->setFocusPolicy(Qt::NoFocus);
    table->setWordWrap(false);
    table->setTextElideMode(Qt::ElideMiddle);
    table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    return table;
}

// The table as tall as its first `max_rows` rows; the rest scroll.
void fit_height(QTableWidget& table, int max_rows)
{
    const int rows = std::min(table.rowCount(), max_rows);
    const int row_px = table.verticalHeader()->defaultSectionSize();
    table.setVerticalScrollBarPolicy(table.rowCount() > max_rows ? Qt::ScrollBarAsNeeded : Qt::ScrollBarAlwaysOff);
    table.setFixedHeight(table.horizontalHeader()->sizeHint().height() + rows * row_px + 2 * table.frameWidth());
}

QTableWidgetItem* cell(const std::string& text, Qt::Alignment alignment)
{
    auto* item = new QTableWidgetItem(to_qstring(text));
    item->setTextAlignment(alignment | Qt::AlignVCenter);
    item->setToolTip(item->text()); // long implementations and labels are elided in the cell
    return item;
}

} // namespace

Fp8WhatIfPanel::Fp8WhatIfPanel(QWidget* parent)
    : QGroupBox(u"FP8 what-if: this BF16 run in FP8"_s, parent)
{
    auto* layout = new QVBoxLayout(this);
    summary_ = text_label(this);
    predictions_ = figures_table(present::kWhatIfColumnTitles, this);
    bookkeeping_note_ = text_label(this);
    bookkeeping_note_->setText(u"<small>%1</small>"_s.arg(escaped(present::whatif_bookkeeping_note())));
    advice_ = text_label(this);
    advice_->setAutoFillBackground(true);
    QPalette highlighted = advice_->palette();
    highlighted.setColor(QPalette::Window, best_color());
    advice_->setPalette(highlighted);
    advice_->setMargin(4);
    operands_title_ = text_label(this);
    operands_ = figures_table(present::kWhatIfOperandColumnTitles, this);
    hurt_ = text_label(this);
    for (QWidget* part : std::initializer_list<QWidget*> {
             summary_, predictions_, bookkeeping_note_, advice_, operands_title_, operands_, hurt_ })
        layout->addWidget(part);
    hide();
}

QColor Fp8WhatIfPanel::best_color()
{
    return QColor(u"#fff2b3"_s); // a light yellow: the pick can be "stay in BF16", so neither green nor red
}

QString Fp8WhatIfPanel::summary_text() const
{
    return summary_->text();
}

QString Fp8WhatIfPanel::advice_text() const
{
    return advice_->text();
}

QString Fp8WhatIfPanel::hurt_text() const
{
    return hurt_->text();
}

void Fp8WhatIfPanel::set_whatif(const analyzer::Fp8WhatIf& w)
{
    setVisible(w.not_applicable.empty());
    if (!w.not_applicable.empty())
        return;
    summary_->setText(u"<p>%1.<br>%2.<br>%3.</p>"_s.arg(escaped(present::whatif_bf16_step_sentence(w)),
        escaped(present::whatif_gemm_table_sentence(w)), escaped(present::whatif_compiled_sentence(w))));
    show_predictions(w);
    advice_->setText(u"<b>%1</b>"_s.arg(escaped(present::whatif_advice_sentence(w))));
    show_operands(w);
}

void Fp8WhatIfPanel::show_predictions(const analyzer::Fp8WhatIf& w)
{
    predictions_->clearSpans();
    predictions_->setRowCount(static_cast<int>(w.predictions.size()));
    constexpr auto kFirstFigure = static_cast<int>(WhatIfColumn::Bf16Step);
    constexpr auto kImplementation = static_cast<int>(WhatIfColumn::Implementation);
    for (size_t i = 0; i < w.predictions.size(); ++i) {
        const auto row = static_cast<int>(i);
        const present::WhatIfPredictionCells c = present::whatif_prediction_cells(w.predictions[i]);
        std::array<std::string, present::kWhatIfColumnCount> texts = c.cells();
        texts[static_cast<size_t>(WhatIfColumn::Fp8Step)] = c.fp8_step + " (" + c.fp8_step_interval + ")";
        for (int column = 0; column < static_cast<int>(texts.size()); ++column) {
            const bool figure = column >= kFirstFigure && column < kImplementation;
            predictions_->setItem(
                row, column, cell(texts[static_cast<size_t>(column)], figure ? Qt::AlignRight : Qt::AlignLeft));
        }
        if (!c.unavailable.empty()) {
            // The analyzer's reason across the figures' columns, greyed.
            predictions_->setSpan(row, kFirstFigure, 1, kImplementation - kFirstFigure);
            QTableWidgetItem* reason = cell(c.unavailable, Qt::AlignLeft);
            reason->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
            QFont italic = reason->font();
            italic.setItalic(true);
            reason->setFont(italic);
            predictions_->setItem(row, kFirstFigure, reason);
        }
        if (w.best && *w.best == i) {
            for (int column = 0; column < predictions_->columnCount(); ++column) {
                QTableWidgetItem* item = predictions_->item(row, column);
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
                item->setBackground(best_color());
            }
        }
    }
    predictions_->resizeColumnsToContents();
    fit_height(*predictions_, predictions_->rowCount());
}

void Fp8WhatIfPanel::show_operands(const analyzer::Fp8WhatIf& w)
{
    // Without GEMM operand statistics there are no numerics to show, and the text report shows none either.
    const bool any = !w.operands.empty();
    for (QWidget* part : std::initializer_list<QWidget*> { operands_title_, operands_, hurt_ })
        part->setVisible(any);
    if (!any)
        return;
    operands_title_->setText(escaped(present::whatif_operands_title()));
    operands_->setRowCount(static_cast<int>(w.operands.size()));
    constexpr auto kLabel = static_cast<int>(present::kWhatIfOperandColumnCount) - 1;
    for (size_t i = 0; i < w.operands.size(); ++i) {
        const analyzer::OperandNumerics& o = w.operands[i];
        const auto cells = present::whatif_operand_cells(o);
        // An operand per-tensor scaling hurts is in the attention red (the analyzer's list: w.hurt).
        const bool hurt = std::ranges::find(w.hurt, o.label) != w.hurt.end();
        for (int column = 0; column < static_cast<int>(cells.size()); ++column) {
            QTableWidgetItem* item
                = cell(cells[static_cast<size_t>(column)], column == kLabel ? Qt::AlignLeft : Qt::AlignRight);
            if (hurt)
                item->setForeground(attention_color());
            operands_->setItem(static_cast<int>(i), column, item);
        }
    }
    operands_->resizeColumnsToContents();
    fit_height(*operands_, static_cast<int>(present::kWhatIfOperandsListed));
    hurt_->setText(u"<span style='color:%1'>%2</span>"_s.arg(
        w.hurt.empty() ? palette().color(QPalette::WindowText).name() : attention_color().name(),
        escaped(present::whatif_hurt_sentence(w))));
}

} // namespace fp8scope::gui
