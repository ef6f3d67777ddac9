// Demangled and short kernel names, as nsys shows them, and robustness against malformed names.
#include "fp8scope/format/trace_db.hpp"

#include <catch2/catch.hpp>

#include <random>

using fp8scope::demangle_kernel_name;
using fp8scope::kernel_short_name;

TEST_CASE("demangle_kernel_name demangles Itanium names and keeps everything else")
{
    CHECK(demangle_kernel_name("_Z6squarePfi") == "square(float*, int)");
    CHECK(demangle_kernel_name(
              "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_")
        == "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> "
           ">(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)");
    // extern "C" kernels (cuBLAS' sm90_xmma_*) are their own demangled form.
    CHECK(demangle_kernel_name("sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1")
        == "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1");
    // Not a valid mangled name: returned unchanged.
    CHECK(demangle_kernel_name("_Z") == "_Z");
    CHECK(demangle_kernel_name("_ZZZZ<<<") == "_ZZZZ<<<");
    CHECK(demangle_kernel_name("") == "");
}

TEST_CASE("kernel_short_name strips return type and scope and template arguments and parameters")
{
    CHECK(kernel_short_name("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                            "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")
        == "vectorized_elementwise_kernel");
    CHECK(kernel_short_name("sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128")
        == "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128");
    CHECK(kernel_short_name("cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_128x64_64x3_tn_align8>(Params)")
        == "Kernel2");
    CHECK(kernel_short_name("void cutlass::Kernel2<cutlass_80_gemm>(cutlass_80_gemm::Params)") == "Kernel2");
    CHECK(kernel_short_name("square(float*, int)") == "square");
    CHECK(kernel_short_name("unsigned int foo::bar(int)") == "bar");
    CHECK(kernel_short_name("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10>(float*)")
        == "softmax_warp_forward");
    // Template arguments that hold parentheses, lambdas and nested templates.
    CHECK(kernel_short_name("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<"
                            "at::native::AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> "
                            "const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::AddFunctor<float> "
                            ">(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1})")
        == "elementwise_kernel");
    CHECK(kernel_short_name("void foo<(int)4, (bool)1>(int)") == "foo");
    CHECK(kernel_short_name("void ns::kernel<std::integral_constant<int, 3>>(int)") == "kernel");
    // Operators keep their symbol.
    CHECK(kernel_short_name("void Functor::operator()<float>(float*) const") == "operator()");
    CHECK(kernel_short_name("bool ns::operator<(ns::A const&, ns::A const&)") == "operator<");
    CHECK(kernel_short_name("ns::A::operator<<=(int)") == "operator<<=");
    CHECK(kernel_short_name("ns::A::operator->() const") == "operator->");
    CHECK(kernel_short_name("ns::A::operator new(unsigned long)") == "operator new");
    CHECK(kernel_short_name("ns::A::operator unsigned int() const") == "operator unsigned int");
    // A name that merely contains "operator" is an ordinary identifier.
    CHECK(kernel_short_name("void ns::operator_kernel<int>(int)") == "operator_kernel");
    CHECK(kernel_short_name("void ns::my_operator(int)") == "my_operator");
    // Degenerate input: something sensible and never more than the input.
    CHECK(kernel_short_name("") == "");
    CHECK(kernel_short_name("(int)") == "(int)");
    CHECK(kernel_short_name("a::") == "a::");
    CHECK(kernel_short_name("<<<>>>") == "<<<>>>");
    CHECK(kernel_short_name("void f<int(int)") == "f");
}

TEST_CASE("kernel names never crash and always return a piece of the input whatever the input")
{
    // Random strings over the characters that steer the scanner, plus random bytes, NULs included.
    std::mt19937 rng(20261121);
    const std::string alphabet = "<>()[]{}:: ,*&~-=!_aoperatorZ0123456789\"#";
    std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<size_t> length(0, 200);
    for (int i = 0; i < 20000; ++i) {
        std::string input;
        const size_t n = length(rng);
        for (size_t j = 0; j < n; ++j)
            input += i % 4 == 0 ? static_cast<char>(byte(rng)) : alphabet[pick(rng)];
        if (i % 3 == 0)
            input.insert(0, "_Z");
        if (i % 5 == 0)
            input.insert(0, "void ns::operator");
        const std::string short_name = kernel_short_name(input);
        INFO(input);
        REQUIRE(short_name.size() <= input.size());
        REQUIRE(input.find(short_name) != std::string::npos);
        const std::string demangled = demangle_kernel_name(input);
        REQUIRE((demangled == input || input.starts_with("_Z")));
        const std::string demangled_short = kernel_short_name(demangled);
        REQUIRE(demangled.find(demangled_short) != std::string::npos);
    }
    // Deep nesting and very long names.
    CHECK(kernel_short_name(std::string(100000, '<')) == std::string(100000, '<'));
    CHECK(kernel_short_name("void f" + std::string(50000, '(') + std::string(50000, ')')) == "f");
    CHECK(demangle_kernel_name("_Z" + std::string(200000, 'N')).size() == 200002);
}
