// The decoder on synthetic CUPTI records: each record type is built as CUPTI lays it out (the CUDA 13.0 structs),
// written through a real TraceDb, and read back with the analyzer's loader.
#include "calls/sync_calls.hpp"
#include "cupti/record_decoder.hpp"

#include "fp8scope/analyzer/load/trace_loader.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace fp8scope;
using fp8scope::collector::find_sync_callback;
using fp8scope::collector::RecordDecoder;
using fp8scope::collector::sync_callbacks;
using fp8scope::collector::sync_record;
using fp8scope::collector::SyncCallback;
using fp8scope::collector::synced_stream;

namespace {

constexpr uint64_t kStart = 1'700'000'000'000'000'000ULL; // session start on CUPTI's (realtime) clock
constexpr int64_t kPid = 4242;

std::string scratch(const std::string& name)
{
    const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "collector";
    std::filesystem::create_directories(dir);
    const auto path = dir / name;
    for (const char* suffix : { "", "-wal", "-shm" })
        std::filesystem::remove(path.string() + suffix);
    return path.string();
}

struct Fixture {
    std::string path;
    std::unique_ptr<TraceDb> db;
    RecordDecoder decoder;
    std::vector<std::string> warnings;

    explicit Fixture(const std::string& name)
        : path(scratch(name))
        , decoder(
              kStart, kPid,
              [](CUpti_ActivityKind kind, uint32_t cbid) {
                  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME && cbid == 211)
                      return std::string("cudaLaunchKernel_v7000");
                  return std::string();
              },
              [this](const std::string& line) { warnings.push_back(line); })
    {
        SessionInfo info;
        info.utc_epoch_ns = static_cast<int64_t>(kStart);
        info.producer = "collector test";
        info.pid = kPid;
        auto created = TraceDb::create(path, info);
        REQUIRE(created);
        db = std::move(*created);
    }

    template <class Record> void feed(const Record& record)
    {
        decoder.decode(reinterpret_cast<const CUpti_Activity&>(record), *db);
    }

    // A CONTEXT record: context `id` lives on `device`.
    void feed_context(uint32_t id, uint32_t device)
    {
        CUpti_ActivityContext3 context {};
        context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
        context.contextId = id;
        context.deviceId = device;
        feed(context);
    }

    analyzer::TraceModel finish_and_load()
    {
        decoder.finish(*db);
        REQUIRE(db->finish(FinishInfo {}));
        auto model = analyzer::load_trace(path);
        REQUIRE(model);
        return std::move(*model);
    }
};

CUpti_ActivityKernel10 kernel_record(uint64_t start_ns, uint64_t end_ns, uint32_t correlation, const char* name)
{
    CUpti_ActivityKernel10 r {};
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.start = kStart + start_ns;
    r.end = kStart + end_ns;
    r.deviceId = 1;
    r.contextId = 7;
    r.streamId = 13;
    r.correlationId = correlation;
    r.name = name;
    r.gridX = r.gridY = r.gridZ = 1;
    r.blockX = 128;
    r.blockY = r.blockZ = 1;
    return r;
}

} // namespace

TEST_CASE("kernels keep times relative to the session start, device, stream, correlation and name")
{
    Fixture f("decoder_kernels.sqlite");
    f.feed(kernel_record(1000, 3500, 11, "_Z13fp8scope_tinyPi"));
    f.feed(kernel_record(4000, 4000, 12, "fp8scope_spin")); // zero-length kernels are kept
    const auto model = f.finish_and_load();
    REQUIRE(model.kernels.size() == 2);
    CHECK(model.kernels.start_ns[0] == 1000);
    CHECK(model.kernels.end_ns[0] == 3500);
    CHECK(model.kernels.device_id[0] == 1);
    CHECK(model.kernels.stream_id[0] == 13);
    CHECK(model.kernels.correlation_id[1] == 12);
    CHECK(model.strings[model.kernels.name[0]] == "fp8scope_tiny(int*)");
    CHECK(model.strings[model.kernels.name[1]] == "fp8scope_spin");
    CHECK(f.decoder.counters().kernels == 2);
    CHECK(f.warnings.empty());
}

