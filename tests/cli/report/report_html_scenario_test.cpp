// `fp8scope report --format html|junit` (and `check --junit`, which shares the XML escape) on synthetic traces with
// a known shape: names planted to break markup (a kernel named <script>...), no steps, one step, and thousands of
// steps, where the per-step charts must group steps instead of drawing a bar each.
#include "cli_test_support.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

constexpr const char* kScriptKernel = "<script>alert(1)</script>";
constexpr const char* kHostileRange = "<img src=x onerror=\"alert('x')\">&amp;";

// Three train_step ranges of 100 µs. In each: the planted kernel, then a stream sync inside the hostile NVTX range
// that leaves the GPU idle until the next kernel.
testing::Scenario hostile_scenario()
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, s.session().pid, "python");
    for (int64_t step = 0; step < 3; ++step) {
        const int64_t t = step * 100'000;
        s.nvtx_range(host, t, t + 100'000, "train_step");
        s.launch(host, { .api_start_ns = t + 1'000, .api_end_ns = t + 3'000 },
            { .start_ns = t + 5'000, .end_ns = t + 40'000, .name = kScriptKernel });
        s.nvtx_range(host, t + 40'500, t + 71'000, kHostileRange);
        s.sync(host, t + 41'000, t + 70'000, schema::SyncType::StreamSynchronize, 7u);
        s.launch(host, { .api_start_ns = t + 70'500, .api_end_ns = t + 71'000 },
            { .start_ns = t + 72'000, .end_ns = t + 90'000, .name = "sm90_xmma_gemm_e4m3bf16_e4m3f32" });
    }
    return s;
}

std::string write(const testing::Scenario& scenario, const std::string& path)
{
    const auto written = scenario.write_fp8scope(path);
    INFO((written ? std::string() : written.error().message));
    REQUIRE(written);
    return path;
}

std::string run_ok(const std::vector<std::string>& args)
{
    const auto result = run_fp8scope(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result.out;
}

} // namespace

TEST_CASE("report html and junit escape planted kernel names, NVTX paths and paths", "[cli][report][html]")
{
    // The path itself is hostile too: it is printed in the page's title and the JUnit properties.
    const std::string trace = write(hostile_scenario(), scratch_dir("report_hostile") + "/a<b>&'c\".sqlite");
    const std::string html = run_ok({ "report", trace, "--warmup", "0", "--format", "html" });
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos); // the top "other" kernel
    CHECK(html.find("&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;amp;") != std::string::npos);
    const auto doc = parse_xml(html);
    INFO(doc.error);
    REQUIRE(doc.ok);
    CHECK(doc.root.descendants("script").empty());
    CHECK(doc.root.descendants("svg").size() == 4); // the sync idles the GPU, so the top-syncs chart is drawn

    const std::string junit = run_ok({ "report", trace, "--warmup", "0", "--format", "junit" });
    const auto xml = parse_xml(junit);
    INFO(xml.error);
    REQUIRE(xml.ok);
    bool path_property = false;
    for (const XmlElement* p : xml.root.descendants("property"))
        path_property |= p->attribute("name") == "trace" && p->attribute("value") == trace;
    CHECK(path_property);

    // check's JUnit uses the same escape: the testsuite is named after the hostile path.
    const std::string check_xml = scratch_dir("report_hostile_check") + "/check.xml";
    const auto checked
        = run_fp8scope({ "check", trace, "--warmup", "0", "--max-bubble-ratio", "0.9", "--junit", check_xml });
    CHECK(checked.exit_code == 0);
    std::string check_text;
    {
        std::ifstream in(check_xml);
        check_text.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto check_doc = parse_xml(check_text);
    INFO(check_doc.error);
    REQUIRE(check_doc.ok);
    REQUIRE(check_doc.root.descendants("testsuite").size() == 1);
    CHECK(check_doc.root.descendants("testsuite")[0]->attribute("name") == trace);
}

