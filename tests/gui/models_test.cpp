// Every item model of the viewer under QAbstractItemModelTester, filled from real traces (the H100 drift pair) and
// from a scenario with a known layout, with the rows checked against the analyzer's figures.
#include "gui_scenarios.hpp"

#include "models/findings_model.hpp"
#include "models/steps_model.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::testing;
using gui::FindingsModel;
using gui::StepsModel;

namespace {

std::shared_ptr<const gui::Session> drift_pair()
{
    static const auto session = open_session(
        sample_trace("compare/h100-drift-fp8.sqlite"), sample_trace("compare/h100-drift-bf16.sqlite"));
    return session;
}

QString cell(const QAbstractItemModel& model, int row, int column, int role = Qt::DisplayRole)
{
    return model.data(model.index(row, column), role).toString();
}

} // namespace

TEST_CASE("findings model: drift findings first, then recommendations by saving", "[gui][models]")
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
    // One row per flagged site, the loss row (the pair's loss delta is over 1%), one per recommendation.
    REQUIRE(model.rowCount() == drift_rows + 1 + static_cast<int>(recommendations.size()));
    REQUIRE(compare.first_divergent);
    const analyzer::CompareSite& first = compare.sites[*compare.first_divergent];
    CHECK(cell(model, 0, FindingsModel::Kind) == QStringLiteral("first divergent site"));
    CHECK(cell(model, 0, FindingsModel::Finding).toStdString() == first.label);
    CHECK(cell(model, 0, FindingsModel::Where) == QStringLiteral("from step 15"));
    CHECK(model.target(0).run_site_id == first.run_site_id);
    CHECK(model.target(0).step == 15);
    CHECK(cell(model, drift_rows, FindingsModel::Kind) == QStringLiteral("loss delta"));

    const int top = drift_rows + 1;
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
