// Catch2 main for the GPU tests: without a usable CUDA device every run exits 77, which CTest reports as skipped
// (SKIP_RETURN_CODE), never as passed. Listing the tests (catch_discover_tests does it at build time) needs no GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char** argv)
{
    Catch::Session session;
    if (const int status = session.applyCommandLine(argc, argv); status != 0)
        return status;
    const Catch::ConfigData& config = session.configData();
    const bool listing = config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters;
    if (!listing) {
        int devices = 0;
        const cudaError_t error = cudaGetDeviceCount(&devices);
        if (error != cudaSuccess || devices == 0) {
            std::fprintf(stderr, "fp8scope_probes_gpu_tests: no CUDA device (%s): skipped\n",
                error != cudaSuccess ? cudaGetErrorString(error) : "none found");
            return 77;
        }
    }
    return session.run();
}
