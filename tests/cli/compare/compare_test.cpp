// `fp8scope compare RUN REF` and `check RUN --ref REF`, end to end on the H100 pairs of samples/traces/compare
// (samples/traces/README.md): clean (FP8 healthy against BF16) and drift (a planted outlier feature in blocks.1.fc1's
// activation from step 14). Every format renders and parses; the gate exits 0 and 1 and names the first divergent
// site; bad input exits 2 or 3 with one line. The analyzer's exact figures are tested in tests/analyzer/compare_*.
#include "cli_test_support.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kPairs = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/compare/";
const std::string kCleanRun = kPairs + "h100-clean-fp8.sqlite";
const std::string kCleanRef = kPairs + "h100-clean-bf16.sqlite";
const std::string kDriftRun = kPairs + "h100-drift-fp8.sqlite";
const std::string kDriftRef = kPairs + "h100-drift-bf16.sqlite";
const std::string kDriftSite = "blocks.1.fc1";
constexpr int64_t kDriftStep = 14; // --plant-drift 1:14:1.5

std::string compare(const std::string& run, const std::string& ref, const std::string& format)
{
    const auto result = run_fp8scope({ "compare", run, ref, "--format", format });
    INFO(result.err);
    REQUIRE(result.exit_code == 0); // compare is not a gate, whatever it finds
    REQUIRE(result.err.empty());
    return result.out;
}

nlohmann::json compare_json(const std::string& run, const std::string& ref)
{
    const auto doc = nlohmann::json::parse(compare(run, ref, "json"));
    REQUIRE(doc.at("schema") == "fp8scope.compare/1");
    return doc;
}

// The JUnit document's testcases (pointers into `doc`), after checking the suite's layout.
std::vector<const XmlElement*> junit_testcases(const XmlDocument& doc)
{
    INFO(doc.error);
    REQUIRE(doc.ok);
    const auto suites = doc.root.descendants("testsuite");
    REQUIRE(suites.size() == 1);
    CHECK(suites.front()->attribute("name") == "fp8scope.compare");
    const auto cases = doc.root.descendants("testcase");
    REQUIRE(cases.size() == 2);
    CHECK(cases[0]->attribute("name") == "drift");
    CHECK(cases[1]->attribute("name") == "loss_delta");
    return cases;
}

} // namespace

TEST_CASE("compare on the drift pair names the first divergent site in every format", "[cli][compare]")
{
    const nlohmann::json doc = compare_json(kDriftRun, kDriftRef);
    const auto& drift = doc.at("drift");
    CHECK(drift.at("flagged_sites").size() >= 1);
    const auto& first = drift.at("first_divergent");
    REQUIRE(first.is_object());
    CHECK(first.at("site").get<std::string>().find(kDriftSite) != std::string::npos);
    CHECK(std::abs(first.at("onset_step").get<int64_t>() - kDriftStep) <= 3);
    CHECK(!first.at("evidence").empty());
    CHECK(first == drift.at("flagged_sites").front());
    CHECK(doc.at("verdict").at("healthy") == false);

    const std::string text = compare(kDriftRun, kDriftRef, "text");
    // The title, what the pair is (one line each: GPU, job, model, precision), then the verdict.
    CHECK(text.starts_with("fp8scope compare: " + kDriftRun + " against " + kDriftRef + "\nGPU:       "));
    CHECK(text.find("\nJob:       'train.py' in both, the same arguments beyond precision switches and run names\n")
        != std::string::npos);
    const size_t precision = text.find("\nPrecision: the run runs FP8 ");
    REQUIRE(precision != std::string::npos);
    CHECK(text.substr(text.find('\n', precision + 1) + 1).starts_with("DRIFT: "));
    CHECK(text.find("first divergent: " + first.at("site").get<std::string>()) != std::string::npos);
    CHECK(text.find("Drifting sites (") != std::string::npos);

    const std::string md = compare(kDriftRun, kDriftRef, "md");
    CHECK(md.starts_with("## fp8scope compare: "));
    CHECK(md.find("**DRIFT: ") != std::string::npos);
    CHECK(md.find("### Drifting sites") != std::string::npos);

    const XmlDocument junit = parse_xml(compare(kDriftRun, kDriftRef, "junit"));
    const auto cases = junit_testcases(junit);
    const auto failures = cases[0]->descendants("failure");
    REQUIRE(failures.size() == 1);
    const std::string message = failures.front()->attribute("message");
    CHECK(message.find(kDriftSite) != std::string::npos);
    CHECK(message.find("from step " + std::to_string(first.at("onset_step").get<int64_t>())) != std::string::npos);
}

