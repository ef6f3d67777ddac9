// fuzz_rows: structure-aware. The input chooses the rows of a trace with a valid schema (scenario_from_bytes.hpp),
// written by the real writer or in the nsys layout, then loaded, checked, analysed and rendered. Raw byte mutation of
// SQLite files mostly meets SQLite's corruption checks; this target reaches the loader's value checks and the
// analyses' logic.
#include "fuzz_support.hpp"
#include "scenario_from_bytes.hpp"

#include "fp8scope/analyzer/load/trace_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace fp8scope;
    static fuzz::InputFile file("rows");
    const fuzz::FuzzedTrace trace = fuzz::scenario_from_bytes({ data, size });
    const std::string& path = file.clear(); // the writers create the file
    const auto written
        = trace.nsight ? trace.scenario.write_nsight(path) : trace.scenario.write_fp8scope(path, trace.finished);
    if (!written)
        return 0; // the writer refused a value: nothing to load
    const auto model = analyzer::load_trace(path);
    if (!model)
        return 0;
    fuzz::check_model(*model);
    fuzz::exercise_report(*model, trace.options);
    return 0;
}
