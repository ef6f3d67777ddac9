#include "report/report_tensor.hpp"

#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/xml_escape.hpp"
#include "report/report_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

// One ranking of the text report: the analyzer's order, entries whose figure shows nothing left out. `none`
// when no listed site has a figure above 0, `no_figure` when no site can show the figure at all.
void ranking_text(std::string& out, std::string_view title, const TensorHealth& health,
    const std::vector<size_t>& ranking, std::string_view none, std::string_view no_figure,
    const std::function<std::optional<std::string>(const TensorSiteHealth&)>& figure)
{
    std::vector<std::string> rows;
    for (const size_t i : ranking) {
        if (rows.size() == kListedRankEntries)
            break;
        if (auto text = figure(health.sites[i]))
            rows.push_back(fmt::format("{:<36} {}", *text, printable(located_site_label(health.sites[i]))));
    }
    if (rows.empty())
        rows.emplace_back(ranking.empty() ? no_figure : none);
    for (size_t i = 0; i < rows.size(); ++i)
        out += fmt::format("  {:<16} {}\n", i == 0 ? title : "", rows[i]);
}

// "\n", the heading, "\n": appended piece by piece (GCC 12's -Wrestrict misreads "\n" + std::string + "\n").
void append_heading(std::string& out, const std::string& heading)
{
    out += '\n';
    out += heading;
    out += '\n';
}

} // namespace

void tensor_health_text(
    std::string& out, const TensorHealth& h, const std::function<std::string(std::string_view)>& heading)
{
    if (h.totals.samples == 0) {
        append_heading(out, heading("Tensor health: the trace has no tensor statistics"));
        return;
    }
    append_heading(out, heading("Tensor health (FP8 statistics per tensor site)"));
    out += fmt::format("  samples          {}\n", tensor_totals_sentence(h));
    if (const std::string recipes = recipes_sentence(h); !recipes.empty())
        out += fmt::format("  recipes          {}\n", wrapped(recipes, 100, "                   "));
    if (const std::string unnamed = unnamed_sites_sentence(h); !unnamed.empty())
        out += fmt::format("  site names       {}\n", wrapped(unnamed, 100, "                   "));
    out += fmt::format("  thresholds       {} (docs/analysis.md)\n", tensor_thresholds_sentence());
    out += fmt::format("  first NaN/Inf    {}\n", first_nonfinite_text(h, printable));
    for (const TensorEventKind kind : kTensorEventKinds)
        out += fmt::format("  {:<16} {}\n", tensor_event_title(kind), tensor_event_text(h, kind, printable));
    if (!h.top_block_spread.empty()) { // sites scaled per row or block, from their per-block statistics
        ranking_text(out, "widest blocks", h, h.top_block_spread, "", "",
            [](const TensorSiteHealth& s) -> std::optional<std::string> {
                return fmt::format(
                    "max/median 2^{:.1f} at {}", s.blocks->max_spread_bits, step_text(s.blocks->max_spread_step));
            });
        const TensorSiteHealth& widest = h.sites[h.top_block_spread.front()];
        out += fmt::format("  {:<16} {}: {}\n", "", "the first",
            wrapped(block_figures_text(*widest.blocks), 100, "                   "));
    }
    if (h.top_saturation.empty() && h.top_underflow.empty() && h.top_least_headroom.empty()
        && h.totals.per_block_sites > 0 && h.totals.block_stats_sites > 0)
        return; // no FP8 site has a per-tensor figure (scaled per row or block, or outside the GEMM): the block ones
                // above
    if (h.top_saturation.empty() && h.top_underflow.empty() && h.top_least_headroom.empty()
        && h.totals.per_block_sites > 0) {
        // Every FP8 site is scaled per row or block: FP8, but no figure to rank without per-block statistics.
        out += fmt::format(
            "  FP8 figures      none yet: the {} FP8 site{} scaled per row or block (their codes hold each "
            "block's own amax; this trace holds no per-block statistics, format 1.6), the other {} not "
            "FP8; --format json lists each site's amax\n",
            h.totals.per_block_sites, h.totals.per_block_sites == 1 ? " is" : "s are",
            static_cast<int64_t>(h.sites.size()) - h.totals.per_block_sites);
        return;
    }
    if (h.top_saturation.empty() && h.top_underflow.empty() && h.top_least_headroom.empty()) {
        // A BF16 run: no sample has an FP8 format, so no site can rank; one line instead of three empty rankings and
        // a table of dashes.
        out += fmt::format(
            "  FP8 figures      none: no sample of the {} site{} is in or aims at an FP8 format (a BF16 run?), "
            "so nothing saturates, underflows or has a headroom; --format json lists each site's amax\n",
            h.sites.size(), h.sites.size() == 1 ? "" : "s");
        return;
    }
    ranking_text(out, "most saturation", h, h.top_saturation, "no sample saturated",
        "no sample can show saturation (it needs an FP8 format)",
        [](const TensorSiteHealth& s) -> std::optional<std::string> {
            if (!(s.worst_saturation_ratio > 0))
                return std::nullopt;
            return fmt::format("{} at {} (mean {})", fraction_text(s.worst_saturation_ratio),
                step_text(s.worst_saturation_step), fraction_text(s.mean_saturation_ratio));
        });
    ranking_text(out, "most underflow", h, h.top_underflow, "no sample underflowed",
        "no sample can show underflow (it needs a high-precision tensor with a target FP8 format)",
        [](const TensorSiteHealth& s) -> std::optional<std::string> {
            if (!(s.worst_underflow_ratio > 0))
                return std::nullopt;
            return fmt::format("{} at {} (mean {})", fraction_text(s.worst_underflow_ratio),
                step_text(s.worst_underflow_step), fraction_text(s.mean_underflow_ratio));
        });
    ranking_text(out, "least headroom", h, h.top_least_headroom, "no sample has a headroom figure",
        "no sample has a headroom figure (it needs an FP8 format, a scale and a finite amax above 0)",
        [](const TensorSiteHealth& s) -> std::optional<std::string> {
            if (!s.min_headroom_bits)
                return std::nullopt;
            return fmt::format("{} at {}", headroom_text(s.min_headroom_bits), step_text(s.min_headroom_step));
        });

    const std::vector<size_t> order = sites_by_attention(h);
    const size_t shown = std::min(order.size(), kListedTensorSites);
    append_heading(out,
        heading(fmt::format("Tensor sites ({} of {}, most saturation, then underflow, then least headroom first{})",
            shown, order.size(), shown < order.size() ? "; --format json lists all" : "")));
    out += fmt::format("  {:>7}  {:<19}  {:<22}  {:<22}  {:<22}  {}\n", "samples", "amax min..max", "worst saturation",
        "worst underflow", "min headroom", "site");
    for (size_t i = 0; i < shown; ++i) {
        const TensorSiteHealth& s = h.sites[order[i]];
        out += fmt::format("  {:>7}  {:<19}  {:<22}  {:<22}  {:<22}  {}\n", s.samples, amax_range_text(s),
            worst_saturation_text(s), worst_underflow_text(s), min_headroom_text(s), printable(located_site_label(s)));
    }
}

