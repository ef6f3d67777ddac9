#include "inputs/rank_merge.hpp"

#include "inputs/trace_args.hpp"
#include "rank_json/rank_summary_json.hpp"

#include "fp8scope/analyzer/model/parallel_each.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

std::optional<std::string> merge_usage_problem(const ReportCliOptions& options)
{
    if (!options.steps.empty() || options.device || options.warmup || !options.step_pattern.empty()
        || options.step_source != "any")
        return "--steps, --device, --warmup, --step-pattern and --step-source do not apply with --merge: give them to "
               "'fp8scope report TRACE --format json', which writes the per-rank reports";
    return std::nullopt;
}

CliExpected<MergedRanks> load_merged_ranks(const std::vector<std::string>& files)
{
    std::vector<std::optional<Expected<analyzer::RankSummary>>> read(files.size());
    // A parsed file takes several times its size in memory: one at a time per core.
    analyzer::parallel_each(files.size(), [&](size_t i) { read[i] = read_rank_summary_file(files[i]); });
    MergedRanks merged;
    std::vector<std::string> rank_files; // the files of merged.set.ranks, in the same order
    for (size_t i = 0; i < files.size(); ++i) {
        if (!*read[i])
            return std::unexpected(to_cli_error(std::move(read[i]->error())));
        if (auto reason = analyzer::not_a_rank(**read[i])) {
            merged.set.left_out.push_back({ files[i], std::move(*reason) });
            continue;
        }
        rank_files.push_back(files[i]);
        merged.traces.push_back((*read[i])->path);
        merged.set.ranks.push_back(std::move(**read[i]));
    }
    std::vector<analyzer::RankSummary>& ranks = merged.set.ranks;
    if (ranks.empty() && !merged.set.left_out.empty())
        return cli_failure(kExitBadTrace,
            fmt::format("no rank among the files: '{}': {}", merged.set.left_out.front().path,
                merged.set.left_out.front().reason));
    std::optional<std::string> refusal = check_rank_summary_set(ranks, rank_files);
    if (!refusal) {
        // What check_one_job() reads, with the files' names: the line names the file to look at, not its trace.
        std::vector<analyzer::RankSummary> jobs(ranks.size());
        for (size_t i = 0; i < ranks.size(); ++i) {
            jobs[i].path = rank_files[i];
            jobs[i].rank = ranks[i].rank;
            jobs[i].world_size = ranks[i].world_size;
            jobs[i].command_line = ranks[i].command_line;
        }
        refusal = analyzer::check_one_job(jobs);
    }
    if (refusal)
        return cli_failure(kExitBadTrace, std::move(*refusal));
    std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    merged.set.across = analyzer::analyze_across_ranks(ranks);
    return merged;
}

} // namespace fp8scope::cli
