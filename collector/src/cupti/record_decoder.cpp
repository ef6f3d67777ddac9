#include "cupti/record_decoder.hpp"

#include "cupti/own_work_mark.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <utility>

namespace fp8scope::collector {
namespace {

constexpr uint32_t kInvalid = CUPTI_SYNCHRONIZATION_INVALID_VALUE;

std::optional<uint32_t> valid_or_null(uint32_t value)
{
    if (value == kInvalid)
        return std::nullopt;
    return value;
}

schema::OverheadKind overhead_kind(CUpti_ActivityOverheadKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
        return schema::OverheadKind::CuptiBufferFlush;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
        return schema::OverheadKind::CuptiInstrumentation;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
        return schema::OverheadKind::CuptiResource;
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
        return schema::OverheadKind::DriverCompiler;
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
        return schema::OverheadKind::CommandBufferFull;
    default:
        return schema::OverheadKind::Other;
    }
}

std::string uuid_text(const CUuuid& uuid)
{
    // The GPU-xxxxxxxx-xxxx-... form nvidia-smi prints.
    std::string text = "GPU-";
    char hex[3];
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            text += '-';
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
        text += hex;
    }
    return text;
}

} // namespace

RecordDecoder::RecordDecoder(uint64_t session_start_ns, int64_t pid, ApiNamer api_namer, Warner warner)
    : session_start_ns_(session_start_ns)
    , pid_(pid)
    , api_namer_(std::move(api_namer))
    , warner_(std::move(warner))
{
}

schema::MemoryKind RecordDecoder::memory_kind_from_cupti(uint32_t cupti_kind)
{
    // CUpti_ActivityMemoryKind: 0 UNKNOWN, 1 PAGEABLE, 2 PINNED, 3 DEVICE, 4 ARRAY, 5 MANAGED, 6 DEVICE_STATIC,
    // 7 MANAGED_STATIC. nsys: the same order from 0, with UNKNOWN = 7.
    if (cupti_kind == 0 || cupti_kind > 7)
        return schema::MemoryKind::Unknown;
    return static_cast<schema::MemoryKind>(cupti_kind - 1);
}

uint32_t RecordDecoder::correlation(uint32_t raw)
{
    if (raw == 0)
        return 0;
    const uint32_t id = raw + correlation_offset_;
    max_correlation_ = std::max(max_correlation_, id);
    return id;
}

void RecordDecoder::check(const Expected<void>& written)
{
    if (written)
        return;
    if (counters_.write_errors++ == 0 && warner_)
        warner_("cannot write to the trace: " + written.error().message + " (rows from here on may be lost)");
}

uint32_t RecordDecoder::device_of_context(uint32_t context_id) const
{
    if (auto it = context_devices_.find(context_id); it != context_devices_.end())
        return it->second;
    return last_device_;
}

void RecordDecoder::note_context(uint32_t context_id, uint32_t device_id)
{
    context_devices_.try_emplace(context_id, device_id);
    last_device_ = device_id;
}