std::string tensor_health_markdown(const TensorHealth& h)
{
    std::string out = "\n### Tensor health\n\n";
    if (h.totals.samples == 0)
        return out + "The trace has no tensor statistics.\n";
    out += fmt::format("{}. Thresholds: {} (docs/analysis.md).\n\n", tensor_totals_sentence(h),
        markdown_escaped(tensor_thresholds_sentence()));
    if (const std::string recipes = recipes_sentence(h); !recipes.empty())
        out += "Scaled FP8 operands by recipe: " + markdown_escaped(recipes) + ".\n\n";
    if (const std::string unnamed = unnamed_sites_sentence(h); !unnamed.empty())
        out += markdown_escaped(unnamed) + ".\n\n";
    out += "| check | result |\n|---|---|\n";
    out += fmt::format("| first NaN/Inf | {} |\n", first_nonfinite_text(h, markdown_escaped));
    for (const TensorEventKind kind : kTensorEventKinds)
        out += fmt::format(
            "| {} | {} |\n", markdown_escaped(tensor_event_title(kind)), tensor_event_text(h, kind, markdown_escaped));
    if (!h.top_block_spread.empty()) {
        out += "\nSites scaled per row or block, widest block-amax spread first (per-block statistics):\n\n"
               "| site | per-block figures |\n|---|---|\n";
        for (const size_t i : h.top_block_spread)
            out += fmt::format("| {} | {} |\n", markdown_code(located_site_label(h.sites[i]), MarkdownPlace::TableCell),
                markdown_escaped(block_figures_text(*h.sites[i].blocks)));
    }
    const std::vector<size_t> order = sites_by_attention(h);
    const size_t shown = std::min(order.size(), kListedTensorSites);
    out += "\n| site | samples | amax | worst saturation | worst underflow | min headroom |\n"
           "|---|---|---|---|---|---|\n";
    for (size_t i = 0; i < shown; ++i) {
        const TensorSiteHealth& s = h.sites[order[i]];
        out += fmt::format("| {} | {} | {} | {} | {} | {} |\n",
            markdown_code(located_site_label(s), MarkdownPlace::TableCell), s.samples, amax_range_text(s),
            worst_saturation_text(s), worst_underflow_text(s), min_headroom_text(s));
    }
    out += fmt::format("\n{} of {} sites with samples in the analysed steps, most saturation, then underflow, then "
                       "least headroom first{}.\n",
        shown, order.size(), shown < order.size() ? "; the JSON report lists all" : "");
    return out;
}

} // namespace fp8scope::cli
