// `fp8scope report --fp8-whatif [--gemm-table FILE]` (docs/cli.md "FP8 what-if"): the text section and the JSON
// object on the zoo's recorded BF16 run, a GEMM table of the user's own read back into the prediction, and the usage
// errors (exit 2, the reason in one sentence): another format, several traces, a table without --fp8-whatif, a bad
// table file.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace fp8scope::cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const std::string kZoo = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/zoo/";
const std::string kBf16 = kZoo + "bf16_clean_ref.sqlite";

std::string write_file(const std::string& dir, const std::string& name, const std::string& text)
{
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
}

} // namespace

TEST_CASE("report --fp8-whatif: the section in text, the object in JSON, on a recorded BF16 run", "[cli][whatif]")
{
    const std::string text = run_fp8scope_ok({ "report", kBf16, "--fp8-whatif", "--color", "never" });
    CHECK_THAT(text, Contains("FP8 what-if"));
    CHECK_THAT(text, Contains("delayed     eager"));
    CHECK_THAT(text, Contains("Advice: stay in BF16"));
    CHECK_THAT(text, Contains("Operands under per-tensor scales"));
    const auto json = nlohmann::json::parse(run_fp8scope_ok({ "report", kBf16, "--fp8-whatif", "--format", "json" }));
    const auto& w = json.at("fp8_whatif");
    CHECK(w.at("fp8_gemms_per_step") == 27);
    CHECK(w.at("predictions").size() == 8); // 4 profiles, eager and compiled
    CHECK(w.at("best").at("mode") == "compiled");
    CHECK(w.at("operands").size() > 0);
    // Without the flag, no what-if.
    const auto plain = nlohmann::json::parse(run_fp8scope_ok({ "report", kBf16, "--format", "json" }));
    CHECK_FALSE(plain.contains("fp8_whatif"));
    // An FP8 run is refused in one sentence, not predicted.
    const auto fp8 = nlohmann::json::parse(
        run_fp8scope_ok({ "report", kZoo + "fp8_delayed_clean.sqlite", "--fp8-whatif", "--format", "json" }));
    CHECK_THAT(fp8.at("fp8_whatif").at("not_applicable").get<std::string>(), Contains("already runs FP8 GEMMs"));
}

TEST_CASE("report --fp8-whatif: the columns add up to the FP8 step, estimates say so, speed-ups name their BF16 step "
          "(issue 45)",
    "[cli][whatif]")
{
    // The bundled BF16 sample has no GEMM statistics: the compiled bookkeeping is unknown, not 0.
    const std::string bf16 = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-bf16.sqlite";
    for (const std::string& trace : { bf16, kBf16 }) {
        INFO(trace);
        const auto json
            = nlohmann::json::parse(run_fp8scope_ok({ "report", trace, "--fp8-whatif", "--format", "json" }));
        const auto& w = json.at("fp8_whatif");
        const double measured = w.at("bf16_step_ns").get<double>();
        for (const auto& p : w.at("predictions")) {
            INFO(p.at("recipe") << " " << p.at("mode"));
            const bool eager = p.at("mode") == "eager";
            const int64_t bookkeeping
                = eager ? p.at("bookkeeping_host_ns").get<int64_t>() : p.at("bookkeeping_gpu_ns").get<int64_t>();
            CHECK(p.at("bf16_step_ns").get<int64_t>()
                    - (p.at("gemm_bf16_ns").get<int64_t>() - p.at("gemm_fp8_ns").get<int64_t>()) + bookkeeping
                    + p.at("rest_ns").get<int64_t>()
                == p.at("step_ns").get<int64_t>());
            CHECK(p.at("speedup_vs_measured").get<double>()
                == Approx(measured / p.at("step_ns").get<double>()).epsilon(1e-6));
            if (!eager) // compiled: no rest but the nanoseconds each rounded figure drops
                CHECK(std::llabs(p.at("rest_ns").get<int64_t>()) <= 2);
            if (!eager && trace == bf16)
                CHECK(p.at("bookkeeping_known") == false);
        }
    }
    const std::string text = run_fp8scope_ok({ "report", bf16, "--fp8-whatif", "--color", "never" });
    CHECK_THAT(
        text, Contains("delayed     compiled     7.45 ms    3.35 ms    2.06 ms     unknown    0.00 ms    6.16 ms"));
    CHECK_THAT(text, Contains("BF16 step - (GEMM BF16 - GEMM FP8) + bookkeeping + rest = FP8 step."));
    CHECK_THAT(text, Contains("the compiled BF16 step (estimated 7.45 ms; 3.61x this trace's"));
    // Without GEMM statistics the 16-bit GEMM kernels are the ones converted (51 of 75; the FP32 ones stay), so the
    // delayed eager prediction lands near the bundled FP8 sample of the same job (57.77 ms a step, traced alike).
    CHECK_THAT(text, Contains("the GEMM kernels with 16-bit inputs (51 of 75 a step; the FP32 ones stay)"));
    const auto json = nlohmann::json::parse(run_fp8scope_ok({ "report", bf16, "--fp8-whatif", "--format", "json" }));
    for (const auto& p : json.at("fp8_whatif").at("predictions"))
        if (p.at("recipe") == "delayed" && p.at("mode") == "eager")
            CHECK(p.at("step_ns").get<double>() == Approx(57.77e6).epsilon(0.2));
}

