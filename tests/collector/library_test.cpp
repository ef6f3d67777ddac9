// The built libfp8scope.so, dlopen'ed into the test process (heaptrack does the same): it exports only its entry
// points, hides SQLite, and loading it has no effect beyond pointing the injection variables at itself.
#include <catch2/catch.hpp>

#include "fp8scope.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

TEST_CASE("libfp8scope.so exports its entry points and hides SQLite and the C++ runtime")
{
    void* lib = dlopen(FP8SCOPE_COLLECTOR_LIB, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    CHECK(dlsym(lib, "InitializeInjection") != nullptr);
    CHECK(dlsym(lib, "InitializeInjectionNvtx2") != nullptr);
    // RTLD_DEFAULT would find the test's own SQLite; look in the library only, through a handle that is not
    // global. dlsym(handle) also searches the library's dependencies, which include no SQLite.
    CHECK(dlsym(lib, "sqlite3_open_v2") == nullptr);
    CHECK(dlsym(lib, "sqlite3_libversion") == nullptr);
    CHECK(dlsym(lib,
              "_ZN8fp8scope6TraceDb6createERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_"
              "11SessionInfoERKNS_14TraceDbOptionsE")
        == nullptr);
    CHECK(dlsym(lib, "cuptiSubscribe") == nullptr); // CUPTI is not a dependency: it is loaded at cuInit only
    dlclose(lib);
}

TEST_CASE("loading the library points the CUDA and NVTX injection variables at it, without overriding a user's")
{
    unsetenv("CUDA_INJECTION64_PATH");
    setenv("NVTX_INJECTION64_PATH", "/custom/nvtx.so", 1);
    void* lib = dlopen(FP8SCOPE_COLLECTOR_LIB, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    const char* cuda = std::getenv("CUDA_INJECTION64_PATH");
    REQUIRE(cuda != nullptr);
    CHECK(std::string(cuda).ends_with("libfp8scope.so"));
    CHECK(std::string(std::getenv("NVTX_INJECTION64_PATH")) == "/custom/nvtx.so");
    dlclose(lib);
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("NVTX_INJECTION64_PATH");
}

TEST_CASE("the C API is exported and, in a process that is not recording, does nothing and says so")
{
    void* lib = dlopen(FP8SCOPE_COLLECTOR_LIB, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    for (const char* name : { "fp8scope_probe", "fp8scope_step", "fp8scope_step_end", "fp8scope_scalar",
             "fp8scope_scalar_device", "fp8scope_api_version", "fp8scope_stats_wanted", "fp8scope_recording",
             "fp8scope_stats_wanted_in_step", "cublasLtMatmul", "cublasGemmEx", "cublasGemmStridedBatchedEx" }) {
        INFO(name);
        CHECK(dlsym(lib, name) != nullptr);
    }
    CHECK(dlsym(lib, "cudaMalloc") == nullptr); // the static CUDA runtime stays hidden
    using Version = int (*)();
    using Step = int (*)(int64_t);
    using Scalar = int (*)(const char*, double);
    using Probe = int (*)(const fp8scope_probe_args*);
    CHECK(reinterpret_cast<Version>(dlsym(lib, "fp8scope_api_version"))() == FP8SCOPE_C_API_VERSION);
    CHECK(reinterpret_cast<Version>(dlsym(lib, "fp8scope_stats_wanted"))() == 0); // nothing records
    CHECK(reinterpret_cast<Version>(dlsym(lib, "fp8scope_recording"))() == 0);
    using InStep = int (*)(int32_t);
    const auto in_step = reinterpret_cast<InStep>(dlsym(lib, "fp8scope_stats_wanted_in_step"));
    CHECK(in_step(FP8SCOPE_BOUNDARY_MARKER) == 1); // nothing records: unsure, so the wrappers stay
    CHECK(in_step(FP8SCOPE_BOUNDARY_OPTIMIZER) == 1);
    CHECK(in_step(2) == FP8SCOPE_E_INVALID_ARGUMENT);
    CHECK(reinterpret_cast<Step>(dlsym(lib, "fp8scope_step"))(3) == FP8SCOPE_E_NOT_RECORDING);
    CHECK(reinterpret_cast<Step>(dlsym(lib, "fp8scope_step"))(-1) == FP8SCOPE_E_INVALID_ARGUMENT);
    using StepEnd = int (*)(int64_t, int32_t);
    const auto step_end = reinterpret_cast<StepEnd>(dlsym(lib, "fp8scope_step_end"));
    CHECK(step_end(3, FP8SCOPE_STEP_END_OPTIMIZER) == FP8SCOPE_E_NOT_RECORDING);
    CHECK(step_end(3, FP8SCOPE_STEP_END_OPTIMIZER_SKIPPED) == FP8SCOPE_E_NOT_RECORDING);
    CHECK(step_end(3, 0) == FP8SCOPE_E_INVALID_ARGUMENT); // 0 is the job's own fp8scope_step
    CHECK(step_end(3, 3) == FP8SCOPE_E_INVALID_ARGUMENT);
    CHECK(step_end(-1, FP8SCOPE_STEP_END_OPTIMIZER) == FP8SCOPE_E_INVALID_ARGUMENT);
    CHECK(reinterpret_cast<Scalar>(dlsym(lib, "fp8scope_scalar"))("loss", 1.5) == FP8SCOPE_E_NOT_RECORDING);
    CHECK(reinterpret_cast<Scalar>(dlsym(lib, "fp8scope_scalar"))(nullptr, 1.5) == FP8SCOPE_E_INVALID_ARGUMENT);
    const auto probe = reinterpret_cast<Probe>(dlsym(lib, "fp8scope_probe"));
    CHECK(probe(nullptr) == FP8SCOPE_E_INVALID_ARGUMENT);
    float data[4] = {};
    fp8scope_probe_args args {};
    args.struct_size = sizeof args;
    args.name = "x";
    args.data = data;
    args.numel = 4;
    args.dtype = 9; // no such dtype
    CHECK(probe(&args) == FP8SCOPE_E_INVALID_ARGUMENT);
    args.dtype = FP8SCOPE_DTYPE_F32;
    args.scale_kind = FP8SCOPE_SCALE_VALUE;
    args.scale = -1.0f; // a scale must be positive and finite
    CHECK(probe(&args) == FP8SCOPE_E_INVALID_ARGUMENT);
    args.scale = 2.0f;
    CHECK(probe(&args) == FP8SCOPE_E_NOT_RECORDING);
    args.struct_size = 8; // an older, smaller struct than this collector knows
    CHECK(probe(&args) == FP8SCOPE_E_INVALID_ARGUMENT);
    dlclose(lib);
}
