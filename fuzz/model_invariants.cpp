// check_model(): the invariants trace_model.hpp says the loader guarantees, checked on every model a fuzz target
// gets back, so that a wrong model fails as loudly as a crash.
#include "fuzz_support.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <map>
#include <utility>

namespace fp8scope::fuzz {

using analyzer::kMaxTraceTimeNs;
using analyzer::NvtxTable;
using analyzer::StringRef;
using analyzer::TraceModel;

namespace {

bool valid_utf8(std::string_view text)
{
    size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        size_t length = 0;
        uint32_t code = 0;
        if (lead < 0x80)
            length = 1, code = lead;
        else if ((lead & 0xE0) == 0xC0)
            length = 2, code = lead & 0x1F;
        else if ((lead & 0xF0) == 0xE0)
            length = 3, code = lead & 0x0F;
        else if ((lead & 0xF8) == 0xF0)
            length = 4, code = lead & 0x07;
        else
            return false;
        if (i + length > text.size())
            return false;
        for (size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80)
                return false;
            code = code << 6 | (next & 0x3F);
        }
        // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8 (RFC 3629 section 3).
        constexpr uint32_t kShortest[] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (code < kShortest[length] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF)
            return false;
        i += length;
    }
    return true;
}

bool in_range(int64_t t)
{
    return t >= -kMaxTraceTimeNs && t <= kMaxTraceTimeNs;
}

void check_sizes(std::string_view table, size_t rows, std::initializer_list<size_t> columns)
{
    for (const size_t size : columns)
        if (size != rows)
            fail(fmt::format("{}: a column has {} rows, the table {}", table, size, rows));
}

// Times in range, end >= start, and rows sorted by start.
void check_intervals(std::string_view table, const std::vector<int64_t>& start_ns, const std::vector<int64_t>& end_ns)
{
    for (size_t i = 0; i < start_ns.size(); ++i) {
        if (!in_range(start_ns[i]) || !in_range(end_ns[i]))
            fail(fmt::format("{} row {}: [{}, {}] outside +-2^53 ns", table, i, start_ns[i], end_ns[i]));
        if (end_ns[i] < start_ns[i])
            fail(fmt::format("{} row {}: end {} before start {}", table, i, end_ns[i], start_ns[i]));
        if (i > 0 && start_ns[i] < start_ns[i - 1])
            fail(fmt::format("{} row {}: not sorted by start ({} after {})", table, i, start_ns[i], start_ns[i - 1]));
    }
}

void check_time(std::string_view what, size_t row, int64_t t)
{
    if (!in_range(t))
        fail(fmt::format("{} row {}: time {} outside +-2^53 ns", what, row, t));
}

void check_refs(const TraceModel& model, std::string_view what, const std::vector<StringRef>& refs)
{
    for (size_t i = 0; i < refs.size(); ++i)
        if (refs[i].index >= model.strings.size())
            fail(fmt::format("{} row {}: string {} of {}", what, i, refs[i].index, model.strings.size()));
}

void check_ref(const TraceModel& model, std::string_view what, size_t row, StringRef ref)
{
    if (ref.index >= model.strings.size())
        fail(fmt::format("{} row {}: string {} of {}", what, row, ref.index, model.strings.size()));
}

void check_kernels(const TraceModel& model)
{
    const auto& k = model.kernels;
    check_sizes("kernels", k.size(),
        { k.end_ns.size(), k.device_id.size(), k.stream_id.size(), k.correlation_id.size(), k.name.size(),
            k.short_name.size(), k.graph_id.size() });
    check_intervals("kernels", k.start_ns, k.end_ns);
    check_refs(model, "kernels.name", k.name);
    check_refs(model, "kernels.short_name", k.short_name);
    // Kernels of one stream run one after another, outside graphs: the loader clips the ones that overlap.
    std::map<std::pair<uint32_t, uint32_t>, int64_t> stream_end;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.graph_id[i] != 0)
            continue;
        const auto [it, added] = stream_end.try_emplace({ k.device_id[i], k.stream_id[i] }, k.end_ns[i]);
        if (added)
            continue;
        if (k.start_ns[i] < it->second)
            fail(fmt::format("kernels row {}: starts at {} before the previous kernel of device {} stream {} ends ({})",
                i, k.start_ns[i], k.device_id[i], k.stream_id[i], it->second));
        it->second = std::max(it->second, k.end_ns[i]);
    }
}

