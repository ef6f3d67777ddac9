// `fp8scope report` and `fp8scope check` over several traces (issue 14): the ranks of one job, written by the scenario
// builder into a scratch directory, with a planted straggler whose figures are known
// (tests/analyzer/ranks/ranks_test.cpp checks the same rules on the analyzer; here: what the CLI shows of them, and how
// it refuses).
#include "cli_test_support.hpp"
#include "rank_test_traces.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using fp8scope::testing::RankTrace;

TEST_CASE("report of several ranks: the straggler, waits, communication and clocks as JSON", "[cli][ranks]")
{
    const auto paths = write_straggler_ranks(scratch_dir("ranks_json"));
    // Given out of order: the report is by rank.
    const auto json = nlohmann::json::parse(
        run_fp8scope_ok({ "report", paths[2], paths[0], paths[1], "--warmup", "0", "--format", "json" }));
    CHECK(json["schema"] == "fp8scope.ranks/1");
    CHECK(json["world_size"] == 3);
    REQUIRE(json["ranks"].size() == 3);
    CHECK(json["ranks"][0]["trace"] == paths[0]);
    CHECK(json["ranks"][2]["steps"] == 2);
    CHECK(json["ranks"][2]["times_last"] == 2);
    CHECK(json["ranks"][2]["caused_wait_ns"] == 600 + 500 + 1000 + 2500);
    CHECK(json["ranks"][0]["wait_ns"] == 1600);
    // Rank 0: the gap [3000, 7500) is mostly its all-reduce (comm whole, 4500 ns); step 2's gap [10000, 20000) has
    // its all-gather for 1000 ns, under half: split at the collective's cover, 1000 ns comm. Rank 1: 2900 ns of its
    // 8000 ns gap in step 1 and 3000 ns in step 2, both split so.
    CHECK(json["ranks"][0]["totals"]["idle_by_cause_ns"]["comm"] == 4500 + 1000);
    CHECK(json["ranks"][0]["totals"]["bubble_ratio"] == 0.875); // 2500 ns of compute in 20 us
    CHECK(json["ranks"][1]["totals"]["idle_by_cause_ns"]["comm"] == 2900 + 3000);
    CHECK(json["common_steps"] == nlohmann::json::array({ 1, 2 }));
    const auto& step1 = json["steps"][0];
    CHECK(step1["step"] == 1);
    CHECK(step1["slowest_rank"] == 2);
    CHECK(step1["slowest_by"] == "caused_wait");
    CHECK(step1["ranks"][0]["comm_ns"] == 3000);
    CHECK(step1["ranks"][1]["exposed_comm_ns"] == 2900);
    CHECK(step1["ranks"][2]["comm_ns"] == 2400);
    CHECK(step1["ranks"][0]["wait_ns"] == 600);
    CHECK(step1["ranks"][1]["wait_ns"] == 500);
    CHECK(step1["ranks"][2]["caused_wait_ns"] == 1100);
    CHECK(json["steps"][1]["ranks"][1]["wait_ns"] == 2500);
    const auto& stragglers = json["stragglers"];
    CHECK(stragglers["matched_collectives"] == 2);
    REQUIRE(stragglers["by_kind"].size() == 2);
    const auto& all_reduce = stragglers["by_kind"][0];
    CHECK(all_reduce["kind"] == "all_reduce");
    CHECK(all_reduce["count"] == 1);
    CHECK(all_reduce["most_often_last"] == 2);
    CHECK(all_reduce["ranks"][2]["times_last"] == 1);
    CHECK(all_reduce["ranks"][0]["wait_ns"] == 600);
    CHECK(all_reduce["ranks"][1]["max_wait_ns"] == 500);
    const auto& all_gather = stragglers["by_kind"][1];
    CHECK(all_gather["kind"] == "all_gather");
    CHECK(all_gather["ranks"][0]["max_wait_ns"] == 1000); // clipped to its kernel
    CHECK(all_gather["ranks"][1]["wait_ns"] == 2500);
    CHECK(stragglers["longest_wait"]["kind"] == "all_gather");
    CHECK(stragglers["longest_wait"]["step"] == 2);
    CHECK(stragglers["longest_wait"]["last_rank"] == 2);
    CHECK(stragglers["longest_wait"]["max_wait_ns"] == 2500);
    CHECK(stragglers["longest_step_wait"]["step"] == 2);
    CHECK(stragglers["longest_step_wait"]["rank"] == 1);
    CHECK(stragglers["longest_step_wait"]["wait_ns"] == 2500);
    CHECK(json["clock"]["reference_rank"] == 0);
    CHECK(json["clock"]["aligned_by_collectives"] == false);
    REQUIRE(json["clock"]["hosts"].size() == 1);
    CHECK(json["clock"]["hosts"][0]["host"] == "node0");
    CHECK(json["clock"]["hosts"][0]["ranks"] == nlohmann::json::array({ 0, 1, 2 }));
    CHECK(json["clock"]["hosts"][0]["offset_ns"] == 0);
    CHECK(json["scales"]["compared"] == 0);
    CHECK(json["scales"]["first"].is_null());
}

