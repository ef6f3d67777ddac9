// NaN values through the writer and the loader (schema 1.4, docs/trace-format.md "NaN values"): NaN scalars come back
// from FP8SCOPE_SCALAR_NAN as quiet NaN in time order among the others, flagged statistics as NaN; what a 1.3 reader
// reads of the same file is right, only without the NaNs; a nanColumns the reader cannot trust refuses the file.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "loader_test_support.hpp"
#include "tensor_samples.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kDenormal = std::numeric_limits<double>::denorm_min();

TensorStatsRow sample(int64_t site_id, int64_t at_ns, std::optional<double> scale, std::optional<double> scale_inv)
{
    TensorStatsRow s = healthy_sample(site_id, 1, at_ns);
    s.scale = scale;
    s.scale_inv = scale_inv;
    return s;
}

// Scalars out of time order (a NaN first, at 5 ns), a NaN scale and scaleInv, an Inf scale with scaleInv 0.
std::string write_nan_trace(const std::string& test)
{
    Scenario scenario;
    const HostThread main = scenario.thread(4242, 4242, "main");
    scenario.step_marker(main, 1, 0);
    scenario.scalar(main, 10, "loss", 2.0, 0);
    scenario.scalar(main, 5, "loss", kNan, 0);
    scenario.scalar(main, 30, "loss", kInf, 1);
    scenario.scalar(main, 40, "loss", -kInf, 1);
    scenario.scalar(main, 50, "loss", kDenormal, 1);
    scenario.scalar(main, 20, "grad_norm", -kNan, 1);
    const int64_t site = scenario.tensor_site("fc1.input", schema::TensorRole::Input, schema::Dtype::BFloat16, 8, 8);
    scenario.tensor_stats(sample(site, 100, kNan, kNan));
    scenario.tensor_stats(sample(site, 200, kInf, 0.0));
    TensorStatsRow no_min = sample(site, 300, 1.0, 1.0);
    no_min.min_nonzero_abs = kNan;
    scenario.tensor_stats(no_min);
    const std::string path = scratch_dir(test) + "/trace.sqlite";
    REQUIRE(scenario.write_fp8scope(path));
    return path;
}

std::string scalar_name(const TraceModel& model, size_t i)
{
    return std::string(model.strings[model.scalars[i].name]);
}

} // namespace

TEST_CASE("NaN, Inf and subnormal scalars and NaN statistics round-trip through the writer and the loader", "[loader]")
{
    const std::string path = write_nan_trace("loader_nan_roundtrip");
    const auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->meta.schema_minor == 7);
    CHECK(loaded->row_counts.at("FP8SCOPE_SCALAR") == 4);
    CHECK(loaded->row_counts.at("FP8SCOPE_SCALAR_NAN") == 2);
    CHECK(loaded->dropped_records() == 0);

    // One list, by time, the NaN rows merged in.
    const auto& s = loaded->scalars;
    REQUIRE(s.size() == 6);
    CHECK(s[0].timestamp_ns == 5);
    CHECK(std::isnan(s[0].value));
    CHECK(scalar_name(*loaded, 0) == "loss");
    CHECK(s[0].step == 0);
    CHECK(s[1].timestamp_ns == 10);
    CHECK(s[1].value == 2.0);
    CHECK(s[2].timestamp_ns == 20);
    CHECK(std::isnan(s[2].value));
    CHECK(scalar_name(*loaded, 2) == "grad_norm");
    CHECK(s[2].global_tid == schema::global_tid(4242, 4242));
    CHECK(s[3].value == kInf);
    CHECK(s[4].value == -kInf);
    CHECK(s[5].value == kDenormal);
    CHECK(s[5].step == 1);

    const auto& t = loaded->tensor_stats;
    REQUIRE(t.size() == 3);
    REQUIRE(t[0].scale.has_value());
    REQUIRE(t[0].scale_inv.has_value());
    CHECK(std::isnan(*t[0].scale));
    CHECK(std::isnan(*t[0].scale_inv));
    CHECK(t[0].min_nonzero_abs == 0.01);
    CHECK(t[1].scale == kInf);
    CHECK(t[1].scale_inv == 0.0);
    CHECK(t[2].scale == 1.0);
    REQUIRE(t[2].min_nonzero_abs.has_value());
    CHECK(std::isnan(*t[2].min_nonzero_abs));
}

TEST_CASE(
    "a 1.3 reader reads a 1.4 trace right: without the NaN table and column, the rest is unchanged", "[loader][compat]")
{
    // A 1.3 reader knows neither FP8SCOPE_SCALAR_NAN nor nanColumns and reads tables and columns by name
    // (docs/trace-format.md "Change rules"): what it sees is this file without them, its row count and its version.
    const std::string path = write_nan_trace("loader_nan_old_reader");
    exec_sql(path,
        "DROP TABLE FP8SCOPE_SCALAR_NAN;"
        "ALTER TABLE FP8SCOPE_TENSOR_STATS DROP COLUMN nanColumns;"
        "DELETE FROM FP8SCOPE_META WHERE key = 'row_count.FP8SCOPE_SCALAR_NAN';"
        "UPDATE FP8SCOPE_META SET value = '1.3' WHERE key = 'schema_version';"
        "PRAGMA user_version = 65539;");
    const auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->meta.schema_minor == 3);
    CHECK(loaded->row_counts.count("FP8SCOPE_SCALAR_NAN") == 0);
    // Every value FP8SCOPE_SCALAR holds is read as written; no NULL stands in for a NaN (the loader refuses NULL in
    // a NOT NULL column, so the load succeeding shows it).
    const auto& s = loaded->scalars;
    REQUIRE(s.size() == 4);
    CHECK(s[0].value == 2.0);
    CHECK(s[1].value == kInf);
    CHECK(s[2].value == -kInf);
    CHECK(s[3].value == kDenormal);
    // A NaN scale reads as unknown to a 1.3 reader, never as a number.
    const auto& t = loaded->tensor_stats;
    REQUIRE(t.size() == 3);
    CHECK_FALSE(t[0].scale.has_value());
    CHECK_FALSE(t[0].scale_inv.has_value());
    CHECK(t[1].scale == kInf);
    CHECK(t[2].scale == 1.0);
    CHECK_FALSE(t[2].min_nonzero_abs.has_value());
}

TEST_CASE("a nanColumns the reader cannot trust refuses the trace as invalid", "[loader]")
{
    const std::string path = write_nan_trace("loader_nan_bad_flags");
    const auto refused = [&](const std::string& sql, const std::string& fragment) {
        exec_sql(path, "UPDATE FP8SCOPE_TENSOR_STATS SET " + sql + " WHERE id = 2");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path, fragment);
    };
    SECTION("a bit on a NOT NULL column")
    {
        refused("nanColumns = 4", "bit 2 flags amax");
    }
    SECTION("a bit on a cell that holds a value")
    {
        refused("nanColumns = 1", "bit 0 flags scale");
    }
    SECTION("a bit beyond the REAL columns")
    {
        refused("nanColumns = 256", "bit mask 256 beyond the REAL columns");
    }
    SECTION("a negative mask")
    {
        refused("nanColumns = -1", "bit mask -1");
    }
    SECTION("not an integer")
    {
        refused("nanColumns = 'x'", "nanColumns");
    }
}