TEST_CASE("API records are named by callback id, classed runtime or driver, and carry nsys' globalTid")
{
    Fixture f("decoder_api.sqlite");
    CUpti_ActivityAPI r {};
    r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    r.cbid = 211;
    r.start = kStart + 100;
    r.end = kStart + 900;
    r.processId = kPid;
    r.threadId = 4243;
    r.correlationId = 11;
    f.feed(r);
    r.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    r.cbid = 307; // unnamed by the test namer: falls back to a readable id
    r.correlationId = 12;
    f.feed(r);
    const auto model = f.finish_and_load();
    REQUIRE(model.api_calls.size() == 2);
    CHECK(model.strings[model.api_calls.name[0]] == "cudaLaunchKernel_v7000");
    CHECK(model.api_calls.is_driver[0] == 0);
    CHECK(model.strings[model.api_calls.name[1]] == "driver_cbid_307");
    CHECK(model.api_calls.is_driver[1] == 1);
    CHECK(model.api_calls.global_tid[0] == schema::global_tid(kPid, 4243));
    CHECK(model.api_calls.end_ns[0] - model.api_calls.start_ns[0] == 800);
}

TEST_CASE("after CUPTI is attached again its correlation ids, which start over, continue past the ones written")
{
    // Detached between capture windows, CUPTI starts its ids at 1 again (H100, 2026-11-24: 6,268 distinct ids among
    // 12,819 kernels of 4 windows); kernel and launch of one generation must still pair, and never across two.
    Fixture f("decoder_generations.sqlite");
    CUpti_ActivityAPI launch {};
    launch.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    launch.cbid = 211;
    launch.processId = kPid;
    launch.threadId = 4243;
    for (uint32_t id : { 1u, 2u, 7u }) { // the first window
        launch.start = kStart + id * 100;
        launch.end = launch.start + 10;
        launch.correlationId = id;
        f.feed(launch);
        f.feed(kernel_record(id * 100 + 20, id * 100 + 30, id, "first"));
    }
    f.decoder.start_correlation_generation();
    for (uint32_t id : { 1u, 2u }) { // the second: ids again from 1
        launch.start = kStart + 10'000 + id * 100;
        launch.end = launch.start + 10;
        launch.correlationId = id;
        f.feed(launch);
        f.feed(kernel_record(10'000 + id * 100 + 20, 10'000 + id * 100 + 30, id, "second"));
    }
    const auto model = f.finish_and_load();
    REQUIRE(model.kernels.size() == 5);
    REQUIRE(model.api_calls.size() == 5);
    std::vector<uint32_t> kernel_ids(model.kernels.correlation_id.begin(), model.kernels.correlation_id.end());
    std::vector<uint32_t> api_ids(model.api_calls.correlation_id.begin(), model.api_calls.correlation_id.end());
    CHECK(kernel_ids == std::vector<uint32_t> { 1, 2, 7, 8, 9 });
    CHECK(api_ids == kernel_ids);
    CHECK(model.strings[model.kernels.name[3]] == "second");
}

TEST_CASE("sync records take their device from the context, and invalid stream ids become NULL")
{
    Fixture f("decoder_sync.sqlite");
    f.feed_context(9, 3);
    CUpti_ActivitySynchronization2 r {};
    r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    r.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    r.start = kStart + 10;
    r.end = kStart + 20;
    r.contextId = 9;
    r.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    r.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    r.correlationId = 5;
    f.feed(r);
    r.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    r.streamId = 14;
    r.correlationId = 6;
    f.feed(r);
    const auto model = f.finish_and_load();
    REQUIRE(model.syncs.size() == 2);
    CHECK(model.syncs.device_id[0] == 3);
    CHECK(model.syncs.sync_type[0] == static_cast<int32_t>(schema::SyncType::ContextSynchronize));
    CHECK(model.syncs.stream_id[0] == analyzer::SyncTable::kNoStream);
    CHECK(model.syncs.sync_type[1] == static_cast<int32_t>(schema::SyncType::StreamSynchronize));
    CHECK(model.syncs.stream_id[1] == 14);
}

