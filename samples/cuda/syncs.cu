// Ground-truth sample "syncs": each step runs five short kernels, each followed by one host-blocking call of a
// different kind: cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, a blocking cudaMemcpy
// device-to-host, and a cudaMemcpyAsync device-to-host into pageable memory (synchronous in effect). Every kernel
// runs long enough (--kernel-us) that each call really waits. Fields: samples/README.md.

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "args.hpp"
#include "counted_cuda.cuh"
#include "kernels.cuh"

using namespace fp8scope::samples;

namespace {
constexpr const char* kSample = "syncs";
}

int main(int argc, char** argv)
{
    Args args(argc, argv, "fp8scope_sample_syncs",
        "per step: one stream, device and event sync, one blocking DtoH copy, one async DtoH copy to pageable memory");
    const std::int64_t steps = args.integer("steps", 20, 1, 1'000'000, "steps");
    const std::int64_t kernel_us = args.integer("kernel-us", 50, 0, 10'000'000, "duration of each kernel, us");
    args.finish();

    require_cuda_device(kSample);
    CountedCuda cuda(kSample);
    // A blocking stream (default flags): a plain cudaMemcpy runs on the legacy default stream, which waits for the
    // work already queued on blocking streams (CUDA Runtime API, "Stream synchronization behavior").
    cudaStream_t stream = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaStreamCreate(&stream));
    cudaEvent_t event = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    unsigned long long* counter = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaMalloc(&counter, sizeof *counter));
    cuda.memset(counter, 0, sizeof *counter);
    // Pageable on purpose: from the heap, never registered with CUDA.
    const auto pageable = std::make_unique<unsigned long long>(0);
    const unsigned long long kernel_ns = static_cast<unsigned long long>(kernel_us) * 1000;

    std::uint64_t mismatches = 0;
    const auto check_copy = [&](unsigned long long copied, const char* kind) {
        if (copied != cuda.kernels()) {
            ++mismatches;
            std::fprintf(stderr, "%s: %s copy read %llu, expected %" PRIu64 " (all kernels so far)\n", kSample, kind,
                copied, cuda.kernels());
        }
    };

    for (std::int64_t step = 0; step < steps; ++step) {
        cuda.begin_step();
        FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, kernel_ns);
        cuda.stream_synchronize(stream);

        FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, kernel_ns);
        cuda.device_synchronize();

        FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, kernel_ns);
        cuda.event_record(event, stream);
        cuda.event_synchronize(event);

        FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, kernel_ns);
        unsigned long long copied = 0;
        cuda.memcpy_dtoh_blocking(&copied, counter, sizeof copied);
        check_copy(copied, "blocking cudaMemcpy");

        FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, kernel_ns);
        cuda.memcpy_dtoh_async_pageable(pageable.get(), counter, sizeof *pageable, stream);
        check_copy(*pageable, "cudaMemcpyAsync to pageable");
        cuda.end_step();
    }

    FP8SCOPE_CUDA_CHECK(cudaFree(counter));
    FP8SCOPE_CUDA_CHECK(cudaEventDestroy(event));
    FP8SCOPE_CUDA_CHECK(cudaStreamDestroy(stream));

    cuda.print_summary();
    const bool verified = mismatches == 0;
    JsonLine json;
    cuda.write_common(json);
    json.field("kernel_ns", static_cast<std::uint64_t>(kernel_ns));
    json.field("verified", verified);
    json.print_ground_truth();
    return verified ? kExitOk : kExitFailure;
}
