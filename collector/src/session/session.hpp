// Session: one process's recording, from CUDA initialization to the finished trace, owned by the collector's one
// object (collector.hpp). Collector::start() (session_start.cpp) runs inside cuInit (InitializeInjection): it
// subscribes to CUPTI, creates the trace file and the writer thread, and enables the activity kinds. Collector::stop()
// flushes CUPTI, lets the writer drain every buffer, and finishes the trace. Everything else (atexit, signals, fork,
// _exit, cudaDeviceReset) only decides when stop() or a flush happens (lifecycle.hpp).
#pragma once

#include "cupti/buffer_pool.hpp"
#include "cupti/cupti_api.hpp"
#include "cupti/cupti_attachment.hpp"
#include "cupti/cupti_settings.hpp"
#include "cupti/kernel_timestamps.hpp"
#include "cupti/record_decoder.hpp"

#include "fp8scope/common/capture_plan.hpp"
#include "fp8scope/format/background_writer.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace fp8scope::collector {

class Collector;

struct Session {
    const CuptiApi* cupti = nullptr;
    pid_t owner_pid = 0;
    uint64_t start_cupti_ns = 0; // trace times are CUPTI timestamps minus this
    std::unique_ptr<BufferPool> pool;
    std::unique_ptr<BackgroundWriter> writer;
    std::unique_ptr<RecordDecoder> decoder; // used on the writer thread only
    std::string path;
    std::string absolute_path; // path at creation, from the working directory then (the job may chdir)
    std::atomic<int64_t> dropped_by_cupti { 0 }; // cuptiActivityGetNumDroppedRecords
    std::atomic<int64_t> dropped_by_queue { 0 }; // buffers the writer could not take
    std::atomic<int64_t> dropped_at_detach { 0 }; // records CUPTI handed over while being detached
    int64_t pool_exhausted_written = 0; // writer thread only
    CapturePlan capture_plan;
    CuptiSettings cupti_settings; // what is enabled in CUPTI (cupti_settings.hpp)
    // Whether CUPTI is attached, and detaching it between capture windows (cupti_attachment.hpp); made once CUPTI is
    // loaded, with the session as its host.
    std::unique_ptr<AttachmentHost> attachment_host;
    std::unique_ptr<CuptiAttachment> attachment;
    // Hardware or software kernel timestamps, chosen at the first context's creation (kernel_timestamps.hpp).
    std::unique_ptr<KernelTimestampChoice> timestamps;
    // Diagnostic for overhead measurements (FP8SCOPE_DISCARD_RECORDS=1): completed buffers are handed back to CUPTI
    // undecoded, so the writer's share of the cost can be told apart. The trace then holds no activity records.
    bool discard_records = false;
    // CUPTI records the whole process with the default kinds: its rows alone tell whether it did GPU work
    // (idle_trace.hpp). Otherwise the flusher looks for a CUDA context until it sees one (watch_for_gpu_work).
    bool whole_process_recorded = false;
};

// The API records the callbacks hold (api_calls.hpp), to the writer.
void flush_api_records(const Session& s);

} // namespace fp8scope::collector
