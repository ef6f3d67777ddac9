// Writer benchmark (not a test): kernel rows per second through TraceDb on one thread and through
// BackgroundWriter end to end, and bytes per kernel on disk. Goals (docs/benchmarks.md "Trace writer"): >= 1 M kernel
// rows/s on one core, <= 48 bytes per kernel. Figures are recorded in docs/benchmarks.md.
//
//   fp8scope_writer_bench [--kernels N] [--runs R] [--dir DIR]
#include "fp8scope/format/background_writer.hpp"

#include <CLI/CLI.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

using namespace fp8scope;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kBatchRows = 4096; // rows per BackgroundWriter task, about one CUPTI buffer's worth
constexpr int kKernelNames = 200;

// xorshift64*: cheap enough not to show up next to an SQLite insert.
struct Random {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    uint64_t next()
    {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return state * 2685821657736338717ull;
    }
    int64_t between(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % uint64_t(hi - lo + 1)); }
};

// Realistic kernel rows: ~200 kernels with mangled names of 60-200 characters, each with its own launch
// config; a few kernels dominate (as GEMMs and elementwise kernels do in training); start advances 2-20 us,
// durations 1-500 us, streams 0-7, correlation ids increasing.
class KernelSource {
public:
    KernelSource()
    {
        for (int i = 0; i < kKernelNames; ++i) {
            const std::string ident = "kernel_" + std::to_string(i) + std::string(static_cast<size_t>(i % 7) * 20, 'x');
            names_.push_back("_ZN2at6native" + std::to_string(ident.size()) + ident + "ILi" + std::to_string(i % 9)
                + "ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_");
        }
    }

    // Fills `rows` with the next kernels; name lookups go through db.intern like the collector's decoder.
    template <class Interner> void fill(std::vector<KernelRow>& rows, size_t count, Interner&& intern)
    {
        rows.resize(count);
        for (KernelRow& k : rows) {
            // Skewed choice: half the launches go to 8 kernels, the rest spread over all 200.
            const uint64_t r = random_.next();
            const int index = (r & 1) ? static_cast<int>((r >> 8) % 8) : static_cast<int>((r >> 8) % kKernelNames);
            now_ns_ += random_.between(2'000, 20'000);
            k.start_ns = now_ns_;
            k.end_ns = now_ns_ + random_.between(1'000, 500'000);
            k.device_id = 0;
            k.context_id = 1;
            k.stream_id = static_cast<uint32_t>(random_.next() % 8);
            correlation_id_ += 1 + static_cast<uint32_t>(random_.next() % 3);
            k.correlation_id = correlation_id_;
            k.config.mangled_name = intern(names_[static_cast<size_t>(index)]);
            k.config.grid = { 1 + index * 13, 1, 1 };
            k.config.block = { 128 << (index % 3), 1, 1 };
            k.config.registers_per_thread = 32 + index % 64;
            k.config.dynamic_shared_bytes = (index % 4) * 16384;
        }
    }

private:
    std::vector<std::string> names_;
    Random random_;
    int64_t now_ns_ = 0;
    uint32_t correlation_id_ = 0;
};

SessionInfo bench_session()
{
    SessionInfo s;
    s.utc_epoch_ns = 1'795'219'200'000'000'000;
    s.producer = "fp8scope writer benchmark";
    s.host = "bench";
    s.pid = 1;
    return s;
}

struct RunResult {
    double insert_rows_per_s = 0; // rows inserted per second, up to the last commit before finish()
    double total_rows_per_s = 0; // including finish(): indexes, checkpoint, leaving WAL mode
    double finish_s = 0;
    double bytes_per_kernel = 0;
    uintmax_t file_bytes = 0;
};

[[noreturn]] void fail(const std::string& what)
{
    std::fprintf(stderr, "fp8scope_writer_bench: %s\n", what.c_str());
    std::exit(1);
}

