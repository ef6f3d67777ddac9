#include "report/report_ranks.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/text_paint.hpp"
#include "report/report_render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

std::string rank_list(const std::vector<int32_t>& ranks)
{
    return fmt::format("{}", fmt::join(ranks, ", "));
}

std::string host_name(const std::string& host)
{
    return host.empty() ? "(unknown host)" : printable(host);
}

std::string lead_cause_text(const std::optional<LeadCause>& cause)
{
    return cause ? std::string(lead_cause_name(*cause)) : "none (no idle time)";
}

void per_rank_text(std::string& out, const RankSetReport& set, const Paint& paint)
{
    heading_line(out, paint, "Per rank (analysed steps, bubble ratio, idle time by cause)");
    out += fmt::format("  {:>4} {:>6} {:>7}", "rank", "steps", "bubble");
    for (size_t c = 0; c < kBubbleCauseCount; ++c)
        out += fmt::format(" {:>12}", bubble_cause_name(static_cast<BubbleCause>(c)));
    out += "\n";
    for (const RankSummary& rank : set.ranks) {
        out += fmt::format("  {:>4} {:>6} {}", rank.rank, rank.steps.size(),
            paint.ratio(fmt::format("{:>7.3f}", rank.totals.bubble_ratio), rank.totals.bubble_ratio));
        for (size_t c = 0; c < kBubbleCauseCount; ++c)
            out += fmt::format(" {:>12}", format_duration_ns(rank.totals.cause_ns[c]));
        out += "\n";
    }
    for (const RankAcross& rank : set.across.per_rank)
        if (rank.unmatched_collectives > 0 || rank.steps_not_common > 0)
            out += fmt::format("  note: rank {}: {} without a counterpart on every rank, {} not analysed on every "
                               "rank (left out across ranks)\n",
                rank.rank, count_of(rank.unmatched_collectives, "collective", "collectives"),
                count_of(rank.steps_not_common, "step", "steps"));
}

void per_step_text(std::string& out, const RankSetReport& set, const Paint& paint)
{
    const CrossRankReport& across = set.across;
    heading_line(out, paint, "Per step across ranks (communication, exposed communication, wait in collectives)");
    if (across.steps.empty())
        out += "  no step was analysed on every rank\n";
    for (const StepAcrossRanks& step : across.steps) {
        out += fmt::format("  step {}: slowest rank {} ({}), lead cause {}\n", step.step_index, step.slowest_rank,
            step.slowest_by == SlowestBy::CausedWait ? "the others waited longest for it" : "the longest step",
            lead_cause_text(step.slowest_lead_cause));
        for (size_t i = 0; i < across.ranks.size(); ++i)
            out += fmt::format("    rank {:>4}  step {:>12}  comm {:>12}  exposed {:>12}  wait {:>12}\n",
                across.ranks[i], format_duration_ns(step.step_ns[i]), format_duration_ns(step.comm_ns[i]),
                format_duration_ns(step.exposed_comm_ns[i]), format_duration_ns(step.wait_ns[i]));
    }
}

void stragglers_text(std::string& out, const RankSetReport& set, const Paint& paint)
{
    const CrossRankReport& across = set.across;
    heading_line(out, paint, "Straggler waits (collectives matched across ranks, per kind)");
    const std::vector<KindWaits> kinds = waits_by_kind(across);
    if (kinds.empty())
        out += "  no collective is matched across the ranks\n";
    for (const KindWaits& kind : kinds) {
        out += fmt::format("  {}: {} matched, most often last: rank {}\n", collective_kind_id(kind.kind), kind.count,
            kind.most_often_last);
        for (size_t i = 0; i < across.ranks.size(); ++i)
            out += fmt::format("    rank {:>4}  last {:>5}  wait {:>12} in all, {:>12} at most\n", across.ranks[i],
                kind.times_last[i], format_duration_ns(kind.wait_ns[i]), format_duration_ns(kind.max_wait_ns[i]));
    }
    if (across.worst_collective) {
        const MatchedCollective& c = across.collectives[*across.worst_collective];
        out += fmt::format("  longest wait in one collective: {} at step {} ({} of its kind in the step), rank {} "
                           "last, {}\n",
            collective_kind_id(c.kind), c.step_index, c.ordinal + 1, c.last_rank, format_duration_ns(c.max_wait_ns));
    }
    if (const auto step = longest_step_wait(across))
        out += fmt::format("  longest wait in one step: rank {} in step {}, {} (what check --max-straggler-wait "
                           "gates)\n",
            step->rank, step->step, format_duration_ns(step->wait_ns));
}

