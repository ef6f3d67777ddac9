// fuzz_loader: bytes -> a file -> load_trace(). Either one clear error (a single line naming the file) or a model
// that keeps every promise of trace_model.hpp.
#include "fuzz_support.hpp"

#include "fp8scope/analyzer/load/trace_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace fp8scope;
    static fuzz::InputFile file("loader");
    auto model = analyzer::load_trace(file.write({ data, size }));
    if (!model) {
        const std::string& message = model.error().message;
        if (message.empty() || message.find('\n') != std::string::npos)
            fuzz::fail("a load error that is not one line: '" + message + "'");
        return 0;
    }
    fuzz::check_model(*model);
    return 0;
}
