// TraceDb::add_* of the tensor statistics tables: sites, statistics samples and per-block statistics samples. Their
// REAL columns may meet NaN, which SQLite cannot store (docs/trace-format.md, "NaN values"); the writer routes it here.
#include "trace_db_impl.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace fp8scope {

using writer_detail::Binder;
using writer_detail::Insert;

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
    Binder binder(impl_->statement(Insert::TensorSite));
    binder.integer(row.id).integer(row.name.value);
    if (row.nvtx_path)
        binder.integer(row.nvtx_path->value);
    else
        binder.null();
    binder.integer(row.ordinal)
        .integer(row.rows)
        .integer(row.cols)
        .integer(row.batch)
        .integer(static_cast<int64_t>(row.dtype))
        .integer(static_cast<int64_t>(row.role))
        .integer(static_cast<int64_t>(row.source));
    if (row.scale_recipe)
        binder.integer(static_cast<int64_t>(*row.scale_recipe));
    else
        binder.null();
    return impl_->insert(Insert::TensorSite, "cannot insert into FP8SCOPE_TENSOR_SITE");
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
    const schema::Table* table = schema::find_table(schema::table::kTensorStats);
    int64_t nan_columns = 0;
    for (size_t bit = 0, column = 0; bit < std::size(reals); ++bit, ++column) {
        while (table->columns[column].sql_type != "REAL")
            ++column;
        if (!reals[bit] || !std::isnan(*reals[bit]))
            continue;
        if (!table->columns[column].nullable) {
            Error error = nan_refused(impl_->path, table->name, table->columns[column].name);
            impl_->note_lost(1, error);
            return std::unexpected(std::move(error));
        }
        nan_columns |= int64_t { 1 } << bit;
    }
    const auto stored = [&](size_t bit) { return nan_columns >> bit & 1 ? std::nullopt : reals[bit]; };
    // The histogram is stored as little-endian uint64 counts (docs/trace-format.md); x86-64 and aarch64 Linux
    // are little-endian, so the vector's bytes are that layout.
    static_assert(std::endian::native == std::endian::little);
    Binder(impl_->statement(Insert::TensorStats))
        .null() // id: SQLite assigns the next rowid
        .integer(row.site_id)
        .integer(row.step)
        .integer(row.timestamp_ns)
        .integer(row.device_id)
        .integer(row.stream_id)
        .integer(row.correlation_id)
        .integer(static_cast<int64_t>(row.dtype))
        .integer(static_cast<int64_t>(row.target_format))
        .integer(row.numel)
        .real(stored(0))
        .real(stored(1))
        .real(row.amax)
        .real(stored(3))
        .integer(row.zeros)
        .integer(row.nans)
        .integer(row.infs)
        .integer(row.overflows)
        .integer(row.underflows)
        .integer(row.subnormals)
        .integer(row.saturated)
        .real(row.sum)
        .real(row.sum_squares)
        .real(row.sum_cubes)
        .real(row.sum_fourth)
        .integer(row.hist_first_exponent)
        .blob(row.exponent_histogram.data(), row.exponent_histogram.size() * sizeof(uint64_t))
        .integer(nan_columns == 0 ? std::nullopt : std::optional(nan_columns));
    return impl_->insert(Insert::TensorStats, "cannot insert into FP8SCOPE_TENSOR_STATS");
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
    static_assert(
        std::ssize(reals) == std::ranges::count(schema::detail::kBlockStats, "REAL", &schema::Column::sql_type));
    const schema::Table* table = schema::find_table(schema::table::kBlockStats);
    for (size_t i = 0, column = 0; i < std::size(reals); ++i, ++column) {
        while (table->columns[column].sql_type != "REAL")
            ++column;
        if (!reals[i] || !std::isnan(*reals[i]))
            continue;
        if (!table->columns[column].nullable) {
            Error error = nan_refused(impl_->path, table->name, table->columns[column].name);
            impl_->note_lost(1, error);
            return std::unexpected(std::move(error));
        }
        reals[i].reset();
    }
    static_assert(std::endian::native == std::endian::little); // the histogram's layout, as in add_tensor_stats
    Binder(impl_->statement(Insert::BlockStats))
        .null() // id: SQLite assigns the next rowid
        .integer(row.site_id)
        .integer(row.step)
        .integer(row.timestamp_ns)
        .integer(row.block_rows)
        .integer(row.block_cols)
        .integer(row.blocks)
        .integer(row.bad_scale_blocks)
        .integer(row.saturating_blocks)
        .integer(row.subnormal_blocks)
        .integer(row.numel)
        .integer(row.zeros)
        .integer(row.nans)
        .integer(row.infs)
        .integer(row.subnormals)
        .integer(row.saturated)
        .real(*reals[0])
        .real(*reals[1])
        .real(*reals[2])
        .real(*reals[3])
        .real(reals[4])
        .real(reals[5])
        .integer(row.hist_first_exponent)
        .blob(row.exponent_histogram.data(), row.exponent_histogram.size() * sizeof(uint64_t));
    return impl_->insert(Insert::BlockStats, "cannot insert into FP8SCOPE_BLOCK_STATS");
}

} // namespace fp8scope