void clock_text(std::string& out, const RankSetReport& set, const Paint& paint)
{
    const ClockAlignment& clock = set.across.clock;
    heading_line(out, paint,
        fmt::format("Clock alignment (reference rank {}; {})", clock.reference_rank,
            clock.aligned_by_collectives ? "hosts aligned by the ends of shared collectives"
                                         : "one clock, nothing shifted"));
    for (const HostClock& host : clock.hosts)
        out += fmt::format("  {:<20} ranks {:<12} offset {:>12}{}\n", host_name(host.host), rank_list(host.ranks),
            format_duration_ns(host.offset_ns),
            host.samples > 0
                ? fmt::format(" (median of {})", count_of(host.samples, "collective end", "collective ends"))
                : std::string());
    out += fmt::format("  residual {} (median over {})\n", format_duration_ns(clock.residual_ns),
        count_of(clock.residual_samples, "collective end", "collective ends"));
}

void scales_text(std::string& out, const RankSetReport& set, const Paint& paint)
{
    const ScaleAgreement& scales = set.across.scales;
    heading_line(out, paint,
        fmt::format("FP8 scale agreement: {} compared across ranks, {}", scales.compared,
            count_of(scales.mismatches, "mismatch", "mismatches")));
    if (scales.first)
        out += fmt::format("  first mismatch: {} step {} sample {}: rank {} {:g}, rank {} {:g}\n",
            printable(scales.first->site), scales.first->step, scales.first->sample, scales.first->rank_a,
            scales.first->value_a, scales.first->rank_b, scales.first->value_b);
    else if (scales.compared == 0)
        out += "  no FP8 scale sample is found on two ranks (no tensor statistics, or none with a scale)\n";
}

} // namespace

std::string render_rank_set_text(const RankSetReport& set, bool color)
{
    const Paint paint(color);
    std::string out = fmt::format("fp8scope report: {} of one job (world size {})\n",
        count_of(static_cast<int64_t>(set.ranks.size()), "rank", "ranks"),
        set.ranks.empty() ? 0 : set.ranks.front().world_size);
    for (const RankSummary& rank : set.ranks)
        out += fmt::format("  rank {:>4}  {:<20} {} ({})\n", rank.rank, host_name(rank.host), printable(rank.path),
            step_source_name(rank.step_source));
    for (const LeftOutTrace& trace : set.left_out)
        out += fmt::format("  left out: {}: {}\n", printable(trace.path), trace.reason);
    per_rank_text(out, set, paint);
    per_step_text(out, set, paint);
    stragglers_text(out, set, paint);
    clock_text(out, set, paint);
    scales_text(out, set, paint);
    return out;
}