std::string fresh_path(const std::string& dir, const std::string& name)
{
    const std::string path = dir + "/" + name;
    for (const char* suffix : { "", "-wal", "-shm" })
        std::filesystem::remove(path + suffix);
    return path;
}

// Mode 1 and 3: one thread, TraceDb directly; `with_api` adds one runtime API row per kernel.
RunResult run_direct(const std::string& path, int64_t kernels, bool with_api)
{
    auto created = TraceDb::create(path, bench_session());
    if (!created)
        fail(created.error().message);
    TraceDb& db = **created;
    KernelSource source;
    std::vector<KernelRow> rows;
    const StringId api_name = db.intern("cudaLaunchKernel_v7000");
    const auto start = Clock::now();
    for (int64_t done = 0; done < kernels; done += static_cast<int64_t>(kBatchRows)) {
        source.fill(rows, static_cast<size_t>(std::min<int64_t>(kBatchRows, kernels - done)),
            [&](const std::string& name) { return db.intern(name); });
        for (const KernelRow& k : rows) {
            if (with_api) {
                const ApiRow api { .start_ns = k.start_ns - 5'000,
                    .end_ns = k.start_ns - 1'000,
                    .event_class = schema::EventClass::CudaRuntime,
                    .global_tid = schema::global_tid(1, 2),
                    .correlation_id = k.correlation_id,
                    .name = api_name,
                    .return_value = 0 };
                if (!db.add_api(api))
                    fail("add_api failed");
            }
            if (!db.add_kernel(k))
                fail("add_kernel failed");
        }
        if (auto ok = db.commit_if_due(); !ok)
            fail(ok.error().message);
    }
    if (auto ok = db.commit(); !ok)
        fail(ok.error().message);
    const auto inserted = Clock::now();
    if (auto ok = db.finish({}); !ok)
        fail(ok.error().message);
    const auto finished = Clock::now();
    const double rows_total = static_cast<double>(kernels) * (with_api ? 2 : 1);
    RunResult r;
    r.insert_rows_per_s = rows_total / std::chrono::duration<double>(inserted - start).count();
    r.total_rows_per_s = rows_total / std::chrono::duration<double>(finished - start).count();
    r.finish_s = std::chrono::duration<double>(finished - inserted).count();
    r.file_bytes = std::filesystem::file_size(path);
    r.bytes_per_kernel = static_cast<double>(r.file_bytes) / static_cast<double>(kernels);
    return r;
}