void check_activities(const TraceModel& model)
{
    const auto& a = model.api_calls;
    check_sizes("api_calls", a.size(),
        { a.end_ns.size(), a.global_tid.size(), a.correlation_id.size(), a.name.size(), a.is_driver.size(),
            a.return_value.size() });
    check_intervals("api_calls", a.start_ns, a.end_ns);
    check_refs(model, "api_calls.name", a.name);
    const auto& s = model.syncs;
    check_sizes("syncs", s.size(),
        { s.end_ns.size(), s.device_id.size(), s.stream_id.size(), s.correlation_id.size(), s.sync_type.size() });
    check_intervals("syncs", s.start_ns, s.end_ns);
    const auto& c = model.memcpys;
    check_sizes("memcpys", c.size(),
        { c.end_ns.size(), c.device_id.size(), c.stream_id.size(), c.correlation_id.size(), c.bytes.size(),
            c.copy_kind.size(), c.src_kind.size(), c.dst_kind.size() });
    check_intervals("memcpys", c.start_ns, c.end_ns);
    const auto& m = model.memsets;
    check_sizes("memsets", m.size(),
        { m.end_ns.size(), m.device_id.size(), m.stream_id.size(), m.correlation_id.size(), m.bytes.size(),
            m.mem_kind.size() });
    check_intervals("memsets", m.start_ns, m.end_ns);
    const auto& w = model.collector_work;
    check_sizes("collector_work", w.size(), { w.end_ns.size(), w.device_id.size(), w.stream_id.size(), w.kind.size() });
    for (size_t i = 0; i < w.size(); ++i)
        if (!in_range(w.start_ns[i]) || !in_range(w.end_ns[i]) || w.end_ns[i] < w.start_ns[i])
            fail(fmt::format("collector_work row {}: [{}, {}]", i, w.start_ns[i], w.end_ns[i]));
}

void check_nvtx(const TraceModel& model)
{
    const auto& n = model.nvtx;
    check_sizes("nvtx", n.size(), { n.end_ns.size(), n.event_type.size(), n.text.size(), n.global_tid.size() });
    check_refs(model, "nvtx.text", n.text);
    for (size_t i = 0; i < n.size(); ++i) {
        check_time("nvtx", i, n.start_ns[i]);
        if (n.end_ns[i] != NvtxTable::kNoEnd && (!in_range(n.end_ns[i]) || n.end_ns[i] < n.start_ns[i]))
            fail(fmt::format("nvtx row {}: end {} for start {}", i, n.end_ns[i], n.start_ns[i]));
        if (i > 0 && n.start_ns[i] < n.start_ns[i - 1])
            fail(fmt::format("nvtx row {}: not sorted by start", i));
    }
}

void check_rows(const TraceModel& model)
{
    for (size_t i = 0; i < model.thread_names.size(); ++i)
        check_ref(model, "thread_names", i, model.thread_names[i].name);
    for (size_t i = 0; i < model.tensor_sites.size(); ++i) {
        check_ref(model, "tensor_sites.name", i, model.tensor_sites[i].name);
        if (model.tensor_sites[i].nvtx_path)
            check_ref(model, "tensor_sites.nvtx_path", i, *model.tensor_sites[i].nvtx_path);
    }
    for (size_t i = 0; i < model.tensor_stats.size(); ++i)
        check_time("tensor_stats", i, model.tensor_stats[i].timestamp_ns);
    for (size_t i = 0; i < model.block_stats.size(); ++i) {
        const analyzer::BlockStats& b = model.block_stats[i];
        check_time("block_stats", i, b.timestamp_ns);
        // The loader refuses a row whose block counts pass its blocks, or that names no site.
        if (b.bad_scale_blocks > b.blocks || b.saturating_blocks > b.blocks || b.subnormal_blocks > b.blocks
            || std::ranges::none_of(
                model.tensor_sites, [&](const analyzer::TensorSite& s) { return s.id == b.site_id; }))
            fail(fmt::format("block_stats row {}: counts or site out of range", i));
    }
    for (size_t i = 0; i < model.scalars.size(); ++i) {
        check_time("scalars", i, model.scalars[i].timestamp_ns);
        check_ref(model, "scalars.name", i, model.scalars[i].name);
    }
    for (size_t i = 0; i < model.step_markers.size(); ++i)
        check_time("step_markers", i, model.step_markers[i].timestamp_ns);
    for (size_t i = 0; i < model.overheads.size(); ++i) {
        const auto& o = model.overheads[i];
        if (!in_range(o.start_ns) || !in_range(o.end_ns) || o.end_ns < o.start_ns)
            fail(fmt::format("overheads row {}: [{}, {}]", i, o.start_ns, o.end_ns));
    }
    for (size_t i = 0; i < model.dropped.size(); ++i)
        check_time("dropped", i, model.dropped[i].timestamp_ns);
    const auto& windows = model.capture.windows;
    for (size_t i = 0; i < windows.size(); ++i) {
        if (!in_range(windows[i].start_ns) || !in_range(windows[i].end_ns) || windows[i].end_ns < windows[i].start_ns)
            fail(fmt::format("capture window {}: [{}, {}]", i, windows[i].start_ns, windows[i].end_ns));
        if (i > 0 && windows[i].start_ns < windows[i - 1].end_ns)
            fail(fmt::format("capture window {} starts at {}, before window {} ends at {}", i, windows[i].start_ns,
                i - 1, windows[i - 1].end_ns));
    }
}

} // namespace

void check_model(const TraceModel& model)
{
    for (size_t i = 0; i < model.strings.size(); ++i)
        if (!valid_utf8(model.strings.values[i]))
            fail(fmt::format("string {} is not valid UTF-8", i));
    check_kernels(model);
    check_activities(model);
    check_nvtx(model);
    check_rows(model);
    if (model.dropped_records() < 0)
        fail("dropped_records() is negative");
    if (const auto span = model.time_span_ns(); span && span->second < span->first)
        fail(fmt::format("time span [{}, {}] ends before it starts", span->first, span->second));
}

} // namespace fp8scope::fuzz
