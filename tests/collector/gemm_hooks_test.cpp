// The GEMM wrappers of libfp8scope.so (collector/src/stats/gemm_hooks.cpp) forward to the real cuBLAS even when it was
// loaded into a local scope, where dlsym(RTLD_NEXT) does not look: a first version failed every GEMM of a PyTorch
// job this way (CUBLAS_STATUS_NOT_INITIALIZED on the H100).
#include "subprocess.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace fp8scope::testing;

TEST_CASE("the preloaded GEMM wrappers find cuBLAS loaded into a local scope and forward to it", "[gemm_hooks]")
{
    const std::filesystem::path lt = FP8SCOPE_CUBLAS_DIR "/libcublasLt.so";
    const std::filesystem::path blas = FP8SCOPE_CUBLAS_DIR "/libcublas.so";
    // The collector is built only with a CUDA toolkit, and the toolkit ships cuBLAS.
    REQUIRE(std::filesystem::exists(lt));
    REQUIRE(std::filesystem::exists(blas));
    const ProcessResult run = run_process(
        { "/usr/bin/env", "LD_PRELOAD=" FP8SCOPE_COLLECTOR_LIB, FP8SCOPE_GEMM_HOOK_CHILD, lt.string(), blas.string() });
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(run.out.find("bound to " FP8SCOPE_COLLECTOR_LIB) != std::string::npos);
    // cuBLAS's own answer for a null handle (1, CUBLAS_STATUS_NOT_INITIALIZED); the wrappers' fallback would print
    // "no cuBLASLt library is loaded" on stderr instead.
    CHECK(run.out.find("cublasLtMatmul 1\n") != std::string::npos);
    CHECK(run.out.find("cublasGemmEx 1\n") != std::string::npos);
    CHECK(run.err.find("is loaded") == std::string::npos);
}
