// The dashboard's "FP8 what-if" section (docs/gui.md "Dashboard"): for a BF16 run, what each FP8 recipe would make of
// its step, eager and compiled (predict_fp8 with the shipped H100 GEMM table, computed with the rest of the analysis
// by the session loader), the analyzer's pick highlighted with its advice, and the GEMM operands whose values a
// per-tensor scale would flush. Worded by present/whatif_wording.hpp, as `fp8scope report --fp8-whatif` is. For a run
// the what-if does not apply to (FP8 already, no GEMM) the section is hidden, as the compare box is without a
// reference: the viewer is mostly opened on FP8 runs, which have nothing to predict.
#pragma once

#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <QGroupBox>

class QLabel;
class QTableWidget;

namespace fp8scope::gui {

class Fp8WhatIfPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit Fp8WhatIfPanel(QWidget* parent = nullptr);

    // Shows `whatif`, or hides the panel when its not_applicable is set.
    void set_whatif(const analyzer::Fp8WhatIf& whatif);

    // What is shown, for the tests: the predictions (one row each, in the analyzer's order) and the operands.
    const QTableWidget& predictions() const { return *predictions_; }
    const QTableWidget& operands() const { return *operands_; }
    // The texts above, beside and below the tables (rich text).
    QString summary_text() const;
    QString advice_text() const;
    QString hurt_text() const;

    // The background of the analyzer's pick, in the table and behind the advice.
    static QColor best_color();

private:
    void show_predictions(const analyzer::Fp8WhatIf& whatif);
    void show_operands(const analyzer::Fp8WhatIf& whatif);

    QLabel* summary_;
    QTableWidget* predictions_;
    QLabel* bookkeeping_note_;
    QLabel* advice_;
    QLabel* operands_title_;
    QTableWidget* operands_;
    QLabel* hurt_;
};

} // namespace fp8scope::gui
