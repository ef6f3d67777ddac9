// Shared by the timeline tests (header-only): models made in memory with exactly the rows a test needs, and lookups of
// tracks by name.
#pragma once

#include "fp8scope/analyzer/views/timeline.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace fp8scope::testing {

// A model whose strings are "kernel" (0), "cudaLaunchKernel" (1), "cuLaunchKernel" (2), "cudaStreamSynchronize" (3).
inline analyzer::TraceModel memory_model()
{
    analyzer::TraceModel model;
    model.strings.values = { "kernel", "cudaLaunchKernel", "cuLaunchKernel", "cudaStreamSynchronize" };
    return model;
}

inline void add_kernel(analyzer::TraceModel& model, int64_t start_ns, int64_t end_ns, uint32_t correlation_id = 0,
    uint32_t stream = 7, uint32_t device = 0)
{
    auto& k = model.kernels;
    k.start_ns.push_back(start_ns);
    k.end_ns.push_back(end_ns);
    k.device_id.push_back(device);
    k.stream_id.push_back(stream);
    k.correlation_id.push_back(correlation_id);
    k.name.push_back({ 0 });
    k.short_name.push_back({ 0 });
    k.graph_id.push_back(0);
}

inline void add_memcpy(analyzer::TraceModel& model, int64_t start_ns, int64_t end_ns, uint32_t correlation_id = 0)
{
    auto& c = model.memcpys;
    c.start_ns.push_back(start_ns);
    c.end_ns.push_back(end_ns);
    c.device_id.push_back(0);
    c.stream_id.push_back(7);
    c.correlation_id.push_back(correlation_id);
    c.bytes.push_back(4096);
    c.copy_kind.push_back(1); // HtoD
    c.src_kind.push_back(1); // pinned
    c.dst_kind.push_back(2); // device
}

// `name` indexes memory_model()'s strings.
inline void add_call(analyzer::TraceModel& model, int64_t start_ns, int64_t end_ns, uint32_t correlation_id,
    uint32_t name = 1, int64_t global_tid = 1, bool driver = false)
{
    auto& a = model.api_calls;
    a.start_ns.push_back(start_ns);
    a.end_ns.push_back(end_ns);
    a.global_tid.push_back(global_tid);
    a.correlation_id.push_back(correlation_id);
    a.name.push_back({ name });
    a.is_driver.push_back(driver ? 1 : 0);
    a.return_value.push_back(0);
}

// The first track named `name`; FAILs when there is none.
inline uint32_t track_named(const analyzer::TimelineIndex& index, std::string_view name)
{
    for (size_t i = 0; i < index.tracks.size(); ++i)
        if (index.tracks[i].name == name)
            return static_cast<uint32_t>(i);
    FAIL("no track named " << name);
    return 0;
}

} // namespace fp8scope::testing
