// TraceDb::add_* of the tensor statistics tables: sites, statistics samples and per-block statistics samples. Their
// REAL columns may meet NaN, which SQLite cannot store (docs/trace-format.md, "NaN values"); the writer routes it here.
#include "trace_db_impl.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace fp8scope {

namespace tables = schema::tables;
using writer_detail::Blob;
using writer_detail::NextRowid;

namespace {

// A NaN where a NOT NULL REAL column must hold the value: SQLite would store it as NULL, which the column refuses, so
// the row is refused and counted lost rather than stored as something else (docs/trace-format.md, "NaN values").
Error nan_refused(const std::string& path, std::string_view table, std::string_view column)
{
    return Error { ErrorCode::Io,
        path + ": cannot insert into " + std::string(table) + ": NaN in " + std::string(column) };
}

} // namespace

Expected<void> TraceDb::add_tensor_site(const TensorSiteRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kTensorSite>(row.id, row.name, row.nvtx_path, row.ordinal, row.rows, row.cols,
        row.batch, row.dtype, row.role, row.source, row.scale_recipe);
}

Expected<void> TraceDb::add_tensor_stats(const TensorStatsRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    // The REAL columns in schema order, which is nanColumns' bit order (schema::detail::kTensorStatsNanColumns).
    // SQLite would store a NaN as NULL: a nullable column gets NULL and its bit, so that NaN is not read as
    // "unknown"; a required one cannot hold it, and the row is refused as lost rather than stored wrong.
    const std::optional<double> reals[] = { row.scale, row.scale_inv, row.amax, row.min_nonzero_abs, row.sum,
        row.sum_squares, row.sum_cubes, row.sum_fourth };
    static_assert(std::size(reals) == std::size(schema::detail::kTensorStatsNanColumns));
    constexpr const schema::Table& table = tables::kTensorStats;
    int64_t nan_columns = 0;
    for (size_t bit = 0, column = 0; bit < std::size(reals); ++bit, ++column) {
        while (table.columns[column].sql_type != "REAL")
            ++column;
        if (!reals[bit] || !std::isnan(*reals[bit]))
            continue;
        if (!table.columns[column].nullable) {
            Error error = nan_refused(impl_->path, table.name, table.columns[column].name);
            impl_->note_lost(1, error);
            return std::unexpected(std::move(error));
        }
        nan_columns |= int64_t { 1 } << bit;
    }
    const auto stored = [&](size_t bit) { return nan_columns >> bit & 1 ? std::nullopt : reals[bit]; };
    // The histogram is stored as little-endian uint64 counts (docs/trace-format.md); x86-64 and aarch64 Linux
    // are little-endian, so the vector's bytes are that layout.
    static_assert(std::endian::native == std::endian::little);
    const Blob histogram { row.exponent_histogram.data(), row.exponent_histogram.size() * sizeof(uint64_t) };
    return impl_->write<tables::kTensorStats>(NextRowid {}, row.site_id, row.step, row.timestamp_ns, row.device_id,
        row.stream_id, row.correlation_id, row.dtype, row.target_format, row.numel, stored(0), stored(1), row.amax,
        stored(3), row.zeros, row.nans, row.infs, row.overflows, row.underflows, row.subnormals, row.saturated, row.sum,
        row.sum_squares, row.sum_cubes, row.sum_fourth, row.hist_first_exponent, histogram,
        nan_columns == 0 ? std::nullopt : std::optional(nan_columns));
}

Expected<void> TraceDb::add_block_stats(const BlockStatsRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    // The REAL columns in schema order. A NaN in a required one refuses the row as lost, as in add_tensor_stats; in
    // scaleInvMin or scaleInvMax, which only good scales (positive and finite) make, it is stored as NULL: no good
    // scale. +-Inf is stored as a REAL.
    std::optional<double> reals[] = { row.amax, row.block_amax_min, row.block_amax_p50, row.block_amax_p99,
        row.scale_inv_min, row.scale_inv_max };
    constexpr const schema::Table& table = tables::kBlockStats;
    static_assert(std::ssize(reals) == std::ranges::count(table.columns, "REAL", &schema::Column::sql_type));
    for (size_t i = 0, column = 0; i < std::size(reals); ++i, ++column) {
        while (table.columns[column].sql_type != "REAL")
            ++column;
        if (!reals[i] || !std::isnan(*reals[i]))
            continue;
        if (!table.columns[column].nullable) {
            Error error = nan_refused(impl_->path, table.name, table.columns[column].name);
            impl_->note_lost(1, error);
            return std::unexpected(std::move(error));
        }
        reals[i].reset();
    }
    static_assert(std::endian::native == std::endian::little); // the histogram's layout, as in add_tensor_stats
    const Blob histogram { row.exponent_histogram.data(), row.exponent_histogram.size() * sizeof(uint64_t) };
    return impl_->write<tables::kBlockStats>(NextRowid {}, row.site_id, row.step, row.timestamp_ns, row.block_rows,
        row.block_cols, row.blocks, row.bad_scale_blocks, row.saturating_blocks, row.subnormal_blocks, row.numel,
        row.zeros, row.nans, row.infs, row.subnormals, row.saturated, *reals[0], *reals[1], *reals[2], *reals[3],
        reals[4], reals[5], row.hist_first_exponent, histogram);
}

} // namespace fp8scope