TEST_CASE("report of several ranks as text, and of a directory", "[cli][ranks]")
{
    const std::string dir = scratch_dir("ranks_text");
    const auto paths = write_straggler_ranks(dir);
    const std::string text = run_fp8scope_ok({ "report", paths[0], paths[1], paths[2], "--warmup", "0" });
    INFO(text);
    CHECK(text.starts_with("fp8scope report: 3 ranks of one job (world size 3)\n"));
    // Rank 2 ran 3.5 us of kernels before the all-reduce, the others 2 and 1 us: it was late by compute.
    CHECK(text.find("  step 1: slowest rank 2 (the others waited longest for it), lead cause compute\n")
        != std::string::npos);
    CHECK(text.find("    rank    0  step    10.000 us  comm     3.000 us  exposed     3.000 us  wait       600 ns\n")
        != std::string::npos);
    CHECK(text.find("  all_reduce: 1 matched, most often last: rank 2\n") != std::string::npos);
    CHECK(
        text.find("    rank    1  last     0  wait     2.500 us in all,     2.500 us at most\n") != std::string::npos);
    CHECK(text.find("  longest wait in one collective: all_gather at step 2 (1 of its kind in the step), rank 2 last, "
                    "2.500 us\n")
        != std::string::npos);
    // The figure check --max-straggler-wait gates, named as such (here the same collective's wait: rank 1's only one
    // in step 2).
    CHECK(text.find("  longest wait in one step: rank 1 in step 2, 2.500 us (what check --max-straggler-wait gates)\n")
        != std::string::npos);
    CHECK(text.find("Clock alignment (reference rank 0; one clock, nothing shifted)\n") != std::string::npos);
    CHECK(text.find("FP8 scale agreement: 0 compared across ranks, 0 mismatches\n") != std::string::npos);
    // The directory stands for its *.sqlite files: the same report.
    CHECK(run_fp8scope_ok({ "report", dir, "--warmup", "0" }) == text);
}

TEST_CASE("report of several ranks refuses traces of different jobs and formats for one trace", "[cli][ranks]")
{
    const std::string dir = scratch_dir("ranks_refused");
    const auto paths = write_straggler_ranks(dir);
    RankTrace stranger(1, { 0, 10'000, 20'000 }, 3, "node0", "python eval.py");
    stranger.collective(4000, 7000);
    write_rank(stranger, dir + "/stranger.sqlite");
    const auto refused = run_fp8scope({ "report", paths[0], dir + "/stranger.sqlite" });
    check_bad_trace(refused);
    CHECK(refused.err.starts_with("fp8scope: error: the traces are of different jobs: '"));
    // The directory holds both jobs: refused the same way, by report and by check.
    check_bad_trace(run_fp8scope({ "report", dir }));
    check_bad_trace(run_fp8scope({ "check", dir, "--max-straggler-wait", "1ms" }));

    const auto md = run_fp8scope({ "report", paths[0], paths[1], "--format", "md" });
    CHECK(md.exit_code == 2);
    CHECK(md.out.empty());
    CHECK(md.err.starts_with("fp8scope: usage error: --format md reads one trace only"));
    const auto empty = run_fp8scope({ "report", scratch_dir("ranks_empty_dir") });
    check_bad_trace(empty);
    CHECK(empty.err.find("no *.sqlite file in the directory") != std::string::npos);
}

