// Tensor health in every `fp8scope report` format: on a scenario with exact figures (a NaN, a saturated step, a
// stale scale) whose site label is built to break markup, on the recorded FP8 and BF16 runs with tensor statistics,
// and on a trace without any (one line in text, zeros in JSON, a skipped JUnit testcase).
#include "cli_test_support.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kTraces = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
// NVTX path and GEMM name from the trace are untrusted: markup, a table cell boundary, backticks, emphasis.
const std::string kHostilePath = "train_step/<script>alert(1)</script>|layers.3";
const std::string kHostileName = "gemm|64 `x` <b>**bold**</b>";
const std::string kLabel = kHostilePath + " · " + kHostileName + " #0 · A";
// The site tables add where a zero-code GEMM site sits in the step (issue 28 item 7): the scenario's one GEMM.
const std::string kPlace = "GEMM 1 of 1 sampled in the step";

std::string run_ok(const std::vector<std::string>& args)
{
    const auto result = run_fp8scope(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    REQUIRE(result.err.empty());
    return result.out;
}

// Six marked steps (warm-up 2 leaves 2..5) of one kernel each; a BF16 tensor cast to E4M3 at a GEMM, sampled every
// step with scale 64 (fp8_max * scale_inv = 7) and amax 1.75 (headroom 2 bits): 40 of 4096 elements saturated and
// 123 underflowed in step 4, two NaN in step 3, amax 14 in step 5 (headroom -1 bit: a stale scale).
std::string write_tensor_trace(const std::string& dir)
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, s.session().pid, "python");
    const int64_t site = s.tensor_site(kHostileName, schema::TensorRole::A, schema::Dtype::BFloat16, 64, 64,
        schema::StatsSource::GemmInterception, kHostilePath);
    for (int64_t step = 0; step < 6; ++step) {
        const int64_t t = step * 10'000;
        s.step_marker(host, t, step);
        s.launch(host, { .api_start_ns = t + 100, .api_end_ns = t + 200 },
            { .start_ns = t + 300, .end_ns = t + 9'000, .name = "gemm" });
        TensorStatsRow row;
        row.site_id = site;
        row.step = step;
        row.timestamp_ns = t + 150;
        row.dtype = schema::Dtype::BFloat16;
        row.target_format = schema::Fp8Format::E4M3;
        row.numel = 4096;
        row.scale = 64.0;
        row.scale_inv = 1.0 / 64;
        row.amax = step == 5 ? 14.0 : 1.75;
        row.saturated = step == 4 ? 40 : 0;
        row.underflows = step == 4 ? 123 : 0;
        row.nans = step == 3 ? 2 : 0;
        s.tensor_stats(row);
    }
    const std::string path = dir + "/tensor.sqlite";
    const auto written = s.write_fp8scope(path);
    REQUIRE(written);
    return path;
}

// The `|` of a Markdown table row that are not backslash-escaped: cell boundaries.
size_t cell_boundaries(const std::string& line)
{
    size_t n = 0;
    for (size_t i = 0; i < line.size(); ++i)
        n += line[i] == '|' && (i == 0 || line[i - 1] != '\\') ? 1 : 0;
    return n;
}

} // namespace

