// The rank set (docs/analysis.md "Across ranks", "One job"): the traces loaded and analysed in parallel, checked to
// be the ranks of one job, then analysed across ranks.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/model/parallel_each.hpp"
#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <optional>

namespace fp8scope::analyzer {

namespace {

// The command line without torch.distributed.launch's per-rank `--local_rank=N` / `--local-rank=N`.
std::string job_command_line(std::string_view command_line)
{
    std::string job;
    size_t pos = 0;
    while (pos <= command_line.size()) {
        const size_t space = std::min(command_line.find(' ', pos), command_line.size());
        const std::string_view token = command_line.substr(pos, space - pos);
        pos = space + 1;
        if (token.starts_with("--local_rank=") || token.starts_with("--local-rank="))
            continue;
        if (!job.empty())
            job += ' ';
        job += token;
    }
    return job;
}

std::string name_of(const RankSummary& rank)
{
    return fmt::format("'{}'", rank.path);
}

// One trace of the set: its summary, or why it is left out.
struct RankFile {
    std::optional<RankSummary> summary;
    std::string left_out;
};

// Loads, analyses and summarises one trace; the error says which trace when the selection is empty. `progress`
// (may be empty) receives this trace's fraction: loading, then analysing, by their typical weights.
Expected<RankFile> summarize_file(const std::string& path, const ReportOptions& options, const ProgressHook& progress)
{
    constexpr double kLoadShare = StageWeight::kLoad / (StageWeight::kLoad + StageWeight::kAnalyse);
    ProgressHook loading, analysing;
    if (progress) {
        loading = [&](double f) { return progress(f * kLoadShare); };
        analysing = [&](double f) { return progress(kLoadShare + f * (1 - kLoadShare)); };
    }
    auto model = load_trace(path, loading);
    if (!model)
        return std::unexpected(model.error());
    if (auto reason = not_a_rank(*model))
        return RankFile { std::nullopt, std::move(*reason) };
    auto report = analyze(*model, options, analysing);
    if (!report)
        return std::unexpected(report.error());
    if (report->selection.empty)
        return make_error(
            ErrorCode::Usage, fmt::format("'{}': {}", path, empty_selection_reason(report->selection, options)));
    return RankFile { summarize_rank(*model, *report), {} };
}

// One hook for the traces loaded and analysed in parallel: each trace's fraction kept apart, their mean passed on
// under a lock (the caller's hook is never called from two threads at once), never decreasing. Once the caller
// cancels, every trace's hook returns false.
class SetProgress {
public:
    SetProgress(const ProgressHook& outer, size_t traces)
        : outer_(outer)
        , fractions_(traces, 0.0)
    {
    }
    ProgressHook of(size_t trace)
    {
        if (!outer_)
            return {};
        return [this, trace](double fraction) {
            const std::lock_guard lock(mutex_);
            if (cancelled_)
                return false;
            double& mine = fractions_[trace];
            sum_ += std::max(0.0, fraction - mine);
            mine = std::max(mine, fraction);
            const double mean = std::min(1.0, sum_ / static_cast<double>(fractions_.size()));
            if (mean > reported_ || mean == 1.0) {
                reported_ = mean;
                cancelled_ = !outer_(mean);
            }
            return !cancelled_;
        };
    }

private:
    const ProgressHook& outer_;
    std::mutex mutex_;
    std::vector<double> fractions_;
    double sum_ = 0, reported_ = -1;
    bool cancelled_ = false;
};

} // namespace

namespace {

constexpr const char* kLauncherReason = "no rank and no GPU work: a launcher process, not a rank";

} // namespace

std::optional<std::string> not_a_rank(const TraceModel& model)
{
    if (model.meta.rank >= 0 || model.kernels.size() > 0)
        return std::nullopt;
    return std::string(kLauncherReason);
}

std::optional<std::string> not_a_rank(const RankSummary& summary)
{
    if (summary.rank >= 0 || !summary.steps.empty() || !summary.collectives.empty())
        return std::nullopt;
    return std::string(kLauncherReason);
}

std::optional<std::string> check_one_job(std::span<const RankSummary> ranks)
{
    if (ranks.empty())
        return "no traces";
    for (const RankSummary& rank : ranks)
        if (rank.rank < 0 || rank.world_size < 1)
            return fmt::format("{} does not say its rank and world size (meta rank, world_size): it cannot be placed "
                               "among the ranks of a job",
                name_of(rank));
    const RankSummary& first = ranks.front();
    const std::string job = job_command_line(first.command_line);
    for (const RankSummary& rank : ranks.subspan(1)) {
        if (rank.world_size != first.world_size)
            return fmt::format("the traces are of different jobs: {} has world size {}, {} {}", name_of(first),
                first.world_size, name_of(rank), rank.world_size);
        if (job_command_line(rank.command_line) != job)
            return fmt::format("the traces are of different jobs: {} ran '{}', {} '{}'", name_of(first),
                first.command_line, name_of(rank), rank.command_line);
    }
    for (size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i].rank >= ranks[i].world_size)
            return fmt::format(
                "{} is rank {}, not below its world size {}", name_of(ranks[i]), ranks[i].rank, ranks[i].world_size);
        for (size_t j = 0; j < i; ++j)
            if (ranks[j].rank == ranks[i].rank)
                return fmt::format("{} and {} are both rank {}: one trace per rank", name_of(ranks[j]),
                    name_of(ranks[i]), ranks[i].rank);
    }
    return std::nullopt;
}

Expected<RankSetReport> analyze_rank_set(const std::vector<std::string>& paths, const ReportOptions& options)
{
    return analyze_rank_set(paths, options, {});
}

Expected<RankSetReport> analyze_rank_set(
    const std::vector<std::string>& paths, const ReportOptions& options, const ProgressHook& progress)
{
    std::vector<std::optional<Expected<RankFile>>> results(paths.size());
    SetProgress set_progress(progress, paths.size());
    // Each load uses a second thread of its own (parallel_read.cpp).
    parallel_each(paths.size(), [&](size_t i) { results[i] = summarize_file(paths[i], options, set_progress.of(i)); });
    // A cancelled set is one error, whichever trace saw it first.
    for (const auto& result : results)
        if (!*result && result->error().code == ErrorCode::Cancelled)
            return std::unexpected(result->error());
    RankSetReport set;
    for (size_t i = 0; i < paths.size(); ++i) {
        if (!*results[i])
            return std::unexpected(results[i]->error());
        RankFile& file = **results[i];
        if (file.summary)
            set.ranks.push_back(std::move(*file.summary));
        else
            set.left_out.push_back({ paths[i], std::move(file.left_out) });
    }
    if (set.ranks.empty() && !set.left_out.empty())
        return make_error(ErrorCode::InvalidTrace,
            fmt::format("no rank among the traces: '{}': {}", set.left_out.front().path, set.left_out.front().reason));
    if (auto refusal = check_one_job(set.ranks))
        return make_error(ErrorCode::InvalidTrace, std::move(*refusal));
    std::sort(
        set.ranks.begin(), set.ranks.end(), [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
    set.across = analyze_across_ranks(set.ranks);
    return set;
}

} // namespace fp8scope::analyzer
