// A validator for exported Chrome traces (`fp8scope export --perfetto`): the document parses, every event carries the
// fields the Trace Event Format requires for its phase, the flows pair up and bind to slices, the slices on each
// track nest, and every track and process is named. Written from the Trace Event Format document and the rules
// Perfetto's JSON importer applies (it drops a slice that partly overlaps another on its track).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fp8scope::cli_test {

// The text of a file, gunzipped when its name ends in .gz; "" when it cannot be read.
std::string read_export_file(const std::string& path);

struct TraceEventSummary {
    std::vector<std::string> problems; // empty: valid (at most the first 20 are kept)
    int64_t events = 0;
    std::map<std::string, int64_t> by_phase; // "X" -> count, ...
    std::map<std::string, int64_t> slices_by_cat; // X events per "cat"
    int64_t flows = 0; // pairs
};

// Checks the whole document; `doc` is the parsed JSON.
TraceEventSummary check_trace_events(const nlohmann::json& doc);

// An event's "ts" (or any µs number written with three decimals) back in ns.
int64_t json_time_ns(const nlohmann::json& microseconds);

} // namespace fp8scope::cli_test
