// Every item model of the viewer under QAbstractItemModelTester, filled from real traces (the H100 drift pair) and
// from a scenario with a known layout, with the rows checked against the analyzer's figures.
#include "gui_scenarios.hpp"

#include "models/display_text.hpp"
#include "models/findings_model.hpp"
#include "models/kernels_model.hpp"
#include "models/steps_model.hpp"
#include "models/tensor_sites_model.hpp"
#include "models/timeline_rows.hpp"

#include <QBrush>
#include <QFont>

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::testing;
using gui::FindingsModel;
using gui::StepsModel;

namespace {

std::shared_ptr<const gui::Session> drift_pair()
{
    static const auto session
        = open_session(sample_trace("compare/h100-drift-fp8.sqlite"), sample_trace("compare/h100-drift-bf16.sqlite"));
    return session;
}

QString cell(const QAbstractItemModel& model, int row, int column, int role = Qt::DisplayRole)
{
    return model.data(model.index(row, column), role).toString();
}

} // namespace

TEST_CASE("findings model: drift findings first, then the run's own numerics, then recommendations by saving",
    "[gui][models]")
{
    FindingsModel model;
    ModelCheck check(&model);
    const auto session = drift_pair();
    REQUIRE(session->compare);
    model.set_session(session);
    CHECK(check.problems().isEmpty());

    const analyzer::CompareResult& compare = *session->compare;
    const auto& recommendations = session->run->what_if.recommendations;
    const int drift_rows = static_cast<int>(compare.flagged.size());
    const auto& numerics = session->run->report.numerics.findings;
    const int numerics_rows = static_cast<int>(numerics.size());
    // One row per flagged tensor, the loss row (the pair's loss delta is over 1%), one per numerics finding of the run
    // judged alone (issue 43: the drifting run is at risk), one per recommendation.
    REQUIRE(numerics_rows > 0);
    REQUIRE(model.rowCount() == drift_rows + 1 + numerics_rows + static_cast<int>(recommendations.size()));
    REQUIRE(compare.first_divergent);
    const analyzer::CompareSite& first = compare.sites[*compare.first_divergent];
    CHECK(cell(model, 0, FindingsModel::Kind) == QStringLiteral("first divergent tensor"));
    CHECK(cell(model, 0, FindingsModel::Finding).toStdString().starts_with(first.label));
    // The pair's drift was planted at step 14; the recalibrated rule (docs/analysis.md "Compare") finds it there (step
    // 15 before).
    CHECK(cell(model, 0, FindingsModel::Where) == QStringLiteral("from step 14"));
    CHECK(model.target(0).run_site_id == first.run_site_id);
    CHECK(model.target(0).step == 14);
    CHECK(cell(model, drift_rows, FindingsModel::Kind) == QStringLiteral("loss delta"));
    // One figure, one value (issue 45): the pair's loss delta as compare and check write it.
    CHECK(cell(model, drift_rows, FindingsModel::Finding).contains(QStringLiteral("2.50%")));
    CHECK(cell(model, drift_rows + 1, FindingsModel::Kind) == QStringLiteral("numerics at risk"));
    CHECK(model.target(drift_rows + 1).step == numerics.front().onset_step);
    CHECK(model.target(drift_rows + 1).run_site_id == numerics.front().site_id);

    const int top = drift_rows + 1 + numerics_rows;
    CHECK(cell(model, top, FindingsModel::Finding).toStdString() == recommendations.front().title);
    CHECK(model.data(model.index(top, FindingsModel::Saving), FindingsModel::kSortRole).toLongLong()
        == recommendations.front().saving_per_step_ns);
    const gui::FindingTarget target = model.target(top);
    CHECK(target.step == recommendations.front().worst_step->step_index);
    CHECK(target.cause == analyzer::BubbleCause::Launch); // CUDA Graphs: idle caused by launch
    CHECK_FALSE(model.target(-1).step);
    CHECK_FALSE(model.target(model.rowCount()).step);

    model.set_session(nullptr);
    CHECK(model.rowCount() == 0);
    CHECK(check.problems().isEmpty());
}

