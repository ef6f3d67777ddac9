#include "session.hpp"

#include "api_calls.hpp"
#include "api_filter.hpp"
#include "buffer_pool.hpp"
#include "capture.hpp"
#include "cuda_context.hpp"
#include "cupti_api.hpp"
#include "idle_trace.hpp"
#include "lifecycle.hpp"
#include "nvtx_paths.hpp"
#include "output_path.hpp"
#include "record_decoder.hpp"
#include "stats_engine.hpp"
#include "sync_calls.hpp"
#include "warn.hpp"

#include "fp8scope/format/background_writer.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <mutex>
#include <string>

namespace fp8scope::collector {
namespace {

struct Session {
    const CuptiApi* cupti = nullptr;
    CUpti_SubscriberHandle subscriber = nullptr;
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
    // What a capture window switches on and off (set_window_activities): every kind enabled at start but DEVICE and
    // CONTEXT (one record per device or context, needed whenever they appear), and the traced API calls.
    std::vector<CUpti_ActivityKind> window_kinds;
    std::vector<uint32_t> runtime_cbids, driver_cbids;
    bool api_all_kinds = false;
    // The traced API calls come from callbacks on their ids (api_calls.hpp) instead of the RUNTIME and DRIVER
    // activity kinds, which intercept every call (FP8SCOPE_API_SOURCE; needs the subscriber). Indexed by cbid.
    bool api_from_callbacks = false;
    std::vector<uint8_t> runtime_traced, driver_traced;
    // Detaching CUPTI between capture windows (see "Detaching between windows" below): on for step, periodic and
    // time windows when CUPTI has cuptiFinalize and its clock is CLOCK_REALTIME; then every timestamp of ours is
    // read from CLOCK_REALTIME, so that no CUPTI call is made while it is detached.
    bool detach_between_windows = false;
    // Diagnostic for overhead measurements (FP8SCOPE_DISCARD_RECORDS=1): completed buffers are handed back to CUPTI
    // undecoded, so the writer's share of the cost can be told apart. The trace then holds no activity records.
    bool discard_records = false;
    // Host-blocking syncs come from callbacks on those calls (sync_calls.hpp) instead of the SYNCHRONIZATION kind;
    // FP8SCOPE_SYNC_RECORDS=activity (diagnostic) or no subscriber gives the kind back.
    bool sync_from_callbacks = false;
    std::vector<CUpti_ActivityKind> start_only_kinds; // DEVICE, CONTEXT: enabled again when CUPTI is attached again
    // CUPTI records the whole process with the default kinds: its rows alone tell whether it did GPU work
    // (idle_trace.hpp). Otherwise the flusher looks for a CUDA context until it sees one (watch_for_gpu_work).
    bool whole_process_recorded = false;
};

// Never freed: CUPTI may call back until the process is gone, and a forked child must not run destructors
// that touch the parent's writer thread or file.
Session* g_session = nullptr;
std::atomic<State> g_state { State::Idle };
// Whether CUPTI is attached (docs/collector.md, "Capture windows"). Draining: a window has ended and the flusher
// waits for the writer to decode its records; buffers CUPTI completes from then on are counted, not posted. Armed:
// they are decoded; the next CUDA call's exit calls cuptiFinalize. Only Armed lets a callback finalize: a callback
// that fires while the writer still needs CUPTI to decode (cudaDeviceReset's, enabled for the whole session) must
// not. g_cupti_mutex orders cuptiFinalize against our other CUPTI calls from other threads (the flusher's flush,
// attaching again), which must never race it.
enum class Attachment : uint8_t { Attached, Draining, Armed, Detached };
std::atomic<Attachment> g_attachment { Attachment::Attached };

// Between a window's end and cuptiFinalize: a window that opens, or the end of recording, takes CUPTI back as it is.
bool detaching(Attachment a)
{
    return a == Attachment::Draining || a == Attachment::Armed;
}
std::mutex g_cupti_mutex;
std::atomic<int64_t> g_detach_due_ns { -1 }; // session time after which the flusher arms the detach; -1: none
std::atomic<bool> g_detach_failed { false }; // cuptiFinalize failed once: CUPTI stays attached
// The job instantiated, uploaded or launched a CUDA graph while CUPTI was attached: CUPTI then stays attached. On the
// H100 (2026-11-27) a cuptiFinalize after a window whose steps replayed CUDA graphs made the job's next launches
// fail (CUDA_ERROR_LAUNCH_FAILED) in a PyTorch CUDA-graph step and in JAX, whatever records were on; eager jobs were
// unharmed. So a graph call seen once rules out detaching for the rest of the session.
std::atomic<bool> g_graphs_seen { false };

constexpr CUpti_CallbackId kGraphCalls[] = { CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphUpload, CUPTI_DRIVER_TRACE_CBID_cuGraphUpload_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz };

bool is_graph_call(CUpti_CallbackId cbid)
{
    return std::ranges::find(kGraphCalls, cbid) != std::end(kGraphCalls);
}

// CUPTI stays attached for good: cuptiFinalize failed once, or the job uses CUDA graphs.
bool detach_ruled_out()
{
    return g_detach_failed.load() || g_graphs_seen.load();
}

std::atomic<uint64_t> g_attach_generation { 1 }; // counts attachments; a CUPTI attached again starts afresh
// How long after a window's end CUPTI stays attached, for the records of kernels still running then.
constexpr int64_t kDetachGraceNs = 300'000'000;
std::mutex g_start_mutex;
std::mutex g_stop_mutex;
// Signs of GPU work besides the decoded rows (idle_trace.hpp): the job wrote rows through the collector (markers,
// scalars, statistics), and what the looks for a CUDA context found (windowed recordings only).
std::atomic<bool> g_job_wrote_rows { false };
enum class ContextSeen : uint8_t { NotAsked, None, Seen };
std::atomic<ContextSeen> g_context_seen { ContextSeen::NotAsked };

bool env_flag(const char* name, bool fallback)
{
    const char* value = std::getenv(name);
    if (!value || !*value)
        return fallback;
    return value[0] == '1' || value[0] == 'y' || value[0] == 'Y' || value[0] == 't' || value[0] == 'T';
}

std::string env_text(const char* name, const char* fallback)
{
    const char* value = std::getenv(name);
    return value && *value ? value : fallback;
}

size_t env_size(const char* name, size_t fallback, size_t lo, size_t hi)
{
    const char* value = std::getenv(name);
    if (!value || !*value)
        return fallback;
    char* end = nullptr;
    const unsigned long long parsed = std::strtoull(value, &end, 10);
    if (end == value || *end != '\0' || parsed < lo || parsed > hi) {
        warn(std::string("ignoring ") + name + "=" + value + " (expected " + std::to_string(lo) + ".."
            + std::to_string(hi) + ")");
        return fallback;
    }
    return static_cast<size_t>(parsed);
}

std::string host_name()
{
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0)
        return "localhost";
    return name;
}

std::string command_line()
{
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!raw.empty() && raw.back() == '\0')
        raw.pop_back();
    for (char& c : raw)
        if (c == '\0')
            c = ' ';
    return raw;
}

