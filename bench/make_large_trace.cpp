// Writes a large synthetic trace for the analyzer benchmarks (goal: `fp8scope report` on 10 M kernels and 10 M API
// calls in <= 10 s and <= 2 GB on 2 cores;
// docs/benchmarks.md "Analyzer: `fp8scope report` on 10 M kernels and 10 M API calls"). Not a test: it prints what it
// wrote and how long it took.
//
//   fp8scope_make_large_trace --out FILE [--kernels N (10000000)] [--steps S (1000)]
//
// Shape, per step (an NVTX `train_step` range on the main thread): kernels/steps launches of ~150 distinct
// kernels on two streams, each launched by a cudaLaunchKernel call whose correlation id its kernel carries; most
// kernels run back to back, every 16th waits for a slow launch (a launch-bound gap), and each step ends with a
// cudaStreamSynchronize (API row plus SYNCHRONIZATION row) and a short host stall before the next step.
#include "fp8scope/format/trace_db.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using namespace fp8scope;

namespace {

constexpr int kKernelNames = 150;
constexpr int64_t kMainTid = 1000;
constexpr int64_t kPid = 1000;

struct Shape {
    int64_t kernels = 10'000'000;
    int64_t steps = 1000;
};

SessionInfo session()
{
    SessionInfo s;
    s.utc_epoch_ns = 1'800'000'000'000'000'000;
    s.producer = "fp8scope " FP8SCOPE_VERSION " (bench: make_large_trace)";
    s.command_line = "fp8scope_make_large_trace";
    s.host = "bench";
    s.pid = kPid;
    return s;
}

int write_trace(const std::string& path, const Shape& shape)
{
    std::filesystem::remove(path);
    auto created = TraceDb::create(path, session());
    if (!created) {
        std::fprintf(stderr, "make_large_trace: %s\n", created.error().message.c_str());
        return 1;
    }
    TraceDb& db = **created;
    const int64_t tid = schema::global_tid(kPid, kMainTid);
    std::vector<StringId> names;
    for (int i = 0; i < kKernelNames; ++i)
        names.push_back(db.intern("_ZN2at6native18elementwise_kernelILi" + std::to_string(i) + "EEEviT_"));
    const StringId launch = db.intern("cudaLaunchKernel_v7000");
    const StringId stream_sync = db.intern("cudaStreamSynchronize_v3020");
    const StringId step_text = db.intern("train_step");

    GpuInfoRow gpu;
    gpu.name = "synthetic H100";
    gpu.sm_count = 132;
    gpu.compute_major = 9;
    if (!db.add_gpu(gpu))
        return 1;

    const int64_t per_step = shape.kernels / shape.steps;
    uint32_t correlation = 1;
    int64_t host_ns = 1'000'000; // the main thread's clock
    int64_t gpu_free_ns[2] = { 0, 0 }; // when each stream's last kernel ends
    for (int64_t step = 0; step < shape.steps; ++step) {
        const int64_t step_start = host_ns;
        for (int64_t i = 0; i < per_step; ++i) {
            const int64_t api_start = host_ns;
            const int64_t api_end = api_start + ((i % 16 == 15) ? 40'000 : 4'000); // every 16th launch is slow
            const uint32_t stream = static_cast<uint32_t>(7 + (i % 5 == 4)); // four in five on stream 7
            KernelRow k;
            const int s = stream == 7 ? 0 : 1;
            k.start_ns = std::max(api_end + 2'000, gpu_free_ns[s]);
            k.end_ns = k.start_ns + 3'000 + (i % 7) * 1'000;
            gpu_free_ns[s] = k.end_ns;
            k.stream_id = stream;
            k.correlation_id = correlation;
            k.config.mangled_name = names[static_cast<size_t>((step * 7 + i) % kKernelNames)];
            if (!db.add_api(ApiRow { api_start, api_end, schema::EventClass::CudaRuntime, tid, correlation, launch, 0 })
                || !db.add_kernel(k))
                return 1;
            ++correlation;
            host_ns = api_end + 500;
        }
        // The step's sync: the host waits for stream 7 to drain.
        const int64_t sync_end = std::max(host_ns + 1'000, gpu_free_ns[0] + 1'000);
        SyncRow sync;
        sync.start_ns = host_ns;
        sync.end_ns = sync_end;
        sync.stream_id = 7;
        sync.correlation_id = correlation;
        sync.sync_type = schema::SyncType::StreamSynchronize;
        if (!db.add_api(ApiRow { host_ns, sync_end, schema::EventClass::CudaRuntime, tid, correlation, stream_sync, 0 })
            || !db.add_sync(sync))
            return 1;
        ++correlation;
        host_ns = sync_end + 200'000; // a host stall (data loading) before the next step
        NvtxRow range;
        range.start_ns = step_start;
        range.end_ns = host_ns;
        range.text = step_text;
        range.global_tid = tid;
        range.range_id = step + 1;
        if (!db.add_nvtx(range) || !db.commit_if_due())
            return 1;
    }
    return db.finish(FinishInfo { "exit", host_ns }) ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Writes a large synthetic trace for the analyzer benchmarks", "fp8scope_make_large_trace" };
    std::string out;
    Shape shape;
    app.add_option("--out", out, "trace to write (replaced if it exists)")->required();
    app.add_option("--kernels", shape.kernels, "kernels, each with its launch call (default 10000000)")
        ->check(CLI::Range(int64_t { 1000 }, int64_t { 1'000'000'000 }));
    app.add_option("--steps", shape.steps, "steps (default 1000)")
        ->check(CLI::Range(int64_t { 1 }, int64_t { 1'000'000 }));
    CLI11_PARSE(app, argc, argv);
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = write_trace(out, shape);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc != 0) {
        std::fprintf(stderr, "make_large_trace: writing %s failed\n", out.c_str());
        return rc;
    }
    std::printf("wrote %s: %lld kernels, %lld launch calls, %lld steps in %.1f s, %.1f MB\n", out.c_str(),
        static_cast<long long>(shape.kernels / shape.steps * shape.steps),
        static_cast<long long>(shape.kernels / shape.steps * shape.steps), static_cast<long long>(shape.steps), seconds,
        static_cast<double>(std::filesystem::file_size(out)) / 1e6);
    return 0;
}
