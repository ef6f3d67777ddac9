// Host-blocking CUDA calls (docs/analysis.md "Causes of bubbles", rule 1). API names are classified once per distinct
// name, never per row: the runtime's names carry a version suffix (cudaStreamSynchronize_v3020), the driver's sometimes
// one too (cuMemcpyDtoH_v2), and per-thread default-stream variants end in _ptds/_ptsz.
#include "fp8scope/analyzer/calls/host_blocking.hpp"

#include "fp8scope/format/schema.hpp"
#include "model/correlation_index.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace fp8scope::analyzer {
namespace {

enum class ApiClass : uint8_t {
    Unclassified = 0, // not looked at yet
    None, // not host-blocking
    StreamSync,
    DeviceSync,
    EventSync,
    Memcpy, // synchronous copy API
    MemcpyAsync, // blocking only when the host side is pageable
    Memset, // synchronous memset API
    Other, // implicitly synchronizing
};

bool ends_with(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

ApiClass classify(std::string_view full_name)
{
    const std::string_view name = api_base_name(full_name);
    if (name == "cudaStreamSynchronize" || name == "cuStreamSynchronize")
        return ApiClass::StreamSync;
    if (name == "cudaDeviceSynchronize" || name == "cudaThreadSynchronize" || name == "cuCtxSynchronize")
        return ApiClass::DeviceSync;
    if (name == "cudaEventSynchronize" || name == "cuEventSynchronize")
        return ApiClass::EventSync;
    const bool is_async = name.find("Async") != std::string_view::npos;
    if (name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy"))
        return is_async ? ApiClass::MemcpyAsync : ApiClass::Memcpy;
    if (name.starts_with("cudaMemset") || name.starts_with("cuMemsetD"))
        return is_async ? ApiClass::None : ApiClass::Memset;
    // Freeing memory waits for all work on the device (CUDA runtime API, "cudaFree": "an implicit
    // cudaDeviceSynchronize"); the host-memory variants too.
    if (name == "cudaFree" || name == "cuMemFree" || name == "cudaFreeHost" || name == "cuMemFreeHost"
        || name == "cudaFreeArray" || name == "cuArrayDestroy")
        return ApiClass::Other;
    return ApiClass::None;
}

bool is_pageable(int32_t memory_kind)
{
    return memory_kind == int32_t(schema::MemoryKind::Pageable);
}

} // namespace

std::string_view api_base_name(std::string_view name)
{
    for (bool changed = true; changed;) {
        changed = false;
        // A suffix is only dropped when a name stays: "_v2" alone is left as it is.
        if (name.size() > 5 && (ends_with(name, "_ptds") || ends_with(name, "_ptsz"))) {
            name.remove_suffix(5);
            changed = true;
        }
        size_t digits = 0;
        while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[name.size() - 1 - digits])))
            ++digits;
        if (digits > 0 && name.size() > digits + 2 && name.substr(name.size() - digits - 2, 2) == "_v") {
            name.remove_suffix(digits + 2);
            changed = true;
        }
    }
    return name;
}

std::vector<HostBlockingCall> find_host_blocking_calls(const TraceModel& model)
{
    const ApiTable& api = model.api_calls;
    std::vector<ApiClass> class_of_string(model.strings.size(), ApiClass::Unclassified);
    const detail::CorrelationIndex sync_rows(model.syncs.correlation_id);
    const detail::CorrelationIndex copy_rows(model.memcpys.correlation_id);
    const detail::CorrelationIndex set_rows(model.memsets.correlation_id);

    std::vector<HostBlockingCall> calls;
    for (size_t row = 0; row < api.size(); ++row) {
        ApiClass& cls = class_of_string[api.name[row].index];
        if (cls == ApiClass::Unclassified)
            cls = classify(model.strings[api.name[row]]);
        if (cls == ApiClass::None)
            continue;

        HostBlockingCall call;
        call.api_index = row;
        call.start_ns = api.start_ns[row];
        call.end_ns = api.end_ns[row];
        call.global_tid = api.global_tid[row];
        const uint32_t correlation = api.correlation_id[row];
        const auto copy = copy_rows.find(correlation);
        switch (cls) {
        case ApiClass::StreamSync:
            call.kind = HostBlockingKind::StreamSync;
            break;
        case ApiClass::DeviceSync:
            call.kind = HostBlockingKind::DeviceSync;
            break;
        case ApiClass::EventSync:
            call.kind = HostBlockingKind::EventSync;
            break;
        case ApiClass::Memcpy:
            // A device-to-device cudaMemcpy returns before the copy is done (CUDA runtime API, "API
            // synchronization behavior"), so it does not block the host.
            if (copy && model.memcpys.copy_kind[*copy] == int32_t(schema::MemcpyKind::DtoD))
                continue;
            call.kind = HostBlockingKind::BlockingMemcpy;
            break;
        case ApiClass::MemcpyAsync:
            // Without its copy row the memory kinds are unknown: assume the documented (non-blocking) behaviour.
            if (!copy || !(is_pageable(model.memcpys.src_kind[*copy]) || is_pageable(model.memcpys.dst_kind[*copy])))
                continue;
            call.kind = HostBlockingKind::PageableAsyncMemcpy;
            break;
        case ApiClass::Memset: {
            // "The synchronous memset functions are asynchronous with respect to the host except when the target
            // is pinned host memory or a Unified Memory region" (CUDA runtime API, "API synchronization
            // behavior"): device memory, and a call without its memset row, do not block.
            const auto set = set_rows.find(correlation);
            const int32_t kind = set ? model.memsets.mem_kind[*set] : int32_t(schema::MemoryKind::Device);
            if (kind != int32_t(schema::MemoryKind::Pinned) && kind != int32_t(schema::MemoryKind::Managed)
                && kind != int32_t(schema::MemoryKind::ManagedStatic))
                continue;
            call.kind = HostBlockingKind::BlockingMemset;
            break;
        }
        default:
            call.kind = HostBlockingKind::Other;
            break;
        }

        if (const auto sync = sync_rows.find(correlation)) {
            call.device_id = model.syncs.device_id[*sync];
            if (model.syncs.stream_id[*sync] != SyncTable::kNoStream)
                call.stream_id = model.syncs.stream_id[*sync];
        } else if (copy) {
            call.device_id = model.memcpys.device_id[*copy];
            call.stream_id = model.memcpys.stream_id[*copy];
        } else if (const auto set = set_rows.find(correlation)) {
            call.device_id = model.memsets.device_id[*set];
            call.stream_id = model.memsets.stream_id[*set];
        }
        calls.push_back(call);
    }
    // API rows are sorted by start already; keep it explicit for callers that rely on it.
    std::stable_sort(calls.begin(), calls.end(), [](const auto& l, const auto& r) { return l.start_ns < r.start_ns; });
    return calls;
}

const char* host_blocking_kind_name(HostBlockingKind kind)
{
    switch (kind) {
    case HostBlockingKind::StreamSync:
        return "stream sync";
    case HostBlockingKind::DeviceSync:
        return "device sync";
    case HostBlockingKind::EventSync:
        return "event sync";
    case HostBlockingKind::BlockingMemcpy:
        return "blocking memcpy";
    case HostBlockingKind::PageableAsyncMemcpy:
        return "pageable async memcpy";
    case HostBlockingKind::BlockingMemset:
        return "blocking memset";
    case HostBlockingKind::Other:
        return "other";
    }
    return "other";
}

} // namespace fp8scope::analyzer