// Calls `int fn(int*)` (cuDriverGetVersion, cudaRuntimeGetVersion) in an already loaded library whose file
// name contains `library`; 0 when there is none. Both calls only return a constant, so they are safe inside
// cuInit. The runtime loads the driver with RTLD_LOCAL, so RTLD_DEFAULT would not find it.
int loaded_library_version(const char* library, const char* function)
{
    struct Search {
        const char* library;
        std::string path;
    } search { library, {} };
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto* s = static_cast<Search*>(data);
            if (info->dlpi_name && std::strstr(info->dlpi_name, s->library)) {
                s->path = info->dlpi_name;
                return 1;
            }
            return 0;
        },
        &search);
    if (search.path.empty())
        return 0;
    void* handle = dlopen(search.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!handle)
        return 0;
    int version = 0;
    using VersionFn = int (*)(int*);
    auto fn = reinterpret_cast<VersionFn>(dlsym(handle, function));
    if (!fn || fn(&version) != 0)
        version = 0;
    dlclose(handle);
    return version;
}

bool exists(const std::string& path)
{
    struct stat st { };
    return ::lstat(path.c_str(), &st) == 0;
}

// The one warning line of a trace that cannot be written (disk full, I/O error, folder gone), whichever part of
// the collector meets it first: the rows lost are counted and recorded in FP8SCOPE_DROPPED at the end.
void warn_trace_write(const std::string& message)
{
    warn_once("trace-write", "cannot write the trace: " + message + " (records that cannot be written are lost; "
        "their count goes into FP8SCOPE_DROPPED as WRITER_ERROR)");
}

// Creates the trace under the first free name the pattern gives (output_path.hpp, create_trace_file).
Expected<std::unique_ptr<TraceDb>> create_trace(const SessionInfo& info, std::string& path)
{
    const char* pattern = std::getenv("FP8SCOPE_OUTPUT");
    const std::string_view chosen = pattern && *pattern ? std::string_view(pattern) : kDefaultOutputPattern;
    const OutputNameInputs inputs { info.host, info.pid, rank_from_environment(), local_rank_from_environment() };
    TraceDbOptions options;
    options.on_write_error = [](const Error& error) { warn_trace_write(error.message); };
    return create_trace_file(chosen, inputs, info, path, options);
}

std::string absolute(const std::string& path)
{
    if (!path.empty() && path.front() == '/')
        return path;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return path;
    return std::string(cwd) + "/" + path;
}

// FP8SCOPE_MANIFEST (set by `fp8scope record`): one line per process that initialized CUDA, either the absolute
// path of its trace, or "!<pid>\t<reason>" when it could not be traced (it has printed its warning already).
void append_line_to_manifest(const std::string& line)
{
    const char* manifest = std::getenv("FP8SCOPE_MANIFEST");
    if (!manifest || !*manifest)
        return;
    const int fd = ::open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size()); // one write: atomic append
    ::close(fd);
}

void append_to_manifest(const std::string& path)
{
    append_line_to_manifest(absolute(path) + "\n");
}

void append_failure_to_manifest(std::string reason)
{
    std::ranges::replace(reason, '\n', ' ');
    std::string line(1, '!'); // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "!" + string
    line += std::to_string(getpid());
    line += '\t';
    line += reason;
    line += '\n';
    append_line_to_manifest(line);
}

// Prints the one warning of a process that is left untraced, and tells `fp8scope record` about it.
void not_traced(const std::string& reason)
{
    warn(reason + " (this process is not traced)");
    append_failure_to_manifest(reason);
}

// ---- CUPTI callbacks. They run on CUPTI's threads or inside application CUDA calls: hand off, never block.

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records)
{
    *max_records = 0;
    Session* s = g_session;
    uint8_t* got = s ? s->pool->acquire() : nullptr;
    *buffer = got;
    *size = got ? s->pool->buffer_bytes() : 0;
}