TEST_CASE("findings model: a trace alone has only its recommendations", "[gui][models]")
{
    FindingsModel model;
    ModelCheck check(&model);
    const auto session = open_session(write_layout_trace("findings-layout"));
    model.set_session(session);
    CHECK(model.rowCount() == static_cast<int>(session->run->what_if.recommendations.size()));
    for (int row = 0; row < model.rowCount(); ++row)
        CHECK(cell(model, row, FindingsModel::Kind) == QStringLiteral("performance"));
    CHECK(check.problems().isEmpty());
}

TEST_CASE("steps model: one row per analysed step with the analyzer's figures", "[gui][models]")
{
    StepsModel model;
    ModelCheck check(&model);
    const auto session = open_session(write_layout_trace("steps-layout"));
    model.set_session(session);
    CHECK(check.problems().isEmpty());
    // Steps 0-3, two of warm-up: steps 2 and 3, each 10 ms, busy 290 + 190 + 50 us.
    REQUIRE(model.rowCount() == 2);
    CHECK(cell(model, 0, StepsModel::Step) == QStringLiteral("2"));
    CHECK(cell(model, 1, StepsModel::Step) == QStringLiteral("3"));
    CHECK(cell(model, 0, StepsModel::Duration) == QStringLiteral("10 ms"));
    CHECK(model.data(model.index(0, StepsModel::Idle), StepsModel::kSortRole).toLongLong() == 9'470'000);
    CHECK(cell(model, 0, StepsModel::BubbleRatio) == QStringLiteral("94.7%"));
    CHECK(cell(model, 0, StepsModel::TopCause) == QStringLiteral("host"));
    CHECK(cell(model, 0, StepsModel::Kernels) == QStringLiteral("3"));
    CHECK(cell(model, 0, StepsModel::Syncs) == QStringLiteral("1"));
    CHECK(model.data(model.index(1, 0), StepsModel::kStepIndexRole).toLongLong() == 3);
    CHECK(model.row_of_step(3) == 1);
    CHECK(model.row_of_step(0) == -1);

    model.set_session(drift_pair());
    CHECK(model.rowCount() == 28);
    CHECK(check.problems().isEmpty());
}

TEST_CASE("kernels model: the analyzer's kernel table, sortable and filtered", "[gui][models]")
{
    gui::KernelsModel model;
    ModelCheck check(&model);
    gui::KernelsFilter filter;
    filter.setSourceModel(&model);
    ModelCheck filter_check(&filter);
    const auto session = open_session(write_layout_trace("kernels-layout"));
    model.set_session(session);
    // gemm_a, gemm_b and elementwise, four of each, most total time first: gemm_a (290 us each).
    REQUIRE(model.rowCount() == 3);
    const analyzer::KernelTableResult& table = session->run->kernels;
    CHECK(cell(model, 0, gui::KernelsModel::Name) == QStringLiteral("gemm_a"));
    CHECK(cell(model, 0, gui::KernelsModel::Class) == QStringLiteral("other GEMM"));
    CHECK(cell(model, 0, gui::KernelsModel::Count) == QStringLiteral("4"));
    CHECK(model.data(model.index(0, gui::KernelsModel::Total), gui::KernelsModel::kSortRole).toDouble()
        == static_cast<double>(table.rows[0].total_ns));
    CHECK(cell(model, 0, gui::KernelsModel::Mean) == QStringLiteral("290 µs"));
    CHECK(cell(model, 0, gui::KernelsModel::CountPerStep) == QStringLiteral("1.00")); // two analysed steps, one each
    CHECK(cell(model, 2, gui::KernelsModel::Name) == QStringLiteral("elementwise"));
    CHECK(model.step_index(0) == 2);

    filter.sort(gui::KernelsModel::Total, Qt::AscendingOrder);
    CHECK(cell(filter, 0, gui::KernelsModel::Name) == QStringLiteral("elementwise"));
    filter.set_text(QStringLiteral("GEMM"));
    CHECK(filter.rowCount() == 2);
    filter.set_class(analyzer::KernelClass::Other);
    CHECK(filter.rowCount() == 0);
    filter.set_text({});
    CHECK(filter.rowCount() == 1);
    filter.set_class(std::nullopt);
    CHECK(filter.rowCount() == 3);

    model.set_session(drift_pair());
    CHECK(model.rowCount() == static_cast<int>(drift_pair()->run->kernels.rows.size()));
    CHECK(check.problems().isEmpty());
}