TEST_CASE("report --gemm-table: the user's own table decides the GEMM times", "[cli][whatif]")
{
    const std::string dir = scratch_dir("report-gemm-table");
    // Every GEMM of the trace is a few microseconds: a table whose only row is 5 us BF16 against 1 us FP8 makes them
    // five times faster, where the H100's table gives its own small shapes' speed-ups (under 2x).
    const std::string table = write_file(dir, "table.json",
        R"({"format": "fp8scope.gemm_table/1", "gpu": "my GPU", "rows": [
            {"m": 64, "n": 64, "k": 64, "bf16_ns": 5000, "fp8_tensorwise_ns": 1000}]})");
    const auto mine = nlohmann::json::parse(
        run_fp8scope_ok({ "report", kBf16, "--fp8-whatif", "--gemm-table", table, "--format", "json" }));
    const auto shipped
        = nlohmann::json::parse(run_fp8scope_ok({ "report", kBf16, "--fp8-whatif", "--format", "json" }));
    CHECK(mine.at("fp8_whatif").at("table_gpu") == "my GPU");
    const auto& mine_delayed = mine.at("fp8_whatif").at("predictions").at(0);
    const auto& shipped_delayed = shipped.at("fp8_whatif").at("predictions").at(0);
    CHECK(mine_delayed.at("gemm_bf16_ns") == shipped_delayed.at("gemm_bf16_ns"));
    CHECK(mine_delayed.at("gemm_fp8_ns").get<int64_t>() < shipped_delayed.at("gemm_fp8_ns").get<int64_t>());
    CHECK(shipped_delayed.at("gemm_fp8_ns").get<int64_t>() * 2 > shipped_delayed.at("gemm_bf16_ns").get<int64_t>());
    CHECK(mine_delayed.at("gemm_fp8_ns").get<int64_t>() * 4 < mine_delayed.at("gemm_bf16_ns").get<int64_t>());
}

TEST_CASE("report --fp8-whatif: the shipped table is read beside the program, a missing one is named", "[cli][whatif]")
{
    // Without FP8SCOPE_DATA_DIR (the test main sets it), <build>/bin/fp8scope reads <build>/share/fp8scope/gemm_tables.
    const auto found = fp8scope::testing::run_process({ "/usr/bin/env", "-u", "FP8SCOPE_DATA_DIR", FP8SCOPE_EXE,
        "report", kBf16, "--fp8-whatif", "--format", "json" });
    INFO(found.err);
    REQUIRE(found.exit_code == 0);
    CHECK(nlohmann::json::parse(found.out).at("fp8_whatif").at("table_gpu") == "NVIDIA H100 80GB HBM3");
    // A folder without the tables: the what-if names the file it could not read, and the report is made as usual.
    const std::string dir = scratch_dir("report-no-gemm-table");
    const auto environment = "FP8SCOPE_DATA_DIR=" + dir;
    const auto json = fp8scope::testing::run_process(
        { "/usr/bin/env", environment, FP8SCOPE_EXE, "report", kBf16, "--fp8-whatif", "--format", "json" });
    REQUIRE(json.exit_code == 0);
    const auto report = nlohmann::json::parse(json.out);
    CHECK(report.at("schema") == "fp8scope.report/2");
    CHECK_THAT(report.at("fp8_whatif").at("not_applicable").get<std::string>(),
        StartsWith("no prediction: the shipped GEMM table " + dir + "/gemm_tables/h100.json: cannot be read ("));
    const auto text = fp8scope::testing::run_process(
        { "/usr/bin/env", environment, FP8SCOPE_EXE, "report", kBf16, "--fp8-whatif", "--color", "never" });
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Contains("FP8 what-if"));
    CHECK_THAT(text.out, Contains("no prediction: the shipped GEMM table"));
    CHECK(text.err.empty());
}

