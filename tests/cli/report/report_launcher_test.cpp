// A launcher's trace among the ranks' (seen on the H100: torchrun 2.11's agent initializes CUDA, so
// `fp8scope record -o DIR/rank%r.sqlite -- torchrun ...` leaves `ranknorank.sqlite`, no rank and no kernel, beside
// rank0.sqlite and rank1.sqlite). `report DIR` and `report --merge` of the per-rank JSON reports analyse the ranks
// and name it as left out; with only launchers there is nothing to analyse: one line, exit 3.
#include "cli_test_support.hpp"
#include "rank_test_traces.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using fp8scope::testing::RankTrace;

TEST_CASE("report DIR and report --merge leave a launcher's trace out and name it", "[cli][ranks]")
{
    const std::string dir = scratch_dir("ranks_launcher");
    const std::vector<std::string> ranks = write_straggler_ranks(dir);
    const std::string launcher = dir + "/ranknorank.sqlite";
    write_rank(RankTrace(-1, {}, -1), launcher);

    const std::string text = run_fp8scope_ok({ "report", dir, "--warmup", "0" });
    CHECK(text.starts_with("fp8scope report: 3 ranks of one job (world size 3)"));
    CHECK(text.find("  left out: " + launcher + ": no rank and no GPU work: a launcher process, not a rank\n")
        != std::string::npos);
    const auto json = nlohmann::json::parse(run_fp8scope_ok({ "report", dir, "--warmup", "0", "--format", "json" }));
    REQUIRE(json["left_out"].size() == 1);
    CHECK(json["left_out"][0]["trace"] == launcher);
    CHECK(json["ranks"].size() == 3);
    CHECK(json["stragglers"]["by_kind"][0]["most_often_last"] == 2);

    // The array-job path: one JSON report per trace, the launcher's too, then --merge of the directory of reports.
    const std::string reports = scratch_dir("ranks_launcher_reports");
    for (const std::string& trace : { ranks[0], ranks[1], ranks[2], launcher }) {
        const std::string name = trace.substr(trace.rfind('/') + 1);
        write_file(reports + "/" + name.substr(0, name.size() - 7) + ".json",
            run_fp8scope({ "report", trace, "--warmup", "0", "--format", "json" }).out);
    }
    const auto merged = nlohmann::json::parse(run_fp8scope_ok({ "report", "--merge", reports, "--format", "json" }));
    REQUIRE(merged["left_out"].size() == 1);
    CHECK(merged["left_out"][0]["trace"] == reports + "/ranknorank.json");
    CHECK(merged["ranks"] == json["ranks"]);
    CHECK(merged["steps"] == json["steps"]);

    // Only launchers: nothing to analyse is an error, never an empty report.
    const auto alone = run_fp8scope({ "report", launcher, launcher });
    CHECK(alone.exit_code == 3);
    CHECK(alone.out.empty());
    CHECK(alone.err.starts_with("fp8scope: error: no rank among the traces: "));
}
