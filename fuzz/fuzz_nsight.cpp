// fuzz_nsight: the Nsight Systems export reader (nsight_reader.cpp, activity_readers.cpp), fed the layout of
// `nsys export --type sqlite` (the seeds come from tests/support/scenario/scenario_nsight.cpp). Inputs that load as our
// own format are rejected (-1: libFuzzer keeps them out of the corpus), so the corpus stays on the nsys path.
#include "fuzz_support.hpp"

#include "fp8scope/analyzer/load/trace_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace fp8scope;
    static fuzz::InputFile file("nsight");
    const auto model = analyzer::load_trace(file.write({ data, size }));
    if (!model)
        return 0;
    if (model->meta.source != analyzer::TraceSource::Nsight)
        return -1;
    fuzz::check_model(*model);
    // nsys exports are always complete (trace_model.hpp), and carry no collector work of ours.
    if (!model->meta.finished)
        fuzz::fail("an Nsight export loaded as unfinished");
    fuzz::exercise_report(*model);
    return 0;
}