TEST_CASE("sync calls seen by callbacks give the rows the SYNCHRONIZATION kind would, ids shifted after re-attaching")
{
    // The table: the synchronize and stream-wait calls of both domains, and nothing else.
    CHECK(sync_callbacks().size() == 14);
    const SyncCallback* stream_sync
        = find_sync_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000);
    REQUIRE(stream_sync != nullptr);
    CHECK(stream_sync->per_thread_stream);
    const SyncCallback* device_sync
        = find_sync_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize);
    REQUIRE(device_sync != nullptr);
    const SyncCallback* wait
        = find_sync_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent);
    REQUIRE(wait != nullptr);
    CHECK(wait->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT);
    CHECK(find_sync_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == nullptr);
    // The same call id in the other domain is another call.
    CHECK(find_sync_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020)
        == nullptr);

    // The stream is the call's one parameter; a device sync has none.
    auto* const stream = reinterpret_cast<CUstream>(uintptr_t { 0x7000 });
    const cudaStreamSynchronize_ptsz_v7000_params params { stream };
    CUpti_CallbackData data {};
    data.functionParams = &params;
    data.correlationId = 4;
    data.contextUid = 9;
    CHECK(synced_stream(*stream_sync, data) == stream);
    CHECK(synced_stream(*device_sync, data) == nullptr);
    const cuStreamWaitEvent_params wait_params { stream, nullptr, 0 };
    CUpti_CallbackData wait_data {};
    wait_data.functionParams = &wait_params;
    CHECK(synced_stream(*wait, wait_data) == stream); // the waiting stream

    Fixture f("decoder_sync_callbacks.sqlite");
    f.feed_context(9, 2);
    f.decoder.decode_sync(sync_record(*stream_sync, data, kStart + 100, kStart + 250, 13), *f.db);
    f.decoder.start_correlation_generation(); // CUPTI attached again: its ids start over
    data.correlationId = 1;
    f.decoder.decode_sync(sync_record(*device_sync, data, kStart + 300, kStart + 400, std::nullopt), *f.db);
    const auto model = f.finish_and_load();
    REQUIRE(model.syncs.size() == 2);
    CHECK(model.syncs.start_ns[0] == 100);
    CHECK(model.syncs.end_ns[0] == 250);
    CHECK(model.syncs.device_id[0] == 2); // from the context
    CHECK(model.syncs.stream_id[0] == 13);
    CHECK(model.syncs.correlation_id[0] == 4);
    CHECK(model.syncs.sync_type[0] == static_cast<int32_t>(schema::SyncType::StreamSynchronize));
    CHECK(model.syncs.stream_id[1] == analyzer::SyncTable::kNoStream);
    CHECK(model.syncs.correlation_id[1] == 5); // past the 4 written before
    CHECK(model.syncs.sync_type[1] == static_cast<int32_t>(schema::SyncType::ContextSynchronize));
    CHECK(f.decoder.counters().syncs == 2);
}

TEST_CASE("memory kinds are converted from CUPTI's numbering to nsys'")
{
    using schema::MemoryKind;
    CHECK(RecordDecoder::memory_kind_from_cupti(CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN) == MemoryKind::Unknown);
    CHECK(RecordDecoder::memory_kind_from_cupti(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) == MemoryKind::Pageable);
    CHECK(RecordDecoder::memory_kind_from_cupti(CUPTI_ACTIVITY_MEMORY_KIND_PINNED) == MemoryKind::Pinned);
    CHECK(RecordDecoder::memory_kind_from_cupti(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) == MemoryKind::Device);
    CHECK(
        RecordDecoder::memory_kind_from_cupti(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC) == MemoryKind::ManagedStatic);
    CHECK(RecordDecoder::memory_kind_from_cupti(99) == MemoryKind::Unknown);

    Fixture f("decoder_memcpy.sqlite");
    CUpti_ActivityMemcpy6 r {};
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    r.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    r.bytes = 4096;
    r.start = kStart + 50;
    r.end = kStart + 80;
    r.streamId = 7;
    f.feed(r);
    CUpti_ActivityMemset4 m {};
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 64;
    m.start = kStart + 90;
    m.end = kStart + 95;
    f.feed(m);
    CUpti_ActivityMemcpyPtoP4 peer {};
    peer.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    peer.srcKind = peer.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    peer.bytes = 1 << 20;
    peer.start = kStart + 100;
    peer.end = kStart + 140;
    peer.srcDeviceId = 0;
    peer.dstDeviceId = 1;
    f.feed(peer);
    const auto model = f.finish_and_load();
    REQUIRE(model.memcpys.size() == 2);
    CHECK(model.memcpys.copy_kind[1] == static_cast<int32_t>(schema::MemcpyKind::PtoP));
    CHECK(model.memcpys.src_kind[1] == static_cast<int32_t>(MemoryKind::Device));
    CHECK(model.memcpys.bytes[1] == (1u << 20));
    CHECK(model.memcpys.copy_kind[0] == static_cast<int32_t>(schema::MemcpyKind::DtoH));
    CHECK(model.memcpys.src_kind[0] == static_cast<int32_t>(MemoryKind::Device));
    CHECK(model.memcpys.dst_kind[0] == static_cast<int32_t>(MemoryKind::Pageable));
    CHECK(model.memcpys.bytes[0] == 4096);
    REQUIRE(model.memsets.size() == 1);
    CHECK(model.memsets.mem_kind[0] == static_cast<int32_t>(MemoryKind::Device));
}

