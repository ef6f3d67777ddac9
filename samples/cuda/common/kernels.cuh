// The kernels the samples launch. They are extern "C" so that their names in a trace (CUPTI reports mangled
// names) are exactly the names printed in kernels_by_name, with no demangling involved. Each runs as one thread
// and increments a counter, which the samples read back to check that every launch they counted really ran.
#pragma once

#include <cstdint>

namespace fp8scope::samples {

// %globaltimer is the GPU's nanosecond wall clock (PTX ISA, "Special Registers: %globaltimer"); spinning on it
// gives a kernel duration that does not depend on the SM clock.
__device__ inline std::uint64_t global_timer_ns()
{
    std::uint64_t now_ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now_ns));
    return now_ns;
}

} // namespace fp8scope::samples

// A kernel of about a microsecond: the smallest unit of work, so that launching it is all that costs.
extern "C" __global__ void fp8scope_tiny(unsigned long long* counter)
{
    *counter += 1;
}

// A kernel that runs for at least duration_ns.
extern "C" __global__ void fp8scope_spin(unsigned long long* counter, unsigned long long duration_ns)
{
    const std::uint64_t start_ns = fp8scope::samples::global_timer_ns();
    while (fp8scope::samples::global_timer_ns() - start_ns < duration_ns) { }
    *counter += 1;
}
