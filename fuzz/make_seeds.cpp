// fuzz_seeds OUT_DIR: writes the seed inputs of every fuzz target into OUT_DIR/<target>/: small scenario traces in our
// format and in the nsys layout, run/reference pairs for fuzz_compare, and row programs for fuzz_rows. Each file is
// rewritten with 512-byte pages, so that a trace of a few hundred rows stays well under 64 KiB.
// scripts/fuzz_corpus.sh adds shrunk real traces from samples/traces/; CTest replays these seeds.
#include "scenario.hpp"
#include "scenario_from_bytes.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace fp8scope;
using namespace fp8scope::testing;
namespace fs = std::filesystem;

struct Variant {
    const char* name;
    bool fp8 = true; // tensor statistics and FP8 sites
    bool nvtx_steps = false; // steps from NVTX ranges instead of markers
    bool two_devices = false;
    bool windowed = false;
    double amax_growth = 1.0; // per step: above 1, the run drifts from the reference
};

Scenario demo(const Variant& v)
{
    Scenario s;
    if (v.two_devices) {
        s.session().rank = 0;
        s.session().world_size = 2;
    }
    const HostThread host = s.thread(4242, 4242, "python");
    const HostThread loader = s.thread(4242, 4250, "pt_data_worker");
    const int64_t site_a = s.tensor_site("layers.0.fc1", schema::TensorRole::Input, schema::Dtype::E4M3, 128, 256);
    const int64_t site_b = s.tensor_site("layers.0.fc2", schema::TensorRole::Weight, schema::Dtype::E4M3, 256, 128);
    if (v.windowed) {
        s.capture_mode("steps", "--capture-steps 2:4");
        s.capture_window(19'000, 61'000, schema::CaptureTrigger::Steps, 2, 4);
    }
    constexpr int kSteps = 6;
    constexpr int64_t kStepNs = 10'000;
    for (int step = 0; step < kSteps; ++step) {
        const int64_t t0 = 1'000 + step * kStepNs;
        if (v.nvtx_steps)
            s.nvtx_range(host, t0, t0 + kStepNs - 10, "step " + std::to_string(step));
        else
            s.step_marker(host, t0, step);
        s.memcpy(loader, { .api_start_ns = t0 + 50, .api_end_ns = t0 + 400, .name = "cudaMemcpy_v3020" },
            { .start_ns = t0 + 100, .end_ns = t0 + 380, .bytes = 1 << 20 });
        for (int k = 0; k < 4; ++k) {
            const int64_t at = t0 + 500 + k * 1'500;
            const uint32_t device = v.two_devices ? uint32_t(k % 2) : 0;
            s.launch(host, { .api_start_ns = at, .api_end_ns = at + 20 },
                { .start_ns = at + 200,
                    .end_ns = at + 1'200,
                    .name = k == 3 ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "sm90_xmma_gemm_e4m3_tn",
                    .device_id = device });
        }
        s.memset(host, { .api_start_ns = t0 + 6'600, .api_end_ns = t0 + 6'620, .name = "cudaMemsetAsync_v3020" },
            { .start_ns = t0 + 6'700, .end_ns = t0 + 6'800, .bytes = 4096 });
        s.sync(host, t0 + 7'000, t0 + 8'000, schema::SyncType::StreamSynchronize, 7);
        s.scalar(host, t0 + 8'100, "loss", 2.5 / (step + 1), step);
        if (!v.fp8)
            continue;
        double amax = 3.0;
        for (int g = 0; g < step; ++g)
            amax *= v.amax_growth;
        for (const int64_t site : { site_a, site_b }) {
            TensorStatsRow row;
            row.site_id = site;
            row.step = step;
            row.timestamp_ns = t0 + 600;
            row.stream_id = 7;
            row.dtype = schema::Dtype::BFloat16;
            row.target_format = schema::Fp8Format::E4M3;
            row.numel = 128 * 256;
            row.scale = 448.0 / amax;
            row.scale_inv = amax / 448.0;
            row.amax = amax;
            row.min_nonzero_abs = 1e-4;
            row.zeros = 12;
            row.underflows = 30;
            row.sum = 10.0;
            row.sum_squares = 400.0;
            row.sum_cubes = 20.0;
            row.sum_fourth = 900.0;
            row.hist_first_exponent = -14;
            row.exponent_histogram = { 30, 200, 1500, 9000, 16000, 5000, 1000, 20 };
            s.tensor_stats(row);
        }
    }
    return s;
}

std::vector<char> read_bytes(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return { std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>() };
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes)
{
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// Rewrites the file with 512-byte pages and no write-ahead log, as one self-contained file.
bool compact(const fs::path& path)
{
    sqlite3* db = nullptr;
    bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK
        && sqlite3_exec(db, "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;", nullptr, nullptr, nullptr)
            == SQLITE_OK;
    if (!ok)
        std::fprintf(stderr, "fuzz_seeds: cannot compact %s: %s\n", path.c_str(), sqlite3_errmsg(db));
    sqlite3_close(db);
    return ok;
}

bool write_trace(const Scenario& s, bool nsight, const fs::path& path)
{
    fs::remove(path);
    const auto written = nsight ? s.write_nsight(path.string()) : s.write_fp8scope(path.string());
    if (!written) {
        std::fprintf(stderr, "fuzz_seeds: cannot write %s: %s\n", path.c_str(), written.error().message.c_str());
        return false;
    }
    return compact(path);
}

// A deterministic program for fuzz_rows (xorshift64; any bytes are a program).
std::vector<char> row_program(uint64_t seed, size_t length)
{
    std::vector<char> bytes(length);
    for (char& b : bytes) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        b = static_cast<char>(seed);
    }
    return bytes;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_seeds OUT_DIR\n");
        return 2;
    }
    const fs::path out = argv[1];
    for (const char* target : { "loader", "report", "nsight", "compare", "rows" })
        fs::create_directories(out / target);
    const Variant variants[] = {
        { .name = "fp8-markers" },
        { .name = "bf16-nvtx", .fp8 = false, .nvtx_steps = true },
        { .name = "two-devices", .two_devices = true },
        { .name = "windowed", .windowed = true },
    };
    const fs::path scratch = out / "scratch.sqlite";
    for (const Variant& v : variants) {
        const Scenario s = demo(v);
        for (const bool nsight : { false, true }) {
            if (!write_trace(s, nsight, scratch))
                return 1;
            const auto bytes = read_bytes(scratch);
            const std::string name = std::string(nsight ? "nsys-" : "") + v.name + ".sqlite";
            write_bytes(out / (nsight ? "nsight" : "loader") / name, bytes);
            write_bytes(out / "report" / name, bytes);
        }
    }
    // Compare pairs: a clean run against itself, and a drifting run against the clean reference.
    for (const double growth : { 1.0, 1.6 }) {
        if (!write_trace(demo({ .name = "run", .amax_growth = growth }), false, scratch))
            return 1;
        const auto run = read_bytes(scratch);
        if (!write_trace(demo({ .name = "ref" }), false, scratch))
            return 1;
        const auto ref = read_bytes(scratch);
        // split_two(): a 4-byte little-endian length of the run, then both files.
        std::vector<char> pair;
        for (int shift = 0; shift < 32; shift += 8)
            pair.push_back(static_cast<char>(run.size() >> shift));
        pair.insert(pair.end(), run.begin(), run.end());
        pair.insert(pair.end(), ref.begin(), ref.end());
        write_bytes(out / "compare" / (growth > 1 ? "drift-vs-clean.pair" : "clean-vs-clean.pair"), pair);
    }
    fs::remove(scratch);
    for (uint64_t seed = 1; seed <= 8; ++seed)
        write_bytes(out / "rows" / ("program-" + std::to_string(seed)),
            row_program(seed * 0x9E3779B97F4A7C15ull, 64 * seed * seed));
    std::printf("fuzz_seeds: wrote the seeds to %s\n", out.c_str());
    return 0;
}
