// FP8SCOPE_BLOCK_STATS (format 1.6) through the writer and the loader: every field comes back as written, in time
// order; a trace older than the table loads with no per-block statistics; a row the analyses cannot trust (a site that
// does not exist, more blocks or codes counted than there are, a NULL figure) refuses the trace, as in
// FP8SCOPE_TENSOR_STATS.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "loader_test_support.hpp"
#include "tensor_samples.hpp"

#include "fp8scope/format/schema.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

// A 128x256 E4M3 operand in 128x128 blocks (2 blocks), every field a different value.
BlockStatsRow block_row(int64_t site_id, std::optional<int64_t> step, int64_t timestamp_ns)
{
    BlockStatsRow row;
    row.site_id = site_id;
    row.step = step;
    row.timestamp_ns = timestamp_ns;
    row.block_rows = 128;
    row.block_cols = 128;
    row.blocks = 2;
    row.bad_scale_blocks = 1;
    row.saturating_blocks = 1;
    row.subnormal_blocks = 1;
    row.numel = 32'768;
    row.zeros = 100;
    row.nans = 1;
    row.infs = 2;
    row.subnormals = 30;
    row.saturated = 4;
    row.amax = 6.5;
    row.block_amax_min = 6.5;
    row.block_amax_p50 = 6.5;
    row.block_amax_p99 = std::numeric_limits<double>::infinity();
    row.scale_inv_min = 0.015625;
    row.scale_inv_max = 0.015625;
    row.hist_first_exponent = -9;
    row.exponent_histogram = { 7, 0, 4000, 0xFFFF'FFFF'FFFFull };
    return row;
}

void check_block_stats(const BlockStats& loaded, const BlockStatsRow& written)
{
    CHECK(loaded.site_id == written.site_id);
    CHECK(loaded.step == written.step);
    CHECK(loaded.timestamp_ns == written.timestamp_ns);
    CHECK(loaded.block_rows == written.block_rows);
    CHECK(loaded.block_cols == written.block_cols);
    CHECK(loaded.blocks == written.blocks);
    CHECK(loaded.bad_scale_blocks == written.bad_scale_blocks);
    CHECK(loaded.saturating_blocks == written.saturating_blocks);
    CHECK(loaded.subnormal_blocks == written.subnormal_blocks);
    CHECK(loaded.numel == written.numel);
    CHECK(loaded.zeros == written.zeros);
    CHECK(loaded.nans == written.nans);
    CHECK(loaded.infs == written.infs);
    CHECK(loaded.subnormals == written.subnormals);
    CHECK(loaded.saturated == written.saturated);
    CHECK(loaded.amax == written.amax);
    CHECK(loaded.block_amax_min == written.block_amax_min);
    CHECK(loaded.block_amax_p50 == written.block_amax_p50);
    CHECK(loaded.block_amax_p99 == written.block_amax_p99);
    CHECK(loaded.scale_inv_min == written.scale_inv_min);
    CHECK(loaded.scale_inv_max == written.scale_inv_max);
    CHECK(loaded.hist_first_exponent == written.hist_first_exponent);
    CHECK(loaded.exponent_histogram == written.exponent_histogram);
}

struct BlockTrace {
    Scenario scenario;
    std::vector<BlockStatsRow> rows; // as written: the second first in time
};

// One blockwise site (id 1) sampled in steps 3 and 4: each sample a tensor statistics row and a block statistics row
// with the same site, step and time, written out of time order. Step 4's has no good scale (nullopt scale_inv_min
// and max, an empty histogram); step 3's has every field set.
BlockTrace block_trace()
{
    BlockTrace t;
    Scenario& s = t.scenario;
    const int64_t site = s.tensor_site(
        "mlp.fc1", schema::TensorRole::A, schema::Dtype::E4M3, 128, 256, schema::StatsSource::TorchScaledMm);
    REQUIRE(site == 1);
    s.site_recipe(site, schema::ScaleRecipe::Blockwise128x128);
    BlockStatsRow no_good_scale = block_row(site, 4, 2000);
    no_good_scale.bad_scale_blocks = 2;
    no_good_scale.saturating_blocks = no_good_scale.subnormal_blocks = 0;
    no_good_scale.amax = no_good_scale.block_amax_min = no_good_scale.block_amax_p50 = no_good_scale.block_amax_p99 = 0;
    no_good_scale.scale_inv_min = no_good_scale.scale_inv_max = std::nullopt;
    no_good_scale.exponent_histogram.clear();
    t.rows = { no_good_scale, block_row(site, 3, 1000) };
    for (const BlockStatsRow& row : t.rows) {
        s.tensor_stats(healthy_sample(site, row.step, row.timestamp_ns));
        s.block_stats(row);
    }
    return t;
}

std::string written_block_trace(const std::string& test)
{
    const std::string path = scratch_dir(test) + "/blocks.sqlite";
    REQUIRE(block_trace().scenario.write_fp8scope(path));
    return path;
}

} // namespace

