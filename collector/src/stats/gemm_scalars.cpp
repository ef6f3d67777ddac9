#include "stats/gemm_scalars.hpp"

#include <library_types.h>

#include <cstring>

namespace fp8scope::collector {

bool host_scalar_nonzero(const void* scalar, int32_t type)
{
    if (!scalar)
        return false;
    const auto bits_nonzero = [&]<typename Bits>(Bits sign_mask) {
        Bits bits {};
        std::memcpy(&bits, scalar, sizeof bits);
        return (bits & static_cast<Bits>(~sign_mask)) != 0; // -0 is zero
    };
    switch (type) {
    case CUDA_R_16F:
    case CUDA_R_16BF:
    case 64: // CUBLAS_COMPUTE_16F
    case 65: // CUBLAS_COMPUTE_16F_PEDANTIC
        return bits_nonzero(uint16_t { 0x8000 });
    case CUDA_R_32F:
    case 68: // CUBLAS_COMPUTE_32F and its variants
    case 69:
    case 74:
    case 75:
    case 77:
    case 78:
        return bits_nonzero(uint32_t { 0x80000000u });
    case CUDA_R_64F:
    case 70: // CUBLAS_COMPUTE_64F and its variants
    case 71:
    case 79:
        return bits_nonzero(uint64_t { 0x8000000000000000ull });
    case CUDA_R_32I:
    case 72: // CUBLAS_COMPUTE_32I
    case 73:
        return bits_nonzero(uint32_t { 0 });
    default:
        return false;
    }
}

} // namespace fp8scope::collector
