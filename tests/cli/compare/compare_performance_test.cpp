// `fp8scope compare` on traces without tensor statistics (issue 28 item 5): the committed H100 FP8 and BF16 runs of
// samples/torch/train.py, recorded without statistics, compare by performance per step in every format and exit 0;
// the figures equal `report`'s on each trace. `check --ref` on them still refuses (exit 3): a gate never passes on
// drift and loss it did not see. On the clean pair, recorded with statistics, compare says that recording inflated
// the difference. The analyzer's rules are tested in tests/analyzer/compare/compare_performance_test.cpp.
#include "cli_test_support.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using Catch::Matchers::WithinAbs;

namespace {

const std::string kTraces = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
const std::string kFp8 = kTraces + "h100-train-fp8.sqlite";
const std::string kBf16 = kTraces + "h100-train-bf16.sqlite";
const std::string kNotCompared = "Drift and loss not compared: neither the run '" + kFp8 + "' nor the reference '"
    + kBf16 + "' has tensor statistics";

std::string compare_ok(const std::vector<std::string>& extra)
{
    std::vector<std::string> args { "compare", kFp8, kBf16 };
    args.insert(args.end(), extra.begin(), extra.end());
    const auto result = run_fp8scope(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    REQUIRE(result.err.empty());
    return result.out;
}

nlohmann::json report_json(const std::string& trace)
{
    return nlohmann::json::parse(run_fp8scope_ok({ "report", trace, "--format", "json" }));
}

// The upper median, as the analyzer takes it.
double upper_median(std::vector<double> values)
{
    REQUIRE_FALSE(values.empty());
    std::ranges::sort(values);
    return values[values.size() / 2];
}

} // namespace

TEST_CASE("compare without tensor statistics compares performance per step, as report measures each trace",
    "[cli][compare][performance]")
{
    const nlohmann::json doc = nlohmann::json::parse(compare_ok({ "--format", "json" }));
    CHECK(doc.at("schema") == "fp8scope.compare/1");
    CHECK(doc.at("numerics").at("compared") == false);
    CHECK(std::string(doc.at("verdict").at("text")).starts_with(kNotCompared));
    CHECK(doc.at("verdict").at("healthy") == false);
    CHECK(doc.at("loss").at("available") == false);
    CHECK(doc.at("matched_sites").empty());
    const auto& p = doc.at("performance");
    CHECK(p.at("steps_basis") == "common");
    CHECK(p.at("run").at("steps") == 28);

    // Each figure per step equals report's on that trace (both analyse steps 2..29, all of them common).
    for (const auto& [side, trace] : { std::pair { "run", kFp8 }, std::pair { "ref", kBf16 } }) {
        CAPTURE(side);
        const nlohmann::json report = report_json(trace);
        std::vector<double> step_ns, busy_ns, ratios;
        for (const auto& s : report.at("steps").at("steps"))
            step_ns.push_back(s.at("end_ns").get<double>() - s.at("start_ns").get<double>());
        std::map<std::string, double> idle_by_cause;
        for (const auto& row : report.at("per_device_step")) {
            const auto& t = row.at("totals");
            busy_ns.push_back(t.at("busy_ns").get<double>());
            ratios.push_back(t.at("idle_ns").get<double>() / t.at("step_ns").get<double>());
            for (const auto& [cause, ns] : t.at("idle_by_cause_ns").items())
                idle_by_cause[cause] += ns.get<double>();
        }
        REQUIRE(step_ns.size() == 28);
        CHECK(p.at("per_step").at("step_ns").at(side).get<double>() == upper_median(step_ns));
        CHECK(p.at("per_step").at("busy_ns").at(side).get<double>() == upper_median(busy_ns));
        CHECK_THAT(p.at("per_step").at("bubble_ratio").at(side).get<double>(), WithinAbs(upper_median(ratios), 1e-12));
        for (const auto& [cause, ns] : idle_by_cause)
            CHECK_THAT(p.at("idle_by_cause_ns").at(cause).at(side).get<double>(), WithinAbs(ns / 28, 1e-6));
        for (const auto& [cls, totals] : report.at("kernel_classes").items()) {
            CHECK_THAT(p.at("kernel_classes").at(cls).at("time_ns").at(side).get<double>(),
                WithinAbs(totals.at("time_ns").get<double>() / 28, 1e-6));
            CHECK(p.at("kernel_classes").at(cls).at("count").at(side).get<double>()
                == totals.at("count").get<double>() / 28);
        }
    }
    // The FP8 run's GEMMs: 48 FP8 GEMM kernels per step that the BF16 run does not have, two BF16 GEMMs that only
    // the reference has (4 kernels per step each).
    CHECK(p.at("kernel_classes").at("fp8_gemm").at("count").at("run") == 48.0);
    CHECK(p.at("kernel_classes").at("fp8_gemm").at("count").at("ref") == 0.0);
    const auto& k = p.at("kernels");
    CHECK(k.at("appeared_names") == 25);
    CHECK(k.at("vanished_names") == 2);
    CHECK(k.at("common_names") == 64);
    CHECK(k.at("appeared").size() == 10);
    REQUIRE(k.at("vanished").size() == 2);
    for (const auto& gone : k.at("vanished")) {
        CHECK(gone.at("class") == "other_gemm");
        CHECK(gone.at("count").at("ref") == 4.0);
        CHECK(gone.at("time_ns").at("run") == 0.0);
    }
    const auto fp8_gemm
        = std::ranges::find_if(k.at("appeared"), [](const auto& a) { return a.at("class") == "fp8_gemm"; });
    REQUIRE(fp8_gemm != k.at("appeared").end());
    CHECK(std::string((*fp8_gemm).at("name")).starts_with("nvjet_sm90_q"));
    double previous = 1e300; // most time first
    for (const auto& a : k.at("appeared")) {
        CHECK(a.at("time_ns").at("run").get<double>() <= previous);
        previous = a.at("time_ns").at("run").get<double>();
    }
    // Nothing recorded: no collector work, no line about it.
    CHECK(p.at("recording").at("notable") == false);
    CHECK(p.at("recording").at("sentence").is_null());
}

TEST_CASE("compare without tensor statistics: every format says why in one line and shows the performance",
    "[cli][compare][performance]")
{
    const std::string text = compare_ok({});
    const auto lines = lines_of(text);
    REQUIRE(lines.size() > 2);
    // After the title, what the pair is (GPU, job, model, precision), then the verdict.
    REQUIRE(lines.size() > 5);
    CHECK(lines[1].starts_with("GPU:       "));
    CHECK(lines[4].starts_with("Precision: "));
    CHECK(lines[5].starts_with(kNotCompared));
    CHECK(lines[5].ends_with("; performance only"));
    for (const char* part : { "\nPerformance (per step, means over the 28 common steps)\n",
             "\nPer step over the 28 common steps: medians, then idle by cause and kernel time by class\n",
             "\n  step time (median)                53.883 ms    22.045 ms  +31.838 ms (+144%)\n",
             "\n  FP8 GEMM kernels ", "\nKernels that appeared (only in the run: 25 names, ",
             "\nKernels that vanished (only in the reference: 2 names, ",
             "\nKernels that changed most (time per step; 64 names in both runs)\n", "\n  … and 20 more",
             "\nFP8's price (per step: the traced step change in four parts)\n" })
        CHECK(text.find(part) != std::string::npos);
    // Nothing about drift or loss beyond that line.
    for (const char* absent : { "\nLoss:", "Scaling events", "Thresholds:", "Sites:", "Recording inflated" })
        CHECK(text.find(absent) == std::string::npos);

    const std::string md = compare_ok({ "--format", "md" });
    CHECK(md.find("**" + kNotCompared) != std::string::npos);
    CHECK(md.find("\n### Per step over the 28 common steps: medians, then idle by cause and kernel time by class\n")
        != std::string::npos);
    CHECK(md.find("\n#### Kernels that appeared (only in the run: 25 names, ") != std::string::npos);
    CHECK(md.find("### Sites") == std::string::npos);

    const std::string html = compare_ok({ "--format", "html" });
    const XmlDocument page = parse_xml(html);
    INFO(page.error);
    REQUIRE(page.ok);
    CHECK(html.find("<h3>Kernels that vanished (only in the reference: 2 names, ") != std::string::npos);
    CHECK(html.find("<h2>Loss</h2>") == std::string::npos);

    // JUnit keeps its two testcases; both fail, saying why, since nothing was judged.
    const XmlDocument junit = parse_xml(compare_ok({ "--format", "junit" }));
    REQUIRE(junit.ok);
    const auto cases = junit.root.descendants("testcase");
    REQUIRE(cases.size() == 2);
    CHECK(cases[0]->attribute("name") == "drift");
    CHECK(cases[1]->attribute("name") == "loss_delta");
    // The drift testcase says why no site was compared; the loss's own reason is that neither run logged one (the
    // loss needs no tensor statistics, issue 42).
    for (const XmlElement* testcase : cases) {
        const auto failures = testcase->descendants("failure");
        REQUIRE(failures.size() == 1);
        CHECK(failures.front()->attribute("message").find(
                  testcase == cases[0] ? "has tensor statistics" : "no 'loss' scalar (fp8scope.log_scalar)")
            != std::string::npos);
    }
    std::map<std::string, std::string> properties;
    for (const XmlElement* property : junit.root.descendants("property"))
        properties[property->attribute("name")] = property->attribute("value");
    CHECK(properties.at("numerics_compared") == "false");
    CHECK(properties.at("run_step_median_ns") == "53882710");
    CHECK(properties.at("kernels_appeared") == "25");
    CHECK(properties.at("kernels_vanished") == "2");
}

TEST_CASE("check --ref without tensor statistics refuses, whatever other budget is given", "[cli][compare][check]")
{
    for (const auto& extra : std::vector<std::vector<std::string>> {
             {}, { "--max-loss-delta", "0.5" }, { "--max-drift-sites", "100" }, { "--max-bubble-ratio", "0.99" } }) {
        std::vector<std::string> args { "check", kFp8, "--ref", kBf16 };
        args.insert(args.end(), extra.begin(), extra.end());
        const auto result = run_fp8scope(args);
        check_bad_trace(result);
        CHECK(result.err
            == "fp8scope: error: " + kNotCompared.substr(std::string("Drift and loss not compared: ").size())
                + ": record them with `fp8scope record` (GEMM statistics are on by default) so that sites can be "
                  "compared\n");
    }
}

TEST_CASE("compare says when recording inflated the difference", "[cli][compare][performance]")
{
    // The clean pair records tensor statistics at every step: the collector's GPU work is a notable share of the
    // reference's step.
    const std::string pairs = kTraces + "compare/";
    const auto result = run_fp8scope(
        { "compare", pairs + "h100-clean-fp8.sqlite", pairs + "h100-clean-bf16.sqlite", "--format", "json" });
    REQUIRE(result.exit_code == 0);
    const nlohmann::json doc = nlohmann::json::parse(result.out);
    CHECK(doc.at("numerics").at("compared") == true);
    const auto& p = doc.at("performance");
    const auto& recording = p.at("recording");
    CHECK(recording.at("notable") == true);
    CHECK(recording.at("notable_share") == 0.02);
    const double share
        = std::max(recording.at("share").at("run").get<double>(), recording.at("share").at("ref").get<double>());
    CHECK(share >= 0.02);
    CHECK(recording.at("collector_ns").at("run").get<double>() > 0);
    CHECK(recording.at("inflation_ns") == p.at("recording_idle_added_ns"));
    const std::string sentence = recording.at("sentence");
    CHECK(sentence.starts_with("Recording inflated the difference: the collector's own GPU work"));
    // The collector's time per step agrees with report's collector-work line on the run.
    const nlohmann::json run_report = report_json(pairs + "h100-clean-fp8.sqlite");
    const auto& work = run_report.at("collector_work");
    CHECK(std::llround(recording.at("collector_ns").at("run").get<double>()) == work.at("time_per_step_ns"));
    CHECK_THAT(recording.at("share").at("run").get<double>(), WithinAbs(work.at("share_of_step").get<double>(), 1e-12));
    // Text prints the line under the steps, before the drift sections.
    const std::string text
        = run_fp8scope_ok({ "compare", pairs + "h100-clean-fp8.sqlite", pairs + "h100-clean-bf16.sqlite" });
    const size_t line = text.find("\n" + sentence + "\n");
    CHECK(line != std::string::npos);
    CHECK(line < text.find("\nScaling events against the reference"));
}
