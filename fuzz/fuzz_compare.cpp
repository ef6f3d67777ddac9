// fuzz_compare: two traces in one input (split_two()), each loaded and analysed, then compare_runs() and every
// compare format. A refusal must say why in one line.
#include "fuzz_support.hpp"

#include "compare/compare_render.hpp"
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/load/trace_loader.hpp"

#include <cmath>
#include <variant>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace fp8scope;
    static fuzz::InputFile run_file("compare-run");
    static fuzz::InputFile ref_file("compare-ref");
    const auto [run_bytes, ref_bytes] = fuzz::split_two({ data, size });
    const auto run = analyzer::load_trace(run_file.write(run_bytes));
    if (!run)
        return 0;
    const auto ref = analyzer::load_trace(ref_file.write(ref_bytes));
    if (!ref)
        return 0;
    fuzz::check_model(*run);
    fuzz::check_model(*ref);
    const analyzer::Report run_report = analyzer::analyze(*run);
    const analyzer::Report ref_report = analyzer::analyze(*ref);
    const analyzer::CompareInput input { *run, run_report, *ref, ref_report };
    const auto outcome = analyzer::compare_runs(input);
    if (const auto* refusal = std::get_if<analyzer::CompareRefusal>(&outcome)) {
        if (refusal->message.empty() || refusal->message.find('\n') != std::string::npos)
            fuzz::fail("a compare refusal that is not one line: '" + refusal->message + "'");
        return 0;
    }
    const auto& result = std::get<analyzer::CompareResult>(outcome);
    for (const size_t index : result.flagged)
        if (index >= result.sites.size())
            fuzz::fail("a flagged site index past the sites");
    if (result.first_divergent && (result.flagged.empty() || *result.first_divergent != result.flagged.front()))
        fuzz::fail("first_divergent is not the first flagged site");
    (void)analyzer::default_compare_verdict(result);
    (void)cli::render_compare_text(input, result);
    (void)cli::render_compare_json(input, result).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    (void)cli::render_compare_markdown(input, result);
    (void)cli::render_compare_html(input, result);
    (void)cli::render_compare_junit(input, result);
    return 0;
}
