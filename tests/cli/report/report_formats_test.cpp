// `fp8scope report --format html|junit` and colour, end to end on the real H100 traces of samples/traces: the HTML
// page is one well-formed, self-contained document with its four charts; the JUnit XML has one testcase per
// analysis area whose failures are exactly the report's recommendations; text is coloured only when asked.
#include "cli_test_support.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kTraces = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
const std::vector<std::string> kRealTraces { kTraces + "h100-train-fp8.sqlite", kTraces + "h100-sample-syncs.sqlite",
    kTraces + "h100-sample-launch-bound.sqlite" };
const std::vector<std::string> kChartTitles { "Bubble ratio per step", "Idle time by cause per step",
    "Top syncs by GPU idle time caused", "Kernel time per step by class" };

std::string report(const std::vector<std::string>& args)
{
    std::vector<std::string> full { "report" };
    full.insert(full.end(), args.begin(), args.end());
    const auto result = run_fp8scope(full);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    REQUIRE(result.err.empty());
    return result.out;
}

} // namespace

TEST_CASE("report --format html is one self-contained, well-formed page with four charts", "[cli][report][html]")
{
    for (const std::string& trace : kRealTraces) {
        INFO(trace);
        const std::string html = report({ trace, "--format", "html" });
        CHECK(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        CHECK(occurrences(html, "<html") == 1);
        CHECK(occurrences(html, "<svg") == occurrences(html, "</svg>"));
        for (const std::string& title : kChartTitles)
            CHECK(html.find("<h3>" + title + "</h3>") != std::string::npos);
        const auto doc = parse_xml(html);
        INFO(doc.error);
        REQUIRE(doc.ok);
        CHECK(doc.root.name == "html");
        CHECK(doc.root.descendants("body").size() == 1);
        // Nothing fetched and nothing run: no script, no external reference (the only URL is the SVG namespace).
        CHECK(doc.root.descendants("script").empty());
        CHECK(doc.root.descendants("link").empty());
        CHECK(doc.root.descendants("img").empty());
        CHECK(occurrences(html, "http") == occurrences(html, "xmlns=\"http://www.w3.org/2000/svg\""));
        CHECK(html.find("url(") == std::string::npos);
        CHECK(html.find("@import") == std::string::npos);
        CHECK(html.size() < 200'000); // light enough to keep as an artifact of every CI run
        CHECK(html.find("<h2>What if</h2>") != std::string::npos); // the tables are there too
        CHECK(html.find("launch latency ε") != std::string::npos);
    }
}

TEST_CASE("report --format html on the syncs sample draws the syncs and the per-step bars", "[cli][report][html]")
{
    const std::string html = report({ kTraces + "h100-sample-syncs.sqlite", "--warmup", "0", "--format", "html" });
    const auto doc = parse_xml(html);
    REQUIRE(doc.ok);
    const auto svgs = doc.root.descendants("svg");
    REQUIRE(svgs.size() == 4);
    CHECK(svgs[0]->descendants("title").size() == 20); // one hover title per step: 20 train_step ranges
    CHECK(svgs[1]->descendants("title").size() == 20);
    CHECK(html.find("cudaStreamSynchronize at train_step") != std::string::npos);
    CHECK(html.find("trace-wide ") != std::string::npos);
}

TEST_CASE("report --format junit: one testcase per area, failures are the recommendations, tensor health skipped "
          "without tensor statistics",
    "[cli][report][junit]")
{
    for (const std::string& trace : kRealTraces) {
        INFO(trace);
        const auto json = nlohmann::json::parse(report({ trace, "--format", "json" }));
        std::set<std::string> kinds;
        for (const auto& rec : json["what_if"]["recommendations"])
            kinds.insert(rec["kind"].get<std::string>());

        const std::string xml = report({ trace, "--format", "junit" });
        const auto doc = parse_xml(xml);
        INFO(doc.error);
        REQUIRE(doc.ok);
        CHECK(doc.root.name == "testsuites");
        const auto suites = doc.root.descendants("testsuite");
        REQUIRE(suites.size() == 1);
        const XmlElement& suite = *suites[0];
        CHECK(suite.attribute("name") == "fp8scope.report");
        const auto cases = suite.descendants("testcase");
        CHECK(cases.size() == 5);
        CHECK(suite.attribute("tests") == "5");
        CHECK(suite.attribute("skipped") == "1"); // these traces have no tensor statistics
        CHECK(suite.attribute("failures") == std::to_string(kinds.size()));
        CHECK(doc.root.attribute("failures") == std::to_string(kinds.size()));
        std::set<std::string> failed, names;
        for (const XmlElement* c : cases) {
            names.insert(c->attribute("classname") + "/" + c->attribute("name"));
            for (const XmlElement* failure : c->descendants("failure")) {
                failed.insert(failure->attribute("type"));
                CHECK(failure->attribute("type") == c->attribute("name"));
                CHECK(failure->attribute("message").find("saves up to ") != std::string::npos);
                CHECK(failure->attribute("message").find("worst step ") != std::string::npos);
            }
        }
        CHECK(failed == kinds);
        CHECK(names
            == std::set<std::string> { "fp8scope.report.bubbles/reduce_host_work", "fp8scope.report.syncs/remove_sync",
                "fp8scope.report.launch/cuda_graphs", "fp8scope.report.fp8_overhead/fuse_fp8_bookkeeping",
                "fp8scope.report.tensor_health/tensor_health" });
        CHECK(xml.find("<skipped message=\"the trace has no tensor statistics\"/>") != std::string::npos);
        std::set<std::string> properties;
        for (const XmlElement* p : suite.descendants("property"))
            properties.insert(p->attribute("name"));
        for (const char* name : { "trace", "steps", "steps_source", "bubble_ratio", "launch_latency_epsilon_ns",
                 "syncs_per_step", "mean_step_ns", "min_recommendation_saving_share", "tensor_samples" })
            CHECK(properties.count(name) == 1);
    }
}

TEST_CASE("report --format junit on the syncs sample fails remove_sync with its worst step", "[cli][report][junit]")
{
    const std::string xml = report({ kTraces + "h100-sample-syncs.sqlite", "--warmup", "0", "--format", "junit" });
    const auto doc = parse_xml(xml);
    REQUIRE(doc.ok);
    bool found = false;
    for (const XmlElement* c : doc.root.descendants("testcase")) {
        if (c->attribute("name") != "remove_sync")
            continue;
        const auto failures = c->descendants("failure");
        REQUIRE(failures.size() == 1);
        CHECK(failures[0]->attribute("message").find("worst step ") != std::string::npos);
        CHECK(failures[0]->text.find("idle caused by sync") != std::string::npos);
        found = true;
    }
    CHECK(found);
}

TEST_CASE("report text is coloured only when asked, piped it has no escape bytes", "[cli][report][color]")
{
    const std::string trace = kTraces + "h100-train-fp8.sqlite";
    const std::string piped = report({ trace });
    CHECK(piped.find('\x1b') == std::string::npos);
    CHECK(report({ trace, "--color", "never" }) == piped);
    CHECK(report({ trace, "--color", "auto" }) == piped); // stdout is a pipe here
    const std::string coloured = report({ trace, "--color", "always" });
    CHECK(coloured.find("\x1b[1mGPU time\x1b[0m") != std::string::npos);
    CHECK(coloured.find("\x1b[1;31m0.676\x1b[0m") != std::string::npos); // a bubble ratio of 0.676 is shown red
    // The same report once the styling is taken out: colour changes nothing else.
    std::string plain;
    for (size_t at = 0; at < coloured.size();) {
        if (coloured[at] == '\x1b') {
            at = coloured.find('m', at) + 1;
            continue;
        }
        plain += coloured[at++];
    }
    CHECK(plain == piped);
    // --color always wins over NO_COLOR (no-color.org lets a flag override it); other formats are never coloured.
    ::setenv("NO_COLOR", "1", 1);
    CHECK(report({ trace, "--color", "always" }) == coloured);
    ::unsetenv("NO_COLOR");
    CHECK(report({ trace, "--color", "always", "--format", "md" }).find('\x1b') == std::string::npos);
    const auto bad = run_fp8scope({ "report", trace, "--color", "sometimes" });
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.starts_with("fp8scope: usage error: "));
}

TEST_CASE("every format gives the collector's own GPU time as one line, apart from the job's", "[cli][report]")
{
    // The FP8 sample with statistics every step (H100): fp8scope's statistics kernels are in the trace, marked.
    const std::string trace = kTraces + "realjobs/h100-train-fp8-stats.sqlite";
    for (const char* format : { "text", "md", "html", "junit" }) {
        INFO(format);
        const std::string out = report({ trace, "--format", format });
        CHECK(occurrences(out, "Collector GPU time per step: ") == 1);
        CHECK(out.find("Collector GPU time per step: none") == std::string::npos);
    }
    const auto json = nlohmann::json::parse(report({ trace, "--format", "json" }));
    const auto& work = json.at("collector_work");
    CHECK(work.at("kernels").get<int64_t>() > 0);
    CHECK(work.at("time_per_step_ns").get<int64_t>() > 0);
    CHECK(work.at("share_of_step").get<double>() > 0.0);
    CHECK(work.at("share_of_step").get<double>() < 1.0);
    // And none of them counts as the job's: no fp8scope kernel among the report's top kernels.
    CHECK(json.dump().find("fp8scope::probes") == std::string::npos);
}
