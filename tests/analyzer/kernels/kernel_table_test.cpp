// The Kernels view's table (docs/analysis.md "Queries for the viewer"): exact figures per name and step on a model made
// in memory, and the recorded FP8 trace against the kernel-class report.
#include "analysis_test_support.hpp"
#include "classes_test_support.hpp"
#include "fp8scope/analyzer/kernels/kernel_table.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

void add_named_kernel(TraceModel& model, int64_t start_ns, int64_t end_ns, uint32_t name, uint32_t short_name)
{
    auto& k = model.kernels;
    k.start_ns.push_back(start_ns);
    k.end_ns.push_back(end_ns);
    k.device_id.push_back(0);
    k.stream_id.push_back(7);
    k.correlation_id.push_back(0);
    k.name.push_back({ name });
    k.short_name.push_back({ short_name });
    k.graph_id.push_back(0);
}

} // namespace

TEST_CASE("kernel table: one row per name with count, duration figures and per-step figures", "[kernel_table]")
{
    TraceModel model;
    model.strings.values = { "elementwise_add", "sm90_xmma_gemm_e4m3e4m3", "", "short_only" };
    add_named_kernel(model, 50, 60, 0, 0); // before the steps: counted in the totals only
    add_named_kernel(model, 100, 120, 0, 0);
    add_named_kernel(model, 200, 230, 0, 0);
    add_named_kernel(model, 300, 400, 1, 1);
    add_named_kernel(model, 1100, 1120, 0, 0);
    add_named_kernel(model, 1200, 1205, 2, 3); // no demangled name: the short name is the row's name
    const KernelTableResult table = kernel_table(model, make_steps({ { 100, 1000 }, { 1000, 2000 } }));

    CHECK(table.steps == 2);
    CHECK(table.kernels == 6);
    CHECK(table.total_ns == 10 + 20 + 30 + 100 + 20 + 5);
    REQUIRE(table.rows.size() == 3);
    // Most total time first: the GEMM (100 ns), then elementwise_add (80 ns), then short_only.
    const KernelTableRow& gemm = table.rows[0];
    CHECK(model.strings[gemm.name] == "sm90_xmma_gemm_e4m3e4m3");
    CHECK(gemm.cls == KernelClass::Fp8Gemm);
    CHECK(gemm.count == 1);

    const KernelTableRow& add = table.rows[1];
    CHECK(model.strings[add.name] == "elementwise_add");
    CHECK(add.cls == KernelClass::Other);
    CHECK(add.count == 4);
    CHECK(add.total_ns == 80);
    CHECK(add.min_ns == 10);
    CHECK(add.max_ns == 30);
    CHECK(add.mean_ns == 20.0);
    CHECK(add.stddev_ns == Approx(std::sqrt(50.0))); // deviations -10, 0, +10, 0
    CHECK(add.count_in_steps == 3);
    CHECK(add.time_in_steps_ns == 70);
    CHECK(add.count_per_step == 1.5);
    CHECK(add.time_per_step_ns == 35.0);
    REQUIRE(add.per_step.size() == 2);
    CHECK(add.per_step[0].step == 0);
    CHECK(add.per_step[0].count == 2);
    CHECK(add.per_step[0].time_ns == 50);
    CHECK(add.per_step[1].step == 1);
    CHECK(add.per_step[1].count == 1);
    CHECK(add.per_step[1].time_ns == 20);

    const KernelTableRow& short_only = table.rows[2];
    CHECK(model.strings[short_only.name] == "short_only");
    REQUIRE(short_only.per_step.size() == 1);
    CHECK(short_only.per_step[0].step == 1);
}

TEST_CASE("kernel table: no steps, no kernels", "[kernel_table]")
{
    TraceModel model;
    model.strings.values = { "k" };
    CHECK(kernel_table(model, {}).rows.empty());
    add_named_kernel(model, 0, 10, 0, 0);
    const KernelTableResult table = kernel_table(model, {});
    REQUIRE(table.rows.size() == 1);
    CHECK(table.rows[0].count == 1);
    CHECK(table.rows[0].count_per_step == 0);
    CHECK(table.rows[0].per_step.empty());
}

TEST_CASE("kernel table: the recorded FP8 trace agrees with the kernel-class report", "[kernel_table][real]")
{
    const TraceModel model = load_recorded("h100-train-fp8.sqlite");
    const Report report = analyze(model);
    const KernelTableResult table = kernel_table(model, report.steps);
    std::array<ClassTotals, kKernelClassCount> by_class {};
    int64_t count = 0;
    for (const KernelTableRow& row : table.rows) {
        by_class[static_cast<size_t>(row.cls)].count += row.count_in_steps;
        by_class[static_cast<size_t>(row.cls)].time_ns += row.time_in_steps_ns;
        count += row.count;
        int64_t per_step = 0;
        for (const KernelStepFigures& s : row.per_step)
            per_step += s.count;
        CHECK(per_step == row.count_in_steps);
    }
    CHECK(count == static_cast<int64_t>(model.kernels.size()));
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        INFO(kernel_class_id(static_cast<KernelClass>(c)));
        CHECK(by_class[c].count == report.kernel_classes.by_class[c].count);
        CHECK(by_class[c].time_ns == report.kernel_classes.by_class[c].time_ns);
    }
}