TEST_CASE("NVTX start and end markers pair into one range, an unclosed range is kept with no end")
{
    Fixture f("decoder_nvtx.sqlite");
    CUpti_ActivityMarker2 r {};
    r.kind = CUPTI_ACTIVITY_KIND_MARKER;
    r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    r.objectId.pt.processId = kPid;
    r.objectId.pt.threadId = kPid;
    r.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    r.id = 1;
    r.timestamp = kStart + 100;
    r.name = "train_step";
    f.feed(r);
    r.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    r.timestamp = kStart + 700;
    r.name = nullptr; // CUPTI gives no name on the end marker
    f.feed(r);
    r.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    r.id = 2;
    r.timestamp = kStart + 800;
    r.name = "never_closed";
    f.feed(r);
    r.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    r.id = 99; // began before tracing: ignored
    f.feed(r);
    const auto model = f.finish_and_load();
    REQUIRE(model.nvtx.size() == 2);
    // Rows are in the order they were closed: the paired one first, the unclosed one at finish.
    CHECK(model.strings[model.nvtx.text[0]] == "train_step");
    CHECK(model.nvtx.start_ns[0] == 100);
    CHECK(model.nvtx.end_ns[0] == 700);
    CHECK(model.nvtx.event_type[0] == static_cast<int32_t>(schema::NvtxEventType::PushPopRange));
    CHECK(model.nvtx.global_tid[0] == schema::global_tid(kPid, kPid));
    CHECK(model.strings[model.nvtx.text[1]] == "never_closed");
    CHECK(model.nvtx.end_ns[1] == analyzer::NvtxTable::kNoEnd);
}

TEST_CASE("device records become one GPU row per device, in SI units")
{
    Fixture f("decoder_device.sqlite");
    CUpti_ActivityDevice5 r {};
    r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    r.id = 0;
    r.name = "NVIDIA H100 80GB HBM3";
    r.globalMemorySize = 85'000'000'000ULL;
    r.globalMemoryBandwidth = 3'352'000'000ULL; // kB/s
    r.coreClockRate = 1'980'000; // kHz
    r.numMultiprocessors = 132;
    r.computeCapabilityMajor = 9;
    r.uuid.bytes[0] = static_cast<char>(0xab);
    f.feed(r);
    f.feed(r); // CUPTI may report a device again: one row
    const auto model = f.finish_and_load();
    REQUIRE(model.gpus.size() == 1);
    CHECK(model.gpus[0].name == "NVIDIA H100 80GB HBM3");
    CHECK(model.gpus[0].sm_count == 132);
    CHECK(model.gpus[0].memory_bandwidth_bytes_per_s == 3'352'000'000'000LL);
    CHECK(model.gpus[0].clock_rate_hz == 1'980'000'000LL);
    CHECK(model.gpus[0].compute_major == 9);
    CHECK(model.gpus[0].uuid.starts_with("GPU-ab000000-"));
}

TEST_CASE("overhead records keep their kind, records of kinds the trace has no table for are counted, not written")
{
    Fixture f("decoder_overhead.sqlite");
    CUpti_ActivityOverhead3 r {};
    r.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    r.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    r.objectId.pt.threadId = 77;
    r.start = kStart + 5;
    r.end = kStart + 25;
    f.feed(r);
    CUpti_Activity other {};
    other.kind = CUPTI_ACTIVITY_KIND_NAME;
    f.feed(other);
    const auto model = f.finish_and_load();
    REQUIRE(model.overheads.size() == 1);
    CHECK(model.overheads[0].kind == static_cast<int32_t>(schema::OverheadKind::CuptiBufferFlush));
    CHECK(model.overheads[0].end_ns - model.overheads[0].start_ns == 20);
    CHECK(f.decoder.counters().ignored == 1);
    CHECK(f.decoder.counters().records == 2);
}
