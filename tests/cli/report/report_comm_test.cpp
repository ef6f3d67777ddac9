// The fifth cause of idle time, `comm` (docs/analysis.md "Causes of bubbles", rule 4), in every report format: on
// a multi-rank scenario where compute waits for an all-reduce, and absent from a single-rank trace's text.
#include "cli_test_support.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

std::string run_ok(const std::vector<std::string>& args)
{
    const auto result = run_fp8scope(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result.out;
}

// One marked step, [0, 600): compute [30, 100) on stream 7, an all-reduce on stream 9 [100, 400) that compute
// waits for (the next compute kernel was launched long before, at 20), then compute [400, 500) and [500, 600). A
// second all-reduce [520, 560) overlaps compute and hides nothing. Idle: [0, 30) launch-bound (the thread spends 24
// of its 30 ns in launch calls) and [100, 400) comm: 330 of 600 ns.
std::string write_comm_trace(const std::string& dir)
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, s.session().pid);
    s.step_marker(host, 0, 0);
    const auto kernel = [](int64_t start_ns, int64_t end_ns, uint32_t stream = 7) {
        return testing::KernelSpec { .start_ns = start_ns, .end_ns = end_ns, .name = "gemm", .stream_id = stream };
    };
    const auto call = [](int64_t start_ns, int64_t end_ns) {
        return testing::ApiSpec { .api_start_ns = start_ns, .api_end_ns = end_ns };
    };
    s.launch(host, call(0, 10), kernel(30, 100));
    testing::KernelSpec allreduce = kernel(100, 400, 9);
    allreduce.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    s.launch(host, call(12, 18), allreduce);
    s.launch(host, call(20, 28), kernel(400, 500));
    s.launch(host, call(30, 38), kernel(500, 600));
    testing::KernelSpec overlapped = allreduce;
    overlapped.start_ns = 520;
    overlapped.end_ns = 560;
    s.launch(host, call(40, 48), overlapped);
    const std::string path = dir + "/comm.sqlite";
    const auto written = s.write_fp8scope(path);
    REQUIRE(written);
    return path;
}

} // namespace

TEST_CASE("report shows idle time caused by comm in a multi-rank run, in every format", "[cli][report][comm]")
{
    const std::string trace = write_comm_trace(scratch_dir("report_comm"));

    const std::string text = run_ok({ "report", trace, "--warmup", "0" });
    INFO(text);
    CHECK(text.find("Multi-rank run (rule 4): communication kernels wait for the other ranks, so they are not busy "
                    "time; a gap is `comm` when they cover over 50% of it\n")
        != std::string::npos);
    CHECK(text.find("busy             270 ns (45.0%)") != std::string::npos);
    // Shares of step time (600 ns), as in the Markdown, HTML and JUnit reports.
    CHECK(text.find("idle by cause    sync 0 ns (0.0%), dependency 0 ns (0.0%), launch 30 ns (5.0%), host 0 ns (0.0%), "
                    "comm 300 ns (50.0%); shares of step time\n")
        != std::string::npos);
    CHECK(text.find("    0      0       600 ns    0.550  comm\n") != std::string::npos); // the per-step top cause

    const auto json = nlohmann::json::parse(run_ok({ "report", trace, "--warmup", "0", "--format", "json" }));
    CHECK(json["schema"] == "fp8scope.report/2");
    CHECK(json["multi_rank"] == true);
    CHECK(json["thresholds"]["comm_share"] == 0.5);
    const auto& causes = json["totals"]["idle_by_cause_ns"];
    CHECK(causes["comm"] == 300);
    CHECK(causes["launch"] == 30);
    CHECK(json["per_device_step"][0]["totals"]["idle_by_cause_ns"]["comm"] == 300);
    CHECK(json["totals"]["idle_ns"] == 330);

    const std::string md = run_ok({ "report", trace, "--warmup", "0", "--format", "md" });
    INFO(md);
    CHECK(md.find("| step time | busy | bubble ratio | sync | dependency | launch | host | comm |\n"
                  "|---|---|---|---|---|---|---|---|\n")
        != std::string::npos);
    CHECK(md.find("| 0.0% | 0.0% | 5.0% | 0.0% | 50.0% |\n") != std::string::npos);
    CHECK(md.find("multi-rank run: communication kernels are not busy time") != std::string::npos);

    const std::string html = run_ok({ "report", trace, "--warmup", "0", "--format", "html" });
    CHECK(parse_xml(html).ok);
    CHECK(html.find("<th>comm idle</th>") != std::string::npos);
    CHECK(html.find("<th>comm rule</th>") != std::string::npos);

    const auto junit = parse_xml(run_ok({ "report", trace, "--warmup", "0", "--format", "junit" }));
    REQUIRE(junit.ok);
    bool comm_property = false;
    for (const XmlElement* p : junit.root.descendants("property"))
        comm_property |= p->attribute("name") == "idle_comm_share" && p->attribute("value") == "0.5000";
    CHECK(comm_property);
}

TEST_CASE("a single-rank report has no comm cause in text and 0 in JSON", "[cli][report][comm]")
{
    const std::string trace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite";
    const std::string text = run_ok({ "report", trace });
    CHECK(text.find(" comm ") == std::string::npos); // the cause; "communication" is a kernel class
    CHECK(text.find("Multi-rank") == std::string::npos);
    const auto json = nlohmann::json::parse(run_ok({ "report", trace, "--format", "json" }));
    CHECK(json["multi_rank"] == false);
    CHECK(json["totals"]["idle_by_cause_ns"]["comm"] == 0);
    CHECK(json["totals"]["idle_by_cause_ns"].size() == 5);
    CHECK(run_ok({ "report", trace, "--format", "md" }).find("| comm |") == std::string::npos);
}
