// The GEMM table file (format fp8scope.gemm_table/1, docs/cli.md "calibrate"): what `fp8scope calibrate` and
// tests/gpu/tools/gemm_table.py write, what `report --fp8-whatif --gemm-table FILE` reads, and the format of the tables
// shipped with fp8scope (shipped_gemm_table()). The one reader and writer of the format, here so that the analyzer
// reads its shipped tables with it and the CLI's calibrate and --gemm-table use the same.
#pragma once

#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace fp8scope::analyzer {

inline constexpr const char* kGemmTableFormat = "fp8scope.gemm_table/1";

// A table's text; nullopt with `error` saying what is wrong.
std::optional<GemmTable> parse_gemm_table(const std::string& text, std::string& error);
// The same, of a file of at most 16 MiB.
std::optional<GemmTable> read_gemm_table_file(const std::string& path, std::string& error);
// The document parse_gemm_table reads back as `table`; `extra` fields (tool, versions) go after "method".
nlohmann::ordered_json gemm_table_json(
    const GemmTable& table, const nlohmann::ordered_json& extra = nlohmann::ordered_json::object());

} // namespace fp8scope::analyzer
