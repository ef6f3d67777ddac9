// What a new user reads in the text, Markdown and HTML reports (docs/cli.md "Text output"): no rows of zeros, API
// names as the program called them, the OS thread id, the same cause shares (of step time) in every format, control
// characters in kernel and NVTX names escaped in text too, and a readable tensor-site column in HTML.
#include "cli_test_support.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "tensor_samples.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

constexpr int64_t kTid = 4321; // the OS thread id; globalTid is pid << 24 | tid

// Four NVTX steps (warm-up 2 leaves steps 2 and 3) of 10 µs on thread kTid. Each step: an FP8 GEMM, then a
// cudaStreamSynchronize that idles the GPU until a kernel whose name holds an escape sequence and a newline. A
// cudaDeviceSynchronize and a cudaFree only in warm-up: APIs with no call in the analysed steps.
std::string write_trace(const std::string& name)
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, kTid, "python");
    for (int64_t step = 0; step < 4; ++step) {
        const int64_t t = step * 10'000;
        s.nvtx_range(host, t, t + 10'000, "train_step " + std::to_string(step));
        s.launch(host, { .api_start_ns = t + 100, .api_end_ns = t + 200 },
            { .start_ns = t + 300, .end_ns = t + 4'000, .name = "sm90_xmma_gemm_e4m3e4m3_f32" });
        s.sync(host, t + 4'100, t + 6'000, schema::SyncType::StreamSynchronize, 7u, 0, "cudaStreamSynchronize_v3020");
        s.launch(host, { .api_start_ns = t + 6'100, .api_end_ns = t + 6'200 },
            { .start_ns = t + 7'000, .end_ns = t + 9'500, .name = "evil\x1b[31mred\nkernel" });
        if (step == 0) {
            s.sync(host, t + 9'600, t + 9'700, schema::SyncType::ContextSynchronize, std::nullopt, 0,
                "cudaDeviceSynchronize_v3020");
            s.api_call(host, { .api_start_ns = t + 9'800, .api_end_ns = t + 9'900, .name = "cudaFree_v3020" });
        }
    }
    const std::string path = scratch_dir(name) + "/trace.sqlite";
    const auto ok = s.write_fp8scope(path);
    INFO((ok ? std::string() : ok.error().message));
    REQUIRE(ok);
    return path;
}

} // namespace

TEST_CASE("reports list only what happened: no sync API or kernel class row of zeros", "[cli][report][hygiene]")
{
    const std::string trace = write_trace("hygiene_zero_rows");
    const std::string full_text = run_fp8scope_ok({ "report", trace });
    INFO(full_text);
    // Up to the whole-trace tables (top kernels, top API calls), which list warm-up calls too, as nsys stats does.
    const std::string text = full_text.substr(0, full_text.find("\nTop kernels"));
    CHECK(text.find("Host-blocking syncs: 2 in the steps, 1.0 per step; ") != std::string::npos);
    CHECK(text.find("(4 outside the steps)") != std::string::npos); // 2 stream syncs, the device sync and cudaFree
    CHECK(text.find("cudaDeviceSynchronize") == std::string::npos); // called only in warm-up
    CHECK(text.find("cudaFree") == std::string::npos);
    CHECK(text.find("  no kernels: other GEMM, cast/quantize, amax/scale, fused bookkeeping, communication\n")
        != std::string::npos);
    CHECK(text.find("/step    0.0%") == std::string::npos);

    const std::string full_md = run_fp8scope_ok({ "report", trace, "--format", "md" });
    const std::string md = full_md.substr(0, full_md.find("### Top kernels"));
    CHECK(md.find("cudaDeviceSynchronize") == std::string::npos);
    CHECK(md.find("| 0 ns | 0.0% | 0 |") == std::string::npos);
    CHECK(md.find("No kernels in the steps: other GEMM, cast/quantize, amax/scale, fused bookkeeping, communication.")
        != std::string::npos);

    const std::string full_html = run_fp8scope_ok({ "report", trace, "--format", "html" });
    CHECK(parse_xml(full_html).ok);
    // Up to the whole-trace tables, which list warm-up calls too.
    const std::string html = full_html.substr(0, full_html.find("<h2>Top kernels</h2>"));
    CHECK(html.find("<code>cudaDeviceSynchronize</code>") == std::string::npos);
    CHECK(html.find("<td>communication</td>") == std::string::npos);
    CHECK(html.find("No kernels in the steps: other GEMM, cast/quantize, amax/scale, fused bookkeeping, communication.")
        != std::string::npos);
}

TEST_CASE("API names are shown as the program called them, thread ids as the OS tid", "[cli][report][hygiene]")
{
    const std::string trace = write_trace("hygiene_names");
    for (const std::string format : { "text", "md", "html" }) {
        const std::string out = run_fp8scope_ok({ "report", trace, "--format", format });
        INFO(format << "\n" << out);
        CHECK(out.find("_v3020") == std::string::npos);
        CHECK(out.find("cudaStreamSynchronize") != std::string::npos);
        CHECK(out.find(fmt::format("on thread {}", kTid)) != std::string::npos);
    }
    const auto json = nlohmann::json::parse(run_fp8scope_ok({ "report", trace, "--format", "json" }));
    CHECK(json["syncs"]["by_api"][0]["api"] == "cudaStreamSynchronize");
}

TEST_CASE("cause shares have one denominator, step time, in every format", "[cli][report][hygiene]")
{
    const std::string trace = write_trace("hygiene_shares");
    const auto json = nlohmann::json::parse(run_fp8scope_ok({ "report", trace, "--format", "json" }));
    const double step_ns = json["totals"]["step_ns"];
    const std::string text = run_fp8scope_ok({ "report", trace });
    const std::string md = run_fp8scope_ok({ "report", trace, "--format", "md" });
    const std::string full_html = run_fp8scope_ok({ "report", trace, "--format", "html" });
    CHECK(parse_xml(full_html).ok);
    const std::string html = full_html.substr(0, full_html.find("<h2>Top kernels</h2>"));
    const std::string junit = run_fp8scope_ok({ "report", trace, "--format", "junit" });
    double sum = 0;
    for (const std::string cause : { "sync", "dependency", "launch", "host" }) {
        const double ns = json["totals"]["idle_by_cause_ns"][cause];
        sum += ns;
        const std::string share = fmt::format("{:.1f}%", 100.0 * ns / step_ns);
        INFO(cause << " " << share);
        CHECK(text.find(fmt::format(" {} {} ({})", cause, present::format_duration_ns(static_cast<int64_t>(ns)), share))
            != std::string::npos);
        CHECK(md.find(fmt::format(" {} |", share)) != std::string::npos);
        CHECK(html.find(fmt::format("<td class=\"n\">{}</td>", share)) != std::string::npos);
        CHECK(junit.find(fmt::format("name=\"idle_{}_share\" value=\"{:.4f}\"", cause, ns / step_ns))
            != std::string::npos);
    }
    CHECK(sum > 0); // the scenario idles the GPU: the shares above are not all trivially 0
    CHECK(text.find("; shares of step time\n") != std::string::npos);
}

TEST_CASE("control characters in kernel and NVTX names are escaped in the text report", "[cli][report][hygiene]")
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, kTid);
    for (int64_t step = 0; step < 3; ++step) {
        s.nvtx_range(host, step * 1000, step * 1000 + 1000, "step\x1b]0;title\x07");
        s.launch(host, { .api_start_ns = step * 1000, .api_end_ns = step * 1000 + 5 },
            { .start_ns = step * 1000 + 10, .end_ns = step * 1000 + 900, .name = "evil\x1b[31mred\nkernel" });
    }
    const std::string path = scratch_dir("hygiene_control") + "/trace.sqlite";
    REQUIRE(s.write_fp8scope(path));
    const std::string text
        = run_fp8scope_ok({ "report", path, "--warmup", "0", "--step-pattern", "step.*", "--color", "always" });
    CHECK(text.find("evil\\x1b[31mred\\x0akernel") != std::string::npos); // the top kernel of its class
    CHECK(text.find("'step\\x1b]0;title\\x07'") != std::string::npos); // the NVTX name in the steps line
    CHECK(text.find("\x1b]") == std::string::npos);
    CHECK(text.find("\x07") == std::string::npos);
    CHECK(text.find("red\nkernel") == std::string::npos);
}

