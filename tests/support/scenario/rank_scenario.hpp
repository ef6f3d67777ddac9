// One rank's scenario trace for the multi-rank tests (analyzer and CLI): meta rank, world size, host and command line,
// steps from markers, compute kernels and collectives on a communication stream.
#pragma once

#include "scenario.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fp8scope::testing {

inline constexpr int64_t kRankScenarioUtc = 1'795'219'200'000'000'000; // the scenario builder's session start
inline constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
inline constexpr const char* kAllGather = "ncclKernel_AllGather_RING_LL_Sum_int8_t";
inline constexpr const char* kBroadcast = "ncclDevKernel_Broadcast_RING_LL";
inline constexpr uint32_t kCommStream = 20;

// Steps 1, 2, ... from markers at `step_starts` (the last marker only ends the step before it: no activity follows
// it).
struct RankTrace {
    Scenario s;
    HostThread host;

    explicit RankTrace(int32_t rank, std::vector<int64_t> step_starts = { 0, 10'000, 20'000 }, int32_t world_size = 2,
        std::string host_name = "node0", std::string command_line = "python train.py --fp8")
    {
        s.session().rank = rank;
        s.session().world_size = world_size;
        s.session().host = std::move(host_name);
        s.session().command_line = std::move(command_line);
        host = s.thread(4242, 4242);
        for (size_t i = 0; i < step_starts.size(); ++i)
            s.step_marker(host, step_starts[i], static_cast<int64_t>(i) + 1);
    }

    void kernel(int64_t start_ns, int64_t end_ns, std::string name = "gemm", uint32_t stream = 7)
    {
        s.launch(host, { .api_start_ns = start_ns - 30, .api_end_ns = start_ns - 20 },
            { .start_ns = start_ns, .end_ns = end_ns, .name = std::move(name), .stream_id = stream });
    }
    void collective(int64_t start_ns, int64_t end_ns, const char* name = kAllReduce)
    {
        kernel(start_ns, end_ns, name, kCommStream);
    }
};

} // namespace fp8scope::testing
