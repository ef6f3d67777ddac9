// NaN values reach the trace (schema 1.4, docs/trace-format.md "NaN values"). SQLite stores a bound NaN as NULL, so
// the writer routes NaN itself: a NaN scalar becomes a row of FP8SCOPE_SCALAR_NAN, a NaN in a nullable statistic a
// NULL with its bit in FP8SCOPE_TENSOR_STATS.nanColumns, and a NaN where neither can hold it a lost row, counted.
// Checked with raw SQL, independent of the loader.
#include "format_test_support.hpp"
#include "tensor_samples.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kQuietNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kSignallingNan = std::numeric_limits<double>::signaling_NaN();
constexpr double kDenormal = std::numeric_limits<double>::denorm_min();

std::unique_ptr<TraceDb> create(const std::string& path, int* write_errors = nullptr)
{
    TraceDbOptions options;
    if (write_errors)
        options.on_write_error = [write_errors](const Error&) { ++*write_errors; };
    auto db = TraceDb::create(path, test_session(), options);
    REQUIRE(db.has_value());
    return std::move(*db);
}

TensorStatsRow stats_row(int64_t site_id)
{
    return testing::healthy_sample(site_id, std::nullopt, 100);
}

} // namespace

TEST_CASE("a NaN scalar goes to FP8SCOPE_SCALAR_NAN, +-Inf and subnormals stay REAL in FP8SCOPE_SCALAR")
{
    const std::string path = scratch_path("nan_scalars.sqlite");
    auto db = create(path);
    const StringId loss = db->intern("loss");
    const auto add = [&](int64_t at, std::optional<int64_t> step, double value) {
        REQUIRE(db->add_scalar({ .timestamp_ns = at, .step = step, .name = loss, .value = value, .global_tid = 3 })
                    .has_value());
    };
    add(10, 0, 1.5);
    add(20, 1, kQuietNan);
    add(30, 2, kInf);
    add(40, 3, -kInf);
    add(50, std::nullopt, kDenormal);
    add(60, 4, -kQuietNan);
    add(70, 5, kSignallingNan);
    add(80, 6, -0.0);
    CHECK(db->counters().rows_lost == 0);
    REQUIRE(db->finish({ .reason = "exit", .session_end_ns = 1000 }).has_value());

    SqliteFile file(path);
    const std::string id = std::to_string(loss.value);
    // 9e999 is SQLite's +Inf literal; the subnormal reads back as itself (4.94e-324 parses to denorm_min).
    CHECK(file.rows("SELECT timestamp, step, typeof(value), value = 1.5, value = 9e999, value = -9e999, "
                    "value = 4.9406564584124654e-324, value = 0 FROM FP8SCOPE_SCALAR ORDER BY timestamp")
        == std::vector<Row> { { "10", "0", "real", "1", "0", "0", "0", "0" },
            { "30", "2", "real", "0", "1", "0", "0", "0" }, { "40", "3", "real", "0", "0", "1", "0", "0" },
            { "50", "NULL", "real", "0", "0", "0", "1", "0" }, { "80", "6", "real", "0", "0", "0", "0", "1" } });
    CHECK(file.rows("SELECT * FROM FP8SCOPE_SCALAR_NAN ORDER BY timestamp")
        == std::vector<Row> { { "20", "1", id, "3" }, { "60", "4", id, "3" }, { "70", "5", id, "3" } });
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'row_count.FP8SCOPE_SCALAR_NAN'") == 3);
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'row_count.FP8SCOPE_SCALAR'") == 5);
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_DROPPED") == 0);
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'schema_version'") == "1.7");
    CHECK(file.integer("PRAGMA user_version") == 65543);
}

TEST_CASE("a NaN scale, scaleInv or minNonzeroAbs is NULL with its bit in nanColumns, Inf and unknown are not flagged")
{
    const std::string path = scratch_path("nan_stats.sqlite");
    auto db = create(path);
    TensorSiteRow site;
    site.id = 1;
    site.name = db->intern("fc1.input");
    REQUIRE(db->add_tensor_site(site).has_value());

    TensorStatsRow all_nan = stats_row(1);
    all_nan.scale = kQuietNan;
    all_nan.scale_inv = kSignallingNan;
    all_nan.min_nonzero_abs = -kQuietNan;
    REQUIRE(db->add_tensor_stats(all_nan).has_value());
    TensorStatsRow scale_inv_nan = stats_row(1);
    scale_inv_nan.scale = 0.0;
    scale_inv_nan.scale_inv = kQuietNan;
    scale_inv_nan.min_nonzero_abs = 0.5;
    REQUIRE(db->add_tensor_stats(scale_inv_nan).has_value());
    TensorStatsRow infinite = stats_row(1);
    infinite.scale = kInf; // a scale that overflowed: a value, not NaN
    infinite.scale_inv = 0.0;
    infinite.amax = kInf;
    REQUIRE(db->add_tensor_stats(infinite).has_value());
    TensorStatsRow unknown = stats_row(1);
    unknown.scale = unknown.scale_inv = unknown.min_nonzero_abs = std::nullopt;
    REQUIRE(db->add_tensor_stats(unknown).has_value());
    CHECK(db->counters().rows_lost == 0);
    REQUIRE(db->finish({ .reason = "exit", .session_end_ns = 1000 }).has_value());

    SqliteFile file(path);
    // Bits: scale 1, scaleInv 2, amax 4, minNonzeroAbs 8 (docs/trace-format.md).
    CHECK(file.rows("SELECT id, scale, scaleInv, amax = 9e999, minNonzeroAbs, nanColumns FROM FP8SCOPE_TENSOR_STATS "
                    "ORDER BY id")
        == std::vector<Row> { { "1", "NULL", "NULL", "0", "NULL", "11" }, { "2", "0.0", "NULL", "0", "0.5", "2" },
            { "3", "Inf", "0.0", "1", "0.01", "NULL" }, { "4", "NULL", "NULL", "0", "NULL", "NULL" } });
}

TEST_CASE("a NaN in a NOT NULL statistic is refused, reported once and counted lost as WRITER_ERROR")
{
    const std::string path = scratch_path("nan_required.sqlite");
    int write_errors = 0;
    auto db = create(path, &write_errors);
    TensorSiteRow site;
    site.id = 1;
    site.name = db->intern("fc1.input");
    REQUIRE(db->add_tensor_site(site).has_value());
    for (double TensorStatsRow::*field : { &TensorStatsRow::amax, &TensorStatsRow::sum, &TensorStatsRow::sum_squares,
             &TensorStatsRow::sum_cubes, &TensorStatsRow::sum_fourth }) {
        TensorStatsRow row = stats_row(1);
        row.*field = kQuietNan;
        const auto added = db->add_tensor_stats(row);
        REQUIRE_FALSE(added.has_value());
        CHECK(added.error().message.find("NaN in") != std::string::npos);
    }
    REQUIRE(db->add_tensor_stats(stats_row(1)).has_value()); // the writer goes on
    CHECK(db->counters().rows_lost == 5);
    CHECK(write_errors == 1);
    REQUIRE(db->finish({ .reason = "exit", .session_end_ns = 1000 }).has_value());

    SqliteFile file(path);
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_TENSOR_STATS") == 1);
    CHECK(file.rows("SELECT source, count FROM FP8SCOPE_DROPPED")
        == std::vector<Row> { { std::to_string(static_cast<int>(schema::DropSource::WriterError)), "5" } });
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'dropped_records'") == 5);
}