TEST_CASE("per-block statistics round-trip through the writer and the loader, in time order", "[loader]")
{
    const BlockTrace trace = block_trace();
    const std::string path = scratch_dir("loader_block_stats") + "/blocks.sqlite";
    REQUIRE(trace.scenario.write_fp8scope(path));
    const auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->meta.schema_minor == schema::kMinorVersion);
    CHECK(loaded->row_counts.at("FP8SCOPE_BLOCK_STATS") == 2);
    REQUIRE(loaded->block_stats.size() == 2);
    INFO("step 3's sample, every field set");
    check_block_stats(loaded->block_stats[0], trace.rows[1]);
    INFO("step 4's sample, no good scale");
    check_block_stats(loaded->block_stats[1], trace.rows[0]);
    CHECK_FALSE(loaded->block_stats[1].scale_inv_min.has_value());
    CHECK(loaded->block_stats[1].exponent_histogram.empty());
    // Each sits beside its tensor statistics sample.
    REQUIRE(loaded->tensor_stats.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        CHECK(loaded->tensor_stats[i].site_id == loaded->block_stats[i].site_id);
        CHECK(loaded->tensor_stats[i].step == loaded->block_stats[i].step);
        CHECK(loaded->tensor_stats[i].timestamp_ns == loaded->block_stats[i].timestamp_ns);
    }
}

TEST_CASE("a trace older than 1.6 loads with no per-block statistics", "[loader][compat]")
{
    SECTION("the 1.5 demo trace kept for this")
    {
        const std::string path = std::string(FP8SCOPE_SAMPLE_TRACES) + "/compat/schema-1.5-148192c.sqlite";
        const auto loaded = load_trace(path);
        INFO((loaded ? std::string() : loaded.error().message));
        REQUIRE(loaded);
        CHECK(loaded->meta.schema_minor == 5);
        CHECK_FALSE(loaded->tensor_stats.empty());
        CHECK(loaded->block_stats.empty());
        CHECK(loaded->row_counts.count("FP8SCOPE_BLOCK_STATS") == 0);
    }
    SECTION("what a 1.5 reader sees of a 1.6 trace: the same file without the table")
    {
        const std::string path = written_block_trace("loader_block_stats_old");
        exec_sql(path,
            "DROP TABLE FP8SCOPE_BLOCK_STATS;"
            "DELETE FROM FP8SCOPE_META WHERE key = 'row_count.FP8SCOPE_BLOCK_STATS';"
            "UPDATE FP8SCOPE_META SET value = '1.5' WHERE key = 'schema_version';"
            "PRAGMA user_version = 65541;");
        const auto loaded = load_trace(path);
        INFO((loaded ? std::string() : loaded.error().message));
        REQUIRE(loaded);
        CHECK(loaded->meta.schema_minor == 5);
        CHECK(loaded->tensor_stats.size() == 2);
        CHECK(loaded->block_stats.empty());
    }
}

TEST_CASE("a 1.6 trace without FP8SCOPE_BLOCK_STATS is refused as a missing table", "[loader][bad]")
{
    const std::string path = written_block_trace("loader_block_stats_missing");
    exec_sql(path, "DROP TABLE FP8SCOPE_BLOCK_STATS;");
    check_error(load_trace(path), ErrorCode::InvalidTrace, path, "lacks table FP8SCOPE_BLOCK_STATS");
}

TEST_CASE("a per-block statistics row the analyses cannot trust refuses the trace", "[loader][bad]")
{
    const std::string path = written_block_trace("loader_block_stats_bad");
    const auto refused = [&](const std::string& set, const std::string& fragment) {
        exec_sql(path, "UPDATE FP8SCOPE_BLOCK_STATS SET " + set + " WHERE id = 2;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path, fragment);
    };
    SECTION("a site that does not exist")
    {
        refused("siteId = 77", "dangling site id 77 in FP8SCOPE_BLOCK_STATS.siteId (row 2)");
    }
    SECTION("a negative count")
    {
        refused("blocks = -1", "FP8SCOPE_BLOCK_STATS.blocks (row 2)");
    }
    SECTION("more blocks counted than there are")
    {
        refused("saturatingBlocks = 3", "count 3 above blocks 2 in FP8SCOPE_BLOCK_STATS.saturatingBlocks (row 2)");
    }
    SECTION("more codes counted than there are")
    {
        refused("zeros = 32769", "count 32769 above numel 32768 in FP8SCOPE_BLOCK_STATS.zeros (row 2)");
    }
    SECTION("NaN and Inf codes beyond numel")
    {
        refused("nans = 32767", "nans + infs above numel 32768 in FP8SCOPE_BLOCK_STATS row 2");
    }
    SECTION("NULL in a required figure")
    {
        // The table declares NOT NULL: rebuilt without the constraint, as a hostile or hand-edited file could be.
        exec_sql(path,
            "CREATE TABLE unconstrained AS SELECT * FROM FP8SCOPE_BLOCK_STATS ORDER BY id;"
            "DROP TABLE FP8SCOPE_BLOCK_STATS;"
            "ALTER TABLE unconstrained RENAME TO FP8SCOPE_BLOCK_STATS;");
        refused("blockAmaxP50 = NULL", "NULL in FP8SCOPE_BLOCK_STATS.blockAmaxP50 (row 2)");
    }
    SECTION("a histogram that is not whole uint64 counts")
    {
        refused("exponentHistogram = x'010203'", "FP8SCOPE_BLOCK_STATS.exponentHistogram (row 2)");
    }
}
