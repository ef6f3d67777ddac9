// The per-rank JSON that `report --merge` reads is untrusted input (docs/cli.md "Merging per-rank reports"): a rank
// summary round-trips exactly, and every bad file, tampered field or mixed set is exit code 3 with one line on stderr
// naming the file and what is wrong, nothing on stdout.
#include "cli_test_support.hpp"
#include "rank_json/rank_summary_json.hpp"
#include "rank_test_traces.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::cli_test;
using nlohmann::json;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool same_bits(double a, double b)
{
    return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

} // namespace

TEST_CASE("a rank summary round-trips through its JSON exactly, extremes included", "[cli][ranks]")
{
    RankSummary s;
    s.path = "traces/rank 7 \xe2\x9c\x93.sqlite";
    s.rank = 7;
    s.world_size = 64;
    s.host = "node-3";
    s.command_line = "torchrun --nproc-per-node 8 train.py --lr=3e-4";
    s.session_start_utc_ns = kInt64Max; // integers beyond a double's 2^53
    s.step_source = StepSource::Nvtx;
    s.totals = { .step_ns = kInt64Max,
        .busy_ns = kInt64Max - 3,
        .idle_ns = 3,
        .bubble_ratio = 3.0 / double(kInt64Max),
        .cause_ns = { 1, 0, 0, 0, 2 },
        .gap_counts = { 2, 0, 0, 1 },
        .bubble_count = 3,
        .graph_removable_ns = 1 };
    s.steps = { { -5, -kMaxTraceTimeNs, 0, 7, 3, { 0, 1, 2, 3, 4 }, 0.1 + 0.2 },
        { kInt64Max, 0, kMaxTraceTimeNs, 0, 0, {}, 1.0 } };
    s.collectives = { { CollectiveKind::AllToAll, -5, std::numeric_limits<int32_t>::max(),
                          std::numeric_limits<uint32_t>::max(), 3, -kMaxTraceTimeNs, -1 },
        { CollectiveKind::Other, kInt64Max, 0, 0, 0, 5, 5 } };
    s.scales = { { "a · weight", 1, 0, true, 5e-324 }, { "a · weight", 1, 1, false, -kInf },
        { "b", -1, 0, true, std::numeric_limits<double>::quiet_NaN() }, { "b", 2, 0, true, 1.0 / 3.0 } };

    const std::string text = cli::rank_summary_json(s).dump(2);
    const auto back = cli::rank_summary_from_json(json::parse(text), "");
    INFO((back ? text : back.error().message));
    REQUIRE(back);
    CHECK(back->path == s.path);
    CHECK(back->rank == 7);
    CHECK(back->world_size == 64);
    CHECK(back->command_line == s.command_line);
    CHECK(back->session_start_utc_ns == kInt64Max);
    CHECK(back->step_source == StepSource::Nvtx);
    CHECK(back->totals.busy_ns == kInt64Max - 3);
    CHECK(same_bits(back->totals.bubble_ratio, s.totals.bubble_ratio));
    CHECK(back->totals.cause_ns == s.totals.cause_ns);
    CHECK(back->totals.gap_counts == s.totals.gap_counts);
    CHECK(back->totals.graph_removable_ns == 1);
    REQUIRE(back->steps.size() == 2);
    CHECK(back->steps[0].start_ns == -kMaxTraceTimeNs);
    CHECK(back->steps[0].cause_ns == s.steps[0].cause_ns);
    CHECK(same_bits(back->steps[0].bubble_ratio, 0.1 + 0.2));
    CHECK(back->steps[1].index == kInt64Max);
    REQUIRE(back->collectives.size() == 2);
    CHECK(back->collectives[0].kind == CollectiveKind::AllToAll);
    CHECK(back->collectives[0].ordinal == std::numeric_limits<int32_t>::max());
    CHECK(back->collectives[0].device_id == std::numeric_limits<uint32_t>::max());
    CHECK(back->collectives[0].end_ns == -1);
    CHECK(back->collectives[1].kind == CollectiveKind::Other);
    REQUIRE(back->scales.size() == 4);
    CHECK(same_bits(back->scales[0].value, 5e-324));
    CHECK_FALSE(back->scales[1].is_scale_inv);
    CHECK(back->scales[1].value == -kInf);
    CHECK(std::isnan(back->scales[2].value));
    CHECK(same_bits(back->scales[3].value, 1.0 / 3.0));
    CHECK(back->scales[1].site == "a · weight");
    // Written again, the same text.
    CHECK(cli::rank_summary_json(*back).dump(2) == text);
}

