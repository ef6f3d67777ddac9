// Shared by the export tests: running `fp8scope export` and reading back what it wrote.
#pragma once

#include "cli_test_support.hpp"
#include "record_test_support.hpp"
#include "trace_event_check.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fp8scope::cli_test {

// `fp8scope export TRACE --perfetto OUT [extra...]`, REQUIREing exit code 0; returns the parsed export.
nlohmann::json export_ok(const std::string& trace, const std::string& out, const std::vector<std::string>& extra = {});

// check_trace_events(), REQUIREing that it found no problem (the problems are shown when it did).
TraceEventSummary check_valid(const nlohmann::json& doc);

// The "X" events of a category, in file order.
std::vector<nlohmann::json> slices_of(const nlohmann::json& doc, const std::string& cat);

} // namespace fp8scope::cli_test