TEST_CASE("compare on the clean pair flags no site and says the run is healthy", "[cli][compare]")
{
    const nlohmann::json doc = compare_json(kCleanRun, kCleanRef);
    CHECK(doc.at("drift").at("flagged_sites").empty());
    CHECK(doc.at("drift").at("first_divergent").is_null());
    const auto& loss = doc.at("loss");
    CHECK(loss.at("available") == true);
    CHECK(loss.at("max_relative_delta").is_number());
    CHECK(loss.at("final_relative_delta").get<double>() < loss.at("threshold").get<double>());
    CHECK(loss.at("threshold") == 1e-2);
    CHECK(loss.at("strict_threshold") == 2.5e-3);
    CHECK(loss.at("sources").size() == 2);
    CHECK(doc.at("verdict").at("healthy") == true);

    const std::string text = compare(kCleanRun, kCleanRef, "text");
    CHECK(text.find("\nFP8 run healthy against its reference: no site drifts; loss delta ") != std::string::npos);
    CHECK(text.find("Drifting sites") == std::string::npos);

    const XmlDocument junit = parse_xml(compare(kCleanRun, kCleanRef, "junit"));
    const auto cases = junit_testcases(junit);
    for (const XmlElement* testcase : cases) {
        CHECK(testcase->descendants("failure").empty());
        CHECK(testcase->descendants("system-out").size() == 1);
    }
}

TEST_CASE("compare --format json has every documented key, thresholds and per-step rows", "[cli][compare][json]")
{
    const nlohmann::json doc = compare_json(kDriftRun, kDriftRef);
    for (const char* key : { "schema", "verdict", "run", "ref", "thresholds", "alignment", "sites", "matched_sites",
             "drift", "loss", "performance", "recipe" })
        CHECK(doc.contains(key));
    for (const char* side : { "run", "ref" }) {
        const auto& trace = doc.at(side);
        CHECK(trace.at("path").get<std::string>().ends_with(".sqlite"));
        CHECK(trace.at("producer").get<std::string>().starts_with("fp8scope "));
        CHECK(trace.at("command_line").get<std::string>().find("train.py") != std::string::npos);
        CHECK(trace.at("steps").at("source") == "markers");
        CHECK(trace.at("steps").at("analysed").get<int64_t>() > 0);
    }
    CHECK(doc.at("thresholds").size() == 15); // every constant of compare.hpp
    CHECK(doc.at("thresholds").at("amax_ratio_event_log2") == 1.0);
    CHECK(doc.at("thresholds").at("stale_burst_bits") == 0.1);
    CHECK(doc.at("thresholds").at("drift_floor_range_bits") == 3.0);
    CHECK(doc.at("recipe").contains("current_or_static"));
    const auto& common = doc.at("alignment").at("common");
    CHECK(common.at("count").get<int64_t>() > 0);
    CHECK(common.at("first").get<int64_t>() <= common.at("last").get<int64_t>());
    CHECK(doc.at("sites").at("matched").get<size_t>() == doc.at("matched_sites").size());
    // A row has every figure of CompareStep; one a side cannot show is null, not left out.
    const auto& site = doc.at("matched_sites").front();
    REQUIRE(!site.at("steps").empty());
    for (const auto& row : site.at("steps"))
        CHECK(row.size() == 16);
    for (const char* key : { "total", "first" }) {
        CHECK(doc.at("drift").at("amax_ratio_events").contains(key));
        CHECK(doc.at("drift").at("stale_scale_events").contains(key));
    }
    for (const char* key : { "gemm_saved_ns", "bookkeeping_added_ns", "net_gain_ns", "step_change_ns" })
        CHECK(doc.at("performance").at(key).is_number());
    CHECK(doc.at("performance").at("run").at("step_ns").get<double>() > 0);
}

