// check_rank_run() (rank_run_checks.hpp), the checks the real 2-rank traces must pass, on scenario runs with known
// answers: a clean FP8 run and a planted straggler pass; each spoiled truth or trace fails the check it spoils.
#include "analysis_test_support.hpp"
#include "rank_run_checks.hpp"
#include "rank_scenario.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::testing;

namespace {

constexpr int64_t kStepNs = 5'000'000;
constexpr int64_t kSteps = 5; // markers 1..5; the sixth only ends step 5

struct Plan {
    int64_t late_ns = 0; // how long rank 1 sleeps before each step's compute: as late it starts each collective
    int64_t step_without_comm = -1; // rank 0 runs no collective in this step
    double rank1_scale_inv = 0.5; // rank 0's is 0.5
    bool late_by_compute = false; // rank 1 is late because its kernels run longer, not because it slept
};

// Two ranks of kSteps steps: per step 10 compute kernels (on rank 1 after its sleep, longer than the 400 us the
// thread's 20 us median silence makes a host gap), then an all-reduce that ends at the same time on both; one FP8
// weight scale sample per step on each rank.
RankRun write_run(const std::string& name, const Plan& plan, nlohmann::json truth)
{
    RankRun run { name, {}, {} };
    for (int32_t rank = 0; rank < 2; ++rank) {
        std::vector<int64_t> starts;
        for (int64_t i = 0; i <= kSteps; ++i)
            starts.push_back(i * kStepNs);
        RankTrace trace(rank, starts);
        const int64_t site
            = trace.s.tensor_site("blocks.0.fc1", schema::TensorRole::Weight, schema::Dtype::E4M3, 16, 16);
        for (int64_t step = 1; step <= kSteps; ++step) {
            const int64_t s = (step - 1) * kStepNs;
            const int64_t late = rank == 1 ? plan.late_ns : 0;
            const int64_t slept = plan.late_by_compute ? 0 : late;
            const int64_t longer = plan.late_by_compute ? late / 10 : 0; // per kernel
            for (int64_t k = 0; k < 10; ++k) { // launched 20 us apart: the thread's median silence
                const int64_t at = s + 10'000 + slept + k * (20'000 + longer);
                trace.kernel(at, at + 19'000 + longer);
            }
            if (!(rank == 0 && step == plan.step_without_comm))
                trace.collective(s + 250'000 + late, s + 3'000'000);
            TensorStatsRow row;
            row.site_id = site;
            row.step = step;
            row.timestamp_ns = s + 2000;
            row.scale_inv = rank == 0 ? 0.5 : plan.rank1_scale_inv;
            trace.s.tensor_stats(row);
        }
        run.traces.push_back(write_and_load(trace.s, name + "-rank" + std::to_string(rank)).path);
        truth["rank"] = rank;
        run.truths[rank] = truth;
    }
    return run;
}

nlohmann::json clean_truth(const char* precision = "fp8")
{
    const bool fp8 = std::string(precision) == "fp8";
    return { { "world_size", 2 }, { "steps", kSteps }, { "precision", precision },
        { "amax_reduction", fp8 ? nlohmann::json("max across ranks, once per step after backward") : nullptr },
        { "straggler_rank", nullptr }, { "straggler_sleep_ms", nullptr }, { "straggler_steps", nullptr } };
}

nlohmann::json straggler_truth(int32_t rank, double sleep_ms)
{
    nlohmann::json truth = clean_truth();
    truth["straggler_rank"] = rank;
    truth["straggler_sleep_ms"] = sleep_ms;
    truth["straggler_steps"] = { 1, kSteps };
    return truth;
}

constexpr int64_t kLateNs = 1'000'000; // rank 1's sleep: the wait it causes rank 0 in each step, 1 ms

} // namespace

TEST_CASE("rank run checks: a clean FP8 run and a planted straggler pass as printed", "[ranks]")
{
    const RankRunFindings clean = check_rank_run(write_run("rrc-clean", {}, clean_truth()));
    CHECK(clean.problems == std::vector<std::string> {});
    CHECK(clean.scales_judged);
    CHECK(clean.straggler_steps_judged == 0);

    const RankRunFindings straggler
        = check_rank_run(write_run("rrc-straggler", { .late_ns = kLateNs }, straggler_truth(1, 1.0)));
    CHECK(straggler.problems == std::vector<std::string> {});
    CHECK(straggler.straggler_steps_judged == kSteps - kRankRunWarmupSteps);
    CHECK_FALSE(straggler.scales_judged); // judged on the clean run only

    const RankRunFindings bf16 = check_rank_run(write_run("rrc-bf16", {}, clean_truth("bf16")));
    CHECK(bf16.problems == std::vector<std::string> {});
    CHECK_FALSE(bf16.scales_judged);
}

TEST_CASE("rank run checks: each spoiled truth or trace fails its check", "[ranks]")
{
    SECTION("more steps printed than analysed")
    {
        nlohmann::json truth = clean_truth();
        truth["steps"] = kSteps + 1;
        CHECK(check_rank_run(write_run("rrc-steps", {}, truth)).problems
            == std::vector<std::string> {
                "rrc-steps: rank 0: 5 steps analysed, 6 printed", "rrc-steps: rank 1: 5 steps analysed, 6 printed" });
    }
    SECTION("a step without communication on one rank")
    {
        const auto problems = check_rank_run(write_run("rrc-comm", { .step_without_comm = 4 }, clean_truth())).problems;
        REQUIRE(!problems.empty());
        CHECK(problems.front() == "rrc-comm: step 4: rank 0: comm 0 ns, exposed 0 ns");
    }
    SECTION("the straggler planted on the other rank")
    {
        const auto problems
            = check_rank_run(write_run("rrc-who", { .late_ns = kLateNs }, straggler_truth(0, 1.0))).problems;
        CHECK(problems.size() == 2 * (kSteps - kRankRunWarmupSteps)); // slowest rank and caused wait, per step
        CHECK(problems.front() == "rrc-who: step 3: slowest rank 1 by caused_wait, planted 0");
    }
    SECTION("a wait more than 20% short of the sleep")
    {
        const auto problems
            = check_rank_run(write_run("rrc-sleep", { .late_ns = kLateNs }, straggler_truth(1, 1.27))).problems;
        CHECK(problems.size() == kSteps - kRankRunWarmupSteps);
        CHECK(problems.front().starts_with("rrc-sleep: step 3: caused wait 1.000000 ms, slept 1.270000 ms"));
        CHECK(check_rank_run(write_run("rrc-sleep-in", { .late_ns = kLateNs }, straggler_truth(1, 1.24))).problems
            == std::vector<std::string> {});
    }
    SECTION("a straggler that slept, led by compute")
    {
        const auto problems = check_rank_run(
            write_run("rrc-compute", { .late_ns = kLateNs, .late_by_compute = true }, straggler_truth(1, 1.0)))
                                  .problems;
        REQUIRE(problems.size() == kSteps - kRankRunWarmupSteps);
        CHECK(problems.front() == "rrc-compute: step 3: lead cause compute, the straggler slept");
    }
    SECTION("a rank planted slow in compute: passes led by compute, fails led by host")
    {
        nlohmann::json truth = clean_truth("bf16");
        truth["straggler"] = { { "rank", 1 }, { "cause", "compute" }, { "batch_factor", 16 } };
        const RankRunFindings compute
            = check_rank_run(write_run("rrc-slow", { .late_ns = kLateNs, .late_by_compute = true }, truth));
        CHECK(compute.problems == std::vector<std::string> {});
        CHECK(compute.straggler_steps_judged == kSteps - kRankRunWarmupSteps);
        const auto slept = check_rank_run(write_run("rrc-slow-slept", { .late_ns = kLateNs }, truth)).problems;
        REQUIRE(slept.size() == kSteps - kRankRunWarmupSteps);
        CHECK(slept.front() == "rrc-slow-slept: step 3: lead cause host, the straggler trains a larger batch");
    }
    SECTION("no straggler in the trace where one was planted")
    {
        CHECK(check_rank_run(write_run("rrc-none", {}, straggler_truth(1, 1.0))).problems.size()
            == 2 * (kSteps - kRankRunWarmupSteps));
    }
    SECTION("FP8 scales that differ across ranks")
    {
        CHECK(check_rank_run(write_run("rrc-scales", { .rank1_scale_inv = 0.25 }, clean_truth())).problems
            == std::vector<std::string> { "rrc-scales: scales: 5 compared, 5 mismatches" });
    }
    SECTION("FP8 without amax reduction: scales that agree fail, scales that differ pass with the first named")
    {
        nlohmann::json truth = clean_truth();
        truth["amax_reduction"] = "none (--no-amax-reduction)";
        CHECK(check_rank_run(write_run("rrc-no-reduce-same", {}, truth)).problems
            == std::vector<std::string> { "rrc-no-reduce-same: scales without amax reduction: 5 compared, 0 "
                                          "mismatches, none named" });
        const RankRunFindings differ = check_rank_run(write_run("rrc-no-reduce", { .rank1_scale_inv = 0.25 }, truth));
        CHECK(differ.problems == std::vector<std::string> {});
        CHECK(differ.mismatch_judged);
    }
    SECTION("a truth missing")
    {
        RankRun run = write_run("rrc-truth", {}, clean_truth());
        run.truths.erase(1);
        CHECK(check_rank_run(run).problems == std::vector<std::string> { "rrc-truth: 2 traces, 1 truths" });
    }
}
