// The GEMM tables shipped with fp8scope (data/gemm_tables/, docs/cli.md "calibrate"): read from the build tree's
// share/fp8scope (the test main points FP8SCOPE_DATA_DIR at it), they hold what the C++ literals they replaced held
// (sums over every row and single rows, taken from the literals before they were deleted); a folder without them, or
// a file that is not a table, is an error naming the file, and the what-if then says so instead of predicting.
#include "compare_test_support.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"
#include "fp8scope/analyzer/whatif/gemm_table_json.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::Contains;

namespace {

struct Sums {
    int64_t bf16_ns = 0, fp8_tensorwise_ns = 0, fp8_rowwise_ns = 0, rowwise_rows = 0;
};

Sums sums(const GemmTable& table)
{
    Sums s;
    for (const GemmTimeRow& r : table.rows) {
        s.bf16_ns += r.bf16_ns;
        s.fp8_tensorwise_ns += r.fp8_tensorwise_ns;
        if (r.fp8_rowwise_ns) {
            s.fp8_rowwise_ns += *r.fp8_rowwise_ns;
            ++s.rowwise_rows;
        }
    }
    return s;
}

bool row_is(const GemmTimeRow& r, std::array<int64_t, 6> expected)
{
    return r.m == expected[0] && r.n == expected[1] && r.k == expected[2] && r.bf16_ns == expected[3]
        && r.fp8_tensorwise_ns == expected[4] && r.fp8_rowwise_ns == expected[5];
}

const GemmTable& shipped(std::string_view gpu)
{
    const Expected<const GemmTable*> table = shipped_gemm_table(gpu);
    INFO(gpu);
    if (!table)
        FAIL(table.error().message);
    return **table;
}

// FP8SCOPE_DATA_DIR set to a scratch folder of this test's own for as long as it lives, then restored.
class ScratchDataDir {
public:
    explicit ScratchDataDir(const std::string& name)
        : dir_(std::filesystem::path(FP8SCOPE_TEST_TMP) / ("data-dir-" + name + "-" + std::to_string(::getpid())))
    {
        if (const char* value = std::getenv(kDataDirVariable))
            saved_ = value;
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_ / "gemm_tables");
        setenv(kDataDirVariable, dir_.c_str(), 1);
    }
    ~ScratchDataDir()
    {
        if (saved_)
            setenv(kDataDirVariable, saved_->c_str(), 1);
        else
            unsetenv(kDataDirVariable);
    }
    ScratchDataDir(const ScratchDataDir&) = delete;
    ScratchDataDir& operator=(const ScratchDataDir&) = delete;

    std::string table_path(const char* file) const { return (dir_ / "gemm_tables" / file).string(); }
    void write(const char* file, const std::string& text) const { std::ofstream(table_path(file)) << text; }

private:
    std::filesystem::path dir_;
    std::optional<std::string> saved_;
};

// What the C++ literals held (gemm_table.cpp and gemm_table_h200.cpp before the files replaced them): the first, the
// 101st and the last row, and sums over every row.
struct AsMeasured {
    const char* gpu;
    std::array<int64_t, 6> first, row_100, last;
    Sums sums;
};
constexpr AsMeasured kShipped[] = {
    { "NVIDIA H100 80GB HBM3", { 256, 256, 256, 2664, 2693, 4066 }, { 1024, 4096, 4096, 44637, 26218, 26634 },
        { 16384, 8192, 8192, 3406795, 1687430, 1915506 }, { 26850547, 15108899, 16480624, 252 } },
    { "NVIDIA H200", { 256, 256, 256, 2691, 2667, 4051 }, { 1024, 4096, 4096, 44186, 26170, 26539 },
        { 16384, 8192, 8192, 3504517, 1703902, 1812048 }, { 26826217, 15234339, 16306926, 252 } },
};

} // namespace

