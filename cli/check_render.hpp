// `fp8scope check` output: the budget verdicts as a text table (stdout), JUnit XML (one testcase per budget, for
// CI test reports) and Markdown (for CI job summaries).
#pragma once

#include "fp8scope/analyzer/budgets.hpp"

#include <string>
#include <vector>

namespace fp8scope::cli {

std::string render_check_text(const std::string& trace, const std::vector<analyzer::BudgetResult>& results);
std::string render_check_junit(const std::string& trace, const std::vector<analyzer::BudgetResult>& results);
std::string render_check_markdown(const std::string& trace, const std::vector<analyzer::BudgetResult>& results);

} // namespace fp8scope::cli