void RecordDecoder::decode(const CUpti_Activity& record, TraceDb& db)
{
    ++counters_.records;
    switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
        kernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        api(reinterpret_cast<const CUpti_ActivityAPI&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        sync(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        memcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        memcpy_peer(reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        memset(reinterpret_cast<const CUpti_ActivityMemset4&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_MARKER:
        marker(reinterpret_cast<const CUpti_ActivityMarker2&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
        overhead(reinterpret_cast<const CUpti_ActivityOverhead3&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
        device(reinterpret_cast<const CUpti_ActivityDevice5&>(record), db);
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        // Only ours (own_work.hpp): the correlation id of one of the collector's own CUDA calls.
        const auto& r = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record);
        if (!api_from_callbacks_ && r.externalKind == kOwnWorkKind && r.externalId == kOwnWorkId) {
            ++counters_.collector_calls;
            check(db.add_collector_work(correlation(r.correlationId)));
        }
        break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
        const auto& r = reinterpret_cast<const CUpti_ActivityContext3&>(record);
        note_context(r.contextId, r.deviceId);
        break;
    }
    default:
        ++counters_.ignored;
        break;
    }
}

void RecordDecoder::kernel(const CUpti_ActivityKernel10& r, TraceDb& db)
{
    note_context(r.contextId, r.deviceId);
    KernelRow row;
    row.start_ns = rel(r.start);
    row.end_ns = rel(r.end);
    row.device_id = r.deviceId;
    row.context_id = r.contextId;
    row.stream_id = r.streamId;
    row.correlation_id = correlation(r.correlationId);
    row.graph_id = r.graphId;
    row.graph_node_id = static_cast<int64_t>(r.graphNodeId);
    // The name pointer is valid only while the buffer is being processed: intern it now.
    row.config.mangled_name = db.intern(r.name ? r.name : "<unknown kernel>");
    row.config.grid = { r.gridX, r.gridY, r.gridZ };
    row.config.block = { r.blockX, r.blockY, r.blockZ };
    row.config.cluster
        = { static_cast<int32_t>(r.clusterX), static_cast<int32_t>(r.clusterY), static_cast<int32_t>(r.clusterZ) };
    row.config.registers_per_thread = r.registersPerThread;
    row.config.static_shared_bytes = r.staticSharedMemory;
    row.config.dynamic_shared_bytes = r.dynamicSharedMemory;
    row.config.local_per_thread_bytes = r.localMemoryPerThread;
    row.config.local_total_bytes = static_cast<int64_t>(r.localMemoryTotal_v2);
    row.config.shared_executed_bytes = r.sharedMemoryExecuted;
    row.config.launch_type = static_cast<schema::KernelLaunchType>(r.launchType <= 2 ? r.launchType : 0);
    // CUPTI_TIMESTAMP_UNKNOWN (0) when latency timestamps are off.
    if (r.queued != 0 && r.submitted != 0 && r.queued != CUPTI_TIMESTAMP_UNKNOWN) {
        row.queued_ns = rel(r.queued);
        row.submitted_ns = rel(r.submitted);
    }
    ++counters_.kernels;
    check(db.add_kernel(row));
}

void RecordDecoder::api(const CUpti_ActivityAPI& r, TraceDb& db)
{
    const uint64_t key = (static_cast<uint64_t>(r.kind) << 32) | r.cbid;
    auto it = api_names_.find(key);
    if (it == api_names_.end()) {
        std::string name = api_namer_ ? api_namer_(r.kind, r.cbid) : std::string();
        if (name.empty())
            name = (r.kind == CUPTI_ACTIVITY_KIND_DRIVER ? "driver_cbid_" : "runtime_cbid_") + std::to_string(r.cbid);
        it = api_names_.emplace(key, db.intern(name)).first;
    }
    ApiRow row;
    row.start_ns = rel(r.start);
    row.end_ns = rel(r.end);
    row.event_class
        = r.kind == CUPTI_ACTIVITY_KIND_DRIVER ? schema::EventClass::CudaDriver : schema::EventClass::CudaRuntime;
    row.global_tid = global_tid(r.threadId);
    row.correlation_id = correlation(r.correlationId);
    row.name = it->second;
    threads_seen_.insert(r.threadId);
    row.return_value = static_cast<int32_t>(r.returnValue);
    ++counters_.api_calls;
    check(db.add_api(row));
}

void RecordDecoder::decode_api_call(const ApiCall& call, TraceDb& db)
{
    ++counters_.records;
    api(call.record, db);
    if (call.own_work) {
        ++counters_.collector_calls;
        check(db.add_collector_work(correlation(call.record.correlationId)));
    }
}

void RecordDecoder::decode_sync(const CUpti_ActivitySynchronization2& record, TraceDb& db)
{
    ++counters_.records;
    sync(record, db);
}

void RecordDecoder::sync(const CUpti_ActivitySynchronization2& r, TraceDb& db)
{
    SyncRow row;
    row.start_ns = rel(r.start);
    row.end_ns = rel(r.end);
    row.device_id = device_of_context(r.contextId);
    row.context_id = r.contextId;
    row.stream_id = valid_or_null(r.streamId);
    row.correlation_id = correlation(r.correlationId);
    row.sync_type = static_cast<schema::SyncType>(r.type <= 4 ? r.type : 0);
    row.event_id = valid_or_null(r.cudaEventId);
    if (r.cudaEventSyncId != 0 && r.cudaEventSyncId != kInvalid)
        row.event_sync_id = r.cudaEventSyncId;
    ++counters_.syncs;
    check(db.add_sync(row));
}

// The fields CUpti_ActivityMemcpy6 and CUpti_ActivityMemcpyPtoP4 share.
template <class Record> MemcpyRow RecordDecoder::copy_row(const Record& r)
{
    note_context(r.contextId, r.deviceId);
    MemcpyRow row;
    row.start_ns = rel(r.start);
    row.end_ns = rel(r.end);
    row.device_id = r.deviceId;
    row.context_id = r.contextId;
    row.stream_id = r.streamId;
    row.correlation_id = correlation(r.correlationId);
    row.bytes = r.bytes;
    row.src_kind = memory_kind_from_cupti(r.srcKind);
    row.dst_kind = memory_kind_from_cupti(r.dstKind);
    row.graph_node_id = static_cast<int64_t>(r.graphNodeId);
    return row;
}

void RecordDecoder::memcpy(const CUpti_ActivityMemcpy6& r, TraceDb& db)
{
    MemcpyRow row = copy_row(r);
    row.copy_kind = static_cast<schema::MemcpyKind>(r.copyKind <= 10 ? r.copyKind : 0);
    ++counters_.memcpys;
    check(db.add_memcpy(row));
}

void RecordDecoder::memcpy_peer(const CUpti_ActivityMemcpyPtoP4& r, TraceDb& db)
{
    MemcpyRow row = copy_row(r);
    row.copy_kind = schema::MemcpyKind::PtoP;
    row.src_device_id = r.srcDeviceId;
    row.dst_device_id = r.dstDeviceId;
    ++counters_.memcpys;
    check(db.add_memcpy(row));
}

void RecordDecoder::memset(const CUpti_ActivityMemset4& r, TraceDb& db)
{
    note_context(r.contextId, r.deviceId);
    MemsetRow row;
    row.start_ns = rel(r.start);
    row.end_ns = rel(r.end);
    row.device_id = r.deviceId;
    row.context_id = r.contextId;
    row.stream_id = r.streamId;
    row.correlation_id = correlation(r.correlationId);
    row.value = r.value;
    row.bytes = r.bytes;
    row.mem_kind = memory_kind_from_cupti(r.memoryKind);
    row.graph_node_id = static_cast<int64_t>(r.graphNodeId);
    ++counters_.memsets;
    check(db.add_memset(row));
}

void RecordDecoder::marker(const CUpti_ActivityMarker2& r, TraceDb& db)
{
    const int64_t tid = r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || r.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
        ? global_tid(r.objectId.pt.threadId)
        : schema::global_pid(pid_);
    std::optional<int64_t> domain;
    if (r.domain && *r.domain)
        domain = db.intern(r.domain).value;
    if (r.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        open_ranges_[r.id] = OpenRange { rel(r.timestamp), db.intern(r.name ? r.name : ""), tid, domain };
        return;
    }
    NvtxRow row;
    if (r.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        auto it = open_ranges_.find(r.id);
        if (it == open_ranges_.end())
            return; // the range began before tracing started
        const OpenRange open = it->second;
        open_ranges_.erase(it);
        row.start_ns = open.start_ns;
        row.end_ns = rel(r.timestamp);
        row.text = open.text;
        row.global_tid = open.global_tid;
        row.domain_id = open.domain_id;
        // CUPTI does not say push/pop from start/end; a range that ends on its own thread behaves as push/pop.
        if (tid == open.global_tid) {
            row.event_type = schema::NvtxEventType::PushPopRange;
        } else {
            row.event_type = schema::NvtxEventType::StartEndRange;
            row.end_global_tid = tid;
        }
    } else if (r.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        row.start_ns = rel(r.timestamp);
        row.event_type = schema::NvtxEventType::Mark;
        row.text = db.intern(r.name ? r.name : "");
        row.global_tid = tid;
        row.domain_id = domain;
    } else {
        ++counters_.ignored; // sync-object markers (acquire/release) have no table
        return;
    }
    row.range_id = r.id;
    ++counters_.nvtx;
    check(db.add_nvtx(row));
}

void RecordDecoder::overhead(const CUpti_ActivityOverhead3& r, TraceDb& db)
{
    OverheadRow row;
    row.start_ns = rel(r.start);
    row.end_ns = rel(r.end);
    row.kind = overhead_kind(r.overheadKind);
    if (r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || r.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
        row.global_tid = global_tid(r.objectId.pt.threadId);
    else if (r.objectKind == CUPTI_ACTIVITY_OBJECT_DEVICE)
        row.device_id = r.objectId.dcs.deviceId;
    if (r.start == 0 || r.end < r.start)
        return; // no timestamps (some buffer-flush records): nothing to place on a timeline
    ++counters_.overheads;
    check(db.add_overhead(row));
}

void RecordDecoder::device(const CUpti_ActivityDevice5& r, TraceDb& db)
{
    if (!devices_written_.insert(r.id).second)
        return;
    GpuInfoRow row;
    row.id = static_cast<int32_t>(r.id);
    row.name = r.name ? r.name : "";
    row.total_memory_bytes = static_cast<int64_t>(r.globalMemorySize);
    row.memory_bandwidth_bytes_per_s = static_cast<int64_t>(r.globalMemoryBandwidth) * 1000; // CUPTI: kB/s
    row.clock_rate_hz = static_cast<int64_t>(r.coreClockRate) * 1000; // CUPTI: kHz
    row.sm_count = static_cast<int32_t>(r.numMultiprocessors);
    row.uuid = uuid_text(r.uuid);
    row.compute_major = static_cast<int32_t>(r.computeCapabilityMajor);
    row.compute_minor = static_cast<int32_t>(r.computeCapabilityMinor);
    ++counters_.devices;
    check(db.add_gpu(row));
}

void RecordDecoder::finish(TraceDb& db)
{
    for (const auto& [id, open] : open_ranges_) {
        NvtxRow row;
        row.start_ns = open.start_ns;
        row.text = open.text;
        row.global_tid = open.global_tid;
        row.domain_id = open.domain_id;
        row.range_id = id;
        ++counters_.nvtx;
        check(db.add_nvtx(row));
    }
    open_ranges_.clear();
    for (const uint32_t tid : threads_seen_) {
        std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
        std::string name;
        if (comm && std::getline(comm, name) && !name.empty())
            check(db.add_thread_name(ThreadNameRow { db.intern(name), std::nullopt, global_tid(tid) }));
    }
}

} // namespace fp8scope::collector
