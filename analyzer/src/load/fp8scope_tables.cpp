// The FP8SCOPE_* tables that have no nsys counterpart: tensor sites, statistics and per-block statistics, scalars,
// step markers, collector overhead, dropped records, and the kernel latency timestamps (counted, not loaded).
#include "fp8scope/format/schema.hpp"
#include "load/id_index.hpp"
#include "load/readers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace fp8scope::analyzer::detail {

namespace {

namespace tables = schema::tables;

Expected<void> record_count(ReadContext& context, std::string_view table, const Expected<int64_t>& rows)
{
    if (!rows)
        return std::unexpected(rows.error());
    context.model.row_counts[std::string(table)] = *rows;
    return {};
}

std::optional<StringRef> optional_string_ref(Columns& row, int index, const StringIdMap& strings)
{
    if (row.is_null(index))
        return std::nullopt;
    return string_ref(row, index, strings);
}

// FP8SCOPE_TENSOR_STATS.exponentHistogram and FP8SCOPE_BLOCK_STATS.exponentHistogram: little-endian uint64 counts
// (schema.hpp).
std::vector<uint64_t> decode_histogram(Columns& row, int index)
{
    const auto bytes = row.blob(index);
    if (bytes.size() % sizeof(uint64_t) != 0) {
        row.fail(index, fmt::format("a blob of {} bytes, not a whole number of uint64 counts,", bytes.size()));
        return {};
    }
    std::vector<uint64_t> counts(bytes.size() / sizeof(uint64_t));
    for (size_t i = 0; i < counts.size(); ++i) {
        uint64_t value = 0;
        for (size_t b = 0; b < sizeof(uint64_t); ++b)
            value |= static_cast<uint64_t>(bytes[i * sizeof(uint64_t) + b]) << (8 * b);
        counts[i] = value;
    }
    return counts;
}

// The cells FP8SCOPE_TENSOR_STATS.nanColumns flags (schema 1.4): stored as NULL, they were NaN. Bit i is the i-th REAL
// column (schema::detail::kTensorStatsNanColumns); a bit set on a cell that holds a value, or on no REAL column, is a
// file this reader cannot trust.
void set_flagged_nans(Columns& row, int index, int64_t flags, TensorStats& s)
{
    constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
    std::optional<double>* nullable[] = { &s.scale, &s.scale_inv, nullptr, &s.min_nonzero_abs };
    static_assert(std::size(schema::detail::kTensorStatsNanColumns) == 8);
    if (flags < 0 || flags >= int64_t { 1 } << std::size(schema::detail::kTensorStatsNanColumns)) {
        row.fail(index, fmt::format("bit mask {} beyond the REAL columns", flags));
        return;
    }
    for (size_t bit = 0; bit < std::size(schema::detail::kTensorStatsNanColumns); ++bit) {
        if ((flags >> bit & 1) == 0)
            continue;
        if (bit >= std::size(nullable) || nullable[bit] == nullptr || nullable[bit]->has_value()) {
            row.fail(index,
                fmt::format("bit {} flags {} as NaN, which is not a NULL cell of a nullable column", bit,
                    schema::detail::kTensorStatsNanColumns[bit]));
            return;
        }
        *nullable[bit] = kNan;
    }
}

// Reads FP8SCOPE_* rows through `c`, with the count recorded.
template <const schema::Table& T, class OnRow>
Expected<void> read_table(ReadContext& context, const TableColumns<T>& c, OnRow&& on_row)
{
    if (auto ok = c.check(); !ok)
        return ok;
    return record_count(context, T.name, for_each_row(context.file, c, std::forward<OnRow>(on_row)));
}

// A field of a sample, and the column it is read from: for the runs of counts and of values that a sample reads
// alike.
template <class Sample, const schema::Table& T, class Value = int64_t> struct FieldColumn {
    Value Sample::*field;
    schema::ColumnOf<T> column;
};
template <class Sample, const schema::Table& T> using CountColumn = FieldColumn<Sample, T>;
template <class Sample, const schema::Table& T> using RealColumn = FieldColumn<Sample, T, double>;

// The counts of codes that tensor and per-block statistics both have, under the same column names in both tables.
template <class Sample, const schema::Table& T>
constexpr CountColumn<Sample, T> kSharedCodes[] = { { &Sample::zeros, "zeros" }, { &Sample::nans, "nans" },
    { &Sample::infs, "infs" }, { &Sample::subnormals, "subnormals" }, { &Sample::saturated, "saturated" } };

// A tensor or per-block statistics sample, read alike: its site (which must be known), step and time first; its counts
// of codes (the shared ones, then the table's own `more_codes`), none above numel and nans and infs together within
// it, and its histogram last.
template <const schema::Table& T, class Sample> struct SampleReader {
    using Counts = std::span<const CountColumn<Sample, T>>;
    const TableColumns<T>& c;
    const IdIndex& site_index;
    Counts more_codes;

    // Reads every row of T into `samples`: each row's site, step and time (read_start), then the rest of it, which
    // `read_rest(row, sample)` reads.
    template <class ReadRest>
    Expected<void> read_rows(ReadContext& context, std::vector<Sample>& samples, ReadRest&& read_rest) const
    {
        return read_table(context, c, [&](Columns& row) {
            Sample s;
            read_start(row, s);
            read_rest(row, s);
            samples.push_back(std::move(s));
        });
    }
    void read_start(Columns& row, Sample& s) const
    {
        const int site = c["siteId"];
        s.site_id = row.integer(site);
        if (!site_index.find(s.site_id))
            row.fail(site, fmt::format("dangling site id {}", s.site_id));
        s.step = row.optional_integer(c["step"]);
        s.timestamp_ns = row.time(c["timestamp"]);
    }
    void read_counts(Columns& row, Sample& s, Counts counts) const
    {
        for (const auto& [field, column] : counts)
            s.*field = row.count(c[column]);
    }
    void read_codes(Columns& row, Sample& s) const
    {
        read_counts(row, s, kSharedCodes<Sample, T>);
        read_counts(row, s, more_codes);
    }
    void read_reals(Columns& row, Sample& s, std::span<const RealColumn<Sample, T>> reals) const
    {
        for (const auto& [field, column] : reals)
            s.*field = row.real(c[column]);
    }
    // Every count is of the sample's elements, so none can exceed numel: a fraction above 1 is never shown.
    void read_end(Columns& row, Sample& s) const
    {
        for (const Counts codes : { Counts(kSharedCodes<Sample, T>), more_codes })
            for (const auto& [field, column] : codes)
                if (s.*field > s.numel) [[unlikely]]
                    row.fail(c[column], fmt::format("count {} above numel {}", s.*field, s.numel));
        if (s.nans > s.numel - s.infs) [[unlikely]]
            row.fail_row(fmt::format("nans + infs above numel {}", s.numel));
        s.hist_first_exponent = row.int32(c["histFirstExponent"]);
        s.exponent_histogram = decode_histogram(row, c["exponentHistogram"]);
    }
};

Expected<void> read_tensor_sites(ReadContext& context, IdIndex& site_index)
{
    constexpr const schema::Table& kTable = tables::kTensorSite;
    // scaleRecipe (1.5) is absent from older traces: no recipe was recorded. check_tables has required the others.
    const TableColumns<kTable> c(context.file, ColumnsFrom::OurTrace, EveryColumn {});
    auto& sites = context.model.tensor_sites;
    const int recipe = c["scaleRecipe"];
    auto read = read_table(context, c, [&](Columns& row) {
        sites.push_back(TensorSite { .id = row.integer(c["id"]),
            .name = string_ref(row, c["nameId"], context.strings),
            .nvtx_path = optional_string_ref(row, c["nvtxPathId"], context.strings),
            .ordinal = row.int32(c["ordinal"]),
            .rows = row.count(c["rows"]),
            .cols = row.count(c["cols"]),
            .batch = row.count(c["batch"]),
            .dtype = row.int32(c["dtype"]),
            .role = row.int32(c["role"]),
            .source = row.int32(c["source"]),
            .scale_recipe = row.is_null(recipe) ? std::nullopt : std::optional(row.int32(recipe)) });
    });
    if (!read)
        return read;
    std::vector<int64_t> ids;
    ids.reserve(sites.size());
    for (const TensorSite& site : sites)
        ids.push_back(site.id);
    if (const auto duplicate = site_index.build(ids))
        return std::unexpected(context.file.invalid(fmt::format("duplicate id {} in {}", *duplicate, kTable.name)));
    return {};
}

Expected<void> read_tensor_stats(ReadContext& context, const IdIndex& site_index)
{
    constexpr const schema::Table& kTable = tables::kTensorStats;
    static constexpr CountColumn<TensorStats, kTable> kMoreCodes[]
        = { { &TensorStats::overflows, "overflows" }, { &TensorStats::underflows, "underflows" } };
    static constexpr RealColumn<TensorStats, kTable> kSums[]
        = { { &TensorStats::sum, "sum" }, { &TensorStats::sum_squares, "sumSquares" },
              { &TensorStats::sum_cubes, "sumCubes" }, { &TensorStats::sum_fourth, "sumFourth" } };
    // nanColumns (1.4) is absent from older traces: nothing was flagged. check_tables has required the others.
    const TableColumns<kTable> c(context.file, ColumnsFrom::OurTrace, EveryColumn {});
    const SampleReader<kTable, TensorStats> sample { c, site_index, kMoreCodes };
    const int nan_columns = c["nanColumns"];
    return sample.read_rows(context, context.model.tensor_stats, [&](Columns& row, TensorStats& s) {
        s.device_id = row.id32(c["deviceId"]);
        s.stream_id = row.id32(c["streamId"]);
        s.correlation_id = row.optional_id32(c["correlationId"]);
        s.dtype = row.int32(c["dtype"]);
        s.target_format = row.int32(c["targetFormat"]);
        s.numel = row.count(c["numel"]);
        s.scale = row.optional_real(c["scale"]);
        s.scale_inv = row.optional_real(c["scaleInv"]);
        s.amax = row.real(c["amax"]);
        s.min_nonzero_abs = row.optional_real(c["minNonzeroAbs"]);
        sample.read_codes(row, s);
        sample.read_reals(row, s, kSums);
        sample.read_end(row, s);
        if (const int64_t flags = row.integer_or(nan_columns, 0); flags != 0) [[unlikely]]
            set_flagged_nans(row, nan_columns, flags, s);
    });
}

// Per-block statistics (schema 1.6); older traces lack the table: no sample has them. Checked as tensor statistics
// are: a known site, counts of codes within numel, and counts of blocks within blocks.
Expected<void> read_block_stats(ReadContext& context, const IdIndex& site_index)
{
    constexpr const schema::Table& kTable = tables::kBlockStats;
    if (!context.file.has_table(kTable.name))
        return {};
    using Counts = CountColumn<BlockStats, kTable>;
    static constexpr Counts kBlocks[] = { { &BlockStats::bad_scale_blocks, "badScaleBlocks" },
        { &BlockStats::saturating_blocks, "saturatingBlocks" }, { &BlockStats::subnormal_blocks, "subnormalBlocks" } };
    static constexpr RealColumn<BlockStats, kTable> kAmax[]
        = { { &BlockStats::amax, "amax" }, { &BlockStats::block_amax_min, "blockAmaxMin" },
              { &BlockStats::block_amax_p50, "blockAmaxP50" }, { &BlockStats::block_amax_p99, "blockAmaxP99" } };
    const TableColumns<kTable> c(context.file, ColumnsFrom::Declaration, EveryColumn {});
    const SampleReader<kTable, BlockStats> sample { c, site_index, {} };
    return sample.read_rows(context, context.model.block_stats, [&](Columns& row, BlockStats& s) {
        s.block_rows = row.count(c["blockRows"]);
        s.block_cols = row.count(c["blockCols"]);
        s.blocks = row.count(c["blocks"]);
        sample.read_counts(row, s, kBlocks);
        s.numel = row.count(c["numel"]);
        sample.read_codes(row, s);
        sample.read_reals(row, s, kAmax);
        s.scale_inv_min = row.optional_real(c["scaleInvMin"]);
        s.scale_inv_max = row.optional_real(c["scaleInvMax"]);
        // As for tensor statistics, no fraction of the operand's blocks can come out above 1.
        for (const auto& [field, column] : kBlocks)
            if (s.*field > s.blocks) [[unlikely]]
                row.fail(c[column], fmt::format("count {} above blocks {}", s.*field, s.blocks));
        sample.read_end(row, s);
    });
}

Expected<void> read_scalars(ReadContext& context)
{
    const TableColumns<tables::kScalar> c(context.file, ColumnsFrom::Declaration, EveryColumn {});
    auto read = read_table(context, c, [&](Columns& row) {
        context.model.scalars.push_back(Scalar { .timestamp_ns = row.time(c["timestamp"]),
            .step = row.optional_integer(c["step"]),
            .name = string_ref(row, c["nameId"], context.strings),
            .value = row.real(c["value"]),
            .global_tid = row.integer(c["globalTid"]) });
    });
    // Scalars logged as NaN (schema 1.4), which FP8SCOPE_SCALAR cannot hold; older traces lack the table. They join
    // the others as quiet NaN values; model_order sorts them all by time.
    if (!read || !context.file.has_table(tables::kScalarNan.name))
        return read;
    const TableColumns<tables::kScalarNan> nan(context.file, ColumnsFrom::Declaration, EveryColumn {});
    return read_table(context, nan, [&](Columns& row) {
        context.model.scalars.push_back(Scalar { .timestamp_ns = row.time(nan["timestamp"]),
            .step = row.optional_integer(nan["step"]),
            .name = string_ref(row, nan["nameId"], context.strings),
            .value = std::numeric_limits<double>::quiet_NaN(),
            .global_tid = row.integer(nan["globalTid"]) });
    });
}

Expected<void> read_step_markers(ReadContext& context)
{
    // source (1.7) is absent from older traces, whose markers are all the job's. check_tables has required the others.
    const TableColumns<tables::kStepMarker> c(context.file, ColumnsFrom::OurTrace, EveryColumn {});
    static_assert(int32_t(StepMarkerSource::Optimizer) == int32_t(schema::StepMarkerSource::Optimizer)
        && int32_t(StepMarkerSource::OptimizerSkipped) == int32_t(schema::StepMarkerSource::OptimizerSkipped));
    const int source = c["source"];
    return read_table(context, c, [&](Columns& row) {
        const auto marker_source
            = row.is_null(source) ? StepMarkerSource::Job : static_cast<StepMarkerSource>(row.int32(source));
        context.model.step_markers.push_back(StepMarker {
            row.time(c["timestamp"]), row.integer(c["step"]), row.integer(c["globalTid"]), marker_source });
    });
}

Expected<void> read_overheads(ReadContext& context)
{
    const TableColumns<tables::kOverhead> c(context.file, ColumnsFrom::Declaration, { "start", "end", "kind" });
    return read_table(context, c, [&](Columns& row) {
        Overhead overhead { row.time(c["start"]), row.time(c["end"]), row.int32(c["kind"]) };
        if (overhead.end_ns < overhead.start_ns)
            row.fail_row("negative duration");
        context.model.overheads.push_back(overhead);
    });
}

Expected<void> read_dropped(ReadContext& context)
{
    const TableColumns<tables::kDropped> c(context.file, ColumnsFrom::Declaration, { "timestamp", "source", "count" });
    return read_table(context, c, [&](Columns& row) {
        context.model.dropped.push_back(
            Dropped { row.time(c["timestamp"]), row.int32(c["source"]), row.count(c["count"]) });
    });
}

// Absent from traces before schema 1.1; then the collector's kernels are still told by name
// (collector/src/session/own_work.hpp).
Expected<void> read_collector_work(ReadContext& context)
{
    constexpr const schema::Table& kTable = tables::kCollectorWork;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(context.file, ColumnsFrom::Declaration, EveryColumn {});
    return read_table(context, c,
        [&](Columns& row) { context.model.collector_correlation_ids.push_back(row.id32(c["correlationId"])); });
}

// The windows of a windowed recording, and what it was asked to capture (meta capture_mode, capture_options). Absent
// from older traces: the whole run was captured. Windows are checked as the analyses rely on them: in start order,
// each ending after it starts, none overlapping the next.
Expected<void> read_capture_windows(ReadContext& context)
{
    CaptureInfo& capture = context.model.capture;
    const auto& raw = context.model.meta.raw;
    if (const auto mode = raw.find(std::string(schema::meta::kCaptureMode)); mode != raw.end())
        capture.mode = mode->second;
    if (const auto options = raw.find(std::string(schema::meta::kCaptureOptions)); options != raw.end())
        capture.options = options->second;
    constexpr const schema::Table& kTable = tables::kCaptureWindow;
    if (!context.file.has_table(kTable.name)) {
        capture.windowed = capture.mode != "full";
        return {};
    }
    const TableColumns<kTable> c(context.file, ColumnsFrom::Declaration, EveryColumn {});
    const int end = c["end"];
    auto rows = for_each_row(context.file, c, [&](Columns& row) {
        CaptureWindow window;
        window.id = row.integer(c["id"]);
        window.start_ns = row.time(c["start"]);
        const std::optional<int64_t> end_ns = row.is_null(end) ? std::nullopt : std::optional(row.time(end));
        window.open_at_end = !end_ns;
        window.end_ns = end_ns.value_or(kMaxTraceTimeNs);
        if (window.end_ns < window.start_ns)
            row.fail_row("negative duration");
        window.first_step = row.optional_integer(c["firstStep"]);
        window.last_step = row.optional_integer(c["lastStep"]);
        window.trigger = row.int32(c["trigger"]);
        capture.windows.push_back(window);
    });
    if (!rows)
        return std::unexpected(rows.error());
    std::ranges::stable_sort(capture.windows, {}, &CaptureWindow::start_ns);
    for (size_t i = 1; i < capture.windows.size(); ++i)
        if (capture.windows[i].start_ns < capture.windows[i - 1].end_ns)
            return std::unexpected(context.file.invalid(fmt::format("capture windows {} and {} overlap in {}",
                capture.windows[i - 1].id, capture.windows[i].id, kTable.name)));
    capture.windowed = capture.mode != "full" || !capture.windows.empty();
    return record_count(context, kTable.name, rows);
}

} // namespace

Expected<void> read_fp8scope_tables(ReadContext& context)
{
    IdIndex site_index;
    if (auto ok = read_tensor_sites(context, site_index); !ok)
        return ok;
    if (auto ok = read_tensor_stats(context, site_index); !ok)
        return ok;
    if (auto ok = read_block_stats(context, site_index); !ok)
        return ok;
    for (auto read :
        { read_scalars, read_step_markers, read_overheads, read_dropped, read_collector_work, read_capture_windows }) {
        if (auto ok = read(context); !ok)
            return ok;
    }
    // Latency timestamps are not in the model yet; the count tells `fp8scope info` whether they were recorded.
    auto latency_rows = context.file.count_rows(tables::kKernelLatency.name);
    return record_count(context, tables::kKernelLatency.name, latency_rows);
}

// What load_trace_summary() reads beside the meta and the GPUs: the tables of one row per step, per window or per
// loss, small at any trace size.
Expected<void> read_fp8scope_summary_tables(ReadContext& context)
{
    for (auto read : { read_step_markers, read_dropped, read_capture_windows }) {
        if (auto ok = read(context); !ok)
            return ok;
    }
    return {};
}

} // namespace fp8scope::analyzer::detail