TEST_CASE("report of one trace: a directory holding it gives the same bytes", "[cli][ranks]")
{
    const std::string dir = scratch_dir("ranks_single");
    write_small_trace(dir + "/only.sqlite");
    for (const char* format : { "text", "json", "md", "junit" })
        CHECK(run_fp8scope_ok({ "report", dir, "--format", format })
            == run_fp8scope_ok({ "report", dir + "/only.sqlite", "--format", format }));
}

TEST_CASE("check over ranks: the straggler wait and the worst rank's bubble ratio, named in JUnit", "[cli][ranks]")
{
    const std::string dir = scratch_dir("ranks_check");
    const auto paths = write_straggler_ranks(dir);
    const std::vector<std::string> base { "check", paths[0], paths[1], paths[2], "--warmup", "0" };

    const auto pass = run_fp8scope(with(base, { "--max-straggler-wait", "2500ns", "--max-bubble-ratio", "0.95" }));
    INFO(pass.out << pass.err);
    CHECK(pass.exit_code == 0);
    // Both ranks named: the one that waited (the figure's) and the straggler it waited for, as report names it.
    CHECK(pass.out.find("  ok   max-straggler-wait       2.500 us (budget 2.500 us; rank 1 waited 2.500 us in step 2 "
                        "for the straggler, rank 2)\n")
        != std::string::npos);
    // Bubble ratios: rank 0 0.875, rank 1 0.950 (1000 ns of compute in 20 us), rank 2 0.825.
    CHECK(pass.out.find("  ok   max-bubble-ratio            0.950 (budget    0.950; rank 1, worst step 2: 1.000)\n")
        != std::string::npos);

    const std::string junit = dir + "/check.xml";
    const auto fail
        = run_fp8scope(with(base, { "--max-straggler-wait", "2us", "--max-bubble-ratio", "0.5", "--junit", junit }));
    INFO(fail.out << fail.err);
    CHECK(fail.exit_code == 1);
    const std::string xml = read_text_file(junit);
    CHECK(xml.find("<failure message=\"straggler-wait = 2.500 us exceeds the budget 2.000 us; rank 1 waited 2.500 us "
                   "in step 2 for the straggler, rank 2\"/>")
        != std::string::npos);
    const std::string md = dir + "/check.md";
    CHECK(run_fp8scope(with(base, { "--max-straggler-wait", "2us", "--md", md })).exit_code == 1);
    CHECK(read_text_file(md).find("rank 1 waited 2.500 us in step 2 for the straggler, rank 2") != std::string::npos);
    CHECK(xml.find("<failure message=\"bubble-ratio = 0.950 exceeds the budget 0.500; rank 1, worst step 2: 1.000\"/>")
        != std::string::npos);
}

TEST_CASE("check over ranks: no matched collective fails, bad durations and one-trace budgets are usage errors",
    "[cli][ranks]")
{
    const std::string dir = scratch_dir("ranks_check_nodata");
    write_compute_only_ranks(dir);
    const auto no_data = run_fp8scope({ "check", dir, "--warmup", "0", "--max-straggler-wait", "1s" });
    CHECK(no_data.exit_code == 1);
    CHECK(no_data.out.find("FAIL max-straggler-wait") != std::string::npos);
    CHECK(no_data.out.find("no collective is matched across the ranks") != std::string::npos);

    for (const char* bad : { "5", "5 parsecs", "-1ms", "nanms", "" }) {
        const auto result = run_fp8scope({ "check", dir, "--max-straggler-wait", bad });
        INFO(bad << ": " << result.err);
        CHECK(result.exit_code == 2);
    }
    CHECK(run_fp8scope({ "check", dir, "--max-syncs-per-step", "1" }).exit_code == 2);
    const auto one = run_fp8scope({ "check", dir + "/r0.sqlite", "--max-straggler-wait", "1ms" });
    CHECK(one.exit_code == 2);
    CHECK(one.err.find("--max-straggler-wait needs the traces of several ranks") != std::string::npos);
}