TEST_CASE("compare --format html is one well-formed page with the divergence chart", "[cli][compare][html]")
{
    const std::string html = compare(kDriftRun, kDriftRef, "html");
    CHECK(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    const auto doc = parse_xml(html);
    INFO(doc.error);
    REQUIRE(doc.ok);
    CHECK(doc.root.descendants("script").empty());
    CHECK(doc.root.descendants("svg").size() == 1);
    CHECK(doc.root.descendants("polyline").size() == 1);
    CHECK(html.find("<h3>First divergent site: ") != std::string::npos);
    CHECK(html.find("<h2>Drifting sites</h2>") != std::string::npos);
    CHECK(html.size() < 300'000);
    // Without a drifting site there is nothing to chart, and the page still parses.
    const auto clean = parse_xml(compare(kCleanRun, kCleanRef, "html"));
    REQUIRE(clean.ok);
    CHECK(clean.root.descendants("svg").empty());
}

TEST_CASE("compare escapes site labels from the traces in every format", "[cli][compare][markup]")
{
    // The drift pair with markup, a table-cell bar, backticks and a newline in the NVTX path of blocks.1.fc1 (both
    // traces, so that the sites still match).
    const std::string dir = scratch_dir("compare_markup");
    const std::string hostile = "blocks.1.fc1<b>|`x`&";
    std::vector<std::string> copies;
    for (const std::string& trace : { kDriftRun, kDriftRef }) {
        copies.push_back(dir + "/" + std::filesystem::path(trace).filename().string());
        std::filesystem::copy_file(trace, copies.back());
        exec_sql(copies.back(),
            "UPDATE StringIds SET value = replace(value, 'blocks.1.fc1', '" + hostile
                + "' || char(10)) WHERE value LIKE '%blocks.1.fc1%'");
    }
    const std::string text = compare(copies[0], copies[1], "text");
    CHECK(text.find(hostile + "\\x0a") != std::string::npos);
    CHECK(text.find(hostile + "\n") == std::string::npos);
    for (const char* format : { "html", "junit" }) {
        const auto doc = parse_xml(compare(copies[0], copies[1], format));
        INFO(format << ": " << doc.error);
        CHECK(doc.ok);
        CHECK(doc.root.descendants("b").empty());
    }
    const std::string md = compare(copies[0], copies[1], "md");
    // A raw "<b>" only inside a code span (fenced by two backticks, past the label's own), never as markup.
    for (size_t at = md.find("<b>"); at != std::string::npos; at = md.find("<b>", at + 1)) {
        const size_t line = md.rfind('\n', at) + 1;
        CHECK(md.substr(line, at - line).find("``") != std::string::npos);
    }
    CHECK(md.find("blocks.1.fc1\\<b\\>\\|\\`x\\`\\&") != std::string::npos);
    const auto json = nlohmann::json::parse(compare(copies[0], copies[1], "json"));
    CHECK(
        json.at("drift").at("first_divergent").at("site").get<std::string>().find(hostile + "\n") != std::string::npos);
}

TEST_CASE("compare text is coloured only when asked", "[cli][compare][color]")
{
    const auto plain = run_fp8scope({ "compare", kDriftRun, kDriftRef, "--color", "never" });
    CHECK(plain.out.find('\x1b') == std::string::npos);
    CHECK(plain.out == compare(kDriftRun, kDriftRef, "text")); // piped: the same bytes as --color never
    const auto coloured = run_fp8scope({ "compare", kDriftRun, kDriftRef, "--color", "always" });
    CHECK(coloured.out.find("\x1b[1;31mDRIFT: ") != std::string::npos);
}

TEST_CASE("check --ref exits 0 on the clean pair and 1 on the drift pair, naming the first divergent site",
    "[cli][compare][check]")
{
    const std::string dir = scratch_dir("check_ref");
    const auto clean = run_fp8scope({ "check", kCleanRun, "--ref", kCleanRef });
    INFO(clean.out << clean.err);
    CHECK(clean.exit_code == 0);
    CHECK(clean.out.find("ok   max-loss-delta") != std::string::npos);
    CHECK(clean.out.find("ok   max-drift-sites") != std::string::npos);
    CHECK(clean.out.find("2 of 2 budgets hold") != std::string::npos);

    const auto drift = run_fp8scope(
        { "check", kDriftRun, "--ref", kDriftRef, "--junit", dir + "/check.xml", "--md", dir + "/check.md" });
    INFO(drift.out << drift.err);
    CHECK(drift.exit_code == 1);
    CHECK(drift.out.starts_with("fp8scope check: " + kDriftRun + " against " + kDriftRef + "\n"));
    CHECK(drift.out.find("FAIL max-drift-sites") != std::string::npos);

    const auto junit = parse_xml(read_text_file(dir + "/check.xml"));
    INFO(junit.error);
    REQUIRE(junit.ok);
    const auto cases = junit.root.descendants("testcase");
    const auto drift_case
        = std::ranges::find_if(cases, [](const XmlElement* c) { return c->attribute("name") == "max-drift-sites"; });
    REQUIRE(drift_case != cases.end());
    const auto failures = (*drift_case)->descendants("failure");
    REQUIRE(failures.size() == 1);
    const std::string message = failures.front()->attribute("message");
    CHECK(message.find(kDriftSite) != std::string::npos);
    CHECK(message.find("from step ") != std::string::npos);

    const std::string md = read_text_file(dir + "/check.md");
    CHECK(md.starts_with("### fp8scope check: FAILED"));
    CHECK(md.find("Reference: `" + kDriftRef + "`") != std::string::npos);
    const auto row = md.find("| `max-drift-sites` |");
    REQUIRE(row != std::string::npos);
    const std::string line = md.substr(row, md.find('\n', row) - row);
    CHECK(line.find(kDriftSite) != std::string::npos);
    CHECK(line.find("from step ") != std::string::npos);
}

TEST_CASE("check --ref with one compare budget evaluates only that one, after the trace's own", "[cli][compare][check]")
{
    const auto result = run_fp8scope(
        { "check", kCleanRun, "--ref", kCleanRef, "--max-bubble-ratio", "1", "--max-loss-delta", "0.5" });
    INFO(result.out << result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.out.find("max-bubble-ratio") < result.out.find("max-loss-delta"));
    CHECK(result.out.find("max-drift-sites") == std::string::npos);
    CHECK(result.out.find("2 of 2 budgets hold") != std::string::npos);
}

TEST_CASE("compare and check --ref: bad input exits 2 or 3 with one line", "[cli][compare][usage]")
{
    const std::string syncs = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-sample-syncs.sqlite";
    // A missing file, either side. A trace without tensor statistics is compared by performance alone (exit 0,
    // compare_performance_test.cpp), but `check --ref` cannot gate drift and loss on it.
    check_bad_trace(run_fp8scope({ "compare", kPairs + "missing.sqlite", kCleanRef }));
    check_bad_trace(run_fp8scope({ "compare", kCleanRun, kPairs + "missing.sqlite" }));
    check_bad_trace(run_fp8scope({ "check", syncs, "--ref", kCleanRef }));
    const auto refused = run_fp8scope({ "check", syncs, "--ref", kCleanRef });
    CHECK(refused.err.starts_with("fp8scope: error: the run '" + syncs + "' has no tensor statistics"));
    const auto performance = run_fp8scope({ "compare", syncs, kCleanRef });
    CHECK(performance.exit_code == 0);
    CHECK(performance.out.find("\nDrift and loss not compared: the run '" + syncs + "' has no tensor statistics")
        != std::string::npos);

    for (const auto& args : std::vector<std::vector<std::string>> {
             { "compare", kCleanRun },
             { "compare", kCleanRun, kCleanRef, "--format", "xml" },
             { "compare", kCleanRun, kCleanRef, "--steps", "9:5" },
             { "check", kCleanRun, "--max-loss-delta", "0.01" },
             { "check", kCleanRun, "--max-drift-sites", "0" },
             { "check", kCleanRun, "--max-bubble-ratio", "0.5", "--loss-scalar", "loss" },
             { "check", kCleanRun, "--ref", kCleanRef, "--max-loss-delta", "nan" },
             { "check", kCleanRun, "--ref", kCleanRef, "--max-loss-delta", "-0.1" },
             { "check", kCleanRun, "--ref", kCleanRef, "--max-drift-sites", "-1" },
         }) {
        const auto result = run_fp8scope(args);
        INFO(args[0] << " " << args.back() << "\n" << result.err);
        CHECK(result.exit_code == 2);
        CHECK(result.out.empty());
        CHECK(result.err.starts_with("fp8scope: usage error: "));
        CHECK(result.err.find("Run 'fp8scope " + args[0] + " --help'") != std::string::npos);
    }
    // A selection that leaves nothing names the trace it is about.
    const auto empty = run_fp8scope({ "compare", kCleanRun, kCleanRef, "--steps", "500:600" });
    CHECK(empty.exit_code == 2);
    CHECK(empty.err.starts_with("fp8scope: usage error: the run (" + kCleanRun + "): --steps 500:600 selects none"));
}

TEST_CASE("compare --help shows its arguments, examples and exit codes, and fp8scope --help lists it",
    "[cli][compare][usage]")
{
    const auto help = run_fp8scope({ "compare", "--help" });
    INFO(help.out);
    CHECK(help.exit_code == 0);
    for (const char* text : { "RUN", "REF", "--loss-scalar", "--step-source", "Examples:",
             "fp8scope compare samples/traces/compare/h100-drift-fp8.sqlite", "Exit codes: 0 ok, 2 usage error" })
        CHECK(help.out.find(text) != std::string::npos);
    const auto main_help = run_fp8scope({ "--help" });
    CHECK(main_help.out.find("compare") != std::string::npos);
    const auto check_help = run_fp8scope({ "check", "--help" });
    for (const char* text : { "--ref", "--max-loss-delta", "--max-drift-sites" })
        CHECK(check_help.out.find(text) != std::string::npos);
    const auto unknown = run_fp8scope({ "comparre" });
    CHECK(unknown.err.find("available: info, record, report, check, compare") != std::string::npos);
}

TEST_CASE(
    "compare prints FP8's price in four parts and what would win it back, in every format", "[cli][compare][price]")
{
    // JSON: the new fields beside the old ones (additive), and the four parts sum to the traced step change.
    const nlohmann::json doc = compare_json(kCleanRun, kCleanRef);
    const auto& p = doc.at("performance");
    for (const char* key : { "launch_idle_added_ns", "rest_ns", "other_kernels_added_ns", "kernels_added_per_step",
             "explained_share", "recording_idle_added_ns", "untraced_change_estimate_ns" })
        CHECK(p.at(key).is_number());
    for (const char* side : { "run", "ref" })
        for (const char* key :
            { "other_kernel_ns", "launch_idle_ns", "graph_removable_ns", "busy_ns", "idle_ns", "recording_idle_ns" })
            CHECK(p.at(side).at(key).is_number());
    const double change = p.at("step_change_ns").get<double>();
    const double sum = -p.at("gemm_saved_ns").get<double>() + p.at("bookkeeping_added_ns").get<double>()
        + p.at("launch_idle_added_ns").get<double>() + p.at("rest_ns").get<double>();
    CHECK_THAT(sum, Catch::Matchers::WithinAbs(change, 1e-6 * std::abs(change)));
    CHECK(change > 0); // the recorded eager FP8 step is slower than BF16's
    const double share = p.at("explained_share").get<double>();
    CHECK(share > 0.9); // the launches explain the rest
    const std::string explanation = p.at("explanation");
    CHECK(explanation.starts_with("GEMM time, FP8 bookkeeping and launch + host-in-launch idle explain "));
    const auto& recovery = p.at("recovery");
    CHECK(recovery.size() == 3);
    CHECK(recovery.at("cuda_graphs_ns").get<double>() > 0);
    CHECK(recovery.at("fused_casts_ns") == p.at("bookkeeping_added_ns"));
    CHECK(recovery.at("torch_compile_up_to_ns").get<double>() >= recovery.at("cuda_graphs_ns").get<double>());

    // Every other format: the parts, the share the text computes from the same figure, and the three fixes.
    const std::string explained = fmt::format("explain {:.0f}% of the traced step change", 100.0 * share);
    const std::string text = compare(kCleanRun, kCleanRef, "text");
    CHECK(text.find("\nFP8's price (per step: the traced step change in four parts)\n") != std::string::npos);
    for (const char* row :
        { "\n  GEMM time  ", "\n  FP8 bookkeeping  ", "\n  launch + host-in-launch idle  ", "\n  rest  ",
            "\n  traced step change  ", "\n  launch + host-in-launch idle  ", "\n  recording's idle per step  ",
            "\n  recording itself cost the run ", "\n  What would win it back, per step:\n    CUDA graphs     up to ",
            "\n    fused casts     up to ", "\n    torch.compile   up to " })
        CHECK(text.find(row) != std::string::npos);
    CHECK(text.find(explained) != std::string::npos);
    CHECK(text.find("more kernels per step, ") != std::string::npos);

    const std::string md = compare(kCleanRun, kCleanRef, "md");
    CHECK(md.find("\n### FP8's price (per step: the traced step change in four parts)\n\n| part | per step | share of "
                  "the change | |\n")
        != std::string::npos);
    CHECK(md.find("\n| launch + host-in-launch idle | +") != std::string::npos);
    CHECK(md.find(explained) != std::string::npos);
    CHECK(md.find("\n- CUDA graphs: up to ") != std::string::npos);

    const std::string html = compare(kCleanRun, kCleanRef, "html");
    CHECK(html.find("<h3>FP8's price</h3>") != std::string::npos);
    CHECK(html.find(explained) != std::string::npos);
    REQUIRE(parse_xml(html).ok);

    const XmlDocument junit = parse_xml(compare(kCleanRun, kCleanRef, "junit"));
    REQUIRE(junit.ok);
    std::map<std::string, std::string> properties;
    for (const XmlElement* property : junit.root.descendants("property"))
        properties[property->attribute("name")] = property->attribute("value");
    CHECK(properties.contains("launch_idle_added_ns"));
    CHECK(properties.contains("step_change_ns"));
    CHECK(properties.at("fp8_price_explained_share") == fmt::format("{:.4f}", share));
}
