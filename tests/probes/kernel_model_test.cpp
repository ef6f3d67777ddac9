// The kernels' algorithm (bins, class bounds, the fast path and its gates, per-code FP8 totals, finalization), run
// serially on the host by kernel_model.cpp, against the twin, which casts every element instead. No GPU needed.
#include "kernel_launch.hpp"
#include "kernel_model.hpp"
#include "stats_test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

using namespace fp8scope;
using namespace fp8scope::probes;
using namespace fp8scope::probes::test;

namespace {

struct ScaleCase {
    ScaleKind kind;
    float scale; // as given
    float effective; // the scale x is multiplied by
};

const ScaleCase kScales[] = {
    { ScaleKind::None, 1.0f, 1.0f },
    { ScaleKind::Value, 0.37f, 0.37f },
    { ScaleKind::InvValue, 3.0e-3f, 1.0f / 3.0e-3f },
    { ScaleKind::Value, 1024.0f, 1024.0f },
    { ScaleKind::Value, 0x1p-10f, 0x1p-10f },
    { ScaleKind::InvValue, 0.3f, 1.0f / 0.3f },
};

const schema::Dtype kAllDtypes[] = { schema::Dtype::Float32, schema::Dtype::BFloat16, schema::Dtype::Float16,
    schema::Dtype::E4M3, schema::Dtype::E5M2 };
const schema::Fp8Format kTargets[] = { schema::Fp8Format::None, schema::Fp8Format::E4M3, schema::Fp8Format::E5M2 };

// Groups of 16 words, as the kernel's, and of 1 and 3 words: smaller groups leave more of them free of Inf, NaN
// and fp32 subnormals, so that adversarial inputs reach the fast path and its class counting too.
void compare(const HostTensor& tensor, schema::Fp8Format target, const ScaleCase& scale)
{
    const StatsParams params = params_for(tensor, target, scale.kind, scale.scale);
    const StatsResult twin = tensor_stats_cpu(params);
    for (size_t group_words : { 16, 1, 3 })
        require_same_stats(
            emulate_kernel(params, group_words), twin, describe(params) + ", groups of " + std::to_string(group_words));
}

} // namespace

TEST_CASE("kernel model equals the twin on adversarial inputs: every dtype, target and scale", "[probes][model]")
{
    uint32_t seed = 1;
    for (schema::Dtype dtype : kAllDtypes)
        for (schema::Fp8Format target : kTargets)
            for (const ScaleCase& scale : kScales) {
                const HostTensor tensor(dtype, adversarial_raw(dtype, target, scale.effective, seed++, 3000));
                compare(tensor, target, scale);
            }
}

TEST_CASE("kernel model equals the twin on every bf16 and f16 value", "[probes][model]")
{
    std::vector<uint32_t> every;
    for (uint32_t raw = 0; raw < 0x10000u; ++raw)
        every.push_back(raw);
    for (schema::Dtype dtype : { schema::Dtype::BFloat16, schema::Dtype::Float16 }) {
        const HostTensor tensor(dtype, every);
        for (schema::Fp8Format target : kTargets)
            for (const ScaleCase& scale : kScales)
                compare(tensor, target, scale);
    }
}

TEST_CASE("kernel thresholds equal the cast for f32 around every class boundary", "[probes][model]")
{
    uint32_t seed = 7;
    for (schema::Fp8Format target : { schema::Fp8Format::E4M3, schema::Fp8Format::E5M2 })
        for (const ScaleCase& scale : kScales)
            compare(HostTensor(schema::Dtype::Float32, f32_around_class_bounds(target, scale.effective, seed++)),
                target, scale);
}

TEST_CASE("kernel model equals the twin for degenerate scales: 0, negative, Inf, NaN", "[probes][model]")
{
    const float inf = std::numeric_limits<float>::infinity();
    const ScaleCase scales[]
        = { { ScaleKind::Value, 0.0f, 0.0f }, { ScaleKind::Value, -2.0f, -2.0f }, { ScaleKind::Value, inf, inf },
              { ScaleKind::InvValue, 0.0f, inf }, { ScaleKind::Value, std::numeric_limits<float>::quiet_NaN(), 1.0f } };
    std::vector<uint32_t> every;
    for (uint32_t raw = 0; raw < 0x10000u; ++raw)
        every.push_back(raw);
    uint32_t seed = 41;
    for (const ScaleCase& scale : scales)
        for (schema::Fp8Format target : { schema::Fp8Format::E4M3, schema::Fp8Format::E5M2 }) {
            for (schema::Dtype dtype : { schema::Dtype::BFloat16, schema::Dtype::Float16 })
                compare(HostTensor(dtype, every), target, scale);
            compare(HostTensor(schema::Dtype::Float32, f32_around_class_bounds(target, 1.0f, seed++)), target, scale);
        }
}

TEST_CASE("the grid keeps every block under 2^31 elements and fills the device", "[probes][model]")
{
    using detail::grid_blocks;
    CHECK(grid_blocks(0, 4, 132) == 1);
    CHECK(grid_blocks(1, 1, 132) == 1);
    CHECK(grid_blocks(16 * 256 * 4, 1, 132) == 1); // one group of 4 vectors per thread
    CHECK(grid_blocks(16 * 256 * 4 + 1, 1, 132) == 2);
    CHECK(grid_blocks(uint64_t { 1 } << 19, 2, 132) == 64); // 1 MiB of bf16
    CHECK(grid_blocks(uint64_t { 1 } << 28, 2, 132) == 132 * detail::kBlocksPerSm);
    CHECK(grid_blocks((uint64_t { 1 } << 31) + 5, 1, 132) == 132 * detail::kBlocksPerSm);
    for (uint64_t numel : { uint64_t { 1 } << 35, detail::kMaxNumel })
        for (int sms : { 0, 1, 132 }) {
            const int blocks = grid_blocks(numel, 1, sms);
            CHECK(blocks <= detail::kMaxBlocks);
            CHECK(numel / static_cast<uint64_t>(blocks) <= detail::kMaxElementsPerBlock);
        }
    CHECK(stats_scratch_bytes() == sizeof(detail::Scratch));
    CHECK(stats_scratch_bytes() < 256 * 1024);
}
