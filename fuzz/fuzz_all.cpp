// Every fuzz target in one libFuzzer binary (bin/fuzz_all), the target chosen by FP8SCOPE_FUZZ_TARGET (loader,
// report, compare, nsight or rows). The five binaries share almost all their code (the analyzer, SQLite, the
// sanitizer runtimes), so one binary is a fifth of their size to copy to another machine (docs/reliability.md).
// Each fuzz_<name>.cpp is compiled here with LLVMFuzzerTestOneInput renamed to fuzz_<name>_one_input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int fuzz_loader_one_input(const uint8_t* data, size_t size);
extern "C" int fuzz_report_one_input(const uint8_t* data, size_t size);
extern "C" int fuzz_compare_one_input(const uint8_t* data, size_t size);
extern "C" int fuzz_nsight_one_input(const uint8_t* data, size_t size);
extern "C" int fuzz_rows_one_input(const uint8_t* data, size_t size);

namespace {

using Target = int (*)(const uint8_t*, size_t);

Target chosen_target()
{
    const char* name = std::getenv("FP8SCOPE_FUZZ_TARGET");
    const std::string_view target = name ? name : "";
    if (target == "loader")
        return fuzz_loader_one_input;
    if (target == "report")
        return fuzz_report_one_input;
    if (target == "compare")
        return fuzz_compare_one_input;
    if (target == "nsight")
        return fuzz_nsight_one_input;
    if (target == "rows")
        return fuzz_rows_one_input;
    std::fprintf(stderr, "fuzz_all: set FP8SCOPE_FUZZ_TARGET to loader, report, compare, nsight or rows\n");
    std::exit(2);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static const Target target = chosen_target();
    return target(data, size);
}