TEST_CASE("shipped GEMM tables: the H100's and the H200's files hold their sweeps as measured, 252 rows each",
    "[whatif][gemm_table]")
{
    for (const AsMeasured& expected : kShipped) {
        INFO(expected.gpu);
        const GemmTable& table = shipped(expected.gpu);
        CHECK(table.gpu == expected.gpu);
        CHECK(table.date == "2026-11-27");
        CHECK_THAT(table.method, Contains("cublasLtMatmul, A transposed (TN)"));
        REQUIRE(table.rows.size() == 252);
        CHECK(row_is(table.rows.front(), expected.first));
        CHECK(row_is(table.rows[100], expected.row_100));
        CHECK(row_is(table.rows.back(), expected.last));
        const Sums s = sums(table);
        CHECK(s.bf16_ns == expected.sums.bf16_ns);
        CHECK(s.fp8_tensorwise_ns == expected.sums.fp8_tensorwise_ns);
        CHECK(s.fp8_rowwise_ns == expected.sums.fp8_rowwise_ns);
        CHECK(s.rowwise_rows == expected.sums.rowwise_rows);
    }
}

TEST_CASE(
    "shipped GEMM tables: an H200 reads h200.json, any other GPU h100.json, each read once", "[whatif][gemm_table]")
{
    CHECK(shipped_gemm_table_file("NVIDIA H200") == "h200.json");
    CHECK(shipped_gemm_table_file("NVIDIA H100 80GB HBM3") == "h100.json");
    CHECK(shipped_gemm_table_file("") == "h100.json");
    const auto dir = shipped_gemm_table_dir();
    REQUIRE(dir);
    CHECK(*dir == std::filesystem::path(std::getenv(kDataDirVariable)) / "gemm_tables");
    // The same table object every time: the file is read once.
    CHECK(&shipped("NVIDIA H100 80GB HBM3") == &shipped("NVIDIA H100 PCIe"));
}

TEST_CASE("shipped GEMM tables: a missing or broken file is an error naming it, never a table", "[whatif][gemm_table]")
{
    const ScratchDataDir data("broken");
    auto missing = shipped_gemm_table("NVIDIA H100 80GB HBM3");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message == "the shipped GEMM table " + data.table_path("h100.json") + ": cannot be read");
    data.write("h200.json", "{\"format\": \"fp8scope.gemm_table/1\", \"rows\": [{\"m\": 1}]}");
    auto broken = shipped_gemm_table("NVIDIA H200");
    REQUIRE_FALSE(broken);
    CHECK_THAT(broken.error().message, Contains(data.table_path("h200.json")));
    CHECK_THAT(broken.error().message, Contains("row 0: needs positive integers"));
}

TEST_CASE(
    "shipped GEMM tables: without its table a BF16 trace gets no prediction and the file named", "[whatif][gemm_table]")
{
    Job job;
    job.steps(4, { { kBf16Gemm, 40'000 }, { "elementwise", 10'000 } });
    const TraceModel model = job.load("whatif-no-table");
    ReportOptions options;
    options.steps.warmup = 0;
    const Report report = analyze(model, options);
    REQUIRE(predict_fp8(model, report).not_applicable.empty()); // with the build tree's tables

    const ScratchDataDir data("no-table");
    data.write("h100.json", "{\"format\": \"fp8scope.gemm_table/1\"");
    const Fp8WhatIf w = predict_fp8(model, report);
    CHECK_THAT(w.not_applicable,
        Contains("no prediction: the shipped GEMM table " + data.table_path("h100.json") + ": not a JSON object"));
    CHECK_THAT(w.not_applicable, Contains("FP8SCOPE_DATA_DIR"));
    CHECK(w.not_applicable.find('\n') == std::string::npos);
    CHECK(w.predictions.empty());
    CHECK_FALSE(w.best);
    CHECK(w.table_gpu.empty());
    // A table given by the caller needs no file.
    const GemmTable given { "test GPU", "2026-11-27", "made up", { { 1024, 1024, 1024, 40'000, 20'000, 25'000 } } };
    CHECK(predict_fp8(model, report, given).not_applicable.empty());
    // What needs no table is said as before: an FP8 run is refused for being FP8.
    Job fp8;
    fp8.steps(4, { { kFp8Gemm, 40'000 } });
    const TraceModel fp8_model = fp8.load("whatif-no-table-fp8");
    CHECK_THAT(predict_fp8(fp8_model, analyze(fp8_model, options)).not_applicable, Contains("already runs FP8 GEMMs"));
}
