// RecordDecoder: turns CUPTI activity records into the writer's rows (fp8scope/format/rows.hpp). It runs on the writer
// thread only, inside the task that drains one CUPTI buffer, so it needs no locks.
//
// Conversions it owns (each is a trap if done elsewhere):
//  - times: CUPTI ns on its own clock (CLOCK_REALTIME by default) -> ns relative to the session start;
//  - memory kinds: CUPTI's CUpti_ActivityMemoryKind (0 UNKNOWN, 1 PAGEABLE, ...) -> nsys numbering (0 PAGEABLE, ...,
//    7 UNKNOWN), which the trace stores (shared/reference/nsys_cupti.md §1.5);
//  - CUPTI_SYNCHRONIZATION_INVALID_VALUE -> NULL stream/event; sync records carry no device, so the device comes from
//    the context (CONTEXT records, or any kernel/copy seen on that context);
//  - NVTX: CUPTI reports a range as a START and an END marker with one id; the decoder pairs them into one row,
//    and ranges still open at the end are written with no end.
#pragma once

#include "calls/api_calls.hpp"
#include "fp8scope/format/trace_db.hpp"

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace fp8scope::collector {

struct DecoderCounters {
    int64_t records = 0;
    int64_t kernels = 0;
    int64_t api_calls = 0;
    int64_t syncs = 0;
    int64_t memcpys = 0;
    int64_t memsets = 0;
    int64_t nvtx = 0;
    int64_t overheads = 0;
    int64_t devices = 0;
    int64_t collector_calls = 0; // the collector's own CUDA calls (FP8SCOPE_COLLECTOR_WORK)
    int64_t ignored = 0; // kinds the trace has no table for
    int64_t write_errors = 0; // rows the TraceDb refused (disk full, I/O)
};

class RecordDecoder {
public:
    // Name of a runtime (CUPTI_ACTIVITY_KIND_RUNTIME) or driver API callback id, e.g. "cudaLaunchKernel_v7000".
    using ApiNamer = std::function<std::string(CUpti_ActivityKind kind, uint32_t cbid)>;
    // Called with one line for the first row the TraceDb refuses.
    using Warner = std::function<void(const std::string&)>;

    RecordDecoder(uint64_t session_start_ns, int64_t pid, ApiNamer api_namer, Warner warner = {});

    void decode(const CUpti_Activity& record, TraceDb& db);
    // A synchronization record built from a callback (sync_calls.hpp), written as one from a CUPTI buffer would be.
    void decode_sync(const CUpti_ActivitySynchronization2& record, TraceDb& db);
    // An API record built from callbacks (api_calls.hpp); the collector's own calls are marked from it.
    void decode_api_call(const ApiCall& call, TraceDb& db);
    // API records come from callbacks, which mark the collector's own calls: external correlation records are
    // then ignored, so that no call is marked twice.
    void set_api_from_callbacks(bool on) { api_from_callbacks_ = on; }
    // Writes NVTX ranges still open (no end) and the names of the threads that made CUDA calls (from
    // /proc/self/task/<tid>/comm, for those still alive). Call once, before TraceDb::finish.
    void finish(TraceDb& db);

    const DecoderCounters& counters() const { return counters_; }

    // CUPTI was attached again after being detached between capture windows: its correlation ids start over at 1, so
    // from now on they are written shifted past the largest id written so far, and stay unique in the trace.
    void start_correlation_generation() { correlation_offset_ = max_correlation_; }

    // Exposed for tests: CUPTI memory kind -> nsys memory kind.
    static schema::MemoryKind memory_kind_from_cupti(uint32_t cupti_kind);

private:
    struct OpenRange {
        int64_t start_ns = 0;
        StringId text;
        int64_t global_tid = 0;
        std::optional<int64_t> domain_id;
    };

    int64_t rel(uint64_t cupti_ns) const { return static_cast<int64_t>(cupti_ns - session_start_ns_); }
    int64_t global_tid(uint32_t tid) const { return schema::global_tid(pid_, tid); }
    uint32_t device_of_context(uint32_t context_id) const;
    void note_context(uint32_t context_id, uint32_t device_id);
    void check(const Expected<void>& written);
    uint32_t correlation(uint32_t raw); // 0 (none) stays 0

    void kernel(const CUpti_ActivityKernel10& r, TraceDb& db);
    void api(const CUpti_ActivityAPI& r, TraceDb& db);
    void sync(const CUpti_ActivitySynchronization2& r, TraceDb& db);
    template <class Record> MemcpyRow copy_row(const Record& r);
    void memcpy(const CUpti_ActivityMemcpy6& r, TraceDb& db);
    void memcpy_peer(const CUpti_ActivityMemcpyPtoP4& r, TraceDb& db);
    void memset(const CUpti_ActivityMemset4& r, TraceDb& db);
    void marker(const CUpti_ActivityMarker2& r, TraceDb& db);
    void overhead(const CUpti_ActivityOverhead3& r, TraceDb& db);
    void device(const CUpti_ActivityDevice5& r, TraceDb& db);

    uint64_t session_start_ns_;
    int64_t pid_;
    ApiNamer api_namer_;
    Warner warner_;
    DecoderCounters counters_;
    std::unordered_map<uint64_t, StringId> api_names_; // (kind << 32) | cbid
    std::unordered_map<uint32_t, uint32_t> context_devices_;
    uint32_t last_device_ = 0;
    std::unordered_map<uint32_t, OpenRange> open_ranges_;
    std::unordered_set<uint32_t> devices_written_;
    std::unordered_set<uint32_t> threads_seen_; // OS thread ids of API calls, named at finish()
    uint32_t correlation_offset_ = 0, max_correlation_ = 0;
    bool api_from_callbacks_ = false;
};

} // namespace fp8scope::collector