TEST_CASE("the HTML tensor-site column shows the end of a long label and keeps it whole in a title",
    "[cli][report][hygiene][html]")
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, kTid);
    const std::string path_text = "train_step/Transformer/encoder/layers.11/self_attention/linear_qkv";
    const int64_t site = s.tensor_site("gemm 4096x1024x4096", schema::TensorRole::A, schema::Dtype::BFloat16, 64, 64,
        schema::StatsSource::GemmInterception, path_text);
    for (int64_t step = 0; step < 3; ++step) {
        const int64_t t = step * 10'000;
        s.step_marker(host, t, step);
        s.launch(host, { .api_start_ns = t + 100, .api_end_ns = t + 200 },
            { .start_ns = t + 300, .end_ns = t + 9'000, .name = "gemm" });
        s.tensor_stats(testing::healthy_sample(site, step, t + 150));
    }
    const std::string trace = scratch_dir("hygiene_site") + "/trace.sqlite";
    REQUIRE(s.write_fp8scope(trace));
    const std::string html = run_fp8scope_ok({ "report", trace, "--warmup", "0", "--format", "html" });
    CHECK(parse_xml(html).ok);
    // The site's label and where the zero-code GEMM sits in the step (issue 28 item 7).
    const std::string label = path_text + " · gemm 4096x1024x4096 #0 · A (GEMM 1 of 1 sampled in the step)";
    REQUIRE(label.size() > 72);
    // The cell: the whole label as its title; shown, the last path components from a "/" on, which may wrap there.
    // The place follows the code, whole, so that the label's shortening keeps the path's end.
    CHECK(html.find("<td class=\"site\" title=\"" + label
              + "\"><code>…/<wbr/>layers.11/<wbr/>self_attention/<wbr/>"
                "linear_qkv · gemm 4096x1024x4096 #0 · A</code> (GEMM 1 of 1 sampled in the step)</td>")
        != std::string::npos);
}

TEST_CASE("per-step rates never read 0 for something that happened, cut names keep whole characters",
    "[cli][report][hygiene]")
{
    CHECK(present::per_step_rate(0, 28, 1) == "0");
    CHECK(present::per_step_rate(5, 0, 1) == "0");
    CHECK(present::per_step_rate(1, 28, 1) == "0.036");
    CHECK(present::per_step_rate(3, 28, 1) == "0.1");
    CHECK(present::per_step_rate(28, 28, 1) == "1.0");
    CHECK(present::per_step_rate(14, 28, 0) == "0.5");
    CHECK(present::per_step_rate(1344, 28, 0) == "48");
    CHECK(present::shortened("abcdef", 6) == "abcdef");
    CHECK(present::shortened("abcdef", 4) == "abcd…");
    CHECK(present::shortened("ab·cd", 3) == "ab…"); // '·' is two bytes: never cut in half
}
