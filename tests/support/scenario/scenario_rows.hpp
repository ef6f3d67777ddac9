// How a scenario's specs become writer rows. Both writers (TraceDb in scenario.cpp, the nsys layout in
// scenario_nsight.cpp) start from these rows, so the two files of one scenario hold the same values.
#pragma once

#include "scenario.hpp"

namespace fp8scope::testing {

GpuInfoRow default_gpu(int32_t id); // an H100 SXM5 80 GB

namespace rows {

inline constexpr uint32_t kContextId = 1;
inline constexpr int32_t kRegistersPerThread = 32;

inline bool is_device_memory(schema::MemoryKind kind)
{
    return kind == schema::MemoryKind::Device || kind == schema::MemoryKind::Array
        || kind == schema::MemoryKind::DeviceStatic;
}

inline KernelRow kernel_row(const KernelSpec& spec, uint32_t correlation_id, StringId mangled_name)
{
    KernelRow row;
    row.start_ns = spec.start_ns;
    row.end_ns = spec.end_ns;
    row.device_id = spec.device_id;
    row.context_id = kContextId;
    row.stream_id = spec.stream_id;
    row.correlation_id = correlation_id;
    row.graph_id = spec.graph_id;
    row.graph_node_id = spec.graph_id; // nonzero exactly for graph launches, as in CUPTI
    row.config.mangled_name = mangled_name;
    row.config.grid = spec.grid;
    row.config.block = spec.block;
    row.config.registers_per_thread = kRegistersPerThread;
    return row;
}

inline ApiRow api_row(const ApiSpec& spec, int64_t global_tid, uint32_t correlation_id, StringId name)
{
    return ApiRow { .start_ns = spec.api_start_ns,
        .end_ns = spec.api_end_ns,
        .event_class = spec.event_class,
        .global_tid = global_tid,
        .correlation_id = correlation_id,
        .name = name,
        .return_value = 0 };
}

inline SyncRow sync_row(int64_t start_ns, int64_t end_ns, schema::SyncType type, std::optional<uint32_t> stream_id,
    uint32_t device_id, uint32_t correlation_id)
{
    SyncRow row;
    row.start_ns = start_ns;
    row.end_ns = end_ns;
    row.device_id = device_id;
    row.context_id = kContextId;
    row.stream_id = stream_id;
    row.correlation_id = correlation_id;
    row.sync_type = type;
    // Event syncs name an event; CUPTI's cudaEventSyncId is unique where event ids are reused.
    if (type == schema::SyncType::EventSynchronize || type == schema::SyncType::StreamWaitEvent) {
        row.event_id = correlation_id;
        row.event_sync_id = correlation_id;
    }
    return row;
}

// What a copy's and a memset's rows share: where and when the work ran, and the API call that launched it.
template <class Row, class Spec> Row gpu_work_row(const Spec& spec, uint32_t correlation_id)
{
    Row row;
    row.start_ns = spec.start_ns;
    row.end_ns = spec.end_ns;
    row.device_id = spec.device_id;
    row.context_id = kContextId;
    row.stream_id = spec.stream_id;
    row.correlation_id = correlation_id;
    row.bytes = spec.bytes;
    return row;
}

inline MemcpyRow memcpy_row(const CopySpec& spec, uint32_t correlation_id)
{
    auto row = gpu_work_row<MemcpyRow>(spec, correlation_id);
    row.copy_kind = spec.kind;
    row.src_kind = spec.src_kind;
    row.dst_kind = spec.dst_kind;
    if (is_device_memory(spec.src_kind))
        row.src_device_id = spec.device_id;
    if (is_device_memory(spec.dst_kind))
        row.dst_device_id = spec.device_id;
    return row;
}

inline MemsetRow memset_row(const MemsetSpec& spec, uint32_t correlation_id)
{
    auto row = gpu_work_row<MemsetRow>(spec, correlation_id);
    row.value = spec.value;
    row.mem_kind = spec.mem_kind;
    return row;
}

// A push/pop range, or a mark when there is no end.
inline NvtxRow nvtx_row(int64_t start_ns, std::optional<int64_t> end_ns, StringId text, int64_t global_tid)
{
    NvtxRow row;
    row.start_ns = start_ns;
    row.end_ns = end_ns;
    row.event_type = end_ns ? schema::NvtxEventType::PushPopRange : schema::NvtxEventType::Mark;
    row.text = text;
    row.global_tid = global_tid;
    return row;
}

} // namespace rows

} // namespace fp8scope::testing