nlohmann::ordered_json render_rank_set_json(const RankSetReport& set)
{
    using json = nlohmann::ordered_json;
    const CrossRankReport& across = set.across;
    json ranks = json::array();
    for (size_t i = 0; i < set.ranks.size(); ++i) {
        const RankSummary& rank = set.ranks[i];
        const RankAcross& a = across.per_rank[i];
        ranks.push_back({ { "rank", rank.rank }, { "host", rank.host }, { "trace", rank.path },
            { "step_source", step_source_name(rank.step_source) }, { "steps", rank.steps.size() },
            { "totals", bubble_totals_json(rank.totals) }, { "wait_ns", a.wait_ns },
            { "caused_wait_ns", a.caused_wait_ns }, { "times_last", a.times_last },
            { "unmatched_collectives", a.unmatched_collectives }, { "steps_not_common", a.steps_not_common } });
    }
    json steps = json::array();
    for (const StepAcrossRanks& step : across.steps) {
        json per_rank = json::array();
        for (size_t i = 0; i < across.ranks.size(); ++i)
            per_rank.push_back({ { "rank", across.ranks[i] }, { "step_ns", step.step_ns[i] },
                { "comm_ns", step.comm_ns[i] }, { "exposed_comm_ns", step.exposed_comm_ns[i] },
                { "wait_ns", step.wait_ns[i] }, { "caused_wait_ns", step.caused_wait_ns[i] } });
        steps.push_back({ { "step", step.step_index }, { "slowest_rank", step.slowest_rank },
            { "slowest_by", slowest_by_name(step.slowest_by) },
            { "slowest_lead_cause",
                step.slowest_lead_cause ? json(lead_cause_name(*step.slowest_lead_cause)) : json(nullptr) },
            { "ranks", per_rank } });
    }
    json kinds = json::array();
    for (const KindWaits& kind : waits_by_kind(across)) {
        json per_rank = json::array();
        for (size_t i = 0; i < across.ranks.size(); ++i)
            per_rank.push_back({ { "rank", across.ranks[i] }, { "times_last", kind.times_last[i] },
                { "wait_ns", kind.wait_ns[i] }, { "max_wait_ns", kind.max_wait_ns[i] } });
        kinds.push_back({ { "kind", collective_kind_id(kind.kind) }, { "count", kind.count },
            { "most_often_last", kind.most_often_last }, { "ranks", per_rank } });
    }
    json worst = nullptr;
    if (across.worst_collective) {
        const MatchedCollective& c = across.collectives[*across.worst_collective];
        worst = { { "step", c.step_index }, { "kind", collective_kind_id(c.kind) }, { "ordinal", c.ordinal },
            { "last_rank", c.last_rank }, { "max_wait_ns", c.max_wait_ns } };
    }
    json step_wait = nullptr;
    if (const auto longest = longest_step_wait(across))
        step_wait = { { "step", longest->step }, { "rank", longest->rank }, { "wait_ns", longest->wait_ns } };
    json hosts = json::array();
    for (const HostClock& host : across.clock.hosts)
        hosts.push_back({ { "host", host.host }, { "ranks", host.ranks }, { "offset_ns", host.offset_ns },
            { "samples", host.samples } });
    json left_out = json::array();
    for (const LeftOutTrace& trace : set.left_out)
        left_out.push_back({ { "trace", trace.path }, { "reason", trace.reason } });
    const ScaleAgreement& scales = across.scales;
    json first = nullptr;
    if (scales.first)
        first = { { "site", scales.first->site }, { "step", scales.first->step }, { "sample", scales.first->sample },
            { "rank_a", scales.first->rank_a }, { "value_a", scales.first->value_a },
            { "rank_b", scales.first->rank_b }, { "value_b", scales.first->value_b } };
    return json {
        { "schema", kRanksJsonSchema },
        { "world_size", set.ranks.empty() ? 0 : set.ranks.front().world_size },
        { "ranks", ranks },
        { "left_out", left_out },
        { "common_steps", across.common_steps },
        { "steps", steps },
        { "stragglers",
            { { "matched_collectives", across.collectives.size() }, { "by_kind", kinds }, { "longest_wait", worst },
                { "longest_step_wait", step_wait } } },
        { "clock",
            { { "reference_rank", across.clock.reference_rank },
                { "aligned_by_collectives", across.clock.aligned_by_collectives }, { "hosts", hosts },
                { "residual_ns", across.clock.residual_ns }, { "residual_samples", across.clock.residual_samples } } },
        { "scales", { { "compared", scales.compared }, { "mismatches", scales.mismatches }, { "first", first } } },
    };
}

} // namespace fp8scope::cli