// Mode 2: a producer thread fills batches (as the collector's decoder would) and posts them; the writer thread
// inserts. Measured from the first post to finish() returning.
RunResult run_background(const std::string& path, int64_t kernels, int64_t& refused_posts)
{
    auto created = TraceDb::create(path, bench_session());
    if (!created)
        fail(created.error().message);
    // 64 tasks of 4096 rows in flight, like a bounded pool of CUPTI buffers: the producer waits when the writer
    // is behind instead of queueing the whole run in memory.
    auto writer = BackgroundWriter::start(std::move(*created), { .max_queued_tasks = 64 });
    if (!writer)
        fail(writer.error().message);
    KernelSource source;
    const auto start = Clock::now();
    for (int64_t done = 0; done < kernels; done += static_cast<int64_t>(kBatchRows)) {
        // The producer records name pointers; the task maps them to ids on the writer thread.
        auto batch = std::make_shared<std::vector<KernelRow>>();
        auto batch_names = std::make_shared<std::vector<const std::string*>>();
        source.fill(
            *batch, static_cast<size_t>(std::min<int64_t>(kBatchRows, kernels - done)), [&](const std::string& name) {
                batch_names->push_back(&name);
                return StringId { 0 };
            });
        BackgroundWriter::Task task = [batch, batch_names](TraceDb& db) {
            for (size_t i = 0; i < batch->size(); ++i) {
                KernelRow& k = (*batch)[i];
                k.config.mangled_name = db.intern(*(*batch_names)[i]);
                (void)db.add_kernel(k);
            }
        };
        while (!(*writer)->post(task)) {
            ++refused_posts;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
    if (auto ok = (*writer)->finish({}); !ok)
        fail(ok.error().message);
    const auto finished = Clock::now();
    if ((*writer)->counters().kernels_committed != kernels)
        fail("background writer lost kernels");
    RunResult r;
    r.total_rows_per_s = static_cast<double>(kernels) / std::chrono::duration<double>(finished - start).count();
    r.file_bytes = std::filesystem::file_size(path);
    r.bytes_per_kernel = static_cast<double>(r.file_bytes) / static_cast<double>(kernels);
    return r;
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

void report(const char* mode, const char* rows_what, const std::vector<RunResult>& runs, bool has_insert_phase)
{
    std::vector<double> insert, total, finish, bytes, file_mb;
    for (const RunResult& r : runs) {
        insert.push_back(r.insert_rows_per_s);
        total.push_back(r.total_rows_per_s);
        finish.push_back(r.finish_s);
        bytes.push_back(r.bytes_per_kernel);
        file_mb.push_back(static_cast<double>(r.file_bytes) / 1e6);
    }
    const auto line = [&](const std::string& what, const std::vector<double>& values) {
        std::printf("  %-46s median %.2f M/s, best %.2f M/s\n", what.c_str(), median(values) / 1e6,
            *std::max_element(values.begin(), values.end()) / 1e6);
    };
    std::printf("%s\n", mode);
    if (has_insert_phase) {
        line(std::string(rows_what) + ", inserts and commits", insert);
        std::printf("  %-46s median %.2f s\n", "finish() (indexes, checkpoint, leave WAL)", median(finish));
    }
    line(std::string(rows_what) + ", end to end incl. finish()", total);
    std::printf(
        "  %-46s median %.1f MB, %.1f bytes per kernel\n", "file size after finish()", median(file_mb), median(bytes));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "fp8scope writer benchmark: kernel rows per second and bytes per kernel on disk" };
    int64_t kernels = 10'000'000;
    int runs = 3;
    std::string dir = "/tmp/fp8scope-writer-bench";
    std::string modes = "direct,background,mixed";
    app.add_option("--kernels", kernels, "kernel rows per run")->check(CLI::PositiveNumber);
    app.add_option("--runs", runs, "runs per mode; the median and the best are printed")->check(CLI::PositiveNumber);
    app.add_option("--dir", dir, "directory for the trace files (deleted and rewritten)");
    app.add_option("--modes", modes, "comma-separated: direct, background, mixed");
    CLI11_PARSE(app, argc, argv);
    std::filesystem::create_directories(dir);
    std::printf("fp8scope writer benchmark: %lld kernels per run, %d runs per mode, SQLite %s\n",
        static_cast<long long>(kernels), runs, sqlite3_libversion());

    if (modes.find("direct") != std::string::npos) {
        std::vector<RunResult> results;
        for (int i = 0; i < runs; ++i)
            results.push_back(run_direct(fresh_path(dir, "direct.sqlite"), kernels, false));
        report("[direct] kernel rows through TraceDb on one thread", "kernel rows/s", results, true);
    }
    if (modes.find("background") != std::string::npos) {
        std::vector<RunResult> results;
        int64_t refused = 0;
        for (int i = 0; i < runs; ++i)
            results.push_back(run_background(fresh_path(dir, "background.sqlite"), kernels, refused));
        report("[background] producer thread -> BackgroundWriter, 4096 rows per task", "kernel rows/s", results, false);
        std::printf("  %-46s %lld (the producer waited; nothing dropped)\n", "posts refused, queue full",
            static_cast<long long>(refused));
    }
    if (modes.find("mixed") != std::string::npos) {
        std::vector<RunResult> results;
        for (int i = 0; i < runs; ++i)
            results.push_back(run_direct(fresh_path(dir, "mixed.sqlite"), kernels, true));
        report("[mixed] kernel + one runtime API row per kernel, TraceDb on one thread", "rows/s (kernel+API)", results,
            true);
    }
    return 0;
}