TEST_CASE("check over ranks shows each rank's recording warnings, in text, Markdown and JUnit", "[cli][ranks]")
{
    // Rank 1's collector dropped 7 records; rank 0 recorded everything: only rank 1 is named.
    const std::string dir = scratch_dir("ranks_check_warnings");
    RankTrace r0(0), r1(1);
    for (RankTrace* r : { &r0, &r1 }) {
        r->kernel(1000, 3000);
        r->collective(4000, 7000);
    }
    r1.s.dropped({ .timestamp_ns = 5000, .source = schema::DropSource::CuptiNoBuffer, .count = 7, .device_id = 0 });
    write_rank(r0, dir + "/rank0.sqlite");
    write_rank(r1, dir + "/rank1.sqlite");
    const std::string junit = dir + "/check.xml";
    const auto text = run_fp8scope({ "check", dir, "--warmup", "0", "--max-straggler-wait", "1ms", "--junit", junit });
    INFO(text.out << text.err);
    CHECK(text.exit_code == 0);
    const std::string warning = "rank 1 ('" + dir
        + "/rank1.sqlite'): 7 records dropped while recording: the figures "
          "miss them";
    CHECK(text.out.find("  warning: " + warning + "\n") != std::string::npos);
    CHECK(text.out.find("rank 0 (") == std::string::npos);
    CHECK(read_text_file(junit).find("<property name=\"rank_warning\" value=\"rank 1 (&#39;" + dir
              + "/rank1.sqlite&#39;): 7 records dropped while recording: the figures miss them\"/>")
        != std::string::npos);
    const std::string md = dir + "/check.md";
    CHECK(run_fp8scope({ "check", dir, "--warmup", "0", "--max-straggler-wait", "1ms", "--md", md }).exit_code == 0);
    CHECK(read_text_file(md).find("**Warning:** rank 1 (") != std::string::npos);
}

TEST_CASE("check over a real NCCL job's ranks names the waiting rank and the straggler report names (issue 45)",
    "[cli][ranks]")
{
    // Two ranks of a real NCCL job whose rank 1 sleeps (samples/traces/ranks/fp8-straggler): rank 0 does the waiting.
    const std::string ranks = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/ranks/fp8-straggler";
    const auto report = run_fp8scope({ "report", ranks });
    REQUIRE(report.exit_code == 0);
    CHECK(report.out.find("step 2: slowest rank 1 (the others waited longest for it)") != std::string::npos);
    const auto check = run_fp8scope({ "check", ranks, "--max-straggler-wait", "1ms" });
    INFO(check.out << check.err);
    CHECK(check.exit_code == 1);
    CHECK(check.out.find("FAIL max-straggler-wait       35.288 ms (budget 1.000 ms; rank 0 waited 35.288 ms in step 2 "
                         "for the straggler, rank 1)")
        != std::string::npos);
}

TEST_CASE("report or check of two runs that are not ranks suggests compare and --ref (issue 45)", "[cli][ranks]")
{
    const std::string samples = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
    const std::string fp8 = samples + "h100-train-fp8.sqlite", bf16 = samples + "h100-train-bf16.sqlite";
    for (const auto& args : { std::vector<std::string> { "report", fp8, bf16 },
             std::vector<std::string> { "check", fp8, bf16, "--max-bubble-ratio", "0.5" } }) {
        const auto result = run_fp8scope(args);
        INFO(result.err);
        check_bad_trace(result);
        CHECK(result.err.find("to compare two runs use 'fp8scope compare " + fp8 + " " + bf16 + "', or 'fp8scope check "
                  + fp8 + " --ref " + bf16 + "'")
            != std::string::npos);
    }
}