TEST_CASE("report text and JSON give the scenario's tensor health exactly", "[cli][report][tensor]")
{
    const std::string trace = write_tensor_trace(scratch_dir("report_tensor_text"));
    const std::string text = run_ok({ "report", trace });
    INFO(text);
    CHECK(text.find("\nTensor health (FP8 statistics per tensor site)\n") != std::string::npos);
    CHECK(text.find("6 samples of 1 site; 4 samples of 1 site in the analysed steps (1.0 per step with samples; 4 of "
                    "4 steps with samples)")
        != std::string::npos);
    CHECK(text.find("thresholds       FP8 max E4M3 448, E5M2 57344; stale scale: headroom below -1e-06 bits; scale "
                    "= FLT_MAX: scale >= 3.4028e+38")
        != std::string::npos);
    CHECK(text.find("first NaN/Inf    step 3: 2 NaN, 0 Inf in 4096 elements of " + kLabel + " (1 sample with NaN/Inf)")
        != std::string::npos);
    CHECK(text.find("stale scale      1 sample; first at step 5 in " + kLabel + " (headroom -1.00 bits)")
        != std::string::npos);
    CHECK(text.find("scale = FLT_MAX  none") != std::string::npos);
    // 40 / 4096 in step 4; the mean is over the 4 analysed samples (element weighted).
    CHECK(text.find("most saturation  0.00977 at step 4 (mean 0.00244)") != std::string::npos);
    CHECK(text.find("most underflow   0.03 at step 4 (mean 0.00751)") != std::string::npos);
    CHECK(text.find("least headroom   -1.00 bits at step 5") != std::string::npos);
    CHECK(text.find("Tensor sites (1 of 1, most saturation, then underflow, then least headroom first)")
        != std::string::npos);
    CHECK(text.find(
              "        4  1.75..14             0.00977 (step 4)        0.03 (step 4)           -1.00 bits (step 5)   "
              "  "
              + kLabel + " (" + kPlace + ")\n")
        != std::string::npos);

    const auto json = nlohmann::json::parse(run_ok({ "report", trace, "--format", "json" }));
    CHECK(json["schema"] == "fp8scope.report/2");
    const auto& h = json["tensor_health"];
    CHECK(h["samples"] == 6);
    CHECK(h["samples_in_steps"] == 4);
    CHECK(h["nonfinite_samples"] == 1);
    CHECK(h["thresholds"]["stale_scale_headroom_bits"] == -1e-6);
    CHECK(h["thresholds"]["e4m3_max"] == 448.0);
    CHECK(h["first_nonfinite"]["step"] == 3);
    CHECK(h["first_nonfinite"]["nans"] == 2);
    CHECK(h["first_nonfinite"]["site"] == kLabel);
    CHECK(h["stale_scale"]["total"] == 1);
    CHECK(h["stale_scale"]["first"][0]["step"] == 5);
    CHECK(h["stale_scale"]["first"][0]["value"].get<double>() == Approx(-1.0));
    CHECK(h["zero_amax"]["total"] == 0);
    REQUIRE(h["sites"].size() == 1);
    const auto& site = h["sites"][0];
    CHECK(site["site"] == kLabel);
    CHECK(site["place"]["text"] == kPlace);
    CHECK(site["place"]["phase"] == "unknown"); // one launching thread: no forward/backward split
    CHECK(site["place"]["position"] == 1);
    CHECK(h["unnamed_gemm_sites"] == 0); // it has an NVTX path
    CHECK(site["worst_saturation_ratio"].get<double>() == Approx(40.0 / 4096));
    CHECK(site["worst_saturation_step"] == 4);
    CHECK(site["min_headroom_bits"].get<double>() == Approx(-1.0));
    CHECK(site["min_headroom_step"] == 5);
    CHECK(site["amax_max"] == 14.0);
    CHECK(h["top_saturation"] == nlohmann::json::array({ site["site_id"] }));
}

