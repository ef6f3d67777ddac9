// A launcher's trace beside the ranks' (found on the H100, 2026-11-25: torchrun 2.11 initializes CUDA in its agent
// process, so `fp8scope record -o DIR/rank%r.sqlite -- torchrun ...` also writes `ranknorank.sqlite`, with no rank
// and no kernel). `report DIR` must analyse the ranks and name the launcher's trace as left out, not refuse the set.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "rank_scenario.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using fp8scope::testing::RankTrace;

namespace {

std::string written(const RankTrace& trace, const std::string& name)
{
    return fp8scope::testing::write_and_load(trace.s, name).path;
}

ReportOptions no_warmup()
{
    ReportOptions options;
    options.steps.warmup = 0;
    return options;
}

} // namespace

TEST_CASE("a launcher's trace (no rank, no kernel) is left out of the rank set and named", "[ranks]")
{
    RankTrace r0(0), r1(1);
    r0.collective(4000, 7000);
    r1.kernel(1000, 4500);
    r1.collective(4600, 7000);
    RankTrace launcher(-1, {}, -1);
    const std::string launcher_path = written(launcher, "ranks-launcher");

    const auto set = analyze_rank_set(
        { launcher_path, written(r1, "ranks-launcher-1"), written(r0, "ranks-launcher-0") }, no_warmup());
    REQUIRE(set.has_value());
    REQUIRE(set->ranks.size() == 2);
    CHECK(set->ranks[0].rank == 0);
    CHECK(set->ranks[1].rank == 1);
    REQUIRE(set->left_out.size() == 1);
    CHECK(set->left_out[0].path == launcher_path);
    CHECK(set->left_out[0].reason.find("launcher") != std::string::npos);
    REQUIRE(set->across.collectives.size() == 1);
    CHECK(set->across.collectives[0].last_rank == 1);

    // Alone, it is no rank set at all: one bad-trace error, never an empty report.
    const auto alone = analyze_rank_set({ launcher_path, launcher_path }, no_warmup());
    REQUIRE_FALSE(alone.has_value());
    CHECK(alone.error().code == ErrorCode::InvalidTrace);
    CHECK(alone.error().message.starts_with("no rank among the traces"));
}

TEST_CASE("a trace with no rank that ran kernels is not a launcher: the set is refused as before", "[ranks]")
{
    RankTrace r0(0), unranked(-1, { 0, 10'000, 20'000 }, -1);
    r0.collective(4000, 7000);
    unranked.kernel(1000, 2000);
    const auto refused
        = analyze_rank_set({ written(r0, "ranks-unranked-0"), written(unranked, "ranks-unranked") }, no_warmup());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == ErrorCode::InvalidTrace);
    CHECK(refused.error().message.find("does not say its rank") != std::string::npos);
}
