// The cross-rank rules (docs/analysis.md "Across ranks"): common steps, collectives matched across ranks, clock
// alignment by collective ends, stragglers and waits, per-step slowest rank, FP8 scale agreement. Reads only the
// ranks' summaries, so per-rank summaries made elsewhere (`report --merge`) give the same result.
#include "fp8scope/analyzer/ranks/ranks.hpp"

#include "model/median.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

namespace fp8scope::analyzer {

namespace {

using Ranks = std::vector<const RankSummary*>; // ascending rank

std::vector<int64_t> common_step_indices(const Ranks& ranks)
{
    std::vector<int64_t> common;
    for (size_t p = 0; p < ranks.size(); ++p) {
        std::vector<int64_t> indices;
        for (const RankStep& step : ranks[p]->steps)
            indices.push_back(step.index);
        std::sort(indices.begin(), indices.end());
        if (p == 0) {
            common = std::move(indices);
            continue;
        }
        std::vector<int64_t> both;
        std::set_intersection(common.begin(), common.end(), indices.begin(), indices.end(), std::back_inserter(both));
        common = std::move(both);
    }
    return common;
}

using CollectiveKey = std::tuple<int64_t, CollectiveKind, int32_t>; // step, kind, ordinal

// The collectives of the common steps present on every rank, by key; each rank's row index into its collectives.
std::map<CollectiveKey, std::vector<size_t>> match_collectives(
    const Ranks& ranks, const std::vector<int64_t>& common, std::vector<RankAcross>& per_rank)
{
    std::map<CollectiveKey, std::vector<size_t>> matched;
    std::map<CollectiveKey, size_t> seen_on; // how many ranks have the key
    for (size_t p = 0; p < ranks.size(); ++p) {
        const auto& collectives = ranks[p]->collectives;
        for (size_t c = 0; c < collectives.size(); ++c) {
            const RankCollective& row = collectives[c];
            if (!std::binary_search(common.begin(), common.end(), row.step_index))
                continue;
            const CollectiveKey key { row.step_index, row.kind, row.ordinal };
            auto& rows = matched[key];
            rows.resize(ranks.size(), SIZE_MAX);
            if (rows[p] != SIZE_MAX) {
                // The key twice on one rank: two steps with one number (a marker repeated by the job), or a summary
                // read from a file. Only the first can be matched; counting the second would match a key some rank
                // lacks.
                ++per_rank[p].unmatched_collectives;
                continue;
            }
            rows[p] = c;
            ++seen_on[key];
        }
    }
    for (auto it = matched.begin(); it != matched.end();) {
        if (seen_on[it->first] == ranks.size()) {
            ++it;
            continue;
        }
        for (size_t p = 0; p < ranks.size(); ++p)
            per_rank[p].unmatched_collectives += it->second[p] != SIZE_MAX ? 1 : 0;
        it = matched.erase(it);
    }
    return matched;
}

// Clocks by host (a rank without a host is a clock of its own), the reference rank's first, and each rank's clock.
std::vector<HostClock> group_clocks(const Ranks& ranks, std::vector<size_t>& clock_of)
{
    std::vector<HostClock> clocks;
    clock_of.assign(ranks.size(), 0);
    for (size_t p = 0; p < ranks.size(); ++p) {
        const std::string& host = ranks[p]->host;
        auto same = std::find_if(
            clocks.begin(), clocks.end(), [&](const HostClock& clock) { return !host.empty() && clock.host == host; });
        if (same == clocks.end())
            same = clocks.insert(clocks.end(), HostClock { host, {}, 0, 0 });
        same->ranks.push_back(ranks[p]->rank);
        clock_of[p] = static_cast<size_t>(same - clocks.begin());
    }
    return clocks;
}

// Shifts every clock but the reference rank's so that the median end difference of the matched collectives against
// the reference rank is 0 (NCCL collectives end together on every rank to within the link latency), and measures
// the residual. `shift_ns` per rank: session start against the reference rank's, plus its clock's offset.
ClockAlignment align_clocks(
    const Ranks& ranks, const std::map<CollectiveKey, std::vector<size_t>>& matched, std::vector<int64_t>& shift_ns)
{
    ClockAlignment clock;
    clock.reference_rank = ranks.front()->rank;
    std::vector<size_t> clock_of;
    clock.hosts = group_clocks(ranks, clock_of);
    shift_ns.resize(ranks.size());
    for (size_t p = 0; p < ranks.size(); ++p)
        shift_ns[p] = ranks[p]->session_start_utc_ns - ranks.front()->session_start_utc_ns;
    const auto end_of = [&](size_t p, const std::vector<size_t>& rows) {
        return shift_ns[p] + ranks[p]->collectives[rows[p]].end_ns;
    };
    std::vector<std::vector<int64_t>> differences(clock.hosts.size());
    for (const auto& [key, rows] : matched)
        for (size_t p = 0; p < ranks.size(); ++p)
            if (clock_of[p] != 0)
                differences[clock_of[p]].push_back(end_of(0, rows) - end_of(p, rows));
    for (size_t h = 1; h < clock.hosts.size(); ++h) {
        clock.hosts[h].samples = static_cast<int64_t>(differences[h].size());
        clock.hosts[h].offset_ns = detail::median_of(std::move(differences[h]));
        clock.aligned_by_collectives = clock.aligned_by_collectives || clock.hosts[h].samples > 0;
    }
    for (size_t p = 0; p < ranks.size(); ++p)
        shift_ns[p] += clock.hosts[clock_of[p]].offset_ns;
    std::vector<int64_t> residuals;
    for (const auto& [key, rows] : matched)
        for (size_t p = 1; p < ranks.size(); ++p)
            residuals.push_back(std::abs(end_of(p, rows) - end_of(0, rows)));
    clock.residual_samples = static_cast<int64_t>(residuals.size());
    clock.residual_ns = detail::median_of(std::move(residuals));
    return clock;
}

MatchedCollective straggler_of(
    const Ranks& ranks, const CollectiveKey& key, const std::vector<size_t>& rows, const std::vector<int64_t>& shift_ns)
{
    MatchedCollective collective;
    std::tie(collective.step_index, collective.kind, collective.ordinal) = key;
    size_t last = 0;
    for (size_t p = 0; p < ranks.size(); ++p) {
        const RankCollective& row = ranks[p]->collectives[rows[p]];
        collective.start_ns.push_back(shift_ns[p] + row.start_ns);
        collective.end_ns.push_back(shift_ns[p] + row.end_ns);
        collective.compute_until_ns.push_back(shift_ns[p] + row.compute_until_ns);
        if (collective.start_ns[p] > collective.start_ns[last])
            last = p;
    }
    collective.last_rank = ranks[last]->rank;
    for (size_t p = 0; p < ranks.size(); ++p) {
        const int64_t length = collective.end_ns[p] - collective.start_ns[p];
        const int64_t wait = std::clamp<int64_t>(collective.start_ns[last] - collective.start_ns[p], 0, length);
        collective.wait_ns.push_back(wait);
        collective.max_wait_ns = std::max(collective.max_wait_ns, wait);
    }
    return collective;
}

// Why rank `slowest` was late in step `index` (StepAcrossRanks::slowest_lead_cause): its excess over the other ranks'
// median, before each arrived at the step's first collective, first in kernel time against idle time (all causes
// together), then, when idle leads, in each idle cause but comm. In two steps because the window before the arrival
// holds idle time that every rank has (the previous step's tail, since the ranks were last together), and the cause
// rules may name the same stretch differently on two ranks (`host` on one, `launch` on another whose launching
// thread is silent longer between its own launches): compared cause by cause, that relabelling outweighed a real
// excess of kernel time.
std::optional<LeadCause> lead_cause(
    const std::vector<std::unordered_map<int64_t, const RankStep*>>& own_step, size_t slowest, int64_t index)
{
    constexpr size_t kCompute = static_cast<size_t>(LeadCause::Compute);
    constexpr size_t kAllIdle = kCompute + 1;
    auto figure = [](const RankStep& step, size_t k) {
        if (k == kCompute)
            return step.compute_before_ns;
        if (k < kCompute)
            return step.idle_before_ns[k];
        // Every cause, comm too: no collective runs between the previous step's last and this step's first, so
        // `comm` idle there is the cover rule's label for the tail of a gap it mostly covered before.
        int64_t idle = 0;
        for (size_t c = 0; c < kCompute; ++c)
            idle += step.idle_before_ns[c];
        return idle;
    };
    const RankStep& late = *own_step[slowest].at(index);
    auto excess = [&](size_t k) {
        std::vector<int64_t> others;
        for (size_t p = 0; p < own_step.size(); ++p)
            if (p != slowest)
                others.push_back(figure(*own_step[p].at(index), k));
        return figure(late, k) - (others.empty() ? 0 : detail::median_of(std::move(others)));
    };
    const int64_t compute = excess(kCompute), idle = excess(kAllIdle);
    if (compute > 0 && compute >= idle)
        return LeadCause::Compute;
    std::optional<LeadCause> lead;
    int64_t most = 0;
    for (size_t k = 0; k < kCompute && idle > 0; ++k) {
        if (k == static_cast<size_t>(BubbleCause::Comm))
            continue;
        if (const int64_t e = excess(k); e > most) {
            most = e;
            lead = static_cast<LeadCause>(k);
        }
    }
    if (lead)
        return lead;
    const auto cause = std::max_element(late.cause_ns.begin(), late.cause_ns.end());
    if (*cause > 0)
        return static_cast<LeadCause>(cause - late.cause_ns.begin());
    return std::nullopt;
}

std::vector<StepAcrossRanks> steps_across(
    const Ranks& ranks, const std::vector<int64_t>& common, const std::vector<MatchedCollective>& collectives)
{
    const size_t n = ranks.size();
    // Per rank, its step of each common index (every rank has every common step).
    std::vector<std::unordered_map<int64_t, const RankStep*>> own_step(n);
    for (size_t p = 0; p < n; ++p)
        for (const RankStep& step : ranks[p]->steps)
            own_step[p].emplace(step.index, &step);
    std::vector<StepAcrossRanks> steps;
    std::unordered_map<int64_t, size_t> step_at;
    for (const int64_t index : common) {
        step_at.emplace(index, steps.size());
        StepAcrossRanks& step = steps.emplace_back();
        step.step_index = index;
        step.wait_ns.assign(n, 0);
        step.caused_wait_ns.assign(n, 0);
        for (size_t p = 0; p < n; ++p) {
            const RankStep& own = *own_step[p].at(index);
            step.step_ns.push_back(own.end_ns - own.start_ns);
            step.comm_ns.push_back(own.comm_ns);
            step.exposed_comm_ns.push_back(own.exposed_comm_ns);
        }
    }
    // A rank waits only where its device does nothing else: each wait starts at the latest of its own start and the
    // end of the rank's own kernels during it (compute_until_ns). Waits in collectives that overlap in time
    // (host-staged buckets reduced concurrently, one per stream) are one wait, from its own last arrival among them
    // to the end of the latest: the rank is still handing over its later buckets while it waits for the first.
    // Collectives one after another (NCCL's on one stream) add up. What a rank caused: the same over each other
    // rank's waits on it, summed over them.
    struct Wait {
        int64_t from_ns, to_ns, compute_until_ns;
        bool operator<(const Wait& o) const { return from_ns < o.from_ns; }
    };
    using Intervals = std::vector<Wait>;
    std::vector<std::vector<Intervals>> waits(steps.size(), std::vector<Intervals>(n)); // [step][waiter]
    std::vector<std::vector<Intervals>> caused(steps.size(), std::vector<Intervals>(n * n)); // [step][last * n + p]
    for (const MatchedCollective& collective : collectives) {
        const size_t at = step_at.at(collective.step_index);
        size_t last = 0;
        for (size_t p = 0; p < n; ++p)
            if (ranks[p]->rank == collective.last_rank)
                last = p;
        for (size_t p = 0; p < n; ++p) {
            if (collective.wait_ns[p] <= 0)
                continue;
            const Wait span { collective.start_ns[p], collective.start_ns[p] + collective.wait_ns[p],
                collective.compute_until_ns[p] };
            waits[at][p].push_back(span);
            caused[at][last * n + p].push_back(span); // the last rank's own wait is 0
        }
    }
    const auto overlapping_wait_ns = [](Intervals& spans) {
        std::sort(spans.begin(), spans.end());
        int64_t total = 0;
        for (size_t i = 0; i < spans.size();) {
            int64_t from = std::max(spans[i].from_ns, spans[i].compute_until_ns), to = spans[i].to_ns;
            size_t j = i + 1;
            for (; j < spans.size() && spans[j].from_ns < to; ++j) {
                from = std::max({ from, spans[j].from_ns, spans[j].compute_until_ns });
                to = std::max(to, spans[j].to_ns);
            }
            total += std::max<int64_t>(0, to - from);
            i = j;
        }
        return total;
    };
    for (size_t at = 0; at < steps.size(); ++at)
        for (size_t p = 0; p < n; ++p) {
            steps[at].wait_ns[p] = overlapping_wait_ns(waits[at][p]);
            for (size_t q = 0; q < n; ++q)
                steps[at].caused_wait_ns[p] += overlapping_wait_ns(caused[at][p * n + q]);
        }
    for (StepAcrossRanks& step : steps) {
        const auto most_caused = std::max_element(step.caused_wait_ns.begin(), step.caused_wait_ns.end());
        size_t slowest = static_cast<size_t>(most_caused - step.caused_wait_ns.begin());
        step.slowest_by = SlowestBy::CausedWait;
        if (*most_caused == 0) {
            slowest = static_cast<size_t>(
                std::max_element(step.step_ns.begin(), step.step_ns.end()) - step.step_ns.begin());
            step.slowest_by = SlowestBy::StepTime;
        }
        step.slowest_rank = ranks[slowest]->rank;
        step.slowest_lead_cause = lead_cause(own_step, slowest, step.step_index);
    }
    return steps;
}

// scale_inv, or 1 / scale for a sample without it; nullopt when neither is usable.
std::optional<double> scale_inv_of(const RankScaleSample& sample)
{
    if (sample.is_scale_inv)
        return sample.value;
    if (sample.value == 0)
        return std::nullopt;
    return 1.0 / sample.value;
}

bool agree(double a, double b)
{
    return std::abs(a - b) <= kScaleRelativeTolerance * std::max(std::abs(a), std::abs(b));
}

ScaleAgreement check_scales(const Ranks& ranks)
{
    using Key = std::tuple<const std::string*, int64_t, int32_t>; // site, step, sample
    const auto less = [](const Key& a, const Key& b) {
        return std::tie(*std::get<0>(a), std::get<1>(a), std::get<2>(a))
            < std::tie(*std::get<0>(b), std::get<1>(b), std::get<2>(b));
    };
    // The lowest rank's value of each sample: the one every other rank is held to.
    std::map<Key, std::pair<size_t, double>, decltype(less)> reference(less);
    ScaleAgreement agreement;
    std::map<Key, bool, decltype(less)> counted(less);
    for (size_t p = 0; p < ranks.size(); ++p) {
        for (const RankScaleSample& sample : ranks[p]->scales) {
            const std::optional<double> value = scale_inv_of(sample);
            if (!value)
                continue;
            const Key key { &sample.site, sample.step, sample.sample };
            const auto [ref, first] = reference.try_emplace(key, p, *value);
            if (first)
                continue;
            bool& mismatch_counted = counted[key];
            if (agree(ref->second.second, *value))
                continue;
            agreement.mismatches += mismatch_counted ? 0 : 1;
            const bool earlier = !agreement.first
                || std::tie(sample.step, sample.site, sample.sample)
                    < std::tie(agreement.first->step, agreement.first->site, agreement.first->sample);
            if (!mismatch_counted && earlier)
                agreement.first = ScaleMismatch { sample.site, sample.step, sample.sample,
                    ranks[ref->second.first]->rank, ranks[p]->rank, ref->second.second, *value };
            mismatch_counted = true;
        }
    }
    agreement.compared = static_cast<int64_t>(counted.size());
    return agreement;
}

} // namespace

std::optional<StepWait> longest_step_wait(const CrossRankReport& across)
{
    if (across.collectives.empty())
        return std::nullopt;
    std::optional<StepWait> longest;
    for (const StepAcrossRanks& step : across.steps)
        for (size_t i = 0; i < step.wait_ns.size(); ++i)
            if (!longest || step.wait_ns[i] > longest->wait_ns)
                longest = StepWait { across.ranks[i], step.step_index, step.wait_ns[i] };
    return longest;
}

std::string_view lead_cause_name(LeadCause cause)
{
    return cause == LeadCause::Compute ? "compute" : bubble_cause_name(static_cast<BubbleCause>(cause));
}

const char* slowest_by_name(SlowestBy by)
{
    return by == SlowestBy::CausedWait ? "caused_wait" : "step_time";
}

CrossRankReport analyze_across_ranks(std::span<const RankSummary> summaries)
{
    CrossRankReport report;
    if (summaries.empty())
        return report;
    Ranks ranks;
    for (const RankSummary& summary : summaries)
        ranks.push_back(&summary);
    std::sort(ranks.begin(), ranks.end(), [](const RankSummary* a, const RankSummary* b) { return a->rank < b->rank; });
    for (const RankSummary* rank : ranks) {
        report.ranks.push_back(rank->rank);
        report.per_rank.push_back(RankAcross { .rank = rank->rank });
    }
    report.common_steps = common_step_indices(ranks);
    for (size_t p = 0; p < ranks.size(); ++p)
        report.per_rank[p].steps_not_common
            = static_cast<int64_t>(ranks[p]->steps.size()) - static_cast<int64_t>(report.common_steps.size());
    const auto matched = match_collectives(ranks, report.common_steps, report.per_rank);
    std::vector<int64_t> shift_ns;
    report.clock = align_clocks(ranks, matched, shift_ns);
    for (const auto& [key, rows] : matched) {
        MatchedCollective collective = straggler_of(ranks, key, rows, shift_ns);
        if (!report.worst_collective
            || collective.max_wait_ns > report.collectives[*report.worst_collective].max_wait_ns)
            report.worst_collective = report.collectives.size();
        for (RankAcross& rank : report.per_rank)
            rank.times_last += rank.rank == collective.last_rank ? 1 : 0;
        report.collectives.push_back(std::move(collective));
    }
    report.steps = steps_across(ranks, report.common_steps, report.collectives);
    for (const StepAcrossRanks& step : report.steps)
        for (size_t p = 0; p < ranks.size(); ++p) {
            report.per_rank[p].wait_ns += step.wait_ns[p];
            report.per_rank[p].caused_wait_ns += step.caused_wait_ns[p];
        }
    report.scales = check_scales(ranks);
    return report;
}

} // namespace fp8scope::analyzer
