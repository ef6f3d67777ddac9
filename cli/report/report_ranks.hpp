// `fp8scope report A.sqlite B.sqlite ...` (or a directory): the ranks of one job, as the analyzer's RankSetReport
// (docs/analysis.md "Across ranks"), rendered as text or JSON (schema fp8scope.ranks/1, docs/cli.md). Formatting
// only: every figure, the slowest rank and the straggler included, comes from the analyzer.
#pragma once

#include "fp8scope/analyzer/ranks/ranks.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8scope::cli {

inline constexpr const char* kRanksJsonSchema = "fp8scope.ranks/1";

std::string render_rank_set_text(const analyzer::RankSetReport& set, bool color);
nlohmann::ordered_json render_rank_set_json(const analyzer::RankSetReport& set);

} // namespace fp8scope::cli