TEST_CASE("report md, html and junit show tensor health with the site label escaped", "[cli][report][tensor]")
{
    const std::string dir = scratch_dir("report_tensor_markup");
    const std::string trace = write_tensor_trace(dir);

    const std::string md = run_ok({ "report", trace, "--format", "md" });
    INFO(md);
    CHECK(md.find("\n### Tensor health\n") != std::string::npos);
    // Outside code spans the label is backslash-escaped: no tag, no emphasis, no cell boundary.
    CHECK(md.find("| first NaN/Inf | step 3: 2 NaN, 0 Inf in 4096 elements of train\\_step/\\<script\\>alert(1)\\</"
                  "script\\>\\|layers.3 · gemm\\|64 \\`x\\` \\<b\\>\\*\\*bold\\*\\*\\</b\\> #0 · A (1 sample with "
                  "NaN/Inf) |")
        != std::string::npos);
    // In the site table it is a code span fenced by two backticks (it holds one), its `|` escaped for the table.
    CHECK(md.find("| ``train_step/<script>alert(1)</script>\\|layers.3 · gemm\\|64 `x` <b>**bold**</b> #0 · A (GEMM 1 "
                  "of 1 sampled in the step)`` | 4 |")
        != std::string::npos);
    for (const std::string& line : lines_of(md)) {
        if (line.starts_with("| ``"))
            CHECK(cell_boundaries(line) == 7); // six columns
        else if (line.starts_with("| first NaN") || line.starts_with("| stale"))
            CHECK(cell_boundaries(line) == 3);
    }

    const std::string html = run_ok({ "report", trace, "--format", "html" });
    const auto doc = parse_xml(html);
    INFO(doc.error);
    REQUIRE(doc.ok);
    CHECK(doc.root.descendants("script").empty());
    CHECK(doc.root.descendants("b").empty());
    CHECK(html.find("<h2>Tensor health</h2>") != std::string::npos);
    CHECK(html.find("<h3>Least headroom per site</h3>") != std::string::npos);
    CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;|layers.3") != std::string::npos);
    CHECK(html.find("-1.00 bits (step 5), clips") != std::string::npos); // the chart's value text
    CHECK(doc.root.descendants("svg").size() == 4); // three bubble/kernel charts (no sync) and the headroom chart

    const auto junit = parse_xml(run_ok({ "report", trace, "--format", "junit" }));
    INFO(junit.error);
    REQUIRE(junit.ok);
    const auto cases = junit.root.descendants("testcase");
    REQUIRE(cases.size() == 5);
    const XmlElement& tensor = *cases.back();
    CHECK(tensor.attribute("classname") == "fp8scope.report.tensor_health");
    const auto failures = tensor.descendants("failure");
    REQUIRE(failures.size() == 1);
    CHECK(failures[0]->attribute("type") == "nonfinite");
    CHECK(failures[0]->attribute("message")
        == "first NaN/Inf at step 3: 2 NaN, 0 Inf in 4096 elements of " + kLabel
            + " (1 sample with NaN/Inf); stale scale: 1 sample; first at step 5 in " + kLabel
            + " (headroom -1.00 bits); least headroom -1.00 bits (step 5) in " + kLabel);
    CHECK(failures[0]->text.find("most saturation: 0.00977 (step 4) in " + kLabel) != std::string::npos);
}

TEST_CASE("check --md escapes a site label's | and markup in its table", "[cli][check][tensor]")
{
    const std::string dir = scratch_dir("check_tensor_md_escape");
    const std::string trace = write_tensor_trace(dir);
    const auto result = run_fp8scope({ "check", trace, "--max-saturation", "0.001", "--md", dir + "/check.md" });
    CHECK(result.exit_code == 1);
    std::ifstream in(dir + "/check.md");
    const std::string md((std::istreambuf_iterator<char>(in)), {});
    INFO(md);
    CHECK(md.find("\\<script\\>") != std::string::npos);
    CHECK(md.find("<script>") == std::string::npos);
    for (const std::string& line : lines_of(md))
        if (line.starts_with("| `max-saturation`"))
            CHECK(cell_boundaries(line) == 6); // five columns
}

