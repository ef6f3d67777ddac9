// fuzz_report: load a trace, analyze() it and render the report in every format, checking the model and the report.
#include "fuzz_support.hpp"

#include "fp8scope/analyzer/load/trace_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace fp8scope;
    static fuzz::InputFile file("report");
    const auto model = analyzer::load_trace(file.write({ data, size }));
    if (!model)
        return 0;
    fuzz::check_model(*model);
    fuzz::exercise_report(*model);
    return 0;
}
