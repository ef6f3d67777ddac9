// Child program of gemm_hooks_test.cpp, run with libfp8scope.so preloaded. It loads cuBLAS and cuBLASLt into a
// local scope, as PyTorch does (they come with a dlopen'ed extension module), then calls the GEMM entry points by
// their global names, which bind to the collector's wrappers. The wrappers must find the real functions and
// forward: with a null handle cuBLAS answers CUBLAS_STATUS_NOT_INITIALIZED itself. No GPU is needed.
#include <dlfcn.h>

#include <cstdio>

using LtMatmul = int (*)(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*,
    void*, void*, void*, const void*, void*, size_t, void*);
using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
    const void*, void*, int, int, int, int);

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: gemm_hook_child LIBCUBLASLT LIBCUBLAS\n");
        return 2;
    }
    if (!dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) || !dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)) {
        std::fprintf(stderr, "cannot load cuBLAS: %s\n", dlerror());
        return 3;
    }
    auto lt = reinterpret_cast<LtMatmul>(dlsym(RTLD_DEFAULT, "cublasLtMatmul"));
    auto gemm = reinterpret_cast<GemmEx>(dlsym(RTLD_DEFAULT, "cublasGemmEx"));
    if (!lt || !gemm) {
        std::fprintf(stderr, "the GEMM entry points are not in the global scope (is libfp8scope.so preloaded?)\n");
        return 4;
    }
    Dl_info info {};
    dladdr(reinterpret_cast<void*>(lt), &info);
    std::printf("bound to %s\n", info.dli_fname ? info.dli_fname : "?");
    std::printf("cublasLtMatmul %d\n",
        lt(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, 0, nullptr));
    std::printf("cublasGemmEx %d\n",
        gemm(nullptr, 0, 0, 1, 1, 1, nullptr, nullptr, 0, 1, nullptr, 0, 1, nullptr, nullptr, 0, 1, 68, -1));
    return 0;
}
