// The pieces the HTML and JUnit reports are built from: the shared XML escape (check's and report's JUnit, report's
// HTML), the SVG charts' axis, bar and line rules, and the test's own XML reader (xml_check.hpp), which the end-to-end
// tests rely on to reject malformed output.
#include "fp8scope/present/units.hpp"
#include "output/svg_chart.hpp"
#include "output/xml_escape.hpp"
#include "report/html/report_html_charts.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

using namespace fp8scope;
using namespace fp8scope::cli;

TEST_CASE("xml_escaped escapes markup, quotes, control characters and bad UTF-8", "[cli][report][markup]")
{
    CHECK(xml_escaped("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
    CHECK(xml_escaped("a & b \"c\" 'd'") == "a &amp; b &quot;c&quot; &#39;d&#39;");
    CHECK(xml_escaped("line\nbreak\x1b[31m") == "line\\x0abreak\\x1b[31m");
    CHECK(xml_escaped("µs ε ≥") == "µs ε ≥"); // valid UTF-8 passes unchanged
    CHECK(xml_escaped("bad \xff\xfe end") == "bad \xEF\xBF\xBD\xEF\xBF\xBD end");
    CHECK(xml_escaped("cut \xE2\x82") == "cut \xEF\xBF\xBD\xEF\xBF\xBD"); // a sequence cut short
    CHECK(xml_escaped("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); // a UTF-16 surrogate
    CHECK(xml_escaped("").empty());
}

TEST_CASE("escaped text parses back to the original in XML attributes and text", "[cli][report][markup]")
{
    const std::string hostile = "<img src=x onerror=\"alert('x')\">&amp;";
    const auto doc = cli_test::parse_xml("<a title=\"" + xml_escaped(hostile) + "\">" + xml_escaped(hostile) + "</a>");
    INFO(doc.error);
    REQUIRE(doc.ok);
    CHECK(doc.root.attribute("title") == hostile);
    CHECK(doc.root.text == hostile);
}

TEST_CASE("the test's XML reader rejects what a strict parser rejects", "[cli][report][markup]")
{
    for (const std::string bad : { "<a><b></a></b>", "<a>1 < 2</a>", "<a>&nbsp;</a>", "<a x=1/>", "<a>fish & chips</a>",
             "<a/><b/>", "<a>", "", "<a x=\"<\"/>" }) {
        INFO(bad);
        CHECK_FALSE(cli_test::parse_xml(bad).ok);
    }
    const auto doc
        = cli_test::parse_xml("<?xml version=\"1.0\"?>\n<!DOCTYPE html>\n<r><c k='v'/><c>t</c><!-- x --></r>\n");
    REQUIRE(doc.ok);
    CHECK(doc.root.descendants("c").size() == 2);
    CHECK(doc.root.children[0].attribute("k") == "v");
}

TEST_CASE("chart axes end on a round number and tick every 1, 2 or 5 x 10^k", "[cli][report][markup]")
{
    const auto axis = [](double max_value) {
        const svg::Axis a = svg::nice_axis(max_value);
        return std::pair { a.top, a.top / a.intervals };
    };
    CHECK(axis(0) == std::pair { 1.0, 0.2 });
    CHECK(axis(-3) == std::pair { 1.0, 0.2 });
    CHECK(axis(0.676).first == Approx(0.8)); // the real FP8 trace's bubble ratio
    CHECK(axis(0.676).second == Approx(0.2));
    CHECK(axis(0.8).first == Approx(0.8));
    CHECK(axis(1.0).first == Approx(1.0));
    CHECK(axis(56e6).first == Approx(60e6)); // its idle time per step, in ns
    CHECK(axis(56e6).second == Approx(20e6));
    CHECK(axis(81).first == Approx(100));
    CHECK(axis(2.1e-6).first == Approx(2.5e-6));
    CHECK(axis(2.1e-6).second == Approx(0.5e-6));
    CHECK(axis(1.2).second == Approx(0.5)); // 1.5 in three steps
}

TEST_CASE("chart durations have three significant digits", "[cli][report][markup]")
{
    CHECK(present::compact_duration(0) == "0");
    CHECK(present::compact_duration(850) == "850 ns");
    CHECK(present::compact_duration(12'500) == "12.5 µs");
    CHECK(present::compact_duration(3'250'000) == "3.25 ms");
    CHECK(present::compact_duration(1.5e9) == "1.5 s");
}

TEST_CASE("a bar chart escapes its labels and draws one hover target per bar", "[cli][report][markup]")
{
    svg::BarChart chart;
    chart.description = "a <chart>";
    chart.series = { { "x&y", "#123456" }, { "z", "#654321" } };
    chart.format_value = [](double v) { return std::to_string(static_cast<int>(v)); };
    chart.reference = 3;
    chart.reference_label = "mean <3>";
    chart.x_title = "steps";
    for (int i = 0; i < 7; ++i)
        chart.bars.push_back({ "step <" + std::to_string(i) + ">", { 1.0 * i, 2.0 } });
    const std::string out = svg::bar_chart(chart);
    const auto doc = cli_test::parse_xml(out);
    INFO(doc.error << "\n" << out);
    REQUIRE(doc.ok);
    CHECK(doc.root.name == "svg");
    CHECK(doc.root.attribute("aria-label") == "a <chart>");
    CHECK(doc.root.descendants("title").size() == 7);
    CHECK(out.find("<0>") == std::string::npos);
    CHECK(out.find("mean &lt;3&gt;") != std::string::npos);
    CHECK(out.find("x&amp;y") != std::string::npos);
    // Bar 0's first series is 0: no rectangle for it, so 6 + 7 segments plus the 7 hover targets and 2 swatches.
    CHECK(doc.root.descendants("rect").size() == 6 + 7 + 7 + 2);
}

TEST_CASE("a chart with no bars still is a valid SVG that says so", "[cli][report][markup]")
{
    svg::BarChart chart;
    chart.series = { { "ratio", "#000" } };
    chart.format_value = [](double v) { return std::to_string(v); };
    const std::string out = svg::bar_chart(chart);
    CHECK(cli_test::parse_xml(out).ok);
    CHECK(out.find("no steps") != std::string::npos);
    CHECK(cli_test::parse_xml(svg::horizontal_bar_chart("none", {}, "#000")).ok);
}

TEST_CASE("markdown_escaped shows markup and table cell boundaries as text", "[cli][report][markup]")
{
    CHECK(markdown_escaped("train_step/layers.3 · A") == "train\\_step/layers.3 · A");
    CHECK(markdown_escaped("<b>**x**</b> | [a](b) ~y~ & !")
        == "\\<b\\>\\*\\*x\\*\\*\\</b\\> \\| \\[a\\](b) \\~y\\~ \\& \\!");
    CHECK(markdown_escaped("a\\|b `c`") == "a\\\\\\|b \\`c\\`");
    CHECK(markdown_escaped("line\nbreak") == "line\\\\x0abreak"); // the \xNN of printable(), its backslash escaped
    CHECK(markdown_escaped("bad \xff") == "bad \xEF\xBF\xBD");
    CHECK(markdown_escaped("µs ε").size() == std::string("µs ε").size());
}

TEST_CASE("markdown_code fences with more backticks than the text holds", "[cli][report][markup]")
{
    CHECK(markdown_code("cudaMemcpy_v3020", MarkdownPlace::Text) == "`cudaMemcpy_v3020`");
    CHECK(markdown_code("a `b` c", MarkdownPlace::Text) == "``a `b` c``");
    CHECK(markdown_code("``x", MarkdownPlace::Text) == "``` ``x ```"); // starts with a backtick: padded
    CHECK(markdown_code(" x ", MarkdownPlace::Text) == "`  x  `");
    CHECK(markdown_code("a|b", MarkdownPlace::Text) == "`a|b`");
    CHECK(markdown_code("a|b", MarkdownPlace::TableCell) == "`a\\|b`"); // GFM drops the backslash in the cell
    CHECK(markdown_code("<script>", MarkdownPlace::TableCell) == "`<script>`"); // a code span shows it as text
    CHECK(markdown_code("tab\there", MarkdownPlace::Text) == "`tab\\x09here`");
    CHECK(markdown_code("", MarkdownPlace::Text).empty());
}

TEST_CASE("a horizontal bar chart with negative values draws them left of a zero line", "[cli][report][markup]")
{
    const std::string out = svg::horizontal_bar_chart(
        "headroom", { { "clips <a>", -2.0, "-2.00 bits", "#d62728" }, { "fine", 6.0, "6.00 bits" } }, "#1f77b4");
    const auto doc = cli_test::parse_xml(out);
    INFO(doc.error << "\n" << out);
    REQUIRE(doc.ok);
    CHECK(doc.root.descendants("line").size() == 1); // the zero line, only with a negative value
    const auto rects = doc.root.descendants("rect");
    REQUIRE(rects.size() == 2);
    // 702 px for a range of 8: zero at 8 + 702 * 2 / 8 = 183.5; the negative bar ends there, the positive starts there.
    CHECK(rects[0]->attribute("fill") == "#d62728");
    CHECK(std::stod(rects[0]->attribute("x")) + std::stod(rects[0]->attribute("width")) == Approx(183.5).margin(0.1));
    CHECK(std::stod(rects[1]->attribute("x")) == Approx(183.5).margin(0.1));
    CHECK(std::stod(rects[1]->attribute("width")) == Approx(526.5).margin(0.1));
    CHECK(rects[1]->attribute("fill") == "#1f77b4");
    CHECK(out.find("clips &lt;a&gt;") != std::string::npos);
    CHECK(cli_test::parse_xml(svg::horizontal_bar_chart("positive", { { "a", 1.0, "1" } }, "#000"))
              .root.descendants("line")
              .empty());
}

TEST_CASE(
    "a line chart spans 0 and negative values, marks a step and leaves out non-finite points", "[cli][compare][markup]")
{
    svg::LineChart chart;
    chart.description = "ratio <x>";
    chart.series_name = "log2 <ratio>";
    chart.color = "#1f77b4";
    for (int step = 0; step < 10; ++step)
        chart.points.push_back({ "step <" + std::to_string(step) + ">", 1.0 * step, step < 5 ? 0.1 : -1.7 });
    chart.points.push_back({ "step 10", 10.0, std::nan("") });
    chart.reference_levels = { 1.0, -1.0 };
    chart.reference_label = "event";
    chart.marker_x = 5.0;
    chart.marker_label = "onset";
    chart.format_value = [](double v) { return std::to_string(v); };
    chart.x_title = "steps";
    const std::string out = svg::line_chart(chart);
    const auto doc = cli_test::parse_xml(out);
    INFO(doc.error << "\n" << out);
    REQUIRE(doc.ok);
    CHECK(doc.root.attribute("aria-label") == "ratio <x>");
    CHECK(doc.root.descendants("polyline").size() == 1);
    CHECK(doc.root.descendants("circle").size() == 10); // the NaN point is left out
    CHECK(out.find("step &lt;9&gt;: -1.7") != std::string::npos);
    // -1.7 to 1 in ticks of 0.5: the axis runs from -2 (y 240) to 1 (y 26), so 0 is at 240 - 214 * 2 / 3.
    const auto lines = doc.root.descendants("line");
    std::vector<double> zero_lines;
    size_t grid_lines = 0;
    for (const auto* line : lines) {
        if (line->attribute("stroke") == "#666")
            zero_lines.push_back(std::stod(line->attribute("y1")));
        grid_lines += line->attribute("stroke") == "#e4e4e4" ? 1 : 0;
    }
    REQUIRE(zero_lines.size() == 1);
    CHECK(zero_lines.front() == Approx(240 - 214 * 2.0 / 3).margin(0.1));
    CHECK(grid_lines == 6); // 7 ticks, one of them the zero line
    const auto marker = std::ranges::find_if(
        lines, [](const cli_test::XmlElement* line) { return line->attribute("stroke") == "#c62828"; });
    REQUIRE(marker != lines.end());
    CHECK(std::stod((*marker)->attribute("x1")) == Approx(76 + 788 * 5.0 / 9).margin(0.1));
    svg::LineChart empty;
    empty.format_value = [](double v) { return std::to_string(v); };
    const std::string empty_out = svg::line_chart(empty);
    CHECK(cli_test::parse_xml(empty_out).ok);
    CHECK(empty_out.find("no values") != std::string::npos);
}
