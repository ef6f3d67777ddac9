// One figure, one name, one value (issue 45 item 4), on committed traces: each figure is read from every place that
// shows it and compared. The sync idle (report's idle by cause and its sync table, in text, Markdown, HTML, JSON and
// CSV, and compare's idle by cause), the loss delta (compare and check, in every format), and compare's launch +
// host-in-launch idle, which is not the idle cause "launch" and no longer shares its name.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using Catch::Matchers::Contains;

namespace {

const std::string kTraces = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
const std::string kSyncs = kTraces + "h100-sample-syncs.sqlite";
const std::string kDriftRun = kTraces + "compare/h100-drift-fp8.sqlite";
const std::string kDriftRef = kTraces + "compare/h100-drift-bf16.sqlite";
const std::string kCleanRun = kTraces + "compare/h100-clean-fp8.sqlite";
const std::string kCleanRef = kTraces + "compare/h100-clean-bf16.sqlite";

nlohmann::json json_of(const std::vector<std::string>& args)
{
    return nlohmann::json::parse(run_fp8scope_ok(args));
}

std::string ms(double ns)
{
    return fmt::format("{:.3f} ms", ns / 1e6);
}

std::string percent(double fraction)
{
    return fmt::format("{:.2f}%", 100 * fraction);
}

} // namespace

TEST_CASE("one figure, one value: the sync idle reads the same in report's idle by cause and sync table, in every "
          "format, and in compare (issue 45)",
    "[cli][report][compare]")
{
    const nlohmann::json report = json_of({ "report", kSyncs, "--format", "json" });
    const double sync_ns = report.at("totals").at("idle_by_cause_ns").at("sync").get<double>();
    const double caused_ns = report.at("syncs").at("idle_caused_ns").get<double>();
    REQUIRE(sync_ns > caused_ns); // a call just before a step caused some of it: the two figures differ
    const std::string sync = ms(sync_ns), caused = ms(caused_ns);
    CHECK(sync == "1.098 ms");
    const std::string text = run_fp8scope_ok({ "report", kSyncs, "--color", "never" });
    CHECK_THAT(text, Contains("idle by cause    sync " + sync + " ("));
    CHECK_THAT(text,
        Contains("Host-blocking syncs: 90 in the steps, 5.0 per step; sync idle " + sync
            + ", of which the calls in the steps caused " + caused));
    for (const char* format : { "md", "html" })
        CHECK_THAT(run_fp8scope_ok({ "report", kSyncs, "--format", format }),
            Contains("sync idle " + sync + ", of which the calls in the steps caused " + caused));
    // The CSV's per-step rows add up to it.
    const auto csv = lines_of(run_fp8scope_ok({ "report", kSyncs, "--format", "csv" }));
    REQUIRE(csv.size() > 1);
    REQUIRE(csv[0].find(",sync_ns,") != std::string::npos);
    const size_t column = static_cast<size_t>(
        std::count(csv[0].begin(), csv[0].begin() + static_cast<std::ptrdiff_t>(csv[0].find(",sync_ns,") + 1), ','));
    double csv_sum = 0;
    for (size_t i = 1; i < csv.size(); ++i) {
        size_t at = 0;
        for (size_t c = 0; c < column; ++c)
            at = csv[i].find(',', at) + 1;
        csv_sum += std::stod(csv[i].substr(at, csv[i].find(',', at) - at));
    }
    CHECK(csv_sum == Approx(sync_ns).epsilon(1e-9));
    // compare gives it per step: the same total over the same steps.
    const nlohmann::json compared = json_of({ "compare", kSyncs, kSyncs, "--format", "json" });
    const auto& per_step = compared.at("performance");
    const double steps = per_step.at("run").at("steps").get<double>();
    CHECK(per_step.at("idle_by_cause_ns").at("sync").at("run").get<double>() * steps == Approx(sync_ns).epsilon(1e-9));
}

TEST_CASE("one figure, one value: the loss delta reads the same in compare and check, in every format (issue 45)",
    "[cli][compare][check]")
{
    const nlohmann::json compared = json_of({ "compare", kDriftRun, kDriftRef, "--format", "json" });
    const auto& loss = compared.at("loss");
    const std::string delta = percent(loss.at("final_relative_delta").get<double>());
    const std::string worst = percent(loss.at("max_relative_delta").get<double>());
    const int64_t worst_step = loss.at("max_step").get<int64_t>();
    CHECK(delta == "2.50%");
    const std::string sentence = "loss delta " + delta + " (scalar "; // the name is escaped in XML
    for (const char* format : { "text", "md", "html", "junit" })
        CHECK_THAT(run_fp8scope_ok({ "compare", kDriftRun, kDriftRef, "--format", format }), Contains(sentence));
    CHECK_THAT(run_fp8scope_ok({ "compare", kDriftRun, kDriftRef }),
        Contains(fmt::format("largest per-step delta {} at step {}", worst, worst_step)));

    // check: the same figure and the same worst step, in text, Markdown and JUnit.
    const std::string dir = scratch_dir("one_figure_loss");
    const auto check = run_fp8scope(
        { "check", kDriftRun, "--ref", kDriftRef, "--md", dir + "/check.md", "--junit", dir + "/check.xml" });
    CHECK(check.exit_code == 1);
    CHECK_THAT(check.out, Contains("FAIL max-loss-delta              " + delta + " (budget    1.00%;"));
    CHECK_THAT(check.out, Contains(fmt::format("worst step {}: {})", worst_step, worst)));
    CHECK_THAT(read_text_file(dir + "/check.md"), Contains(delta));
    CHECK_THAT(read_text_file(dir + "/check.xml"), Contains(delta));
    std::filesystem::remove_all(dir);
}

TEST_CASE("one figure, one value: compare's launch + host-in-launch idle is named apart from the idle cause launch, "
          "and each equals report's (issue 45)",
    "[cli][compare]")
{
    const nlohmann::json compared = json_of({ "compare", kCleanRun, kCleanRef, "--format", "json" });
    const auto& p = compared.at("performance");
    const std::string text = run_fp8scope_ok({ "compare", kCleanRun, kCleanRef, "--color", "never" });
    const double launch_and_host = p.at("run").at("launch_idle_ns").get<double>();
    const double launch = p.at("idle_by_cause_ns").at("launch").at("run").get<double>();
    REQUIRE(launch_and_host > launch); // host idle inside the launches
    CHECK_THAT(text,
        Contains(fmt::format("  {:<30} {:>12} {:>12}  added", "launch + host-in-launch idle", ms(launch_and_host),
            ms(p.at("ref").at("launch_idle_ns").get<double>()))));
    CHECK_THAT(text, Contains(fmt::format("  {:<30} {:>12}", "idle, cause launch", ms(launch))));
    CHECK(text.find("launch idle per step") == std::string::npos);
    // The idle cause launch per step is report's total over the same steps, for each trace.
    for (const auto& [trace, side] : { std::pair { kCleanRun, "run" }, std::pair { kCleanRef, "ref" } }) {
        const nlohmann::json report = json_of({ "report", trace, "--format", "json" });
        const double steps = p.at(side).at("steps").get<double>();
        CHECK(p.at("idle_by_cause_ns").at("launch").at(side).get<double>() * steps
            == Approx(report.at("totals").at("idle_by_cause_ns").at("launch").get<double>()).epsilon(1e-9));
    }
}