TEST_CASE("report on the recorded FP8 run lists its GEMM sites by module name", "[cli][report][tensor]")
{
    const std::string trace = kTraces + "h200-train-fp8-stats.sqlite";
    const std::string text = run_ok({ "report", trace });
    CHECK(text.find("603 samples of 201 sites") != std::string::npos);
    CHECK(text.find("Tensor sites (20 of 201, most saturation, then underflow, then least headroom first; --format "
                    "json lists all)")
        != std::string::npos);
    CHECK(text.find("train_step/Transformer/blocks.1/blocks.1.proj") != std::string::npos);

    const auto json = nlohmann::json::parse(run_ok({ "report", trace, "--format", "json" }));
    const auto& h = json["tensor_health"];
    CHECK(h["sites"].size() == h["sites_in_steps"].get<size_t>());
    CHECK(h["sites"].size() == 201);
    std::set<int64_t> ids;
    for (const auto& site : h["sites"])
        ids.insert(site["site_id"].get<int64_t>());
    for (const char* ranking : { "top_saturation", "top_underflow", "top_least_headroom" })
        for (const auto& id : h[ranking])
            CHECK(ids.count(id.get<int64_t>()) == 1);
    CHECK(h["first_nonfinite"].is_null());

    const std::string md = run_ok({ "report", trace, "--format", "md" });
    size_t site_rows = 0;
    for (const std::string& line : lines_of(md))
        site_rows += line.starts_with("| `") && line.find(" · ") != std::string::npos ? 1 : 0;
    CHECK(site_rows == 20);

    const std::string html = run_ok({ "report", trace, "--format", "html" });
    const auto doc = parse_xml(html);
    REQUIRE(doc.ok);
    CHECK(html.find("<h3>Least headroom per site</h3>") != std::string::npos);
    CHECK(html.find("201 sites with samples in the analysed steps") != std::string::npos);
    CHECK(doc.root.descendants("code").size() >= 201);

    // The BF16 reference run has no FP8 format: its figures are not there, and the report says why.
    const std::string bf16 = run_ok({ "report", kTraces + "h200-train-bf16-stats.sqlite" });
    CHECK(bf16.find("FP8 figures      none: no sample of the 153 sites is in or aims at an FP8 format")
        != std::string::npos);
    CHECK(bf16.find("459 samples of 153 sites") != std::string::npos);
}