TEST_CASE("report --merge refuses bad per-rank JSON with one line naming the file", "[cli][ranks]")
{
    const std::string dir = scratch_dir("merge_bad_input");
    const auto traces = write_straggler_ranks(dir);
    std::vector<std::string> reports;
    for (const std::string& trace : traces) {
        reports.push_back(trace + ".json");
        write_file(reports.back(), run_fp8scope_ok({ "report", trace, "--warmup", "0", "--format", "json" }));
    }
    const json good = json::parse(read_text_file(reports[1]));
    const std::string bad = dir + "/bad.json";

    struct Case {
        const char* what;
        std::function<void(json&)> tamper; // on rank 1's report
        const char* says; // how the line goes on after "fp8scope: error: 'bad.json': "
    };
    const std::vector<Case> cases {
        { "no rank summary", [](json& j) { j.erase("rank_summary"); }, "no rank_summary: not the output of" },
        { "a newer schema", [](json& j) { j["rank_summary"]["schema"] = "fp8scope.rank_summary/3"; },
            "rank_summary.schema: 'fp8scope.rank_summary/3' is not fp8scope.rank_summary/2" },
        { "an older schema (no arrival figures)",
            [](json& j) { j["rank_summary"]["schema"] = "fp8scope.rank_summary/1"; },
            "rank_summary.schema: 'fp8scope.rank_summary/1' is not fp8scope.rank_summary/2" },
        { "a negative duration", [](json& j) { j["rank_summary"]["steps"][0]["comm_ns"] = -1; },
            "rank_summary.steps[0].comm_ns: -1 is out of range (0 to 9223372036854775807)" },
        { "an end before its start", [](json& j) { j["rank_summary"]["steps"][1]["end_ns"] = 0; },
            "rank_summary.steps[1]: end_ns 0 is before start_ns 10000" },
        { "an integer beyond int64",
            [](json& j) { j["rank_summary"]["collectives"][0]["ordinal"] = std::numeric_limits<uint64_t>::max(); },
            "rank_summary.collectives[0].ordinal: 18446744073709551615 is out of range (0 to 2147483647)" },
        { "a time beyond 2^53 ns", [](json& j) { j["rank_summary"]["collectives"][0]["end_ns"] = kMaxTraceTimeNs + 1; },
            "rank_summary.collectives[0].end_ns: 9007199254740993 is out of range" },
        { "a string for an integer", [](json& j) { j["rank_summary"]["rank"] = "1"; },
            "rank_summary.rank: expected an integer, found \"1\"" },
        { "a fraction for an integer", [](json& j) { j["rank_summary"]["steps"][0]["index"] = 1.5; },
            "rank_summary.steps[0].index: expected an integer, found 1.5" },
        { "an unknown kind", [](json& j) { j["rank_summary"]["collectives"][0]["kind"] = "all_reduce_v2"; },
            "rank_summary.collectives[0].kind: \"all_reduce_v2\" is not a known value" },
        { "an object for an array", [](json& j) { j["rank_summary"]["steps"] = json::object(); },
            "rank_summary.steps: expected an array, found an object" },
        { "a cause missing", [](json& j) { j["rank_summary"]["totals"]["idle_by_cause_ns"].erase("comm"); },
            "rank_summary.totals.idle_by_cause_ns.comm: missing" },
        { "a bubble ratio that is not idle / step", [](json& j) { j["rank_summary"]["totals"]["bubble_ratio"] = 0.01; },
            "rank_summary.totals.bubble_ratio: is not idle_ns / step_ns" },
        { "a collective in no step", [](json& j) { j["rank_summary"]["collectives"][0]["step"] = 9; },
            "rank_summary.collectives[0]: step 9 is none of the rank's steps" },
        { "an array", [](json& j) { j = json::array({ 1 }); }, "not a rank's JSON report: expected an object" },
        { "a report of several ranks",
            [](json& j) {
                j = { { "schema", "fp8scope.ranks/1" } };
            },
            "a report of several ranks (fp8scope.ranks/1)" },
    };
    for (const Case& c : cases) {
        json tampered = good;
        c.tamper(tampered);
        write_file(bad, tampered.dump());
        const auto result = run_fp8scope({ "report", "--merge", reports[0], bad, reports[2] });
        INFO(c.what << ": " << result.err);
        check_bad_trace(result);
        CHECK(result.err.starts_with("fp8scope: error: '" + bad + "': " + c.says));
    }
    for (const char* text : { "", "{\"rank_summary\": {oops", "\x89PNG" }) {
        write_file(bad, text);
        const auto result = run_fp8scope({ "report", "--merge", bad });
        INFO(result.err);
        check_bad_trace(result);
        CHECK(result.err.starts_with("fp8scope: error: '" + bad + "': not valid JSON (error at byte "));
    }
    // Larger than the limit: refused by its size, before it is read (a sparse file).
    std::filesystem::resize_file(bad, static_cast<uintmax_t>(cli::kMaxRankSummaryFileBytes) + 1);
    const auto large = run_fp8scope({ "check", "--merge", bad, "--max-straggler-wait", "1ms" });
    check_bad_trace(large);
    CHECK(large.err.find("larger than 1024 MiB") != std::string::npos);
    check_bad_trace(run_fp8scope({ "report", "--merge", dir + "/missing.json" }));
    const auto empty = run_fp8scope({ "report", "--merge", scratch_dir("merge_empty_dir") });
    check_bad_trace(empty);
    CHECK(empty.err.find("no *.json file in the directory") != std::string::npos);
}

