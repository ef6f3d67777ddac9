// The two readers behind load_trace(), and the activity tables whose layout an fp8scope trace shares with an
// Nsight Systems export.
#pragma once

#include "fp8scope/analyzer/load/trace_summary.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "load/sqlite_reader.hpp"
#include "load/string_map.hpp"

#include <map>
#include <string>

namespace fp8scope::analyzer::detail {

// How a shared table reads. Our traces declare NOT NULL wherever schema.hpp says required, so a NULL there is
// an error. nsys 3.28.1 declares many of the same columns nullable (correlationId, globalPid, globalTid,
// srcKind, ...) and creates tables only when they have rows; there NULL means "not recorded" and a missing
// table means empty.
enum class Dialect { Fp8scope, Nsight };

// The row counts a finished trace of schema 1.2 or later records in FP8SCOPE_META (row_count.<TABLE>), by table;
// empty for other files (older or unfinished traces, nsys exports, a file whose meta cannot be read: the loader then
// runs PRAGMA quick_check instead). An error for a count that is not a non-negative integer.
using RowCounts = std::map<std::string, int64_t, std::less<>>;
Expected<RowCounts> recorded_row_counts(const TraceFile& file);

struct ReadContext {
    const TraceFile& file;
    TraceModel& model;
    StringIdMap& strings;
    Dialect dialect;
    const RowCounts* recorded = nullptr; // recorded_row_counts(), when read
    bool nsight() const { return dialect == Dialect::Nsight; }
    // How a reader of a table this file may lack columns of learns which it has (TableColumns).
    ColumnsFrom columns_from() const { return nsight() ? ColumnsFrom::NsightExport : ColumnsFrom::OurTrace; }
};

// `recorded`: the file's recorded row counts (possibly empty), which size the columns before they are read.
Expected<void> read_fp8scope(const TraceFile& file, TraceModel& model, const RowCounts& recorded);
// What load_trace_summary() reads of an fp8scope trace: the version, the meta, that every table is there, and the
// GPU, step marker, dropped record and capture window rows.
Expected<void> read_fp8scope_summary(const TraceFile& file, TraceModel& model, const RowCounts& recorded);
// The summary of a finished trace from that partial model and the recorded row counts (trace_summary.cpp); nullopt
// when its meta lacks the activity's span, and the trace must be loaded whole.
std::optional<TraceSummary> summary_from_meta(const TraceModel& partial, const RowCounts& recorded);
// Compares the rows read (model.row_counts) with the recorded counts for every table a finished trace counts:
// an error naming the first table that differs or has no count.
Expected<void> check_row_counts(const TraceFile& file, const TraceModel& model, const RowCounts& recorded);
Expected<void> read_nsight(const TraceFile& file, TraceModel& model);

// Shared tables. Each records its row count in model.row_counts and does nothing when the file lacks the
// table (only possible for nsys: read_fp8scope checks that every table exists first).
Expected<void> read_api_calls(ReadContext& context);
Expected<void> read_syncs(ReadContext& context);
Expected<void> read_memcpys(ReadContext& context);
Expected<void> read_memsets(ReadContext& context);
Expected<void> read_nvtx(ReadContext& context);
Expected<void> read_thread_names(ReadContext& context);
Expected<void> read_gpus(ReadContext& context);

using TableReader = Expected<void> (*)(ReadContext&);

// Runs read_kernels on a second connection in a worker thread while read_here runs on this one, and sorts the
// kernels there (sort_kernels_by_time). The kernel reader may fill only model.kernels and row_counts, which are moved
// into context.model afterwards with clipped_kernels.
Expected<void> read_kernels_alongside(ReadContext& context, TableReader read_kernels, TableReader read_here);

// The rows `table` holds: the count the file records when it records one the file is large enough to hold (it is
// checked against the rows read afterwards), else SELECT count(*), which reads every page of the table (0.2 s for
// 10 M kernels, docs/benchmarks.md).
Expected<int64_t> rows_to_expect(const ReadContext& context, std::string_view table);

// Reserves a table's rows (rows_to_expect) in each column vector, so that no column grows by copying itself; the
// count is what the file's progress monitor expects to read.
template <class... Vectors>
Expected<int64_t> reserve_rows(const ReadContext& context, std::string_view table, Vectors&... vectors)
{
    auto rows = rows_to_expect(context, table);
    if (rows) {
        (vectors.reserve(static_cast<size_t>(*rows)), ...);
        if (ProgressMonitor* monitor = context.file.monitor())
            monitor->expect_rows(*rows);
    }
    return rows;
}

// Sorts the kernel table by start, stably, and clips the kernels that overlap on a stream (ClippedKernels).
// read_kernels_alongside runs it on the thread that read the kernels, while the other thread is still reading.
void sort_kernels_by_time(TraceModel& model);
// Sorts every other activity table by start, stably, and the row-wise tables by timestamp. Cheap when already sorted.
void sort_by_time(TraceModel& model);

} // namespace fp8scope::analyzer::detail
