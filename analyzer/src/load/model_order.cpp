// Puts every table of a loaded model in time order (the model's invariant). Files are usually written in order
// already, so each table is first checked, which costs one pass.
#include "load/readers.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace fp8scope::analyzer::detail {

namespace {

// Tables arrive as a few sorted sequences interleaved: a collector writes each stream's kernels in launch order,
// or one buffer's rows after another's. Up to this many such sequences are merged; more fall back to a sort.
constexpr size_t kMaxPiles = 16;

// Splits the rows into non-decreasing subsequences ("piles") in one pass: each row joins the pile whose last start is
// the largest not above its own (best fit, which needs as few piles as the longest strictly decreasing run of starts
// has rows). Returns each row's pile and the number of piles, or nullopt when more than kMaxPiles would be needed.
std::optional<std::pair<std::vector<uint8_t>, size_t>> split_into_piles(const std::vector<int64_t>& start_ns)
{
    std::array<int64_t, kMaxPiles> last_ns {};
    size_t piles = 0;
    std::vector<uint8_t> pile(start_ns.size());
    for (size_t i = 0; i < start_ns.size(); ++i) {
        const int64_t t = start_ns[i];
        size_t best = kMaxPiles;
        for (size_t p = 0; p < piles; ++p)
            if (last_ns[p] <= t && (best == kMaxPiles || last_ns[p] > last_ns[best]))
                best = p;
        if (best == kMaxPiles) {
            if (piles == kMaxPiles)
                return std::nullopt;
            best = piles++;
        }
        last_ns[best] = t;
        pile[i] = static_cast<uint8_t>(best);
    }
    return std::pair { std::move(pile), piles };
}

// The rows in start order, by merging the piles; equal starts keep their file order (a stable sort's result).
template <class Index>
std::vector<Index> merge_piles(const std::vector<int64_t>& start_ns, const std::vector<uint8_t>& pile, size_t piles)
{
    const size_t rows = start_ns.size();
    const auto before
        = [&](size_t a, size_t b) { return start_ns[a] < start_ns[b] || (start_ns[a] == start_ns[b] && a < b); };
    // The next row of each pile not yet taken (`rows` when the pile is used up).
    std::array<size_t, kMaxPiles> head {};
    const auto next_of = [&](size_t p, size_t from) {
        while (from < rows && pile[from] != p)
            ++from;
        return from;
    };
    for (size_t p = 0; p < piles; ++p)
        head[p] = next_of(p, 0);
    std::vector<Index> order;
    order.reserve(rows);
    while (order.size() < rows) {
        // The pile whose head comes first takes rows until its head passes the runner-up's.
        size_t first = kMaxPiles, second = kMaxPiles;
        for (size_t p = 0; p < piles; ++p) {
            if (head[p] == rows)
                continue;
            if (first == kMaxPiles || before(head[p], head[first])) {
                second = first;
                first = p;
            } else if (second == kMaxPiles || before(head[p], head[second])) {
                second = p;
            }
        }
        size_t h = head[first];
        do {
            order.push_back(static_cast<Index>(h));
            h = next_of(first, h + 1);
        } while (h < rows && (second == kMaxPiles || before(h, head[second])));
        head[first] = h;
    }
    return order;
}

// Moves every column's rows to `order` (row i gets the row order[i] had) along the permutation's cycles: no second
// copy of any column. `order` is used up (it ends as the identity).
template <class Index, class... Columns> void permute_in_place(std::vector<Index>& order, Columns&... columns)
{
    for (size_t i = 0; i < order.size(); ++i) {
        if (order[i] == i)
            continue;
        std::tuple saved { std::move(columns[i])... };
        size_t to = i;
        for (;;) {
            const size_t from = order[to];
            order[to] = static_cast<Index>(to);
            if (from == i)
                break;
            ((columns[to] = std::move(columns[from])), ...);
            to = from;
        }
        std::apply([&](auto&... values) { ((columns[to] = std::move(values)), ...); }, saved);
    }
}

template <class Index, class... Columns> void sort_columns_by(std::vector<int64_t>& start_ns, Columns&... columns)
{
    std::vector<Index> order;
    if (auto piles = split_into_piles(start_ns)) {
        order = merge_piles<Index>(start_ns, piles->first, piles->second);
    } else {
        order.resize(start_ns.size());
        std::iota(order.begin(), order.end(), Index { 0 });
        std::ranges::stable_sort(order, [&](Index a, Index b) { return start_ns[a] < start_ns[b]; });
    }
    permute_in_place(order, start_ns, columns...);
}

// A struct-of-arrays table, sorted by its start column with every other column moved alike.
template <class... Columns> void sort_columns(std::vector<int64_t>& start_ns, Columns&... columns)
{
    if (std::ranges::is_sorted(start_ns))
        return;
    // 32-bit positions halve the permutation's memory on the tables that matter (10 M rows: 40 MB).
    if (start_ns.size() <= UINT32_MAX)
        sort_columns_by<uint32_t>(start_ns, columns...);
    else
        sort_columns_by<size_t>(start_ns, columns...);
}

template <class Row, class Key> void sort_rows(std::vector<Row>& rows, Key key)
{
    if (!std::ranges::is_sorted(rows, {}, key))
        std::ranges::stable_sort(rows, {}, key);
}

// Clips kernels that start before the previous kernel of their (device, stream) ended (ClippedKernels,
// trace_model.hpp). `k` is sorted by start. Returns whether any start moved (the table may then be out of order).
bool clip_overlapping_kernels(KernelTable& k, ClippedKernels& clipped)
{
    std::unordered_map<uint64_t, int64_t> stream_end; // (device << 32 | stream) -> latest end so far
    // Kernels of a few streams interleave: the streams met last are looked up in a small array first, so that the
    // hash map (whose element addresses never move) is searched only when a stream comes back after many others.
    struct Recent {
        uint64_t key = UINT64_MAX;
        int64_t* end = nullptr;
    };
    std::array<Recent, 8> recent {};
    size_t next_slot = 0;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.graph_id[i] != 0)
            continue;
        const uint64_t key = (uint64_t { k.device_id[i] } << 32) | k.stream_id[i];
        int64_t* end = nullptr;
        for (const Recent& r : recent)
            if (r.key == key)
                end = r.end;
        if (!end) [[unlikely]] {
            end = &stream_end.try_emplace(key, INT64_MIN).first->second;
            recent[next_slot] = { key, end };
            next_slot = (next_slot + 1) % recent.size();
        }
        if (k.start_ns[i] < *end) [[unlikely]] {
            ++clipped.count;
            clipped.clipped_ns += std::min(*end, k.end_ns[i]) - k.start_ns[i];
            k.start_ns[i] = *end;
            k.end_ns[i] = std::max(k.end_ns[i], k.start_ns[i]);
        }
        *end = std::max(*end, k.end_ns[i]);
    }
    return clipped.count > 0;
}

} // namespace

