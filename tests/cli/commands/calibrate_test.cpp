// `fp8scope calibrate` (docs/cli.md "calibrate"): where there is no GPU (this machine, CI) it says so in one line
// and exits 69 without writing a table; on a GPU machine the same test checks the table it writes (the GPU run's
// figures are checked by tests/gpu/run_all.sh's calibrate stage). Usage errors, a bad trace, and the table file's
// format read back as it was written.
#include "cli_test_support.hpp"
#include "fp8scope/analyzer/whatif/gemm_table_json.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace fp8scope::cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("calibrate: no GPU is exit 69 and one line, and no table, a GPU writes the sweep's table", "[cli][calibrate]")
{
    const std::string dir = scratch_dir("calibrate-no-gpu");
    const std::string table = dir + "/table.json";
    const auto r = run_fp8scope({ "calibrate", "--no-progress", "-o", table });
    if (r.exit_code == 0) {
        // A GPU machine: the standard sweep's 252 shapes, read back by report's reader.
        std::ifstream in(table);
        std::string error;
        const auto parsed
            = fp8scope::analyzer::parse_gemm_table(std::string(std::istreambuf_iterator<char>(in), {}), error);
        REQUIRE(parsed);
        CHECK(parsed->rows.size() == 252);
        CHECK_THAT(r.out, Contains("252 GEMM shapes measured"));
        return;
    }
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, StartsWith("fp8scope: error: "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(table));
}

TEST_CASE("calibrate: usage errors are exit 2, an unreadable trace exit 3", "[cli][calibrate]")
{
    const auto reps = run_fp8scope({ "calibrate", "--reps", "0" });
    CHECK(reps.exit_code == 2);
    CHECK_THAT(reps.err, Contains("--reps"));
    const auto device = run_fp8scope({ "calibrate", "--device", "-1" });
    CHECK(device.exit_code == 2);
    const auto missing = run_fp8scope({ "calibrate", "/nonexistent/run.sqlite" });
    CHECK(missing.exit_code == 3);
    CHECK_THAT(missing.err, Contains("cannot open trace"));
    const auto help = run_fp8scope({ "calibrate", "--help" });
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Contains("Exit codes: 0 ok, 2 usage error, 3 unreadable or invalid trace, 69 no GPU"));
}

TEST_CASE("calibrate: the GEMM table file reads back as it was written", "[cli][calibrate]")
{
    const auto h100 = fp8scope::analyzer::shipped_gemm_table("NVIDIA H100 80GB HBM3");
    REQUIRE(h100);
    const fp8scope::analyzer::GemmTable& shipped = **h100;
    nlohmann::ordered_json extra;
    extra["tool"] = "test";
    const std::string text = fp8scope::analyzer::gemm_table_json(shipped, extra).dump(1);
    std::string error;
    const auto back = fp8scope::analyzer::parse_gemm_table(text, error);
    REQUIRE(back);
    CHECK(back->gpu == shipped.gpu);
    CHECK(back->date == shipped.date);
    CHECK(back->method == shipped.method);
    REQUIRE(back->rows.size() == shipped.rows.size());
    for (size_t i = 0; i < shipped.rows.size(); ++i) {
        const auto& a = shipped.rows[i];
        const auto& b = back->rows[i];
        INFO("row " << i);
        CHECK((a.m == b.m && a.n == b.n && a.k == b.k && a.bf16_ns == b.bf16_ns
            && a.fp8_tensorwise_ns == b.fp8_tensorwise_ns && a.fp8_rowwise_ns == b.fp8_rowwise_ns));
    }
    // A row without a rowwise time is written as null and read back as none.
    fp8scope::analyzer::GemmTable one { "g", "d", "m", { { 1, 2, 3, 10, 5, std::nullopt } } };
    const auto json = fp8scope::analyzer::gemm_table_json(one);
    CHECK(json.at("rows").at(0).at("fp8_rowwise_ns").is_null());
    const auto one_back = fp8scope::analyzer::parse_gemm_table(json.dump(), error);
    REQUIRE(one_back);
    CHECK_FALSE(one_back->rows.at(0).fp8_rowwise_ns);
}
