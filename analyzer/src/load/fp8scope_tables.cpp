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

namespace fp8scope::analyzer::detail {

namespace {

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

Expected<void> read_tensor_sites(ReadContext& context, IdIndex& site_index)
{
    constexpr std::string_view kTable = schema::table::kTensorSite;
    constexpr std::string_view kColumns[] = { "id", "nameId", "nvtxPathId", "ordinal", "rows", "cols", "batch", "dtype",
        "role", "source", "scaleRecipe" };
    // scaleRecipe (1.5) is absent from older traces: no recipe was recorded. check_tables has required the others.
    auto plan = plan_columns(context.file, kTable, kColumns, std::span(kColumns).first(std::size(kColumns) - 1));
    if (!plan)
        return std::unexpected(plan.error());
    const int recipe_index = plan->index.back();
    auto& sites = context.model.tensor_sites;
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        TensorSite site;
        site.id = row.integer(0);
        site.name = string_ref(row, 1, context.strings);
        site.nvtx_path = optional_string_ref(row, 2, context.strings);
        site.ordinal = row.int32(3);
        site.rows = row.count(4);
        site.cols = row.count(5);
        site.batch = row.count(6);
        site.dtype = row.int32(7);
        site.role = row.int32(8);
        site.source = row.int32(9);
        if (!row.is_null(recipe_index))
            site.scale_recipe = row.int32(recipe_index);
        sites.push_back(site);
    });
    if (!rows)
        return std::unexpected(rows.error());
    std::vector<int64_t> ids;
    ids.reserve(sites.size());
    for (const TensorSite& site : sites)
        ids.push_back(site.id);
    if (const auto duplicate = site_index.build(ids))
        return std::unexpected(context.file.invalid(fmt::format("duplicate id {} in {}", *duplicate, kTable)));
    return record_count(context, kTable, rows);
}

Expected<void> read_tensor_stats(ReadContext& context, const IdIndex& site_index)
{
    constexpr std::string_view kTable = schema::table::kTensorStats;
    constexpr std::string_view kColumns[] = { "siteId", "step", "timestamp", "deviceId", "streamId", "correlationId",
        "dtype", "targetFormat", "numel", "scale", "scaleInv", "amax", "minNonzeroAbs", "zeros", "nans", "infs",
        "overflows", "underflows", "subnormals", "saturated", "sum", "sumSquares", "sumCubes", "sumFourth",
        "histFirstExponent", "exponentHistogram", "nanColumns" };
    // nanColumns (1.4) is absent from older traces: nothing was flagged. check_tables has required the others.
    auto plan = plan_columns(context.file, kTable, kColumns, std::span(kColumns).first(std::size(kColumns) - 1));
    if (!plan)
        return std::unexpected(plan.error());
    const int nan_columns_index = plan->index.back();
    auto& stats = context.model.tensor_stats;
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        TensorStats s;
        s.site_id = row.integer(0);
        if (!site_index.find(s.site_id))
            row.fail(0, fmt::format("dangling site id {}", s.site_id));
        s.step = row.optional_integer(1);
        s.timestamp_ns = row.time(2);
        s.device_id = row.id32(3);
        s.stream_id = row.id32(4);
        s.correlation_id = row.optional_id32(5);
        s.dtype = row.int32(6);
        s.target_format = row.int32(7);
        s.numel = row.count(8);
        s.scale = row.optional_real(9);
        s.scale_inv = row.optional_real(10);
        s.amax = row.real(11);
        s.min_nonzero_abs = row.optional_real(12);
        s.zeros = row.count(13);
        s.nans = row.count(14);
        s.infs = row.count(15);
        s.overflows = row.count(16);
        s.underflows = row.count(17);
        s.subnormals = row.count(18);
        s.saturated = row.count(19);
        s.sum = row.real(20);
        s.sum_squares = row.real(21);
        s.sum_cubes = row.real(22);
        s.sum_fourth = row.real(23);
        // Every count is of the tensor's elements, so none can exceed numel: a fraction above 1 is never shown.
        for (const auto& [count, index] : { std::pair { s.zeros, 13 }, { s.nans, 14 }, { s.infs, 15 },
                 { s.overflows, 16 }, { s.underflows, 17 }, { s.subnormals, 18 }, { s.saturated, 19 } })
            if (count > s.numel) [[unlikely]]
                row.fail(index, fmt::format("count {} above numel {}", count, s.numel));
        if (s.nans > s.numel - s.infs) [[unlikely]]
            row.fail_row(fmt::format("nans + infs above numel {}", s.numel));
        s.hist_first_exponent = row.int32(24);
        s.exponent_histogram = decode_histogram(row, 25);
        if (const int64_t flags = row.integer_or(nan_columns_index, 0); flags != 0) [[unlikely]]
            set_flagged_nans(row, nan_columns_index, flags, s);
        stats.push_back(std::move(s));
    });
    return record_count(context, kTable, rows);
}

