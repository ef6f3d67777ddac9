// A recorded run compared with its reference as `fp8scope compare RUN REF` does (default options), and the truth a
// recorded job printed: shared by the compare tests on real traces (compare_real_test.cpp, compare_zoo_test.cpp,
// fp8_price_test.cpp).
#pragma once

#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <variant>

namespace fp8scope::testing {

struct RecordedPair {
    analyzer::TraceModel run_model, ref_model;
    analyzer::Report run_report, ref_report;
    analyzer::CompareResult result;
};

// samples/traces/<run_file> against samples/traces/<ref_file>; FAILs when compare refuses them.
inline RecordedPair compare_recorded(const std::string& run_file, const std::string& ref_file)
{
    RecordedPair p { load_recorded(run_file), load_recorded(ref_file), {}, {}, {} };
    const analyzer::CompareOptions options;
    p.run_report = analyzer::analyze(p.run_model, options.report);
    p.ref_report = analyzer::analyze(p.ref_model, options.report);
    auto outcome = analyzer::compare_runs({ p.run_model, p.run_report, p.ref_model, p.ref_report }, options);
    if (const auto* refusal = std::get_if<analyzer::CompareRefusal>(&outcome))
        FAIL("refused: " << refusal->message);
    p.result = std::move(std::get<analyzer::CompareResult>(outcome));
    return p;
}

// samples/traces/<file>, a .truth.json; REQUIREs it to be there.
inline nlohmann::json recorded_truth(const std::string& file)
{
    std::ifstream in(std::string(FP8SCOPE_SAMPLE_TRACES) + "/" + file);
    INFO(file);
    REQUIRE(in.good());
    return nlohmann::json::parse(in);
}

} // namespace fp8scope::testing