TEST_CASE("tensor sites model: health per site, drift against the reference highlighted", "[gui][models]")
{
    gui::TensorSitesModel model;
    ModelCheck check(&model);
    const auto session = drift_pair();
    model.set_session(session);
    const analyzer::TensorHealth& health = session->run->report.tensor_health;
    REQUIRE(model.rowCount() == static_cast<int>(health.sites.size()));
    CHECK(model.site_id(0) == health.sites[0].site_id);
    CHECK(model.row_of_site(health.sites[3].site_id) == 3);
    CHECK(model.row_of_site(-5) == -1);

    const analyzer::CompareResult& compare = *session->compare;
    const analyzer::CompareSite& first = compare.sites[*compare.first_divergent];
    const int row = model.row_of_site(first.run_site_id);
    REQUIRE(row >= 0);
    CHECK(cell(model, row, gui::TensorSitesModel::Drift) == QStringLiteral("first divergent, from step 14"));
    CHECK(model.data(model.index(row, 0), Qt::FontRole).value<QFont>().bold());
    CHECK(model.data(model.index(row, 0), Qt::ForegroundRole).value<QBrush>().color() == gui::attention_color());
    CHECK(
        model.data(model.index(row, gui::TensorSitesModel::Drift), gui::TensorSitesModel::kSortRole).toDouble() == 14);
    // Every drifting site is drawn in the warning colour, and no other: a flagged tensor's own site and the others of
    // the same tensor it names.
    int warned = 0;
    for (int r = 0; r < model.rowCount(); ++r)
        warned += model.data(model.index(r, 0), Qt::ForegroundRole).isValid() ? 1 : 0;
    size_t drifting = 0;
    for (const size_t i : compare.flagged)
        drifting += 1 + compare.sites[i].also.size();
    CHECK(warned == static_cast<int>(drifting));

    // Without a reference: no drift column text.
    model.set_session(open_session(sample_trace("compare/h100-drift-fp8.sqlite")));
    CHECK(cell(model, 0, gui::TensorSitesModel::Drift).isEmpty());
    CHECK(model.compared(*model.site_id(0)) == nullptr);
    model.set_session(nullptr);
    CHECK(model.rowCount() == 0);
    CHECK(check.problems().isEmpty());
}

TEST_CASE("timeline rows: every lane stacked in track order, found by position", "[gui][models]")
{
    const auto [session, timeline] = open_with_timeline(write_layout_trace("rows-layout"));
    const gui::TimelineRows rows(timeline->index);
    size_t lanes = 0;
    for (const analyzer::TimelineTrack& track : timeline->index.tracks)
        lanes += track.lanes.size();
    REQUIRE(rows.rows().size() == lanes);
    // Steps first, at the top; each further track after a gap.
    CHECK(rows.rows().front().lane == analyzer::LaneRef { 0, 0 });
    CHECK(rows.rows().front().y == 0);
    CHECK(rows.rows().front().label == QStringLiteral("steps"));
    CHECK(rows.rows()[1].y == gui::TimelineRows::kRowHeight + gui::TimelineRows::kTrackGap);
    CHECK(rows.height() == rows.rows().back().y + gui::TimelineRows::kRowHeight);
    CHECK(rows.row_at(0) == &rows.rows()[0]);
    CHECK(rows.row_at(gui::TimelineRows::kRowHeight + 1) == nullptr); // the gap between two tracks
    CHECK(rows.row_at(-1) == nullptr);
    CHECK(rows.row_at(rows.height()) == nullptr);
    const gui::TimelineRow* bubbles = rows.first_row(analyzer::TrackKind::Bubbles, 0);
    REQUIRE(bubbles);
    CHECK(bubbles->label == QStringLiteral("GPU 0 · bubbles"));
    CHECK(rows.row_of(bubbles->lane) == bubbles);
    CHECK(rows.first_row(analyzer::TrackKind::Bubbles, 1) == nullptr);
}