int64_t count_records(const Session& s, uint8_t* buffer, size_t valid_bytes)
{
    int64_t n = 0;
    CUpti_Activity* record = nullptr;
    while (s.cupti->activityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
        ++n;
    return n;
}

int64_t realtime_ns()
{
    timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A CUPTI timestamp (ns): CUPTI's clock, or CLOCK_REALTIME, which it equals, when CUPTI may be detached.
uint64_t timestamp_now(const Session& s)
{
    if (s.detach_between_windows)
        return static_cast<uint64_t>(realtime_ns());
    uint64_t t = 0;
    s.cupti->getTimestamp(&t);
    return t;
}

// The API records the callbacks hold (api_calls.hpp), to the writer.
void flush_api_records(const Session& s)
{
    if (s.api_from_callbacks)
        flush_api_calls();
}

void write_dropped(Session& s, TraceDb& db)
{
    const int64_t now_ns = static_cast<int64_t>(timestamp_now(s) - s.start_cupti_ns);
    auto add = [&](schema::DropSource source, int64_t count) {
        if (count > 0) [[maybe_unused]]
            auto ignored = db.add_dropped(DroppedRow { now_ns, source, count, std::nullopt });
    };
    add(schema::DropSource::CuptiNoBuffer, s.dropped_by_cupti.exchange(0));
    add(schema::DropSource::WriterQueueFull, s.dropped_by_queue.exchange(0));
    add(schema::DropSource::CaptureDetach, s.dropped_at_detach.exchange(0));
    const int64_t exhausted = s.pool->exhausted();
    add(schema::DropSource::BufferPoolExhausted, exhausted - s.pool_exhausted_written);
    s.pool_exhausted_written = exhausted;
}

void drain(Session& s, uint8_t* buffer, size_t valid_bytes, TraceDb& db)
{
    CUpti_Activity* record = nullptr;
    while (s.cupti->activityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
        s.decoder->decode(*record, db);
    s.pool->release(buffer);
    write_dropped(s, db);
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes)
{
    Session* s = g_session;
    if (!s || !buffer || getpid() != s->owner_pid)
        return; // a forked child never touches the parent's writer
    size_t dropped = 0;
    if (s->cupti->activityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0)
        s->dropped_by_cupti.fetch_add(static_cast<int64_t>(dropped));
    if (valid_bytes == 0 || s->discard_records) {
        s->pool->release(buffer);
        return;
    }
    if (g_attachment.load(std::memory_order_acquire) != Attachment::Attached) {
        // Handed over while CUPTI is being detached: it cannot be decoded on the writer thread once CUPTI is gone,
        // so it is counted here, while CUPTI still is, and never silently lost.
        s->dropped_at_detach.fetch_add(count_records(*s, buffer, valid_bytes));
        s->pool->release(buffer);
        return;
    }
    const bool posted = s->writer->post([s, buffer, valid_bytes](TraceDb& db) { drain(*s, buffer, valid_bytes, db); });
    if (!posted) {
        s->dropped_by_queue.fetch_add(count_records(*s, buffer, valid_bytes));
        s->pool->release(buffer);
    }
}

void detach_at_api_exit();

// Per thread: how many synchronize calls are open, in which attachment of CUPTI (a call open when CUPTI was
// detached never sees its exit). A runtime synchronize calls the driver's, and only the outermost gives a row.
struct SyncNesting {
    uint64_t generation = 0;
    int depth = 0;
};
thread_local SyncNesting t_sync_nesting;

// A host-blocking synchronize call's entry or exit (sync_calls.hpp): its row is posted at the exit, inside a
// capture window only. The entry's timestamp travels to the exit in the callback's correlationData.
void on_sync_call(const SyncCallback& call, const CUpti_CallbackData& info)
{
    Session* s = g_session;
    if (!s || g_state.load() != State::Running || getpid() != s->owner_pid || !info.correlationData)
        return;
    SyncNesting& nesting = t_sync_nesting;
    if (const uint64_t generation = g_attach_generation.load(std::memory_order_relaxed); nesting.generation != generation)
        nesting = { generation, 0 };
    if (info.callbackSite == CUPTI_API_ENTER) {
        *info.correlationData = nesting.depth++ == 0 ? timestamp_now(*s) : 0;
        return;
    }
    nesting.depth = std::max(0, nesting.depth - 1);
    const uint64_t start = *info.correlationData;
    if (start == 0 || !capture_recording())
        return;
    const uint64_t end = timestamp_now(*s);
    std::optional<uint32_t> stream_id;
    if (call.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE && s->cupti->getStreamIdEx) {
        uint32_t id = 0;
        if (s->cupti->getStreamIdEx(info.context, synced_stream(call, info), call.per_thread_stream ? 1 : 0, &id)
            == CUPTI_SUCCESS)
            stream_id = id;
    }
    const CUpti_ActivitySynchronization2 record = sync_record(call, info, start, end, stream_id);
    if (!s->writer->post([s, record](TraceDb& db) {
            s->decoder->decode_sync(record, db);
        }))
        s->dropped_by_queue.fetch_add(1);
}

// A traced API call's entry or exit, when API records come from callbacks (api_calls.hpp).
void on_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& info)
{
    Session* s = g_session;
    if (!s || !s->api_from_callbacks)
        return;
    const auto& traced = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? s->runtime_traced : s->driver_traced;
    if (cbid >= traced.size() || !traced[cbid] || g_state.load() != State::Running || getpid() != s->owner_pid)
        return;
    const uint64_t generation = g_attach_generation.load(std::memory_order_relaxed);
    if (info.callbackSite == CUPTI_API_ENTER)
        api_call_enter(domain, cbid, timestamp_now(*s), generation, capture_recording());
    else
        api_call_exit(domain, cbid, info, timestamp_now(*s), generation, capture_recording(),
            static_cast<uint32_t>(s->owner_pid));
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data)
{
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API, driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    if (runtime || driver) {
        if (const SyncCallback* call = find_sync_callback(domain, cbid))
            on_sync_call(*call, *info);
        on_api_call(domain, cbid, *info);
        if (driver && is_graph_call(cbid) && !g_graphs_seen.exchange(true))
            inform("capture: the job uses CUDA graphs: CUPTI stays attached between windows from now on "
                   "(detaching it breaks their launches)");
    }
    if (g_attachment.load(std::memory_order_acquire) == Attachment::Armed) {
        if ((runtime || driver) && info->callbackSite == CUPTI_API_EXIT)
            detach_at_api_exit();
        return;
    }
    // --capture-range cudaProfilerApi, as CUPTI's cupti_trace_injection sample does it: a window opens at the exit
    // of cuProfilerStart and closes at the entry of cuProfilerStop (cudaProfilerStart/Stop call them; both are
    // enabled, and a second start or stop in a row changes nothing).
    if ((runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000)
        || (driver && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)) {
        if (info->callbackSite == CUPTI_API_EXIT)
            capture_on_profiler(true);
        return;
    }
    if ((runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)
        || (driver && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
        if (info->callbackSite == CUPTI_API_ENTER)
            capture_on_profiler(false);
        return;
    }
    if (!runtime || cbid != CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020)
        return;
    // The context is about to go, with its pending records: flush them while it is still there.
    if (info->callbackSite == CUPTI_API_ENTER)
        flush_session();
}

// ---- set-up

// cuptiSubscribe(_v2) with on_callback; `holder` receives the name of a tool that already holds CUPTI (v2 only).
CUptiResult subscribe_as_fp8scope(Session& s, char (&holder)[256])
{
    if (!s.cupti->subscribeV2)
        return s.cupti->subscribe(&s.subscriber, on_callback, nullptr);
    CUpti_SubscriberParams params {};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "fp8scope";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = sizeof holder;
    return s.cupti->subscribeV2(&s.subscriber, on_callback, nullptr, &params);
}

bool subscribe(Session& s)
{
    // Diagnostic for overhead measurements: FP8SCOPE_SUBSCRIBE=0 traces without a callback subscriber (then
    // nothing detects another tool holding CUPTI, and cudaDeviceReset does not flush).
    if (!env_flag("FP8SCOPE_SUBSCRIBE", true))
        return true;
    char holder[256] = {};
    const CUptiResult result = subscribe_as_fp8scope(s, holder);
    if (result == CUPTI_SUCCESS)
        return true;
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        const std::string who = holder[0] ? std::string(holder) : std::string("another profiler");
        // CUPTI admits one profiling tool per process (nsys, ncu, torch.profiler, fp8scope).
        not_traced("CUPTI is already in use by " + who + ", and CUPTI admits one profiling tool per process");
    } else {
        not_traced(std::string("cuptiSubscribe failed: ") + s.cupti->result_name(result));
    }
    return false;
}

// The traced API calls' callbacks, when their records come from callbacks.
void enable_api_callbacks(Session& s)
{
    if (!s.subscriber || !s.api_from_callbacks)
        return;
    for (uint32_t cbid : s.runtime_cbids)
        s.cupti->enableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
    for (uint32_t cbid : s.driver_cbids)
        s.cupti->enableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
}

// Enables the traced API calls and keeps their callback ids, which capture windows switch off and on again.
void enable_api_filter(Session& s)
{
    const char* name = nullptr;
    for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid)
        if (s.cupti->getCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name
            && is_traced_runtime_api(name))
            s.runtime_cbids.push_back(cbid);
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid)
        if (s.cupti->getCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS && name
            && is_traced_driver_api(name))
            s.driver_cbids.push_back(cbid);
    if (s.api_from_callbacks) {
        s.runtime_traced.assign(CUPTI_RUNTIME_TRACE_CBID_SIZE, 0);
        s.driver_traced.assign(CUPTI_DRIVER_TRACE_CBID_SIZE, 0);
        for (uint32_t cbid : s.runtime_cbids)
            s.runtime_traced[cbid] = 1;
        for (uint32_t cbid : s.driver_cbids)
            s.driver_traced[cbid] = 1;
        enable_api_callbacks(s);
        return;
    }
    for (uint32_t cbid : s.runtime_cbids)
        s.cupti->activityEnableRuntimeApi(cbid, 1);
    for (uint32_t cbid : s.driver_cbids)
        s.cupti->activityEnableDriverApi(cbid, 1);
}

