// The tensor-health section of the HTML report (report_html.cpp): the checks (first NaN/Inf, scaling events), a
// chart of the sites with the least headroom, and the per-site table. Site labels come from NVTX names in the trace:
// every one goes through xml_escaped().
#include "report/report_tensor.hpp"

#include "fp8scope/present/units.hpp"
#include "output/html_page.hpp"
#include "output/present_names.hpp"
#include "output/svg_chart.hpp"
#include "output/xml_escape.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

constexpr const char* kHeadroomChartTitle = "Least headroom per site";
constexpr size_t kMaxChartLabelBytes = 140; // the tooltip has the whole label

std::string headroom_chart(const TensorHealth& h)
{
    std::vector<svg::HorizontalBar> bars;
    for (const size_t i : h.top_least_headroom) {
        const TensorSiteHealth& s = h.sites[i];
        if (!s.min_headroom_bits)
            continue;
        std::string label = shortened(located_site_label(s), kMaxChartLabelBytes);
        const bool clips = *s.min_headroom_bits < kStaleScaleHeadroomBits;
        bars.push_back({ std::move(label), *s.min_headroom_bits,
            fmt::format("{}{}", min_headroom_text(s), clips ? ", clips" : ""), clips ? "#d62728" : "" });
    }
    std::string out = fmt::format("<section class=\"chart\">\n<h3>{}</h3>\n", kHeadroomChartTitle);
    if (bars.empty())
        return out
            + "<p class=\"note\">No sample in the analysed steps has a headroom figure (it needs an FP8 "
              "format, a scale and a finite amax above 0).</p>\n</section>\n";
    out += svg::horizontal_bar_chart(kHeadroomChartTitle, bars, "#1f77b4");
    return out
        + fmt::format("<p class=\"note\">The {} sites whose smallest headroom, log2(fp8_max · scale_inv / amax), "
                      "was lowest in the analysed steps, with its step. Below 0 (red) the scale no longer covered "
                      "the tensor's amax and the cast clipped.</p>\n</section>\n",
            bars.size());
}

std::string sites_table(const TensorHealth& h)
{
    const std::vector<size_t> order = sites_by_attention(h);
    const size_t shown = std::min(order.size(), kMaxHtmlTensorSites);
    std::string out = fmt::format("<h3>Tensor sites</h3>\n<p class=\"note\">{} sites with samples in the analysed "
                                  "steps{}, most saturation, then underflow, then least headroom first; "
                                  "saturation and underflow are fractions of the tensor's elements.</p>\n",
        order.size(), shown < order.size() ? fmt::format(", the first {} shown (the JSON report has all)", shown) : "");
    out += "<table>\n<tr><th>site</th><th>samples</th><th>steps</th><th>amax</th><th>worst saturation</th>"
           "<th>mean saturation</th><th>worst underflow</th><th>mean underflow</th><th>min headroom</th>"
           "<th>NaN/Inf samples</th></tr>\n";
    for (size_t i = 0; i < shown; ++i) {
        const TensorSiteHealth& s = h.sites[order[i]];
        const bool clips = s.min_headroom_bits && *s.min_headroom_bits < kStaleScaleHeadroomBits;
        out += "<tr>" + html_site_cell(s.label, s.place ? gemm_place_text(*s.place) : std::string())
            + html_num(fmt::to_string(s.samples))
            + html_num(s.first_step && s.last_step ? fmt::format("{}-{}", *s.first_step, *s.last_step) : "-")
            + html_num(amax_range_text(s)) + html_num(worst_saturation_text(s))
            + html_num(s.saturation_samples ? fraction_text(s.mean_saturation_ratio) : "-")
            + html_num(worst_underflow_text(s))
            + html_num(s.underflow_samples ? fraction_text(s.mean_underflow_ratio) : "-")
            + (clips ? "<td class=\"n bad\">" + xml_escaped(min_headroom_text(s)) + "</td>"
                     : html_num(min_headroom_text(s)))
            + (s.nonfinite_samples > 0 ? "<td class=\"n bad\">" + fmt::to_string(s.nonfinite_samples) + "</td>"
                                       : html_num("0"))
            + "</tr>\n";
    }
    return out + "</table>\n";
}

} // namespace

std::string tensor_health_html(const TensorHealth& h)
{
    std::string out = "<h2>Tensor health</h2>\n";
    if (h.totals.samples == 0)
        return out + "<p>The trace has no tensor statistics.</p>\n";
    out += "<p>" + xml_escaped(tensor_totals_sentence(h)) + ".</p>\n";
    if (const std::string unnamed = unnamed_sites_sentence(h); !unnamed.empty())
        out += "<p>" + xml_escaped(unnamed) + ".</p>\n";
    out += "<table>\n";
    out += html_check_row("thresholds", xml_escaped(tensor_thresholds_sentence() + " (docs/analysis.md)"), false);
    out += html_check_row("first NaN/Inf", first_nonfinite_text(h, xml_escaped), h.first_nonfinite.has_value());
    for (const TensorEventKind kind : kTensorEventKinds)
        out += html_check_row(tensor_event_title(kind), tensor_event_text(h, kind, xml_escaped),
            kind == TensorEventKind::StaleScale && h.stale_scale.total > 0);
    out += "</table>\n";
    if (!h.top_block_spread.empty()) {
        out += "<h3>Per-block figures</h3>\n<table>\n<tr><th>site</th><th>per-block figures</th></tr>\n";
        for (const size_t i : h.top_block_spread)
            out += "<tr><td><code>" + xml_escaped(located_site_label(h.sites[i])) + "</code></td><td>"
                + xml_escaped(block_figures_text(*h.sites[i].blocks)) + "</td></tr>\n";
        out += "</table>\n";
    }
    return out + headroom_chart(h) + sites_table(h);
}

} // namespace fp8scope::cli
