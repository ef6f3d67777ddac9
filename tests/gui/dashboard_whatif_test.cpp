// The dashboard's FP8 what-if section (gui/widgets/fp8_whatif_panel.hpp) on real zoo traces: a BF16 run shows the
// analyzer's predictions (predict_fp8 with the shipped H100 table, recomputed here from the session's own model and
// report), its pick highlighted, its advice and the operands per-tensor scaling hurts; an FP8 run hides the section.
#include "gui_scenarios.hpp"

#include "widgets/dashboard_view.hpp"
#include "widgets/fp8_whatif_panel.hpp"

#include "fp8scope/present/whatif_wording.hpp"

#include <QTableWidget>
#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::testing;
using present::WhatIfColumn;

namespace {

QString cell_text(const QTableWidget& table, int row, WhatIfColumn column)
{
    const QTableWidgetItem* item = table.item(row, static_cast<int>(column));
    return item ? item->text() : QString();
}

// What the text report shows for a figure: the same present/ wording, so the viewer's cell reads as the CLI's.
QString ms(int64_t ns)
{
    return QString::fromStdString(present::whatif_ms(ns));
}

} // namespace

TEST_CASE("dashboard: a BF16 run shows the analyzer's FP8 what-if", "[gui][dashboard][whatif]")
{
    const std::string trace = GENERATE(as<std::string> {}, "zoo/bf16_clean_ref.sqlite", "zoo/torchao_bf16_ref.sqlite");
    INFO(trace);
    const auto session = open_session(sample_trace(trace));
    const gui::AnalysedTrace& run = *session->run;
    // The analyzer's answer, computed here again from the same model and report: the session must hold this.
    const analyzer::Fp8WhatIf expected = analyzer::predict_fp8(run.model, run.report);
    REQUIRE(expected.not_applicable.empty());
    REQUIRE(expected.predictions.size() >= 4);
    REQUIRE(expected.best);

    gui::FindingsModel findings;
    gui::DashboardView dashboard(findings);
    dashboard.resize(1400, 900);
    dashboard.show();
    findings.set_session(session);
    dashboard.set_session(session);
    auto* panel = dashboard.findChild<gui::Fp8WhatIfPanel*>();
    REQUIRE(panel);
    CHECK(panel->isVisible());

    // The BF16 step the predictions start from.
    CHECK(panel->summary_text().contains(
        QStringLiteral("BF16 step %1 over %2 steps").arg(ms(expected.bf16_step_ns)).arg(expected.steps)));

    // One row per prediction, in the analyzer's order, with its figures.
    const QTableWidget& table = panel->predictions();
    REQUIRE(table.rowCount() == static_cast<int>(expected.predictions.size()));
    int unavailable = 0;
    for (size_t i = 0; i < expected.predictions.size(); ++i) {
        const analyzer::Fp8Prediction& p = expected.predictions[i];
        const int row = static_cast<int>(i);
        INFO("prediction " << i << ": " << p.recipe << " " << analyzer::fp8_mode_name(p.mode));
        CHECK(cell_text(table, row, WhatIfColumn::Recipe).toStdString() == p.recipe);
        CHECK(cell_text(table, row, WhatIfColumn::Mode).toStdString() == analyzer::fp8_mode_name(p.mode));
        CHECK(cell_text(table, row, WhatIfColumn::Implementation).toStdString() == p.implementation);
        if (!p.unavailable.empty()) {
            ++unavailable;
            CHECK(cell_text(table, row, WhatIfColumn::Bf16Step).toStdString() == p.unavailable);
            CHECK(table.columnSpan(row, static_cast<int>(WhatIfColumn::Bf16Step)) > 1);
            continue;
        }
        CHECK(cell_text(table, row, WhatIfColumn::Bf16Step) == ms(p.bf16_step_ns));
        CHECK(cell_text(table, row, WhatIfColumn::GemmBf16) == ms(p.gemm_bf16_ns));
        CHECK(cell_text(table, row, WhatIfColumn::GemmFp8) == ms(p.gemm_fp8_ns));
        CHECK(cell_text(table, row, WhatIfColumn::Bookkeeping)
            == ms(p.mode == analyzer::Fp8Mode::Eager ? p.bookkeeping_host_ns : p.bookkeeping_gpu_ns));
        // The predicted step with its interval, and the speed-up with its own.
        const QString step = cell_text(table, row, WhatIfColumn::Fp8Step);
        CHECK(step.startsWith(ms(p.step_ns) + QStringLiteral(" (")));
        CHECK(step.contains(QString::number(static_cast<double>(p.step_low_ns) / 1e6, 'f', 2) + QLatin1Char('-')
            + QString::number(static_cast<double>(p.step_high_ns) / 1e6, 'f', 2)));
        CHECK(cell_text(table, row, WhatIfColumn::Speedup)
                  .startsWith(QString::number(p.speedup, 'f', 2) + QStringLiteral("x (")));
    }
    // Every shipped profile has eager figures now (rowwise since 2026-11-27), so no row is unavailable; a profile
    // without them would show the analyzer's reason in its row (checked above when there is one).
    CHECK(unavailable == 0);

    // The pick is highlighted (and only it), and the advice is the analyzer's sentence.
    for (int row = 0; row < table.rowCount(); ++row) {
        INFO("row " << row);
        const QTableWidgetItem* recipe = table.item(row, static_cast<int>(WhatIfColumn::Recipe));
        const bool best = static_cast<size_t>(row) == *expected.best;
        CHECK(recipe->font().bold() == best);
        CHECK((recipe->background().color() == gui::Fp8WhatIfPanel::best_color()) == best);
    }
    CHECK(panel->advice_text().contains(QString::fromStdString(expected.advice).toHtmlEscaped()));
    CHECK_FALSE(expected.advice.empty());

    // The numerics: every operand with a histogram, most flushed first, and the sentence on the hurt ones.
    const QTableWidget& operands = panel->operands();
    REQUIRE(operands.rowCount() == static_cast<int>(expected.operands.size()));
    for (size_t i = 0; i < expected.operands.size(); ++i) {
        const auto cells = present::whatif_operand_cells(expected.operands[i]);
        for (int column = 0; column < operands.columnCount(); ++column)
            CHECK(
                operands.item(static_cast<int>(i), column)->text().toStdString() == cells[static_cast<size_t>(column)]);
    }
    CHECK(panel->hurt_text().contains(QString::fromStdString(present::whatif_hurt_sentence(expected)).toHtmlEscaped()));
}

TEST_CASE("dashboard: the FP8 what-if section is hidden for an FP8 run", "[gui][dashboard][whatif]")
{
    const auto session = open_session(sample_trace("zoo/torchao_tensorwise_clean.sqlite"));
    // The analyzer refuses an FP8 run, and says why.
    CHECK_THAT(session->run->fp8_whatif.not_applicable, Catch::Matchers::Contains("already runs FP8 GEMMs"));

    gui::FindingsModel findings;
    gui::DashboardView dashboard(findings);
    dashboard.show();
    // A BF16 run first, so that the section has been shown: the FP8 run then hides it.
    dashboard.set_session(open_session(sample_trace("zoo/bf16_clean_ref.sqlite")));
    auto* panel = dashboard.findChild<gui::Fp8WhatIfPanel*>();
    REQUIRE(panel);
    REQUIRE(panel->isVisible());
    dashboard.set_session(session);
    CHECK_FALSE(panel->isVisible());
}
