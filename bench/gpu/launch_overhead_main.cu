// fp8scope_launch_overhead: the tiny-kernel launch loop of bench/gpu/launch_loop.cu without Python, for the collector
// overhead benchmark. Prints one JSON line like bench/launch_overhead.py --mode plain:
//
//   fp8scope_launch_overhead [--launches N] [--reps R]
//   fp8scope record -o /tmp/t-%p.sqlite -- fp8scope_launch_overhead
//
// Exit codes: 0 ok, 1 a CUDA error, 2 usage error, 77 no CUDA device.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <unistd.h>

extern "C" double fp8scope_launch_loop_us(int launches);
extern "C" int fp8scope_launch_loop_warmup_launches();
extern "C" const char* fp8scope_launch_loop_error_string(int error);

namespace {

constexpr int kExitCudaError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 77;

bool parse_positive(const char* text, int& value)
{
    char* end = nullptr;
    const long parsed = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || parsed < 1 || parsed > 100'000'000) {
        return false;
    }
    value = static_cast<int>(parsed);
    return true;
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv)
{
    int launches = 20000;
    int reps = 5;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (std::strcmp(argv[i], "--help") == 0) {
            std::printf("usage: fp8scope_launch_overhead [--launches N (20000)] [--reps R (5)]\n"
                        "Prints one JSON line: host microseconds per tiny-kernel launch, median of R loops.\n"
                        "Exit codes: 0 ok, 1 CUDA error, 2 usage error, 77 no CUDA device.\n");
            return 0;
        }
        if (std::strcmp(argv[i], "--launches") == 0 && has_value && parse_positive(argv[i + 1], launches)) {
            ++i;
        } else if (std::strcmp(argv[i], "--reps") == 0 && has_value && parse_positive(argv[i + 1], reps)) {
            ++i;
        } else {
            std::fprintf(stderr, "fp8scope_launch_overhead: bad argument '%s' (see --help)\n", argv[i]);
            return kExitUsage;
        }
    }
    std::vector<double> values;
    for (int rep = 0; rep < reps; ++rep) {
        const double us = fp8scope_launch_loop_us(launches);
        if (us < 0) {
            const int code = static_cast<int>(-us);
            std::fprintf(stderr, "fp8scope_launch_overhead: CUDA error %d (%s)\n", code,
                fp8scope_launch_loop_error_string(code));
            return code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver ? kExitNoDevice : kExitCudaError;
        }
        values.push_back(us);
    }
    std::string list;
    for (const double v : values) {
        list += (list.empty() ? "" : ", ") + std::to_string(v);
    }
    std::printf("{\"mode\": \"plain-cpp\", \"launches\": %d, \"reps\": %d, \"pid\": %d, \"us_per_launch\": [%s], "
                "\"median_us_per_launch\": %.4f, \"kernels_launched\": %lld}\n",
        launches, reps, static_cast<int>(getpid()), list.c_str(), median(values),
        static_cast<long long>(reps) * (launches + fp8scope_launch_loop_warmup_launches()));
    return 0;
}
