// Across ranks with a step number repeated on one rank (a job that marks two steps with one number): its collectives
// have the same (step, kind, place) twice. The first is matched, the second counted as unmatched, and a key that a
// rank lacks is never matched (it used to be, by counting the repeated rank twice, and read past that rank's rows).
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "rank_scenario.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope::analyzer;
using fp8scope::testing::RankTrace;

TEST_CASE("a step number repeated on one rank: its second collective of a key is unmatched", "[ranks]")
{
    ReportOptions options;
    options.steps.warmup = 0;
    // Rank 0 marks 5, 5, 6: steps 5 at [0, 10 us) and 5 again at [10 us, 20 us), each with an all-reduce.
    RankTrace r0(0, {});
    r0.s.step_marker(r0.host, 0, 5);
    r0.s.step_marker(r0.host, 10'000, 5);
    r0.s.step_marker(r0.host, 20'000, 6);
    r0.collective(4000, 7000);
    r0.collective(14'000, 17'000);
    // Rank 1: steps 5 and 6, an all-reduce in step 6 only.
    RankTrace r1(1, {});
    r1.s.step_marker(r1.host, 0, 5);
    r1.s.step_marker(r1.host, 10'000, 6);
    r1.s.step_marker(r1.host, 20'000, 7);
    r1.collective(14'000, 17'000);
    std::vector<RankSummary> ranks;
    for (const RankTrace* r : { &r0, &r1 }) {
        const TraceModel model = fp8scope::testing::write_and_load(r->s, "repeated" + std::to_string(ranks.size()));
        ranks.push_back(summarize_rank(model, analyze(model, options)));
    }
    REQUIRE(ranks[0].steps.size() == 2);
    REQUIRE(ranks[0].collectives.size() == 2);
    CHECK(ranks[0].collectives[1].step_index == 5);
    CHECK(ranks[0].collectives[1].ordinal == 0); // the same key as the first

    const CrossRankReport across = analyze_across_ranks(ranks);
    CHECK(across.common_steps == std::vector<int64_t> { 5 });
    CHECK(across.collectives.empty()); // rank 1 has no all-reduce in step 5
    CHECK(across.per_rank[0].unmatched_collectives == 2);
    CHECK(across.per_rank[1].unmatched_collectives == 0);
    CHECK(across.clock.residual_samples == 0);
}