// Per-block statistics (schema 1.6); older traces lack the table: no sample has them. Checked as tensor statistics
// are: a known site, counts of codes within numel, and counts of blocks within blocks.
Expected<void> read_block_stats(ReadContext& context, const IdIndex& site_index)
{
    constexpr std::string_view kTable = schema::table::kBlockStats;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kColumns[]
        = { "siteId", "step", "timestamp", "blockRows", "blockCols", "blocks", "badScaleBlocks", "saturatingBlocks",
              "subnormalBlocks", "numel", "zeros", "nans", "infs", "subnormals", "saturated", "amax", "blockAmaxMin",
              "blockAmaxP50", "blockAmaxP99", "scaleInvMin", "scaleInvMax", "histFirstExponent", "exponentHistogram" };
    auto& stats = context.model.block_stats;
    auto rows = for_each_row(context.file, kTable, kColumns, [&](Columns& row) {
        BlockStats s;
        s.site_id = row.integer(0);
        if (!site_index.find(s.site_id))
            row.fail(0, fmt::format("dangling site id {}", s.site_id));
        s.step = row.optional_integer(1);
        s.timestamp_ns = row.time(2);
        s.block_rows = row.count(3);
        s.block_cols = row.count(4);
        s.blocks = row.count(5);
        s.bad_scale_blocks = row.count(6);
        s.saturating_blocks = row.count(7);
        s.subnormal_blocks = row.count(8);
        s.numel = row.count(9);
        s.zeros = row.count(10);
        s.nans = row.count(11);
        s.infs = row.count(12);
        s.subnormals = row.count(13);
        s.saturated = row.count(14);
        s.amax = row.real(15);
        s.block_amax_min = row.real(16);
        s.block_amax_p50 = row.real(17);
        s.block_amax_p99 = row.real(18);
        s.scale_inv_min = row.optional_real(19);
        s.scale_inv_max = row.optional_real(20);
        // As for tensor statistics, no fraction of the operand's codes or of its blocks can come out above 1.
        for (const auto& [count, index] :
            { std::pair { s.bad_scale_blocks, 6 }, { s.saturating_blocks, 7 }, { s.subnormal_blocks, 8 } })
            if (count > s.blocks) [[unlikely]]
                row.fail(index, fmt::format("count {} above blocks {}", count, s.blocks));
        for (const auto& [count, index] :
            { std::pair { s.zeros, 10 }, { s.nans, 11 }, { s.infs, 12 }, { s.subnormals, 13 }, { s.saturated, 14 } })
            if (count > s.numel) [[unlikely]]
                row.fail(index, fmt::format("count {} above numel {}", count, s.numel));
        if (s.nans > s.numel - s.infs) [[unlikely]]
            row.fail_row(fmt::format("nans + infs above numel {}", s.numel));
        s.hist_first_exponent = row.int32(21);
        s.exponent_histogram = decode_histogram(row, 22);
        stats.push_back(std::move(s));
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_scalars(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kScalar;
    constexpr std::string_view kColumns[] = { "timestamp", "step", "nameId", "value", "globalTid" };
    auto rows = for_each_row(context.file, kTable, kColumns, [&](Columns& row) {
        Scalar scalar;
        scalar.timestamp_ns = row.time(0);
        scalar.step = row.optional_integer(1);
        scalar.name = string_ref(row, 2, context.strings);
        scalar.value = row.real(3);
        scalar.global_tid = row.integer(4);
        context.model.scalars.push_back(scalar);
    });
    if (auto ok = record_count(context, kTable, rows); !ok)
        return ok;
    // Scalars logged as NaN (schema 1.4), which FP8SCOPE_SCALAR cannot hold; older traces lack the table. They join
    // the others as quiet NaN values; model_order sorts them all by time.
    constexpr std::string_view kNanTable = schema::table::kScalarNan;
    if (!context.file.has_table(kNanTable))
        return {};
    constexpr std::string_view kNanColumns[] = { "timestamp", "step", "nameId", "globalTid" };
    auto nan_rows = for_each_row(context.file, kNanTable, kNanColumns, [&](Columns& row) {
        context.model.scalars.push_back(Scalar { .timestamp_ns = row.time(0),
            .step = row.optional_integer(1),
            .name = string_ref(row, 2, context.strings),
            .value = std::numeric_limits<double>::quiet_NaN(),
            .global_tid = row.integer(3) });
    });
    return record_count(context, kNanTable, nan_rows);
}

Expected<void> read_step_markers(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kStepMarker;
    constexpr std::string_view kColumns[] = { "timestamp", "step", "globalTid", "source" };
    // source (1.7) is absent from older traces, whose markers are all the job's. check_tables has required the others.
    auto plan = plan_columns(context.file, kTable, kColumns, std::span(kColumns).first(std::size(kColumns) - 1));
    if (!plan)
        return std::unexpected(plan.error());
    const int source_index = plan->index.back();
    static_assert(int32_t(StepMarkerSource::Optimizer) == int32_t(schema::StepMarkerSource::Optimizer)
        && int32_t(StepMarkerSource::OptimizerSkipped) == int32_t(schema::StepMarkerSource::OptimizerSkipped));
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        const auto source = row.is_null(source_index) ? StepMarkerSource::Job
                                                      : static_cast<StepMarkerSource>(row.int32(source_index));
        context.model.step_markers.push_back(StepMarker { row.time(0), row.integer(1), row.integer(2), source });
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_overheads(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kOverhead;
    constexpr std::string_view kColumns[] = { "start", "end", "kind" };
    auto rows = for_each_row(context.file, kTable, kColumns, [&](Columns& row) {
        Overhead overhead { row.time(0), row.time(1), row.int32(2) };
        if (overhead.end_ns < overhead.start_ns)
            row.fail_row("negative duration");
        context.model.overheads.push_back(overhead);
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_dropped(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kDropped;
    constexpr std::string_view kColumns[] = { "timestamp", "source", "count" };
    auto rows = for_each_row(context.file, kTable, kColumns, [&](Columns& row) {
        context.model.dropped.push_back(Dropped { row.time(0), row.int32(1), row.count(2) });
    });
    return record_count(context, kTable, rows);
}

// Absent from traces before schema 1.1; then the collector's kernels are still told by name
// (collector/src/session/own_work.hpp).
Expected<void> read_collector_work(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kCollectorWork;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kColumns[] = { "correlationId" };
    auto rows = for_each_row(context.file, kTable, kColumns,
        [&](Columns& row) { context.model.collector_correlation_ids.push_back(row.id32(0)); });
    return record_count(context, kTable, rows);
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
    constexpr std::string_view kTable = schema::table::kCaptureWindow;
    if (!context.file.has_table(kTable)) {
        capture.windowed = capture.mode != "full";
        return {};
    }
    constexpr std::string_view kColumns[] = { "id", "start", "end", "firstStep", "lastStep", "trigger" };
    auto rows = for_each_row(context.file, kTable, kColumns, [&](Columns& row) {
        CaptureWindow window;
        window.id = row.integer(0);
        window.start_ns = row.time(1);
        const std::optional<int64_t> end = row.is_null(2) ? std::nullopt : std::optional(row.time(2));
        window.open_at_end = !end;
        window.end_ns = end.value_or(kMaxTraceTimeNs);
        if (window.end_ns < window.start_ns)
            row.fail_row("negative duration");
        window.first_step = row.optional_integer(3);
        window.last_step = row.optional_integer(4);
        window.trigger = row.int32(5);
        capture.windows.push_back(window);
    });
    if (!rows)
        return std::unexpected(rows.error());
    std::ranges::stable_sort(capture.windows, {}, &CaptureWindow::start_ns);
    for (size_t i = 1; i < capture.windows.size(); ++i)
        if (capture.windows[i].start_ns < capture.windows[i - 1].end_ns)
            return std::unexpected(context.file.invalid(fmt::format(
                "capture windows {} and {} overlap in {}", capture.windows[i - 1].id, capture.windows[i].id, kTable)));
    capture.windowed = capture.mode != "full" || !capture.windows.empty();
    return record_count(context, kTable, rows);
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
    auto latency_rows = context.file.count_rows(schema::table::kKernelLatency);
    return record_count(context, schema::table::kKernelLatency, latency_rows);
}

} // namespace fp8scope::analyzer::detail