TEST_CASE("report --fp8-whatif: usage errors are exit 2 with one line", "[cli][whatif]")
{
    const std::string dir = scratch_dir("report-fp8-whatif-usage");
    const auto one_line_usage = [](const fp8scope::testing::ProcessResult& r, const std::string& says) {
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, StartsWith("fp8scope: usage error: "));
        CHECK_THAT(r.err, Contains(says));
        // The reason, then where the usage is.
        CHECK_THAT(r.err, Contains("\nRun 'fp8scope report --help'"));
    };
    one_line_usage(run_fp8scope({ "report", kBf16, "--fp8-whatif", "--format", "md" }), "text or json");
    one_line_usage(run_fp8scope({ "report", kBf16, kBf16, "--fp8-whatif" }), "one trace");
    const std::string good = write_file(dir, "good.json",
        R"({"format": "fp8scope.gemm_table/1", "rows": [{"m": 1, "n": 1, "k": 1, "bf16_ns": 2, "fp8_tensorwise_ns": 1}]})");
    one_line_usage(run_fp8scope({ "report", kBf16, "--gemm-table", good }), "--gemm-table is the GEMM table");
    for (const auto& [name, text, says] : {
             std::tuple { "not-json.json", "{", "not a JSON object" },
             { "other.json", R"({"format": "something else", "rows": []})", "fp8scope.gemm_table/1" },
             { "empty.json", R"({"format": "fp8scope.gemm_table/1", "rows": []})", "no \"rows\"" },
             { "format-number.json", R"({"format": 1, "rows": []})", "fp8scope.gemm_table/1" },
             { "gpu-number.json", R"({"format": "fp8scope.gemm_table/1", "gpu": 5, "rows": [7]})",
                 "row 0: needs positive integers" },
             { "negative.json",
                 R"({"format": "fp8scope.gemm_table/1", "rows": [{"m": 1, "n": 1, "k": 1, "bf16_ns": -5,
                     "fp8_tensorwise_ns": 1}]})",
                 "row 0: needs positive integers" },
         }) {
        INFO(name);
        one_line_usage(
            run_fp8scope({ "report", kBf16, "--fp8-whatif", "--gemm-table", write_file(dir, name, text) }), says);
    }
}

TEST_CASE(
    "compare --fp8-whatif: the reference's what-if, and the FP8 run against its recipe's prediction", "[cli][whatif]")
{
    const std::string run = kZoo + "fp8_delayed_clean.sqlite";
    const std::string text = run_fp8scope_ok({ "compare", run, kBf16, "--fp8-whatif", "--color", "never" });
    CHECK_THAT(text, Contains("FP8 what-if"));
    CHECK_THAT(text, Contains("Against the run: its step is"));
    CHECK_THAT(text, Contains("delayed eager predicted"));
    CHECK_THAT(text, Contains("Both steps are traced"));
    const auto json
        = nlohmann::json::parse(run_fp8scope_ok({ "compare", run, kBf16, "--fp8-whatif", "--format", "json" }));
    const auto& w = json.at("fp8_whatif");
    // The same prediction as report --fp8-whatif on the reference, and the run's delayed recipe against it.
    const auto report = nlohmann::json::parse(run_fp8scope_ok({ "report", kBf16, "--fp8-whatif", "--format", "json" }));
    CHECK(w.at("predictions") == report.at("fp8_whatif").at("predictions"));
    REQUIRE(w.at("run_against").size() == 1);
    const auto& against = w.at("run_against").at(0);
    CHECK(against.at("recipe") == "delayed");
    const double predicted = against.at("predicted_step_ns").get<double>();
    CHECK(against.at("run_vs_predicted").get<double>()
        == Approx(w.at("run_step_ns").get<double>() / predicted - 1).margin(1e-6));
    // Without the flag, nothing. The FP8 run given as the reference is compared as the run (issue 45): the same
    // what-if, of the BF16 trace, and the pair says it swapped them.
    const auto plain = nlohmann::json::parse(run_fp8scope_ok({ "compare", run, kBf16, "--format", "json" }));
    CHECK_FALSE(plain.contains("fp8_whatif"));
    CHECK(plain.at("pair").at("swapped") == false);
    const auto swapped
        = nlohmann::json::parse(run_fp8scope_ok({ "compare", kBf16, run, "--fp8-whatif", "--format", "json" }));
    CHECK(swapped.at("pair").at("swapped") == true);
    CHECK(swapped.at("run").at("path") == run);
    CHECK(swapped.at("fp8_whatif").at("predictions") == w.at("predictions"));
    CHECK(swapped.at("fp8_whatif").at("run_against") == w.at("run_against"));
    // Usage errors, as report's.
    const auto md = run_fp8scope({ "compare", run, kBf16, "--fp8-whatif", "--format", "md" });
    CHECK(md.exit_code == 2);
    CHECK_THAT(md.err, Contains("text or json"));
    const auto table_alone = run_fp8scope({ "compare", run, kBf16, "--gemm-table", kBf16 });
    CHECK(table_alone.exit_code == 2);
    CHECK_THAT(table_alone.err, Contains("--gemm-table is the GEMM table of --fp8-whatif"));
}