// The callbacks the whole session keeps (cuProfilerStart/Stop's are start_locked's): again after each time a detach
// was armed and called off, since set_domains(0) switched every callback of both domains off.
void enable_session_callbacks(Session& s)
{
    if (!s.subscriber)
        return;
    // cudaDeviceReset takes the context's pending records with it: its callback flushes them first.
    if (env_flag("FP8SCOPE_RESET_CALLBACK", true))
        s.cupti->enableCallback(
            1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    if (s.sync_from_callbacks)
        for (const SyncCallback& call : sync_callbacks())
            s.cupti->enableCallback(1, s.subscriber, call.domain, call.cbid);
    // A CUDA graph rules out detaching (g_graphs_seen): watched whenever CUPTI may be detached.
    if (s.detach_between_windows)
        for (CUpti_CallbackId cbid : kGraphCalls)
            s.cupti->enableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    enable_api_callbacks(s);
}

// The session's CUPTI settings besides its activity kinds, at the start and each time CUPTI is attached again (a
// CUPTI attached again has forgotten them).
void apply_cupti_settings(Session& s)
{
    // OS thread ids (gettid), as nsys stores them, instead of CUPTI's default pthread_self()-derived ids.
    if (env_text("FP8SCOPE_THREAD_IDS", "system") == "system")
        s.cupti->setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (env_flag("FP8SCOPE_LATENCY_TIMESTAMPS", false))
        s.cupti->activityEnableLatencyTimestamps(1);
    // Query records (cudaStreamQuery/cudaEventQuery on unfinished work) are not host-blocking syncs.
    s.cupti->activityEnableAllSyncRecords(0);
    // Buffers reach the writer at least every 500 ms, so that a killed job loses at most about a second.
    s.cupti->activityFlushPeriod(500);
    enable_session_callbacks(s);
}

bool enable_activities(Session& s)
{
    apply_cupti_settings(s);
    const CUptiResult kernels = s.cupti->activityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (kernels != CUPTI_SUCCESS) {
        not_traced(std::string("cannot enable CUPTI kernel tracing: ") + s.cupti->result_name(kernels));
        return false;
    }
    s.window_kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    const bool nvtx = env_flag("FP8SCOPE_NVTX", true);
    // Diagnostics for overhead measurements (docs/benchmarks.md): FP8SCOPE_ACTIVITIES=kernels records
    // kernels only, FP8SCOPE_API=none records no API calls.
    if (env_text("FP8SCOPE_ACTIVITIES", "all") == "kernels")
        return true;
    for (CUpti_ActivityKind kind : { CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
             CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
             CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_MARKER,
             CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION /* marks the collector's own calls (own_work.hpp) */ }) {
        if ((kind == CUPTI_ACTIVITY_KIND_MARKER && !nvtx)
            || (kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && s.sync_from_callbacks))
            continue;
        // Diagnostic: FP8SCOPE_SKIP_KINDS=5,38 leaves those CUpti_ActivityKind numbers out.
        std::string skip(1, ','); // built piecewise: GCC 12 warns falsely (-Wrestrict) on "," + string
        skip += env_text("FP8SCOPE_SKIP_KINDS", "");
        skip += ',';
        std::string key(1, ',');
        key += std::to_string(static_cast<int>(kind));
        key += ',';
        if (skip.find(key) != std::string::npos)
            continue;
        const CUptiResult result = s.cupti->activityEnable(kind);
        if (result != CUPTI_SUCCESS)
            warn("cannot enable CUPTI activity kind " + std::to_string(static_cast<int>(kind)) + ": "
                + s.cupti->result_name(result) + " (those records are missing from the trace)");
        else if (kind != CUPTI_ACTIVITY_KIND_DEVICE && kind != CUPTI_ACTIVITY_KIND_CONTEXT)
            s.window_kinds.push_back(kind);
        else
            s.start_only_kinds.push_back(kind);
    }
    const std::string api = env_text("FP8SCOPE_API", "filtered");
    if (api == "all") { // diagnostic: every runtime and driver call, as whole activity kinds
        s.cupti->activityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
        s.cupti->activityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
        s.api_all_kinds = true;
    } else if (api != "none") {
        enable_api_filter(s);
    }
    return true;
}

// Whether CUPTI may be detached between this run's capture windows (docs/collector.md, "Capture windows").
bool detach_possible(const Session& s)
{
    const CaptureMode mode = s.capture_plan.mode;
    if (mode == CaptureMode::Full || mode == CaptureMode::ProfilerApi || s.capture_plan.stats_outside_windows)
        return false; // cudaProfilerStart is seen through CUPTI; statistics outside windows launch through it
    if (!env_flag("FP8SCOPE_CAPTURE_DETACH", true) || !s.subscriber || !s.cupti->finalize || !s.cupti->enableDomain)
        return false;
    // While detached our timestamps come from CLOCK_REALTIME, which must be CUPTI's clock (its default on Linux).
    uint64_t cupti_ns = 0;
    if (s.cupti->getTimestamp(&cupti_ns) != CUPTI_SUCCESS)
        return false;
    const int64_t gap = realtime_ns() - static_cast<int64_t>(cupti_ns);
    return gap > -1'000'000 && gap < 1'000'000;
}

bool start_locked()
{
    auto session = std::make_unique<Session>();
    Session& s = *session;
    std::string error;
    s.cupti = load_cupti(error);
    if (!s.cupti) {
        not_traced(error);
        return false;
    }
    if (!subscribe(s))
        return false;

    s.owner_pid = getpid();
    s.cupti->getTimestamp(&s.start_cupti_ns);
    SessionInfo info;
    // CUPTI's clock is CLOCK_REALTIME by default (shared/reference/nsys_cupti.md §4.4): the session start in
    // CUPTI time is also its UTC epoch time.
    info.utc_epoch_ns = static_cast<int64_t>(s.start_cupti_ns);
    info.producer = "fp8scope " FP8SCOPE_VERSION " (collector)";
    info.command_line = command_line();
    info.host = host_name();
    info.pid = s.owner_pid;
    info.rank = rank_from_environment().value_or(-1);
    info.world_size = world_size_from_environment().value_or(-1);
    uint32_t cupti_version = 0;
    if (s.cupti->getVersion(&cupti_version) == CUPTI_SUCCESS)
        info.cupti_version = static_cast<int32_t>(cupti_version);
    info.cuda_driver_version = loaded_library_version("libcuda.so", "cuDriverGetVersion");
    info.cuda_runtime_version = loaded_library_version("libcudart.so", "cudaRuntimeGetVersion");
    s.capture_plan = capture_plan_from_environment();
    s.detach_between_windows = detach_possible(s);
    s.discard_records = env_flag("FP8SCOPE_DISCARD_RECORDS", false);
    s.sync_from_callbacks = s.subscriber && env_text("FP8SCOPE_SYNC_RECORDS", "callbacks") != "activity";
    s.api_from_callbacks = s.subscriber && env_text("FP8SCOPE_API_SOURCE", "callbacks") != "activity";
    // The diagnostics that leave records out (FP8SCOPE_ACTIVITIES, FP8SCOPE_API, FP8SCOPE_SKIP_KINDS,
    // FP8SCOPE_DISCARD_RECORDS) make the rows no proof of idleness, as windows do.
    s.whole_process_recorded = s.capture_plan.mode == CaptureMode::Full && !s.discard_records
        && env_text("FP8SCOPE_ACTIVITIES", "all") != "kernels" && env_text("FP8SCOPE_API", "filtered") != "none"
        && env_text("FP8SCOPE_SKIP_KINDS", "").empty();
    info.capture_mode = std::string(s.capture_plan.mode_name());
    info.capture_options = s.capture_plan.options;

    auto db = create_trace(info, s.path);
    if (!db) {
        not_traced("cannot create trace '" + s.path + "': " + db.error().message);
        s.cupti->unsubscribe(s.subscriber);
        return false;
    }
    auto writer = BackgroundWriter::start(std::move(*db));
    if (!writer) {
        not_traced("cannot start the trace writer: " + writer.error().message);
        s.cupti->unsubscribe(s.subscriber);
        return false;
    }
    s.writer = std::move(*writer);
    s.absolute_path = absolute(s.path);
    const CuptiApi* cupti = s.cupti;
    s.decoder = std::make_unique<RecordDecoder>(
        s.start_cupti_ns, s.owner_pid,
        [cupti](CUpti_ActivityKind kind, uint32_t cbid) {
            const char* name = nullptr;
            const auto domain
                = kind == CUPTI_ACTIVITY_KIND_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
            if (cupti->getCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
                return std::string();
            return std::string(name);
        },
        [](const std::string& line) { warn_once("trace-write", line); });
    s.decoder->set_api_from_callbacks(s.api_from_callbacks);
    if (s.api_from_callbacks) {
        Session* session_ptr = &s;
        set_api_call_sink([session_ptr](ApiCallBatch&& calls) {
            auto batch = std::make_shared<ApiCallBatch>(std::move(calls));
            const bool posted = session_ptr->writer->post([session_ptr, batch](TraceDb& trace) {
                for (const ApiCall& call : *batch)
                    session_ptr->decoder->decode_api_call(call, trace);
            });
            if (!posted)
                session_ptr->dropped_by_queue.fetch_add(1);
            return posted;
        });
    }
    const size_t buffer_mb = env_size("FP8SCOPE_BUFFER_MB", 4, 1, 256);
    const size_t max_buffers = env_size("FP8SCOPE_MAX_BUFFERS", 64, 2, BufferPool::kMaxBuffers);
    s.pool = std::make_unique<BufferPool>(buffer_mb << 20, std::min<size_t>(8, max_buffers), max_buffers);

    s.services = { s.cupti, s.start_cupti_ns };
    g_session = session.release();
    const CUptiResult registered = s.cupti->activityRegisterCallbacks(buffer_requested, buffer_completed);
    if (registered != CUPTI_SUCCESS || !enable_activities(s)) {
        if (registered != CUPTI_SUCCESS)
            not_traced(std::string("cannot register CUPTI buffers: ") + s.cupti->result_name(registered));
        s.cupti->unsubscribe(s.subscriber);
        [[maybe_unused]] auto finished = s.writer->finish(FinishInfo { "CUPTI set-up failed", 0 });
        return false;
    }
    if (s.capture_plan.mode == CaptureMode::ProfilerApi) {
        // Only these four callbacks: every other API call stays free of them.
        const bool enabled = s.subscriber
            && s.cupti->enableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                   CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) == CUPTI_SUCCESS
            && s.cupti->enableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                   CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) == CUPTI_SUCCESS
            && s.cupti->enableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)
                == CUPTI_SUCCESS
            && s.cupti->enableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)
                == CUPTI_SUCCESS;
        if (!enabled)
            warn("cannot follow cudaProfilerStart/Stop (no CUPTI callbacks): --capture-range cudaProfilerApi "
                 "captures nothing");
    }
    append_to_manifest(s.path);
    inform("recording to " + s.path);
    return true;
}

} // namespace