void sort_kernels_by_time(TraceModel& model)
{
    auto& k = model.kernels;
    sort_columns(k.start_ns, k.end_ns, k.device_id, k.stream_id, k.correlation_id, k.name, k.short_name, k.graph_id);
    if (clip_overlapping_kernels(k, model.clipped_kernels))
        sort_columns(
            k.start_ns, k.end_ns, k.device_id, k.stream_id, k.correlation_id, k.name, k.short_name, k.graph_id);
}

void sort_by_time(TraceModel& model)
{
    auto& a = model.api_calls;
    sort_columns(a.start_ns, a.end_ns, a.global_tid.index, a.correlation_id, a.name, a.is_driver, a.return_value);
    auto& s = model.syncs;
    sort_columns(s.start_ns, s.end_ns, s.device_id, s.stream_id, s.correlation_id, s.sync_type);
    auto& c = model.memcpys;
    sort_columns(
        c.start_ns, c.end_ns, c.device_id, c.stream_id, c.correlation_id, c.bytes, c.copy_kind, c.src_kind, c.dst_kind);
    auto& m = model.memsets;
    sort_columns(m.start_ns, m.end_ns, m.device_id, m.stream_id, m.correlation_id, m.bytes, m.mem_kind);
    auto& n = model.nvtx;
    sort_columns(n.start_ns, n.end_ns, n.event_type, n.text, n.global_tid);

    sort_rows(model.tensor_stats, &TensorStats::timestamp_ns);
    sort_rows(model.block_stats, &BlockStats::timestamp_ns);
    sort_rows(model.scalars, &Scalar::timestamp_ns);
    sort_rows(model.step_markers, &StepMarker::timestamp_ns);
    sort_rows(model.overheads, &Overhead::start_ns);
    sort_rows(model.dropped, &Dropped::timestamp_ns);
}

} // namespace fp8scope::analyzer::detail
