// The built libfp8scope.so, dlopen'ed into the test process (heaptrack does the same): it exports only its entry
// points, hides SQLite, and loading it has no effect beyond pointing the injection variables at itself.
#include <catch2/catch.hpp>

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