TEST_CASE(
    "report on recorded rowwise and blockwise FP8 runs names each site's recipe (issue 31)", "[cli][report][tensor]")
{
    // DeepSeek-style blockwise: 12 _scaled_mm per step, 16 operands in 1x128 tiles and 8 in 128x128 blocks (the job's
    // own count), the outputs BF16. No saturation or headroom is made up from codes each block's amax scales.
    const std::string blockwise = kTraces + "zoo/deepseek_blockwise_clean.sqlite";
    const std::string text = run_ok({ "report", blockwise });
    CHECK(text.find("recipes          blockwise 1×128: 16 sites, 288 samples (16.0 per step with samples); "
                    "blockwise 128×128: 8 sites,")
        != std::string::npos);
    // Their figures come from the per-block statistics (format 1.6): ranked by the spread of their block amaxes, the
    // widest in full; no per-tensor ranking.
    CHECK(text.find("widest blocks    max/median 2^3.2 at step 19          blocks.1.backward/blocks.1.fc1.backward · "
                    "gemm 1024x2048x4096 #0 · B · blockwise 1×128")
        != std::string::npos);
    CHECK(text.find("the first: largest block amax 2^3.2 the median (p99 2^2.0); 19% of blocks saturating, 7.7% with "
                    "subnormal")
        != std::string::npos);
    CHECK(text.find("one scale per tensor would flush ~0.035%") != std::string::npos);
    CHECK(text.find("FP8 figures") == std::string::npos);
    CHECK(text.find("most saturation") == std::string::npos);
    // Markdown and HTML list the same sites with their figures.
    const std::string md = run_ok({ "report", blockwise, "--format", "md" });
    CHECK(md.find("| `blocks.1.backward/blocks.1.fc1.backward · gemm 1024x2048x4096 #0 · B · blockwise 1×128 (backward "
                  "GEMM 5 of 10 sampled)` | largest block amax 2^3.2 the median")
        != std::string::npos);
    const std::string html = run_ok({ "report", blockwise, "--format", "html" });
    REQUIRE(parse_xml(html).ok);
    CHECK(html.find("<h3>Per-block figures</h3>") != std::string::npos);
    const auto json = nlohmann::json::parse(run_ok({ "report", blockwise, "--format", "json" }));
    const auto& h = json["tensor_health"];
    CHECK(h["per_block_sites"] == 24);
    CHECK(h["block_stats_sites"] == 24);
    CHECK(h["top_block_spread"].size() == 10);
    REQUIRE(h["recipes"].size() == 2);
    CHECK(h["recipes"][0]["recipe"] == "blockwise 1×128");
    CHECK(h["recipes"][0]["samples_per_sampled_step"] == 16.0);
    CHECK(h["recipes"][1]["recipe"] == "blockwise 128×128");
    int64_t with_recipe = 0;
    for (const auto& site : h["sites"])
        if (!site["scale_recipe"].is_null()) {
            ++with_recipe;
            CHECK(site["site"].get<std::string>().ends_with(site["scale_recipe"].get<std::string>()));
            CHECK(site["worst_saturation_step"].is_null());
            CHECK(site["min_headroom_bits"].is_null());
            // One per-block sample per analysed step, in 1x128 tiles or 128x128 blocks as the recipe says.
            const auto& blocks = site["blocks"];
            REQUIRE(blocks.is_object());
            CHECK(blocks["samples"] == 18);
            const bool tiles = site["scale_recipe"] == "blockwise 1×128";
            CHECK(blocks["block_rows"] == (tiles ? 1 : 128));
            CHECK(blocks["block_cols"] == 128);
            CHECK(blocks["bad_scale_blocks"] == 0);
        }
    CHECK(with_recipe == 24);

    // torchao's rowwise recipe: 14 rowwise GEMMs per step, and 28 backward GEMMs with unit (tensorwise) scales.
    const auto rowwise = nlohmann::json::parse(
        run_ok({ "report", kTraces + "zoo/torchao_rowwise_clean.sqlite", "--format", "json" }))["tensor_health"];
    REQUIRE(rowwise["recipes"].size() == 2);
    CHECK(rowwise["recipes"][0]["recipe"] == "tensorwise");
    CHECK(rowwise["recipes"][0]["samples_per_sampled_step"] == 56.0);
    CHECK(rowwise["recipes"][1]["recipe"] == "rowwise");
    CHECK(rowwise["recipes"][1]["samples_per_sampled_step"] == 28.0);
    CHECK(rowwise["per_block_sites"] == 28);
    // The backward GEMMs' unit scales: their codes at max are each row's own amax (the scale is applied outside the
    // GEMM), so no saturation or headroom is made up from them either.
    CHECK(rowwise["top_saturation"].empty());
    CHECK(rowwise["top_least_headroom"].empty());
    CHECK(rowwise["block_stats_sites"] == 28);
}

TEST_CASE("report on a trace without tensor statistics says so in one line, zeros in JSON", "[cli][report][tensor]")
{
    const std::string trace = kTraces + "h100-train-fp8.sqlite";
    const std::string text = run_ok({ "report", trace });
    size_t mentions = 0;
    for (const std::string& line : lines_of(text))
        mentions += line.find("Tensor health") != std::string::npos ? 1 : 0;
    CHECK(mentions == 1);
    CHECK(text.find("Tensor sites") == std::string::npos);
    CHECK(text.find("\nTensor health: the trace has no tensor statistics\n") != std::string::npos);

    const auto json = nlohmann::json::parse(run_ok({ "report", trace, "--format", "json" }));
    const auto& h = json["tensor_health"];
    CHECK(h["samples"] == 0);
    CHECK(h["sites"].empty());
    CHECK(h["first_nonfinite"].is_null());
    CHECK(h["stale_scale"]["total"] == 0);
    CHECK(
        run_ok({ "report", trace, "--format", "md" }).find("The trace has no tensor statistics.") != std::string::npos);
    CHECK(run_ok({ "report", trace, "--format", "html" }).find("<p>The trace has no tensor statistics.</p>")
        != std::string::npos);
}
