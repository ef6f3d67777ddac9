// Catch2 main for the GPU tests: without a usable CUDA device every run exits 77, which CTest reports as skipped
// (SKIP_RETURN_CODE), never as passed. Listing the tests (catch_discover_tests does it at build time) needs no GPU.
#define CATCH_CONFIG_RUNNER
#include "catch_skip_main.hpp"

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

int main(int argc, char** argv)
{
    return fp8scope::testing::run_or_skip(argc, argv, "fp8scope_probes_gpu_tests", []() -> std::optional<std::string> {
        int devices = 0;
        const cudaError_t error = cudaGetDeviceCount(&devices);
        if (error == cudaSuccess && devices > 0)
            return std::nullopt;
        return std::string("no CUDA device (") + (error != cudaSuccess ? cudaGetErrorString(error) : "none found")
            + ")";
    });
}
