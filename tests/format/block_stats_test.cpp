// FP8SCOPE_BLOCK_STATS (format 1.6): TraceDb::add_block_stats writes every column in schema order, the histogram as
// little-endian uint64 counts, and routes NaN as docs/trace-format.md "NaN values" says: NULL in scaleInvMin and
// scaleInvMax, a refused row, counted lost, in a NOT NULL REAL. Checked with raw SQL, independent of the loader.
#include "format_test_support.hpp"

#include "fp8scope/format/schema.hpp"
#include "fp8scope/format/trace_db.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <memory>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::unique_ptr<TraceDb> create(const std::string& path, int* write_errors = nullptr)
{
    TraceDbOptions options;
    if (write_errors)
        options.on_write_error = [write_errors](const Error&) { ++*write_errors; };
    auto db = TraceDb::create(path, test_session(), options);
    REQUIRE(db.has_value());
    TensorSiteRow site;
    site.id = 5;
    site.name = (*db)->intern("fc1.input");
    site.dtype = schema::Dtype::E4M3;
    site.role = schema::TensorRole::A;
    site.source = schema::StatsSource::GemmInterception;
    site.scale_recipe = schema::ScaleRecipe::Blockwise1x128;
    REQUIRE((*db)->add_tensor_site(site).has_value());
    return std::move(*db);
}

// A 256x512 E4M3 operand in 1x128 blocks: 1024 blocks, each figure a different number.
BlockStatsRow block_row()
{
    BlockStatsRow row;
    row.site_id = 5;
    row.timestamp_ns = 7000;
    row.block_rows = 1;
    row.block_cols = 128;
    row.blocks = 1024;
    row.bad_scale_blocks = 2;
    row.saturating_blocks = 3;
    row.subnormal_blocks = 4;
    row.numel = 131'072;
    row.zeros = 10;
    row.nans = 11;
    row.infs = 12;
    row.subnormals = 13;
    row.saturated = 14;
    row.amax = 96.5;
    row.block_amax_min = 0.25;
    row.block_amax_p50 = 2.5;
    row.block_amax_p99 = 48.0;
    row.scale_inv_min = 0.0009765625;
    row.scale_inv_max = 0.125;
    row.hist_first_exponent = -12;
    row.exponent_histogram = { 1, 0x0102030405060708ull, 3 };
    return row;
}

} // namespace

TEST_CASE("add_block_stats writes every column, NULL for unknown step and scales, the histogram little-endian")
{
    const std::string path = scratch_path("block_stats_rows.sqlite");
    auto db = create(path);
    BlockStatsRow row = block_row();
    row.step = 40;
    REQUIRE(db->add_block_stats(row).has_value());
    row.step = std::nullopt;
    row.timestamp_ns = 8000;
    row.bad_scale_blocks = row.blocks; // no block has a good scale: no scale range, no histogram
    row.scale_inv_min = row.scale_inv_max = std::nullopt;
    row.exponent_histogram.clear();
    REQUIRE(db->add_block_stats(row).has_value());
    CHECK(db->counters().rows_lost == 0);
    REQUIRE(db->finish({ .reason = "exit", .session_end_ns = 9000 }).has_value());

    SqliteFile file(path);
    CHECK(file.rows("SELECT * FROM FP8SCOPE_BLOCK_STATS")
        == std::vector<Row> {
            { "1", "5", "40", "7000", "1", "128", "1024", "2", "3", "4", "131072", "10", "11", "12", "13", "14", "96.5",
                "0.25", "2.5", "48.0", "0.0009765625", "0.125", "-12", "blob:24" },
            { "2", "5", "NULL", "8000", "1", "128", "1024", "1024", "3", "4", "131072", "10", "11", "12", "13", "14",
                "96.5", "0.25", "2.5", "48.0", "NULL", "NULL", "-12", "blob:0" } });
    CHECK(file.value("SELECT hex(exponentHistogram) FROM FP8SCOPE_BLOCK_STATS WHERE id = 1")
        == "010000000000000008070605040302010300000000000000");
    CHECK(file.value("SELECT typeof(exponentHistogram) FROM FP8SCOPE_BLOCK_STATS WHERE id = 2") == "blob");
    // Finished: its row count in the meta table, and the index for reading a site over steps.
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'row_count.FP8SCOPE_BLOCK_STATS'") == 2);
    CHECK(
        file.rows("SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = 'FP8SCOPE_IDX_BLOCK_STATS_SITE'")
        == std::vector<Row> { { "FP8SCOPE_BLOCK_STATS" } });
    CHECK(file.rows("SELECT name FROM pragma_index_info('FP8SCOPE_IDX_BLOCK_STATS_SITE')")
        == std::vector<Row> { { "siteId" }, { "step" } });
}

TEST_CASE(
    "FP8SCOPE_BLOCK_STATS: a NaN scaleInvMin or scaleInvMax is NULL, +-Inf a value, NaN elsewhere refuses the row")
{
    const std::string path = scratch_path("block_stats_nan.sqlite");
    int write_errors = 0;
    auto db = create(path, &write_errors);
    BlockStatsRow nan_scales = block_row();
    nan_scales.scale_inv_min = kNan;
    nan_scales.scale_inv_max = -kNan;
    REQUIRE(db->add_block_stats(nan_scales).has_value());
    BlockStatsRow infinite = block_row();
    infinite.amax = kInf; // a code times a huge scale_inv overflowed double: a value, not NaN
    infinite.block_amax_p99 = kInf;
    infinite.scale_inv_max = kInf;
    REQUIRE(db->add_block_stats(infinite).has_value());
    CHECK(db->counters().rows_lost == 0);
    for (double BlockStatsRow::*field : { &BlockStatsRow::amax, &BlockStatsRow::block_amax_min,
             &BlockStatsRow::block_amax_p50, &BlockStatsRow::block_amax_p99 }) {
        BlockStatsRow row = block_row();
        row.*field = kNan;
        const auto added = db->add_block_stats(row);
        REQUIRE_FALSE(added.has_value());
        CHECK(added.error().message.find("cannot insert into FP8SCOPE_BLOCK_STATS: NaN in ") != std::string::npos);
    }
    REQUIRE(db->add_block_stats(block_row()).has_value()); // the writer goes on
    CHECK(db->counters().rows_lost == 4);
    CHECK(write_errors == 1);
    REQUIRE(db->finish({ .reason = "exit", .session_end_ns = 9000 }).has_value());

    SqliteFile file(path);
    CHECK(file.rows("SELECT id, amax, blockAmaxP99, scaleInvMin, scaleInvMax FROM FP8SCOPE_BLOCK_STATS ORDER BY id")
        == std::vector<Row> { { "1", "96.5", "48.0", "NULL", "NULL" }, { "2", "Inf", "Inf", "0.0009765625", "Inf" },
            { "3", "96.5", "48.0", "0.0009765625", "0.125" } });
    CHECK(file.rows("SELECT source, count FROM FP8SCOPE_DROPPED")
        == std::vector<Row> { { std::to_string(static_cast<int>(schema::DropSource::WriterError)), "4" } });
}
