// TraceDb's bounded recordings (trace_db.hpp, mark_window_start and drop_oldest_windows; docs/collector.md
// "Monitoring"): the oldest capture windows' rows are deleted while the file's pages in use exceed the bound.
#include "trace_db_impl.hpp"

#include <iterator>

namespace fp8scope {
namespace {

namespace tables = schema::tables;

// The tables whose rows belong to the window they were recorded in. Left out, and kept whole: the GPUs, strings,
// kernel configurations (shared by kernels of every window), tensor sites, thread names, session start, meta, the
// collector's own work (correlation ids) and the dropped-record counts (a total the trace must keep).
constexpr const schema::Table* kWindowTables[] = { &tables::kFp8Kernel, &tables::kKernelLatency, &tables::kRuntime,
    &tables::kSynchronization, &tables::kMemcpy, &tables::kMemset, &tables::kNvtxEvents, &tables::kTensorStats,
    &tables::kBlockStats, &tables::kScalar, &tables::kScalarNan, &tables::kStepMarker, &tables::kOverhead };

std::string quoted(std::string_view name)
{
    return "\"" + std::string(name) + "\"";
}

} // namespace

Expected<void> TraceDb::mark_window_start(int64_t window_id)
{
    Impl& impl = *impl_;
    if (impl.closed)
        return impl.finished_error();
    if (auto flushed = impl.flush_batches(); !flushed) // batched kernels and API calls are rows of the window before
        return flushed;
    Impl::WindowMark mark { .window_id = window_id, .last_rowids = {} };
    for (const schema::Table* table : kWindowTables) {
        auto last = impl.query_integer(
            "SELECT max(rowid) FROM " + quoted(table->name), "cannot read the last row of " + std::string(table->name));
        if (!last)
            return std::unexpected(last.error());
        mark.last_rowids.push_back(*last);
    }
    impl.window_marks.push_back(std::move(mark));
    return {};
}

Expected<int64_t> TraceDb::used_bytes()
{
    Impl& impl = *impl_;
    auto pages = impl.query_integer("PRAGMA page_count", "cannot read the page count");
    auto free_pages = impl.query_integer("PRAGMA freelist_count", "cannot read the free page count");
    auto page_size = impl.query_integer("PRAGMA page_size", "cannot read the page size");
    if (!pages || !free_pages || !page_size)
        return std::unexpected(!pages ? pages.error() : !free_pages ? free_pages.error() : page_size.error());
    return (*pages - *free_pages) * *page_size;
}

Expected<int64_t> TraceDb::drop_oldest_windows(int64_t max_bytes)
{
    Impl& impl = *impl_;
    if (impl.closed)
        return std::unexpected(impl.finished_error().error());
    if (impl.rows_refused())
        return 0; // the file size limit stopped recording: nothing is written, not even a delete
    int64_t dropped = 0;
    while (impl.window_marks.size() >= 2) {
        auto used = used_bytes();
        if (!used)
            return std::unexpected(used.error());
        if (*used <= max_bytes)
            break;
        // Everything before the second-oldest window's start: the oldest window, and what came before it.
        const Impl::WindowMark& keep_from = impl.window_marks[1];
        for (size_t i = 0; i < std::size(kWindowTables); ++i) {
            const std::string sql = "DELETE FROM " + quoted(kWindowTables[i]->name)
                + " WHERE rowid <= " + std::to_string(keep_from.last_rowids[i]);
            if (auto ok = impl.exec(sql.c_str(), "cannot drop the oldest capture window's rows"); !ok)
                return std::unexpected(ok.error());
        }
        const std::string windows = "DELETE FROM " + quoted(tables::kCaptureWindow.name) + " WHERE id < "
            + std::to_string(keep_from.window_id);
        if (auto ok = impl.exec(windows.c_str(), "cannot drop the oldest capture window"); !ok)
            return std::unexpected(ok.error());
        impl.window_marks.erase(impl.window_marks.begin());
        ++impl.windows_dropped;
        ++dropped;
    }
    // Written at every call, so that a bounded trace says so before any window was dropped.
    if (auto ok = impl.write<tables::kMeta>(schema::meta::kTraceMaxBytes, max_bytes); !ok)
        return std::unexpected(ok.error());
    if (auto ok = impl.write<tables::kMeta>(schema::meta::kCaptureWindowsDropped, impl.windows_dropped); !ok)
        return std::unexpected(ok.error());
    return dropped;
}

} // namespace fp8scope
