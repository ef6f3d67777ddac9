// The rule by which a process that did no GPU work leaves no trace (idle_trace.hpp;
// docs/collector.md "Processes that do no GPU work"), and the removal itself, without a GPU: the evidence is what
// the collector (collector/src/session/collector.cpp) gathers at the end of a recording.
#include "session/idle_trace.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace fp8scope::collector;

namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name)
{
    const std::string dir = std::string(FP8SCOPE_TEST_TMP) + "/collector/" + name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

void touch(const std::string& path)
{
    std::ofstream(path) << "x";
}

// A whole-run recording of a torch.compile worker: cuInit, a device count, the device's properties, nothing else.
WorkEvidence compile_worker()
{
    WorkEvidence evidence;
    evidence.whole_process_recorded = true;
    return evidence;
}

} // namespace

TEST_CASE("idle trace: a whole-run recording with no row of GPU work is a process that did none", "[collector][idle]")
{
    CHECK(did_no_gpu_work(compile_worker()));

    // Any one sign of work keeps the trace.
    WorkEvidence launched = compile_worker();
    launched.activity_rows = 1;
    CHECK_FALSE(did_no_gpu_work(launched));
    WorkEvidence marked = compile_worker();
    marked.job_wrote_rows = true; // a step marker, a scalar, a probe
    CHECK_FALSE(did_no_gpu_work(marked));
    WorkEvidence lost = compile_worker();
    lost.records_lost = 3; // CUPTI dropped records, or the disk was full: no proof of idleness
    CHECK_FALSE(did_no_gpu_work(lost));
}

TEST_CASE("idle trace: under capture windows only a process never seen holding a CUDA context did no GPU work",
    "[collector][idle]")
{
    // --capture-steps on a job without markers records nothing at all: the rows prove nothing.
    WorkEvidence windowed;
    windowed.whole_process_recorded = false;
    CHECK_FALSE(did_no_gpu_work(windowed)); // the driver never answered: kept
    windowed.context_seen = true;
    CHECK_FALSE(did_no_gpu_work(windowed)); // the job's, whose window never opened: kept (it gets its warning)
    windowed.context_seen = false;
    CHECK(did_no_gpu_work(windowed)); // the compile worker's
    windowed.activity_rows = 2;
    CHECK_FALSE(did_no_gpu_work(windowed));
}

TEST_CASE(
    "idle trace: DEVICE rows and CUPTI's overhead records are no GPU work, every other row is", "[collector][idle]")
{
    CHECK(activity_rows(DecoderCounters { .records = 9, .overheads = 4, .devices = 2, .ignored = 3 }) == 0);
    CHECK(activity_rows(DecoderCounters { .kernels = 1 }) == 1);
    CHECK(activity_rows(DecoderCounters { .api_calls = 1 }) == 1);
    CHECK(activity_rows(DecoderCounters { .syncs = 1 }) == 1);
    CHECK(activity_rows(DecoderCounters { .memcpys = 1 }) == 1);
    CHECK(activity_rows(DecoderCounters { .memsets = 1 }) == 1);
    CHECK(activity_rows(DecoderCounters { .nvtx = 1 }) == 1);
    CHECK(activity_rows(DecoderCounters { .collector_calls = 1 }) == 1);
}

TEST_CASE("idle trace: removal takes the trace and SQLite's side files, nothing else", "[collector][idle]")
{
    const std::string dir = fresh_dir("idle_trace_remove");
    const std::string trace = dir + "/trace-1.sqlite";
    for (const std::string& path : { trace, trace + "-wal", trace + "-shm", dir + "/trace.sqlite" })
        touch(path);
    CHECK(remove_trace_files(trace));
    CHECK_FALSE(fs::exists(trace));
    CHECK_FALSE(fs::exists(trace + "-wal"));
    CHECK_FALSE(fs::exists(trace + "-shm"));
    CHECK(fs::exists(dir + "/trace.sqlite")); // the job's own trace beside it
    CHECK(remove_trace_files(trace)); // already gone: nothing left at the path
}

TEST_CASE("idle trace: the manifest line that tells record the trace is gone", "[collector][idle]")
{
    // cli/trace_info/record_summary.cpp's parse_manifest reads it back (tests/cli/trace_info/record_summary_test.cpp).
    CHECK(removed_trace_manifest_line("/traces/run-1.sqlite") == "-/traces/run-1.sqlite\n");
}
