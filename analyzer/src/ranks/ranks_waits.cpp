// Straggler waits per collective kind (ranks.hpp waits_by_kind(); docs/analysis.md "Across ranks").
#include "fp8scope/analyzer/ranks/ranks.hpp"

#include <algorithm>

namespace fp8scope::analyzer {

std::vector<KindWaits> waits_by_kind(const CrossRankReport& across)
{
    const size_t n = across.ranks.size();
    std::array<KindWaits, kCollectiveKindCount> kinds;
    for (size_t k = 0; k < kCollectiveKindCount; ++k)
        kinds[k] = { static_cast<CollectiveKind>(k), 0, std::vector<int64_t>(n), std::vector<int64_t>(n),
            std::vector<int64_t>(n), -1 };
    for (const MatchedCollective& c : across.collectives) {
        KindWaits& kind = kinds[static_cast<size_t>(c.kind)];
        ++kind.count;
        for (size_t i = 0; i < n && i < c.wait_ns.size(); ++i) {
            kind.wait_ns[i] += c.wait_ns[i];
            kind.max_wait_ns[i] = std::max(kind.max_wait_ns[i], c.wait_ns[i]);
            if (across.ranks[i] == c.last_rank)
                ++kind.times_last[i];
        }
    }
    std::vector<KindWaits> used;
    for (KindWaits& kind : kinds) {
        if (kind.count == 0)
            continue;
        const auto most = std::max_element(kind.times_last.begin(), kind.times_last.end()); // the first of the highest
        kind.most_often_last = across.ranks[static_cast<size_t>(most - kind.times_last.begin())];
        used.push_back(std::move(kind));
    }
    return used;
}

} // namespace fp8scope::analyzer
