// The colours of bubble causes and kernel classes, shared by the HTML report's charts and the Qt viewer, so that a
// cause reads the same colour wherever it is shown. Matplotlib's tab10 colours (readable on white, distinct in
// print): sync red, dependency purple, launch orange, host blue, comm cyan.
#pragma once

#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"

#include <array>

namespace fp8scope::present {

// Indexed by BubbleCause: sync, dependency, launch, host, comm.
inline constexpr std::array<const char*, analyzer::kBubbleCauseCount> kCauseColors { "#d62728", "#9467bd", "#ff7f0e",
    "#1f77b4", "#17becf" };
// Indexed by KernelClass: FP8 GEMM, other GEMM, cast, amax/scale, fused bookkeeping, communication, other.
inline constexpr std::array<const char*, analyzer::kKernelClassCount> kClassColors { "#2ca02c", "#98df8a", "#ff7f0e",
    "#d62728", "#e377c2", "#17becf", "#9e9e9e" };

} // namespace fp8scope::present
