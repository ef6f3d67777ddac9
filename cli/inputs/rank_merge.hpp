// `fp8scope report --merge FILE...` and `check --merge FILE...`: the ranks of one job from their per-rank JSON reports
// (`fp8scope report TRACE --format json`, run as independent jobs: docs/multi-rank.md), analysed across ranks as
// `report A.sqlite B.sqlite` analyses their traces.
#pragma once

#include "commands/cli_error.hpp"

#include "fp8scope/analyzer/ranks/ranks.hpp"

#include <optional>
#include <string>
#include <vector>

namespace fp8scope::cli {

struct ReportCliOptions;

struct MergedRanks {
    analyzer::RankSetReport set;
    std::vector<std::string> traces; // each file's trace path, in the order of the files
};

// The reason `--merge` cannot be used with these options, or nullopt: the selection options (--steps, --device,
// --warmup, --step-pattern, --step-source) were applied when the per-rank reports were written.
std::optional<std::string> merge_usage_problem(const ReportCliOptions& options);

// Reads the files (in parallel; each as read_rank_summary_file()), checks them as one job (check_rank_summary_set(),
// analyzer::check_one_job()) and analyses them across ranks. kExitBadTrace with one line naming the file at fault.
CliExpected<MergedRanks> load_merged_ranks(const std::vector<std::string>& files);

} // namespace fp8scope::cli