TEST_CASE("report html and junit on a trace with no steps", "[cli][report][html]")
{
    testing::Scenario s;
    s.api_call(s.thread(s.session().pid, s.session().pid),
        { .api_start_ns = 100, .api_end_ns = 200, .name = "cudaMalloc_v3020" });
    const std::string trace = write(s, scratch_dir("report_no_steps") + "/empty.sqlite");
    // No GPU activity: the whole trace is one step of no length, which must not divide by zero anywhere.
    const std::string whole = run_ok({ "report", trace, "--warmup", "0", "--format", "html" });
    CHECK(parse_xml(whole).ok);
    CHECK(whole.find("1 step from whole trace") != std::string::npos);
    // --steps past the end selects nothing: a usage error naming the step there is, never an empty report.
    for (const auto& format : { "html", "junit" }) {
        const auto none = run_fp8scope({ "report", trace, "--warmup", "0", "--steps", "5:6", "--format", format });
        CHECK(none.exit_code == 2);
        CHECK(none.out.empty());
        CHECK(none.err.starts_with("fp8scope: usage error: --steps 5:6 selects none of step 0\n"));
    }
    const auto junit = parse_xml(run_ok({ "report", trace, "--warmup", "0", "--steps", "0:0", "--format", "junit" }));
    REQUIRE(junit.ok);
    CHECK(junit.root.descendants("testcase").size() == 5); // the fifth, tensor health, skipped
    CHECK(junit.root.descendants("failure").empty());
}

TEST_CASE("report html on a trace with no activity says so", "[cli][report][html]")
{
    testing::Scenario s; // a trace the collector closed before the job did anything
    const std::string trace = write(s, scratch_dir("report_no_activity") + "/idle.sqlite");
    const std::string html = run_ok({ "report", trace, "--format", "html" });
    CHECK(parse_xml(html).ok);
    CHECK(html.find("No steps to analyse: the trace has no activity.") != std::string::npos);
    CHECK(html.find("<svg") == std::string::npos);
    CHECK(run_ok({ "report", trace }).find("\nNo steps: the trace has no activity to analyse.\n") != std::string::npos);
    CHECK(run_ok({ "report", trace, "--format", "md" }).find("No steps: the trace has no activity to analyse.")
        != std::string::npos);
}

TEST_CASE("report html on one step draws one bar per chart", "[cli][report][html]")
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, s.session().pid);
    s.step_marker(host, 0, 1);
    s.launch(host, { .api_start_ns = 100, .api_end_ns = 900 }, { .start_ns = 1'000, .end_ns = 5'000, .name = "gemm" });
    s.launch(host, { .api_start_ns = 5'100, .api_end_ns = 9'000 },
        { .start_ns = 9'500, .end_ns = 10'000, .name = "cast_fp8" });
    const std::string trace = write(s, scratch_dir("report_one_step") + "/one.sqlite");
    const std::string html = run_ok({ "report", trace, "--warmup", "0", "--format", "html" });
    const auto doc = parse_xml(html);
    INFO(doc.error);
    REQUIRE(doc.ok);
    const auto svgs = doc.root.descendants("svg");
    REQUIRE(svgs.size() == 3); // no sync: the top-syncs section says so instead of drawing
    CHECK(svgs[0]->descendants("title").size() == 1);
    CHECK(html.find("No host-blocking call in the analysed steps left the GPU idle.") != std::string::npos);
}

TEST_CASE("report html groups thousands of steps into at most 500 bars and says so", "[cli][report][html]")
{
    constexpr int64_t kSteps = 3000;
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, s.session().pid);
    for (int64_t step = 0; step < kSteps; ++step) {
        const int64_t t = step * 10'000;
        s.step_marker(host, t, step);
        s.launch(host, { .api_start_ns = t + 100, .api_end_ns = t + 900 },
            { .start_ns = t + 1'000, .end_ns = t + 4'000 + (step % 7) * 500, .name = "gemm" });
    }
    const std::string trace = write(s, scratch_dir("report_many_steps") + "/many.sqlite");
    const std::string html = run_ok({ "report", trace, "--warmup", "0", "--format", "html" });
    const auto doc = parse_xml(html);
    INFO(doc.error);
    REQUIRE(doc.ok);
    const auto svgs = doc.root.descendants("svg");
    REQUIRE(svgs.size() == 3);
    for (const XmlElement* svg : svgs)
        CHECK(svg->descendants("title").size() == 500);
    CHECK(occurrences(html, "3000 steps are drawn as 500 bars of up to 6 consecutive steps each") == 3);
    CHECK(html.find("steps 0-5") != std::string::npos); // the first bar's label
    CHECK(html.find("3000 rows, the first 500 shown") != std::string::npos); // the per-step table is capped too
    CHECK(html.size() < 400'000);
}
