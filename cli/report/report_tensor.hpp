// Tensor health in `fp8scope report` (docs/analysis.md "Tensor health"; docs/cli.md): the text, Markdown and JSON
// sections (report_tensor.cpp); the HTML section is in report_tensor_html.cpp. Which sites are listed and in what
// order, and how a figure or event is worded, is the presentation library's (fp8scope/present/tensor_wording.hpp).
#pragma once

#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "fp8scope/present/tensor_wording.hpp"
#include "output/present_names.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::cli {

// Sites in the text and Markdown tables; JSON lists every site, HTML up to kMaxHtmlTensorSites.
inline constexpr size_t kListedTensorSites = 20;
inline constexpr size_t kMaxHtmlTensorSites = 500;
// Entries per ranking in the text report (the analyzer ranks 10; JSON has them all).
inline constexpr size_t kListedRankEntries = 5;

// The text section; `heading` styles a heading (bold on a terminal). One line for a trace without statistics.
void tensor_health_text(std::string& out, const analyzer::TensorHealth& health,
    const std::function<std::string(std::string_view)>& heading);
// "### Tensor health" and its tables (labels escaped, `|` included).
std::string tensor_health_markdown(const analyzer::TensorHealth& health);
// "<h2>Tensor health</h2>", the checks, a chart of the least headroom and the site table (report_tensor_html.cpp).
std::string tensor_health_html(const analyzer::TensorHealth& health);
// The report's "tensor_health" object (docs/cli.md): totals, thresholds, rankings as site ids, events, sites.
nlohmann::ordered_json tensor_health_json(const analyzer::TensorHealth& health);

} // namespace fp8scope::cli
