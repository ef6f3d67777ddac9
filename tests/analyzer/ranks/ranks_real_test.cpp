// Across ranks on real 2-GPU recordings (docs/analysis.md "Across ranks"; samples/traces/ranks/, recorded by
// tests/gpu/check_ranks.py): samples/torch/train.py under torchrun, DDP over NCCL, one folder per run holding
// rank<r>.sqlite and the truth that rank printed, rank<r>.truth.json (samples/traces/README.md), checked by
// check_rank_run(). ranks_real_main.cpp skips the binary (exit 77) while the folder is absent.
#include "rank_run_checks.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace fp8scope::testing;

TEST_CASE("real DDP ranks: steps, communication, the planted straggler, FP8 scale agreement and its absence as printed",
    "[ranks][real]")
{
    const std::vector<RankRun> runs = rank_runs_in(std::string(FP8SCOPE_SAMPLE_TRACES) + "/ranks");
    REQUIRE(!runs.empty());
    int64_t straggler_steps = 0;
    bool scales = false, mismatch = false;
    for (const RankRun& run : runs) {
        const RankRunFindings found = check_rank_run(run);
        for (const std::string& line : found.problems)
            UNSCOPED_INFO(line);
        CHECK(found.problems.empty());
        straggler_steps += found.straggler_steps_judged;
        scales = scales || found.scales_judged;
        mismatch = mismatch || found.mismatch_judged;
    }
    // The committed set holds both kinds of run (samples/traces/README.md): neither check may go unexercised.
    CHECK(straggler_steps > 0);
    CHECK(scales);
    CHECK(mismatch);
}
