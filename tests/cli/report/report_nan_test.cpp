// Scalars that went NaN (issue 15): `report` names them in text, Markdown and JSON (a count and the first step, never a
// NaN literal), and `export --perfetto` writes each NaN value as a valid instant instead of a counter.
#include "export_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <limits>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using nlohmann::json;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Six marked steps of one kernel each; the loss is logged every step and goes NaN in steps 3 and 5, grad_norm (no
// step number) once at 25 µs, +Inf once. amax is logged every step and stays finite.
std::string write_nan_loss_trace(const std::string& dir)
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, s.session().pid, "python");
    for (int64_t step = 0; step < 6; ++step) {
        const int64_t t = step * 10'000;
        s.step_marker(host, t, step);
        s.launch(host, { .api_start_ns = t + 100, .api_end_ns = t + 200 },
            { .start_ns = t + 300, .end_ns = t + 9'000, .name = "gemm" });
        s.scalar(host, t + 9'500, "loss", step == 3 || step == 5 ? kNan : 2.0 - 0.1 * double(step), step);
        s.scalar(host, t + 9'600, "amax", 1.0, step);
    }
    s.scalar(host, 25'000, "grad_norm", kNan);
    s.scalar(host, 26'000, "grad_norm", std::numeric_limits<double>::infinity());
    const std::string path = dir + "/nan_loss.sqlite";
    REQUIRE(s.write_fp8scope(path));
    return path;
}

} // namespace

TEST_CASE("report names the scalars that went NaN in text, Markdown and JSON", "[cli][report]")
{
    const std::string trace = write_nan_loss_trace(scratch_dir("report_nan"));
    const std::string text = run_fp8scope_ok({ "report", trace });
    // In the order of the first NaN; grad_norm has no step number, so its time is given.
    CHECK(
        text.find("NaN scalars: grad_norm: NaN from 25.000 us (1 of 2 values); loss: NaN from step 3 (2 of 6 values)\n")
        != std::string::npos);
    CHECK(text.find("amax: NaN") == std::string::npos);

    const std::string markdown = run_fp8scope_ok({ "report", trace, "--format", "md" });
    CHECK(markdown.find("**Warning:** NaN scalars: ") != std::string::npos);
    CHECK(markdown.find("loss: NaN from step 3 (2 of 6 values).") != std::string::npos);

    const std::string html = run_fp8scope_ok({ "report", trace, "--format", "html" });
    CHECK(html.find("<p class=\"bad\">Warning: NaN scalars: grad_norm: NaN from 25.000 us") != std::string::npos);

    const std::string raw = run_fp8scope_ok({ "report", trace, "--format", "json" });
    CHECK(raw.find("NaN\"") == std::string::npos); // no NaN written as a value: JSON has none
    const json report = json::parse(raw);
    CHECK(report["nan_scalars"]
        == json::parse(R"([{"name": "grad_norm", "nan_values": 1, "values": 2, "first_step": null, "first_ns": 25000},
                           {"name": "loss", "nan_values": 2, "values": 6, "first_step": 3, "first_ns": 39500}])"));
}

TEST_CASE("report of a trace without NaN scalars has no NaN line and an empty nan_scalars", "[cli][report]")
{
    const std::string trace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/scenario-demo.sqlite";
    CHECK(run_fp8scope_ok({ "report", trace }).find("NaN scalars") == std::string::npos);
    CHECK(json::parse(run_fp8scope_ok({ "report", trace, "--format", "json" }))["nan_scalars"] == json::array());
}

TEST_CASE("export writes a NaN scalar value as a valid instant on the thread that logged it", "[export]")
{
    const std::string dir = scratch_dir("export_nan");
    const std::string trace = write_nan_loss_trace(dir);
    const auto result = run_fp8scope({ "export", trace, "--perfetto", dir + "/out.json" });
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(
        result.out.find("(1 NaN/Inf counter values left out) (3 NaN scalar values as instants)") != std::string::npos);
    const json doc = json::parse(read_export_file(dir + "/out.json"));
    check_valid(doc);
    std::vector<json> nan_instants;
    int64_t loss_counters = 0;
    for (const json& e : doc["traceEvents"]) {
        if (e["ph"] == "i" && e["cat"] == "scalar")
            nan_instants.push_back(e);
        if (e["ph"] == "C" && e["name"] == "loss")
            ++loss_counters;
    }
    CHECK(loss_counters == 4);
    REQUIRE(nan_instants.size() == 3);
    CHECK(nan_instants[0]["name"] == "grad_norm = NaN");
    CHECK(nan_instants[1]["name"] == "loss = NaN");
    CHECK(json_time_ns(nan_instants[1]["ts"]) == 39'500);
    CHECK(nan_instants[1]["pid"] == 4242);
    CHECK(nan_instants[1]["tid"] == 4242);
    CHECK(nan_instants[1]["args"]["value"] == "NaN");
    CHECK(nan_instants[2]["name"] == "loss = NaN");
}

TEST_CASE("check warns about the scalars that went NaN above its budgets", "[cli][check]")
{
    const std::string dir = scratch_dir("check_nan");
    const std::string trace = write_nan_loss_trace(dir);
    const std::string text = run_fp8scope_ok({ "check", trace, "--max-bubble-ratio", "1", "--md", dir + "/check.md" });
    CHECK(text.find("\n  warning: NaN scalars: grad_norm: NaN from 25.000 us (1 of 2 values); loss: NaN from step 3 (2 "
                    "of 6 values)\n  ok ")
        != std::string::npos);
    CHECK(read_export_file(dir + "/check.md").find("**Warning:** NaN scalars: ") != std::string::npos);
}