TEST_CASE("report --merge and check --merge refuse per-rank reports of different jobs", "[cli][ranks]")
{
    const std::string dir = scratch_dir("merge_jobs");
    std::vector<std::string> reports;
    for (const std::string& trace : write_straggler_ranks(dir)) {
        reports.push_back(trace + ".json");
        write_file(reports.back(), run_fp8scope_ok({ "report", trace, "--warmup", "0", "--format", "json" }));
    }
    const json good = json::parse(read_text_file(reports[1]));
    const std::string other = dir + "/other.json";
    const auto refused = [&](const std::function<void(json&)>& tamper) {
        json summary = good["rank_summary"]; // a bare rank summary is read as well
        tamper(summary);
        write_file(other, summary.dump());
        const auto result = run_fp8scope({ "report", "--merge", reports[0], other });
        check_bad_trace(result);
        check_bad_trace(run_fp8scope({ "check", "--merge", reports[0], other, "--max-straggler-wait", "1ms" }));
        return result.err;
    };
    // The lines name the JSON files, not the traces they were written from.
    CHECK(refused([](json& s) { s["command_line"] = "python eval.py"; })
        == "fp8scope: error: the traces are of different jobs: '" + reports[0] + "' ran 'python train.py --fp8', '"
            + other + "' 'python eval.py'\n");
    CHECK(refused([](json& s) { s["rank"] = 0; })
        == "fp8scope: error: '" + reports[0] + "' and '" + other + "' are both rank 0: one trace per rank\n");
    CHECK(refused([](json& s) { s["world_size"] = 4; }).find("world size 3") != std::string::npos);
    CHECK(refused([](json& s) { s["rank"] = -1; }).find("does not say its rank") != std::string::npos);
    CHECK(refused([](json& s) {
        s["session_start_utc_ns"] = std::numeric_limits<int64_t>::min();
    }).find("more than 2^60 ns (36 years) apart")
        != std::string::npos);
    // The same file twice is one rank twice.
    check_bad_trace(run_fp8scope({ "report", "--merge", reports[0], reports[0] }));
}
