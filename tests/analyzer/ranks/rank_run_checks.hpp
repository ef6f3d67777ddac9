// One multi-rank run against the truth its ranks printed (docs/analysis.md "Across ranks"): the checks of
// tests/gpu/check_ranks.py, run by the analyzer on the real 2-rank traces of samples/traces/ranks/
// (ranks_real_test.cpp) and on scenario runs with known answers (rank_run_checks_test.cpp), so that each check is seen
// failing before it is trusted passing.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace fp8scope::testing {

// The analyzer's default warm-up: per-step communication and waits are judged after it (check_ranks.WARMUP).
inline constexpr int64_t kRankRunWarmupSteps = 2;
// The wait the straggler caused, at least 80% of its sleep (more is its own slower work after the sleep).
inline constexpr double kStragglerWaitTolerance = 0.2;

struct RankRun {
    std::string name;
    std::vector<std::string> traces; // one per rank
    std::map<int32_t, nlohmann::json> truths; // by printed rank: train.py's FP8SCOPE_GROUND_TRUTH
};

// Every folder under root, by name: its *.sqlite (by name) and its *.truth.json (by the rank they hold).
std::vector<RankRun> rank_runs_in(const std::filesystem::path& root);

struct RankRunFindings {
    std::vector<std::string> problems; // one line per contradiction; empty when the run is as printed
    int64_t straggler_steps_judged = 0; // steps where a planted straggler was looked for
    bool scales_judged = false; // a clean FP8 run with amax reduction: scale agreement was required
    bool mismatch_judged = false; // an FP8 run without amax reduction: a named first mismatch was required
};

// Analyses the run as one job with no warm-up and checks: every rank analysed the steps it printed, in a job of the
// world size it printed; communication and exposed communication above 0 for every rank in every step after the
// warm-up; where a straggler was planted (straggler_rank, straggler_sleep_ms, straggler_steps), it is the slowest
// rank of each such step, by the wait it caused, within kStragglerWaitTolerance of its sleep, led by `host` (it
// slept); a rank planted slow in compute (realjobs/ddp_mlp.py: "straggler": {"rank", "cause": "compute"}) is the
// slowest of each step by caused wait, led by `compute`; a clean FP8 run with its amaxes reduced ("amax_reduction":
// "max ...") has scales compared on both ranks and no mismatch; an FP8 run without the reduction ("none ...") has
// mismatches, the first named (site and step).
RankRunFindings check_rank_run(const RankRun& run);

} // namespace fp8scope::testing