bool start_session()
{
    std::lock_guard lock(g_start_mutex);
    if (g_state.load() != State::Idle)
        return g_state.load() == State::Running;
    g_state.store(State::Disabled);
    if (!start_locked())
        return false;
    g_state.store(State::Running);
    install_lifecycle_hooks();
    Session& s = *g_session;
    const uint64_t now = timestamp_now(s);
    capture_begin(s.capture_plan, static_cast<int64_t>(now - s.start_cupti_ns));
    return true;
}

void flush_session()
{
    Session* s = g_session;
    if (!s || g_state.load() != State::Running || getpid() != s->owner_pid)
        return;
    flush_api_records(*s);
    {
        std::lock_guard lock(g_cupti_mutex);
        if (g_attachment.load() == Attachment::Attached)
            s->cupti->activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    s->writer->post([](TraceDb& db) { [[maybe_unused]] auto committed = db.commit(); });
}

namespace {

// ---- Detaching between windows. CUPTI, once it has traced a process, still costs every launch something with
// every activity kind off (docs/benchmarks.md, "Capture windows on the H100"); detached, it costs nothing. As
// cupti.h asks, cuptiFinalize is called at the exit of a CUDA call (Kineto does the same), once the window's records
// are written; the next window subscribes again (CUPTI initializes itself again at its first call).

void set_domains(Session& s, uint32_t on)
{
    if (!s.subscriber)
        return;
    s.cupti->enableDomain(on, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    s.cupti->enableDomain(on, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
}

// Back to Attached from Draining or Armed (a window opened, recording ends, or cuptiFinalize failed): the domains
// set_domains(1) enabled wholesale go off, which takes the session's own callbacks with them.
void stay_attached(Session& s)
{
    set_domains(s, 0);
    enable_session_callbacks(s);
    g_attachment.store(Attachment::Attached, std::memory_order_release);
}

void arm_detach_when_due(Session& s)
{
    const int64_t due = g_detach_due_ns.load();
    if (due < 0 || static_cast<int64_t>(timestamp_now(s) - s.start_cupti_ns) < due || capture_recording())
        return;
    if (g_graphs_seen.load()) {
        g_detach_due_ns.store(-1);
        return;
    }
    {
        std::lock_guard lock(g_cupti_mutex);
        if (g_detach_due_ns.load() != due || g_attachment.load() != Attachment::Attached)
            return;
        // From now on a buffer CUPTI completes is counted where it arrives instead of being posted (buffer_completed).
        g_attachment.store(Attachment::Draining, std::memory_order_release);
    }
    flush_api_records(s);
    // The buffers already posted are decoded with CUPTI's help: wait until the writer has done so.
    auto drained = std::make_shared<std::promise<void>>();
    std::future<void> done = drained->get_future();
    const bool waited = s.writer->post([drained](TraceDb&) { drained->set_value(); })
        && done.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
    std::lock_guard lock(g_cupti_mutex);
    if (g_attachment.load() != Attachment::Draining)
        return; // a window opened meanwhile
    if (!waited || g_graphs_seen.load()) {
        g_attachment.store(Attachment::Attached, std::memory_order_release); // the writer is behind: next tick
        return;
    }
    g_detach_due_ns.store(-1);
    // The next runtime or driver call's exit detaches (on_callback).
    g_attachment.store(Attachment::Armed, std::memory_order_release);
    set_domains(s, 1);
    inform("capture: detaching CUPTI until the next window");
}

void detach_at_api_exit()
{
    Session* s = g_session;
    if (!s || getpid() != s->owner_pid)
        return;
    std::lock_guard lock(g_cupti_mutex);
    if (g_attachment.load() != Attachment::Armed)
        return;
    if (g_graphs_seen.load()) { // a graph call came while the detach was armed
        stay_attached(*s);
        return;
    }
    const auto started = std::chrono::steady_clock::now();
    set_nvtx_forwarding(false); // CUPTI's NVTX implementation would attach it again
    const CUptiResult result = s->cupti->finalize();
    if (result != CUPTI_SUCCESS) {
        set_nvtx_forwarding(true);
        stay_attached(*s);
        g_detach_failed.store(true);
        warn_once("capture-detach", std::string("cannot detach CUPTI between capture windows: ")
                + s->cupti->result_name(result) + " (it stays attached; the job runs slower outside windows)");
        return;
    }
    s->subscriber = nullptr; // gone with CUPTI
    g_attachment.store(Attachment::Detached, std::memory_order_release);
    inform("capture: CUPTI detached in "
        + std::to_string(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count())
        + " us");
}

// CUPTI as start_locked left it, minus the window's kinds and API calls, which set_window_activities switches.
bool attach_again(Session& s)
{
    // CUPTI starts its correlation ids over. Every buffer of the CUPTI before was decoded before it was detached
    // (arm_detach_when_due), and the writer's queue keeps its order, so the records from here on are shifted past
    // them (RecordDecoder::start_correlation_generation).
    if (!s.writer->post([&s](TraceDb&) { s.decoder->start_correlation_generation(); })) {
        warn_once("capture-attach-queue", "cannot attach CUPTI again for a capture window: the writer's queue is full "
                                          "(this window records nothing)");
        return false;
    }
    g_attach_generation.fetch_add(1, std::memory_order_relaxed);
    char holder[256] = {};
    const CUptiResult result = subscribe_as_fp8scope(s, holder);
    if (result != CUPTI_SUCCESS) {
        s.subscriber = nullptr;
        warn_once("capture-attach", std::string("cannot attach CUPTI again for a capture window: ")
                + s.cupti->result_name(result) + " (windows from now on record nothing)");
        return false;
    }
    s.cupti->activityRegisterCallbacks(buffer_requested, buffer_completed);
    set_nvtx_forwarding(true);
    apply_cupti_settings(s);
    for (CUpti_ActivityKind kind : s.start_only_kinds)
        s.cupti->activityEnable(kind);
    return true;
}

} // namespace

void flush_session_periodic()
{
    Session* s = g_session;
    if (!s || g_state.load() != State::Running || getpid() != s->owner_pid)
        return;
    {
        std::lock_guard lock(g_cupti_mutex);
        if (g_attachment.load(std::memory_order_acquire) != Attachment::Attached)
            return; // detached between capture windows: nothing to flush, and no CUPTI call may be made
        // Flag 0: only records that are complete, without waiting for the device (cupti_activity.h).
        s->cupti->activityFlushAll(0);
    }
    flush_api_records(*s);
    s->writer->post([](TraceDb& db) { harvest_tensor_stats(db, false); });
    arm_detach_when_due(*s);
}

namespace {

// The activity kinds a window switches (Session::window_kinds).
// The kernels' kind is first in the list: it goes on first and off last, so that the API calls' flag (switched
// around this call) is never on without it for longer than one enable or disable.
void switch_window_kinds(Session* s, bool on)
{
    const auto switch_kind = [&](CUpti_ActivityKind kind) {
        const CUptiResult result = on ? s->cupti->activityEnable(kind) : s->cupti->activityDisable(kind);
        if (result != CUPTI_SUCCESS)
            warn_once(on ? "capture-enable" : "capture-disable",
                std::string("cannot switch CUPTI activity kind ") + std::to_string(static_cast<int>(kind))
                    + (on ? " on" : " off") + " for a capture window: " + s->cupti->result_name(result));
    };
    if (on)
        std::for_each(s->window_kinds.begin(), s->window_kinds.end(), switch_kind);
    else
        std::for_each(s->window_kinds.rbegin(), s->window_kinds.rend(), switch_kind);
}

// The traced API calls a window switches.
void switch_window_api(Session* s, bool on)
{
    if (s->api_all_kinds) {
        for (CUpti_ActivityKind kind : { CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER })
            on ? s->cupti->activityEnable(kind) : s->cupti->activityDisable(kind);
        return;
    }
    if (s->runtime_cbids.empty() && s->driver_cbids.empty())
        return; // FP8SCOPE_API=none
    if (s->api_from_callbacks)
        return; // the callbacks keep a call only inside a window (on_api_call)
    // Switching the traced calls' ids off and on again one by one leaves CUPTI 13.0 recording no API call at all
    // after the first window opens (H100, 2026-11-24: 0 runtime rows in every windowed trace). So a window opens the
    // way cupti_activity.h documents for "all but a few": the whole RUNTIME and DRIVER kinds on, then every id the
    // analysis does not use off; it closes with both kinds off, and the traced ids off too, for the ids switched on
    // one by one at start.
    const auto switch_domain = [&](CUpti_ActivityKind kind, const std::vector<uint32_t>& traced, uint32_t id_count,
                                   CUptiResult (*enable_id)(CUpti_CallbackId, uint8_t)) {
        if (on) {
            s->cupti->activityEnable(kind);
            std::vector<bool> keep(id_count, false);
            for (uint32_t cbid : traced)
                if (cbid < id_count)
                    keep[cbid] = true;
            for (uint32_t cbid = 1; cbid < id_count; ++cbid)
                enable_id(cbid, keep[cbid] ? 1 : 0);
        } else {
            for (uint32_t cbid : traced)
                enable_id(cbid, 0);
            s->cupti->activityDisable(kind);
        }
    };
    switch_domain(CUPTI_ACTIVITY_KIND_RUNTIME, s->runtime_cbids, CUPTI_RUNTIME_TRACE_CBID_SIZE,
        s->cupti->activityEnableRuntimeApi);
    switch_domain(CUPTI_ACTIVITY_KIND_DRIVER, s->driver_cbids, CUPTI_DRIVER_TRACE_CBID_SIZE,
        s->cupti->activityEnableDriverApi);
}

} // namespace

void set_window_activities(bool on, std::atomic<bool>& recording)
{
    Session* s = g_session;
    if (!s || getpid() != s->owner_pid) {
        recording.store(on);
        return;
    }
    // API calls on before the kernels and off right after them: a launch racing the switch (a time window is
    // switched by the flusher thread) then leaves at most a call without its kernel, never a kernel without its
    // launch (H100, 2026-11-24: 1 of 37,388 kernels in a time window had no launch call when the kinds came first;
    // 2026-11-27: 5 launch calls without their kernel at one edge while the flag waited for every other kind and
    // the API flush to be switched too).
    std::lock_guard lock(g_cupti_mutex);
    if (on) {
        recording.store(true);
        g_detach_due_ns.store(-1);
        if (detaching(g_attachment.load())) {
            stay_attached(*s);
        } else if (g_attachment.load() == Attachment::Detached) {
            const auto started = std::chrono::steady_clock::now();
            if (!attach_again(*s))
                return;
            g_attachment.store(Attachment::Attached, std::memory_order_release);
            inform("capture: CUPTI attached again in "
                + std::to_string(
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count())
                + " ms");
        }
        switch_window_api(s, true);
        switch_window_kinds(s, true);
    } else {
        switch_window_kinds(s, false);
        recording.store(false);
        switch_window_api(s, false);
        flush_api_records(*s);
        // CUPTI is detached once the window's records are in (arm_detach_when_due): kernels still running now
        // were launched inside it, and their records come with the next flushes.
        if (s->detach_between_windows && !detach_ruled_out()) {
            uint64_t now = timestamp_now(*s);
            g_detach_due_ns.store(static_cast<int64_t>(now - s->start_cupti_ns) + kDetachGraceNs);
        }
    }
}

void flush_completed_records()
{
    Session* s = g_session;
    if (!s || g_state.load() != State::Running || getpid() != s->owner_pid)
        return;
    std::lock_guard lock(g_cupti_mutex);
    if (g_attachment.load() == Attachment::Attached)
        s->cupti->activityFlushAll(0); // flag 0: completed records only, never waiting for the device
}

void detach_soon()
{
    const Session* s = g_session;
    if (!s || getpid() != s->owner_pid)
        return;
    const int64_t now = session_now_ns();
    int64_t due = g_detach_due_ns.load();
    if (now < 0 || due < 0 || due <= now)
        return;
    while (due > now && !g_detach_due_ns.compare_exchange_weak(due, now)) {
    }
    if (due >= 0)
        wake_flusher();
}

std::optional<int64_t> detach_due_ns()
{
    const int64_t due = g_detach_due_ns.load();
    return due >= 0 ? std::optional(due) : std::nullopt;
}

bool cupti_attached()
{
    return g_attachment.load(std::memory_order_acquire) == Attachment::Attached;
}

int64_t session_now_ns()
{
    const Session* s = g_session;
    if (!running_session_services())
        return -1;
    return static_cast<int64_t>(timestamp_now(*s) - s->start_cupti_ns);
}

bool post_capture_window(const CaptureWindowRow& row)
{
    Session* s = g_session;
    const State state = g_state.load();
    if (!s || getpid() != s->owner_pid || (state != State::Running && state != State::Stopping))
        return false;
    return s->writer->post([row](TraceDb& db) { [[maybe_unused]] auto written = db.set_capture_window(row); });
}

const SessionServices* running_session_services()
{
    Session* s = g_session;
    if (!s || g_state.load(std::memory_order_acquire) != State::Running || getpid() != s->owner_pid)
        return nullptr;
    return &s->services;
}

bool post_to_writer(std::function<void(TraceDb&)> task)
{
    Session* s = g_session;
    if (!running_session_services())
        return false;
    g_job_wrote_rows.store(true, std::memory_order_relaxed);
    return s->writer->post(std::move(task));
}

bool post_note_to_writer(std::function<void(TraceDb&)> task)
{
    Session* s = g_session;
    if (!running_session_services())
        return false;
    return s->writer->post(std::move(task));
}

void watch_for_gpu_work()
{
    const Session* s = g_session;
    if (!s || getpid() != s->owner_pid || s->whole_process_recorded || g_job_wrote_rows.load()
        || g_context_seen.load() == ContextSeen::Seen)
        return;
    // Armed: the domains are on wholesale, and the driver calls below would be the API exits that detach CUPTI, on
    // this thread. Draining only lasts inside the flusher's arm_detach_when_due. Only the flusher arms, and it is the
    // thread that looks, so the state cannot become Armed during the look.
    const Attachment attachment = g_attachment.load(std::memory_order_acquire);
    if (attachment == Attachment::Draining || attachment == Attachment::Armed)
        return;
    const std::optional<bool> active = cuda_context_active();
    if (!active)
        return;
    ContextSeen expected = ContextSeen::NotAsked;
    if (*active)
        g_context_seen.store(ContextSeen::Seen);
    else
        g_context_seen.compare_exchange_strong(expected, ContextSeen::None);
}

namespace {

// A process that did no GPU work leaves no trace (idle_trace.hpp): called once the trace is finished, with the
// writer thread gone. True when the trace was removed.
bool remove_if_idle(const Session& s)
{
    if (env_flag("FP8SCOPE_KEEP_EMPTY_TRACES", false))
        return false;
    WorkEvidence evidence;
    evidence.whole_process_recorded = s.whole_process_recorded;
    evidence.activity_rows = activity_rows(s.decoder->counters());
    evidence.job_wrote_rows = g_job_wrote_rows.load();
    const WriterCounters written = s.writer->counters();
    evidence.records_lost = written.dropped_records + written.rows_lost + s.decoder->counters().write_errors;
    const ContextSeen context = g_context_seen.load();
    if (context != ContextSeen::NotAsked)
        evidence.context_seen = context == ContextSeen::Seen;
    if (!did_no_gpu_work(evidence) || !remove_trace_files(s.absolute_path))
        return false;
    append_line_to_manifest(removed_trace_manifest_line(s.absolute_path));
    inform(
        "no GPU work in this process: its trace '" + s.path + "' was removed (FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps it)");
    return true;
}

// A recording by steps whose window never opened says why at the end (issue 25 item 6). Under `fp8scope record`
// its summary says it, judged from the trace, so the collector speaks only without one: plain LD_PRELOAD, or -q.
void warn_if_no_window_opened(const Session& s)
{
    const std::optional<std::string> why = capture_never_opened();
    if (!why)
        return;
    const char* manifest = std::getenv("FP8SCOPE_MANIFEST");
    if (manifest && *manifest && !env_flag("FP8SCOPE_QUIET", false))
        return;
    warn(*why + " (trace '" + s.path + "')");
}

} // namespace

void stop_session(std::string_view reason)
{
    Session* s = g_session;
    if (!s || getpid() != s->owner_pid)
        return;
    std::lock_guard lock(g_stop_mutex);
    State expected = State::Running;
    if (!g_state.compare_exchange_strong(expected, State::Stopping))
        return;
    const uint64_t stop_at = timestamp_now(*s);
    capture_finish(static_cast<int64_t>(stop_at - s->start_cupti_ns));
    if (s->capture_plan.mode != CaptureMode::Full) {
        const int64_t ranges = nvtx_steps_seen(); // meta nvtx_step_ranges: CUPTI records none outside windows
        s->writer->post([ranges](TraceDb& db) { [[maybe_unused]] auto written = db.set_nvtx_step_ranges(ranges); });
    }
    {
        std::lock_guard cupti_lock(g_cupti_mutex);
        if (detaching(g_attachment.load()))
            stay_attached(*s);
        if (g_attachment.load() == Attachment::Attached)
            s->cupti->activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    flush_api_records(*s);
    s->writer->post([s](TraceDb& db) {
        harvest_tensor_stats(db, true);
        s->decoder->finish(db);
        write_dropped(*s, db);
    });
    watch_for_gpu_work(); // the last look, from the thread that ends the process (its current context too)
    const uint64_t now = timestamp_now(*s);
    auto finished
        = s->writer->finish(FinishInfo { std::string(reason), static_cast<int64_t>(now - s->start_cupti_ns) });
    // Both keyed like the write errors: a full disk that lost rows already has its one warning line.
    if (!exists(s->absolute_path))
        // Its folder (or the file) was removed while recording: SQLite wrote on into the unlinked file.
        warn_once("trace-write", "the trace '" + s->path + "' was removed while recording (nothing of it is kept)");
    else if (!finished)
        warn_once("trace-write", "cannot finish trace '" + s->path + "': " + finished.error().message
            + " (the file holds everything up to its last commit)");
    else if (!remove_if_idle(*s))
        warn_if_no_window_opened(*s);
    g_state.store(State::Stopped);
}

void abandon_session_after_fork()
{
    // The child has no writer thread and no CUPTI worker; the parent's session is not its own.
    if (g_state.load() != State::Idle)
        g_state.store(State::Disabled);
}

State session_state()
{
    return g_state.load();
}

} // namespace fp8scope::collector
