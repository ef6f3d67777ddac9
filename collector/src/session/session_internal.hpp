// The recording session's own state, shared by the files that make up the session (session.cpp: start, stop, flush;
// cupti_callbacks.cpp: what CUPTI calls back). Nothing outside them includes it: the rest of the collector goes
// through session.hpp.
#pragma once

#include "cupti/buffer_pool.hpp"
#include "cupti/cupti_api.hpp"
#include "cupti/cupti_attachment.hpp"
#include "cupti/cupti_settings.hpp"
#include "cupti/record_decoder.hpp"
#include "session/session.hpp"

#include "fp8scope/common/capture_plan.hpp"
#include "fp8scope/format/background_writer.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace fp8scope::collector {

struct Session {
    const CuptiApi* cupti = nullptr;
    pid_t owner_pid = 0;
    uint64_t start_cupti_ns = 0;
    std::unique_ptr<BufferPool> pool;
    std::unique_ptr<BackgroundWriter> writer;
    std::unique_ptr<RecordDecoder> decoder; // used on the writer thread only
    std::string path;
    std::string absolute_path; // path at creation, from the working directory then (the job may chdir)
    std::atomic<int64_t> dropped_by_cupti { 0 }; // cuptiActivityGetNumDroppedRecords
    std::atomic<int64_t> dropped_by_queue { 0 }; // buffers the writer could not take
    std::atomic<int64_t> dropped_at_detach { 0 }; // records CUPTI handed over while being detached
    int64_t pool_exhausted_written = 0; // writer thread only
    SessionServices services;
    CapturePlan capture_plan;
    CuptiSettings cupti_settings; // what is enabled in CUPTI (cupti_settings.hpp)
    // Whether CUPTI is attached, and detaching it between capture windows (cupti_attachment.hpp); made once CUPTI is
    // loaded, with the session as its host.
    std::unique_ptr<AttachmentHost> attachment_host;
    std::unique_ptr<CuptiAttachment> attachment;
    // Diagnostic for overhead measurements (FP8SCOPE_DISCARD_RECORDS=1): completed buffers are handed back to CUPTI
    // undecoded, so the writer's share of the cost can be told apart. The trace then holds no activity records.
    bool discard_records = false;
    // CUPTI records the whole process with the default kinds: its rows alone tell whether it did GPU work
    // (idle_trace.hpp). Otherwise the flusher looks for a CUDA context until it sees one (watch_for_gpu_work).
    bool whole_process_recorded = false;
};

// Never freed: CUPTI may call back until the process is gone, and a forked child must not run destructors
// that touch the parent's writer thread or file.
extern Session* g_session;
extern std::atomic<State> g_state;

// A CUPTI timestamp (ns): CUPTI's clock, or CLOCK_REALTIME, which it equals, when CUPTI may be detached.
uint64_t timestamp_now(const Session& s);
// The API records the callbacks hold (api_calls.hpp), to the writer.
void flush_api_records(const Session& s);

} // namespace fp8scope::collector
