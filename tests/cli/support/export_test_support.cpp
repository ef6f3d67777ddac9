#include "export_test_support.hpp"

#include <catch2/catch.hpp>

namespace fp8scope::cli_test {

nlohmann::json export_ok(const std::string& trace, const std::string& out, const std::vector<std::string>& extra)
{
    std::vector<std::string> args { "export", trace, "--perfetto", out, "--no-progress" };
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string said = run_fp8scope_ok(args);
    CHECK(said.starts_with("Wrote "));
    CHECK(testing::line_count(said) == 1);
    const std::string text = read_export_file(out);
    REQUIRE_FALSE(text.empty());
    return nlohmann::json::parse(text);
}

TraceEventSummary check_valid(const nlohmann::json& doc)
{
    TraceEventSummary summary = check_trace_events(doc);
    for (const std::string& problem : summary.problems)
        UNSCOPED_INFO(problem);
    REQUIRE(summary.problems.empty());
    return summary;
}

std::vector<nlohmann::json> slices_of(const nlohmann::json& doc, const std::string& cat)
{
    std::vector<nlohmann::json> out;
    for (const auto& e : doc["traceEvents"])
        if (e["ph"] == "X" && e["cat"] == cat)
            out.push_back(e);
    return out;
}

} // namespace fp8scope::cli_test
