// `fp8scope report --merge` and `check --merge` (issue 14 part 3): the ranks of one job analysed as independent jobs,
// one `report RANK.sqlite --format json` each, then merged. Ground truth: the same traces given to `report` and
// `check` together. The merged output must be theirs byte for byte, in text and JSON, with the same verdicts and exit
// codes, on the planted straggler and on ranks of two hosts with a clock skew and FP8 scales.
#include "cli_test_support.hpp"
#include "rank_test_traces.hpp"

#include "fp8scope/format/schema.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using fp8scope::testing::RankTrace;

namespace {

// Each trace's JSON report, written beside it as the per-rank jobs of docs/multi-rank.md do; returns their paths.
std::vector<std::string> write_rank_reports(const std::vector<std::string>& traces)
{
    std::vector<std::string> reports;
    for (const std::string& trace : traces) {
        reports.push_back(trace.substr(0, trace.size() - std::string(".sqlite").size()) + ".json");
        write_file(reports.back(), run_fp8scope_ok({ "report", trace, "--warmup", "0", "--format", "json" }));
    }
    return reports;
}

// Ranks 0 and 1 on host a, rank 2 on host b, whose clock reads 5 ms ahead. Rank 2 arrives 300 ns late at each of
// three all-reduces. Every rank has FP8 scales of one site at steps 1 and 2: 1/3, and at step 2 rank 2 has 0.1 + 0.2
// (a mismatch, with a double that prints with 17 digits); rank 1 has a sample with only a scale, and that is infinite.
std::vector<std::string> write_two_host_ranks(const std::string& dir)
{
    std::vector<RankTrace> ranks;
    ranks.reserve(3);
    for (int32_t rank = 0; rank < 3; ++rank)
        ranks.emplace_back(rank, std::vector<int64_t> { 0, 10'000, 20'000 }, 3, rank < 2 ? "a" : "b");
    ranks[2].s.session().utc_epoch_ns += 5'000'000;
    std::vector<std::string> paths;
    for (int32_t rank = 0; rank < 3; ++rank) {
        RankTrace& r = ranks[static_cast<size_t>(rank)];
        for (const int64_t start : { 1000, 3000, 11'000 })
            r.collective(start + (rank == 2 ? 300 : 0), start + 1000 + 5 * rank);
        r.kernel(6000, 8000);
        const int64_t site = r.s.tensor_site("encoder.fc1", schema::TensorRole::Weight, schema::Dtype::BFloat16, 8, 8);
        for (const int64_t step : { 1, 2 }) {
            TensorStatsRow row;
            row.site_id = site;
            row.step = step;
            row.timestamp_ns = step * 10'000 - 5000;
            row.scale_inv = (rank == 2 && step == 2) ? 0.1 + 0.2 : 1.0 / 3.0;
            r.s.tensor_stats(row);
        }
        if (rank == 1) {
            TensorStatsRow row;
            row.site_id = site;
            row.step = 2;
            row.timestamp_ns = 16'000;
            row.scale = std::numeric_limits<double>::infinity();
            r.s.tensor_stats(row);
        }
        paths.push_back(dir + "/rank" + std::to_string(rank) + ".sqlite");
        write_rank(r, paths.back());
    }
    return paths;
}

} // namespace

TEST_CASE("report --merge of per-rank JSON reports is the report of their traces, byte for byte", "[cli][ranks]")
{
    const std::string straggler_dir = scratch_dir("merge_straggler");
    const std::string two_hosts_dir = scratch_dir("merge_two_hosts");
    for (const auto& traces : { write_straggler_ranks(straggler_dir), write_two_host_ranks(two_hosts_dir) }) {
        const std::vector<std::string> reports = write_rank_reports(traces);
        const auto rank2 = nlohmann::json::parse(read_text_file(reports[2]));
        CHECK(rank2["schema"] == "fp8scope.report/2"); // the report of one trace, with its rank summary added
        CHECK(rank2["rank_summary"]["schema"] == "fp8scope.rank_summary/2");
        CHECK(rank2["rank_summary"]["rank"] == 2);
        CHECK(rank2["rank_summary"]["path"] == traces[2]);
        for (const char* format : { "text", "json" }) {
            INFO(traces[0] << ", --format " << format);
            const std::string direct
                = run_fp8scope_ok(with({ "report" }, with(traces, { "--warmup", "0", "--format", format })));
            CHECK(direct.starts_with(format == std::string("text") ? "fp8scope report: 3 ranks" : "{"));
            CHECK(run_fp8scope_ok(with({ "report", "--merge" }, with(reports, { "--format", format }))) == direct);
        }
    }
    // The infinite scale is written as a string (JSON has no infinity) and read back as one.
    const auto rank1 = nlohmann::json::parse(read_text_file(two_hosts_dir + "/rank1.json"))["rank_summary"];
    REQUIRE(rank1["scales"].size() == 3);
    CHECK(rank1["scales"][2]["is_scale_inv"] == false);
    CHECK(rank1["scales"][2]["value"] == "inf");
    // The two-host set shows what it holds: the skew found, rank 2 last, the scale mismatch with both values.
    const std::string merged = run_fp8scope_ok({ "report", "--merge", two_hosts_dir, "--format", "json" });
    const auto json = nlohmann::json::parse(merged);
    CHECK(json["clock"]["aligned_by_collectives"] == true);
    CHECK(json["clock"]["hosts"][1]["offset_ns"] == -5'000'000 - 10);
    CHECK(json["stragglers"]["by_kind"][0]["most_often_last"] == 2);
    CHECK(json["scales"]["compared"] == 2); // rank 1's second sample at step 2 is on no other rank
    CHECK(json["scales"]["mismatches"] == 1);
    CHECK(json["scales"]["first"]["value_b"] == 0.1 + 0.2);
    // A directory of reports is every *.json in it (the traces beside them are not read): the same bytes.
    CHECK(merged == run_fp8scope_ok({ "report", two_hosts_dir, "--warmup", "0", "--format", "json" }));
}

TEST_CASE("check --merge gives the verdicts and exit codes of check on the traces", "[cli][ranks]")
{
    const std::string dir = scratch_dir("merge_check");
    const auto traces = write_straggler_ranks(dir);
    const auto reports = write_rank_reports(traces);
    // Straggler waits of 2.5 us (rank 1, step 2); bubble ratios up to 0.950 (rank 1).
    for (const std::vector<std::string>& budgets : { std::vector<std::string> { "--max-straggler-wait", "2500ns" },
             { "--max-straggler-wait", "2us", "--max-bubble-ratio", "0.95" }, { "--max-bubble-ratio", "0.5" } }) {
        const auto direct = run_fp8scope(with(with({ "check" }, traces), with(budgets, { "--warmup", "0" })));
        const auto merged = run_fp8scope(with(with({ "check", "--merge" }, reports), budgets));
        INFO(direct.out << direct.err << merged.err);
        CHECK(merged.exit_code == direct.exit_code);
        CHECK(merged.out == direct.out);
        CHECK(merged.err == direct.err);
    }
    CHECK(
        run_fp8scope(with(with({ "check", "--merge" }, reports), { "--max-straggler-wait", "2500ns" })).exit_code == 0);
    CHECK(run_fp8scope(with(with({ "check", "--merge" }, reports), { "--max-straggler-wait", "2us" })).exit_code == 1);
    // JUnit too names the rank and the step, as over the traces.
    const auto failed
        = run_fp8scope({ "check", "--merge", dir, "--max-bubble-ratio", "0.5", "--junit", dir + "/c.xml" });
    CHECK(failed.exit_code == 1);
    CHECK(read_text_file(dir + "/c.xml").find("rank 1, worst step 2: 1.000") != std::string::npos);
}

TEST_CASE("check --merge: ranks without a matched collective fail the straggler budget", "[cli][ranks]")
{
    // A gate never passes for lack of data: two ranks with compute only.
    const std::string dir = scratch_dir("merge_check_nodata");
    write_rank_reports(write_compute_only_ranks(dir));
    const auto no_data = run_fp8scope({ "check", "--merge", dir, "--max-straggler-wait", "1s" });
    CHECK(no_data.exit_code == 1);
    CHECK(no_data.out.find("no collective is matched across the ranks") != std::string::npos);
}

TEST_CASE("merged ranks fewer than the world size: a warning names the missing ones", "[cli][ranks]")
{
    const std::string dir = scratch_dir("merge_missing");
    const auto reports = write_rank_reports(write_straggler_ranks(dir));
    const auto merged = run_fp8scope({ "report", "--merge", reports[0], reports[2] });
    CHECK(merged.exit_code == 0);
    CHECK(merged.out.starts_with("fp8scope report: 2 ranks of one job (world size 3)\n"));
    CHECK(merged.err == "fp8scope: warning: 2 ranks of world size 3: the figures across ranks leave out rank 1\n");
    // The same over traces.
    CHECK(run_fp8scope({ "report", dir + "/rank0.sqlite", dir + "/rank2.sqlite", "--warmup", "0" }).err == merged.err);
}

TEST_CASE("report --merge and check --merge: usage errors", "[cli][ranks]")
{
    const std::string dir = scratch_dir("merge_usage");
    const auto reports = write_rank_reports(write_straggler_ranks(dir));
    const std::vector<std::vector<std::string>> bad {
        { "report", "--merge", dir, "--steps", "1:2" }, // the selection was applied when the reports were written
        { "report", "--merge", dir, "--warmup", "0" },
        { "check", "--merge", dir, "--device", "0", "--max-bubble-ratio", "0.5" },
        { "report", "--merge", dir, "--format", "md" },
        { "check", "--merge", dir }, // no budget
        { "check", "--merge", dir, "--max-syncs-per-step", "1" }, // a budget of one trace
        { "report", "--merge" },
    };
    for (const auto& args : bad) {
        const auto result = run_fp8scope(args);
        INFO(args[0] << " " << args.back() << ": " << result.err);
        CHECK(result.exit_code == 2);
        CHECK(result.out.empty());
        CHECK(result.err.starts_with("fp8scope: usage error: "));
    }
}
