// Writes the per-rank traces of one synthetic multi-GPU FP8 training job, for the multi-rank benchmark
// (bench/ranks_bench.sh, docs/benchmarks.md "Across ranks"). Not a test: it prints what it wrote and how long it took.
//
//   fp8scope_make_rank_traces --out DIR [--ranks 64] [--steps 200] [--kernels-per-step 1000] [--hosts H]
//       [--straggler-rank R --straggler-ns N] [--jobs J]
//
// One job: every trace has the same command line and world size, its own rank, and the host of its group of ranks
// (H hosts, default one per 8 ranks). Each host's clock is off by a planted offset (host 0's by none), each rank's
// session starts at its own time. Per step, on each rank: a step marker (as fp8scope.step() writes it, at the start of
// the step), the host launching K compute kernels (forward 2/5, backward 1/2, optimizer the rest: FP8 GEMMs, flash
// attention, norms, casts, elementwise) and 14 NCCL collectives (4 AllGathers in the forward, 8 bf16 AllReduce
// gradient buckets in the backward, both overlapped by compute; 2 f32 ReduceScatters after it, which the optimizer
// waits for), then a cudaStreamSynchronize and a host pause (data loading). A collective ends on every rank when the
// last rank has started it plus its transfer time, so early ranks wait; the straggler starts each of its collectives
// N ns late. 32 FP8 weight sites write one tensor statistics sample per step with the same scale on every rank.
// Compute is the same on every rank; ranks differ by small host and arrival jitter. DIR/planted.json lists what was
// planted (straggler, clock offsets), for the benchmark's check of the report.
#include "rank_scenario.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace fp8scope;
using fp8scope::testing::RankTrace;

namespace {

struct Shape {
    int32_t ranks = 64;
    int64_t steps = 200;
    int64_t kernels_per_step = 1000; // compute kernels; the 14 collectives come on top
    int32_t hosts = 0; // 0: one per 8 ranks
    int32_t straggler_rank = -1;
    int64_t straggler_ns = 0;
    int32_t ranks_per_host() const { return (ranks + hosts - 1) / hosts; }
};

// Deterministic noise (splitmix64 over the key), so that every rank's generator computes every rank's timing alike.
uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
int64_t noise(uint64_t a, uint64_t b, uint64_t c, uint64_t d, int64_t lo, int64_t hi) // in [lo, hi]
{
    const uint64_t h = mix(mix(mix(mix(a) ^ b) ^ c) ^ d);
    return lo + static_cast<int64_t>(h % static_cast<uint64_t>(hi - lo + 1));
}
enum Salt : uint64_t {
    kDuration = 1,
    kHostJitter,
    kArrival,
    kLinkLatency,
    kTransfer,
    kLoader,
    kSessionStart,
    kClock,
    kAmax
};

constexpr int64_t kUs = 1000;
constexpr int64_t kFirstStepNs = 1'000'000'000; // true time of the first step; ranks start in the 0.4 s before

struct KernelKind {
    const char* name;
    int64_t mean_ns;
};
// One transformer layer's kernels, forward and backward, as TransformerEngine and cuBLASLt name them on an H100.
const std::vector<KernelKind> kForward = { { "ln_fwd_tuned_kernel", 12 * kUs }, { "cast_transpose_kernel", 8 * kUs },
    { "nvjet_sm90_qqtst_128x256_64x4_2x1_v_bz_coopA_TNT", 90 * kUs }, { "flash_fwd_kernel", 120 * kUs },
    { "nvjet_sm90_qqtst_128x128_64x4_1x2_h_bz_coopB_TNT", 45 * kUs }, { "vectorized_elementwise_kernel", 6 * kUs },
    { "ln_fwd_tuned_kernel", 12 * kUs }, { "cast_transpose_kernel", 8 * kUs },
    { "nvjet_sm90_qqtst_256x128_64x4_2x1_v_bz_coopA_TNT", 150 * kUs }, { "gelu_kernel", 15 * kUs },
    { "nvjet_sm90_qqtst_256x128_64x4_2x1_v_bz_coopA_TNT", 150 * kUs } };
const std::vector<KernelKind> kBackward = { { "cast_transpose_dbias_kernel", 10 * kUs },
    { "nvjet_sm90_qrtst_256x128_64x4_2x1_v_bz_coopA_NNT", 150 * kUs },
    { "nvjet_sm90_qrtst_128x256_64x4_1x2_h_bz_coopB_NTN", 150 * kUs }, { "dgelu_kernel", 15 * kUs },
    { "ln_bwd_tuned_kernel", 20 * kUs }, { "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", 240 * kUs },
    { "nvjet_sm90_qrtst_128x128_64x4_1x2_h_bz_coopB_NNT", 45 * kUs }, { "vectorized_elementwise_kernel", 6 * kUs } };
const std::vector<KernelKind> kOptimizer
    = { { "multi_tensor_apply_kernel", 20 * kUs }, { "amax_and_scale_update_kernel", 5 * kUs } };

struct Collective {
    const char* name;
    int64_t transfer_ns;
};
const Collective kAllGather { "ncclDevKernel_AllGather_RING_LL", 250 * kUs };
const Collective kAllReduce { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 600 * kUs };
const Collective kReduceScatter { "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", 300 * kUs };
constexpr int kSites = 32; // FP8 weight sites: 8 layers x qkv, proj, fc1, fc2

// One launch of the step's host loop, in its nominal timing (ns from the step marker; the same on every rank).
struct Launch {
    const char* name;
    int64_t api_start_ns, api_end_ns;
    const Collective* collective = nullptr; // else a compute kernel
    int64_t start_ns = 0, end_ns = 0; // compute kernels before the optimizer: their GPU time
    int64_t ready_ns = 0; // collectives: when its inputs are ready (the compute before it is done)
};

struct StepPlan {
    std::vector<Launch> launches; // host order
    size_t first_optimizer = 0; // launches from here wait for the last collective
    int64_t backward_end_ns = 0; // the last compute kernel before the optimizer ends
    int64_t sync_start_ns = 0; // the host's cudaStreamSynchronize after the last launch
};

constexpr int64_t kLaunchLatencyNs = 3 * kUs;

StepPlan plan_step(const Shape& shape, int64_t step)
{
    const int64_t forward = shape.kernels_per_step * 2 / 5, backward = shape.kernels_per_step / 2;
    StepPlan plan;
    int64_t host = 20 * kUs, gpu_free = 0, kernel = 0;
    const auto launch = [&](const char* name, int64_t api_ns, const Collective* collective) {
        plan.launches.push_back({ name, host, host + api_ns, collective });
        host += api_ns + 1500;
        return &plan.launches.back();
    };
    const auto compute = [&](const KernelKind& kind) {
        Launch* l = launch(kind.name, noise(kDuration, step, kernel, 0, 4 * kUs, 6 * kUs), nullptr);
        l->start_ns = std::max(l->api_end_ns + kLaunchLatencyNs, gpu_free);
        l->end_ns = gpu_free = l->start_ns + kind.mean_ns * noise(kDuration, step, kernel, 1, 90, 110) / 100;
        ++kernel;
    };
    const auto collective = [&](const Collective& c) {
        Launch* l = launch(c.name, 8 * kUs, &c);
        l->ready_ns = std::max(l->api_end_ns + kLaunchLatencyNs, gpu_free);
    };
    for (int64_t i = 0; i < forward; ++i) {
        if (i % (forward / 4) == 0 && i / (forward / 4) < 4)
            collective(kAllGather); // the next layer group's parameters
        compute(kForward[static_cast<size_t>(i) % kForward.size()]);
    }
    for (int64_t i = 0; i < backward; ++i) {
        compute(kBackward[static_cast<size_t>(i) % kBackward.size()]);
        if ((i + 1) % (backward / 9) == 0 && (i + 1) / (backward / 9) <= 8)
            collective(kAllReduce); // a gradient bucket is full
    }
    collective(kReduceScatter);
    collective(kReduceScatter);
    plan.first_optimizer = plan.launches.size();
    plan.backward_end_ns = gpu_free;
    for (int64_t i = forward + backward; i < shape.kernels_per_step; ++i)
        launch(kOptimizer[static_cast<size_t>(i) % kOptimizer.size()].name, 5 * kUs, nullptr);
    plan.sync_start_ns = host;
    return plan;
}

int64_t host_clock_offset_ns(int32_t host)
{
    return host == 0 ? 0 : noise(kClock, static_cast<uint64_t>(host), 0, 0, -2'000'000, 2'000'000);
}

// Every rank's GPU timing of one step (true time): the collectives' start and end per rank, and when each rank's
// optimizer starts and its GPU work ends.
struct StepTiming {
    std::vector<int64_t> marker_ns; // per rank
    std::vector<std::vector<int64_t>> coll_start_ns, coll_end_ns; // [collective][rank]
    std::vector<int64_t> gpu_end_ns; // per rank
};

const KernelKind& optimizer_kind(const Shape& shape, size_t launch, const StepPlan& plan)
{
    const size_t i = static_cast<size_t>(shape.kernels_per_step) - (plan.launches.size() - launch);
    return kOptimizer[i % kOptimizer.size()];
}

// The optimizer kernels of one rank, after the last collective: `emit` gets each one's launch and GPU time.
int64_t run_optimizer(
    const Shape& shape, const StepPlan& plan, int64_t marker_ns, int64_t wait_until_ns, const auto& emit)
{
    int64_t gpu_free = std::max(marker_ns + plan.backward_end_ns, wait_until_ns);
    for (size_t i = plan.first_optimizer; i < plan.launches.size(); ++i) {
        const int64_t start = std::max(marker_ns + plan.launches[i].api_end_ns + kLaunchLatencyNs, gpu_free);
        gpu_free = start + optimizer_kind(shape, i, plan).mean_ns;
        emit(plan.launches[i], start, gpu_free);
    }
    return gpu_free;
}

StepTiming time_step(const Shape& shape, const StepPlan& plan, int64_t step, int64_t step_start_ns)
{
    const auto ranks = static_cast<size_t>(shape.ranks);
    StepTiming t;
    for (size_t r = 0; r < ranks; ++r)
        t.marker_ns.push_back(step_start_ns + noise(kHostJitter, r, step, 0, 0, 20 * kUs));
    std::vector<int64_t> comm_free(ranks, 0), start(ranks);
    uint64_t c = 0;
    for (const Launch& l : plan.launches) {
        if (!l.collective)
            continue;
        for (size_t r = 0; r < ranks; ++r) {
            const int64_t late = static_cast<int32_t>(r) == shape.straggler_rank ? shape.straggler_ns : 0;
            start[r]
                = std::max(t.marker_ns[r] + l.ready_ns + noise(kArrival, r, step, c, 0, 15 * kUs) + late, comm_free[r]);
        }
        const int64_t last = *std::max_element(start.begin(), start.end());
        const int64_t transfer = l.collective->transfer_ns * noise(kTransfer, step, c, 0, 95, 105) / 100;
        for (size_t r = 0; r < ranks; ++r)
            comm_free[r] = last + transfer + noise(kLinkLatency, r, step, c, 0, 4 * kUs);
        t.coll_start_ns.push_back(start);
        t.coll_end_ns.push_back(comm_free);
        ++c;
    }
    for (size_t r = 0; r < ranks; ++r)
        t.gpu_end_ns.push_back(run_optimizer(shape, plan, t.marker_ns[r], comm_free[r], [](auto&&...) {}));
    return t;
}

std::string host_name(const Shape& shape, int32_t rank)
{
    return "node" + std::to_string(rank / shape.ranks_per_host());
}

// One rank's trace: every step is timed for all ranks (cheap), and this rank's rows are kept.
int write_rank(const Shape& shape, const std::vector<StepPlan>& plans, int32_t rank, const std::string& path)
{
    RankTrace trace(
        rank, {}, shape.ranks, host_name(shape, rank), "python train.py --fp8 --nnodes " + std::to_string(shape.hosts));
    testing::Scenario& s = trace.s;
    const int32_t host = rank / shape.ranks_per_host();
    const int64_t session_start = noise(kSessionStart, static_cast<uint64_t>(rank), 0, 0, 0, 400'000'000);
    // The host's clock reads true time + its offset: the session start is read on it, later times relative to it.
    s.session().utc_epoch_ns = testing::kRankScenarioUtc + session_start + host_clock_offset_ns(host);
    s.session().producer = "fp8scope " FP8SCOPE_VERSION " (bench: make_rank_traces)";
    s.session().pid = 10'000 + rank;
    const auto at = [&](int64_t true_ns) { return true_ns - session_start; };
    std::vector<int64_t> sites;
    for (int i = 0; i < kSites; ++i) {
        static const char* const kParts[] = { "attn.qkv", "attn.proj", "mlp.fc1", "mlp.fc2" };
        sites.push_back(s.tensor_site("layers." + std::to_string(i / 4) + "." + kParts[i % 4],
            schema::TensorRole::Weight, schema::Dtype::BFloat16, 4096, i % 4 >= 2 ? 16384 : 4096));
    }
    const auto r = static_cast<size_t>(rank);
    int64_t step_start = kFirstStepNs;
    for (int64_t step = 1; step <= shape.steps; ++step) {
        const StepPlan& plan = plans[static_cast<size_t>(step - 1)];
        const StepTiming t = time_step(shape, plan, step, step_start);
        const int64_t marker = t.marker_ns[r];
        s.step_marker(trace.host, at(marker), step);
        size_t c = 0;
        const auto launch = [&](const Launch& l, int64_t start, int64_t end, uint32_t stream) {
            s.launch(trace.host,
                { .api_start_ns = at(marker + l.api_start_ns),
                    .api_end_ns = at(marker + l.api_end_ns),
                    .name = l.collective ? "cudaLaunchKernelExC_v11060" : "cudaLaunchKernel_v7000" },
                { .start_ns = at(start), .end_ns = at(end), .name = l.name, .stream_id = stream });
        };
        for (size_t i = 0; i < plan.first_optimizer; ++i) {
            const Launch& l = plan.launches[i];
            if (l.collective) {
                launch(l, t.coll_start_ns[c][r], t.coll_end_ns[c][r], testing::kCommStream);
                ++c;
            } else
                launch(l, marker + l.start_ns, marker + l.end_ns, 7);
        }
        run_optimizer(shape, plan, marker, t.coll_end_ns.back()[r],
            [&](const Launch& l, int64_t start, int64_t end) { launch(l, start, end, 7); });
        for (int i = 0; i < kSites; ++i) {
            // After the site's forward GEMM; the amax is reduced over the ranks, so every rank has the same scale.
            const double amax
                = 0.5 + static_cast<double>(noise(kAmax, static_cast<uint64_t>(i), step, 0, 0, 1000)) / 1000;
            TensorStatsRow row;
            row.site_id = sites[static_cast<size_t>(i)];
            row.step = step;
            row.timestamp_ns
                = at(marker + plan.launches[static_cast<size_t>(i) * plan.first_optimizer / (3 * kSites)].api_end_ns);
            row.dtype = schema::Dtype::BFloat16;
            row.target_format = schema::Fp8Format::E4M3;
            row.numel = 4096LL * 4096;
            row.amax = amax;
            row.scale = 448.0 / amax;
            row.scale_inv = amax / 448.0;
            s.tensor_stats(row);
        }
        s.sync(trace.host, at(marker + plan.sync_start_ns), at(t.gpu_end_ns[r] + 5 * kUs),
            schema::SyncType::StreamSynchronize, 7);
        // The next step starts after every rank's GPU work and the data loader.
        step_start = *std::max_element(t.gpu_end_ns.begin(), t.gpu_end_ns.end()) + 10 * kUs
            + noise(kLoader, static_cast<uint64_t>(step), 0, 0, 1'500'000, 2'500'000);
    }
    std::filesystem::remove(path);
    if (auto written = s.write_fp8scope(path); !written) {
        std::fprintf(stderr, "make_rank_traces: %s: %s\n", path.c_str(), written.error().message.c_str());
        return 1;
    }
    return 0;
}

// What was planted, for the benchmark to check the report against (not a trace: `report DIR` reads *.sqlite only).
void write_planted(const Shape& shape, const std::string& dir)
{
    std::ofstream out(dir + "/planted.json");
    out << "{\"ranks\": " << shape.ranks << ", \"steps\": " << shape.steps
        << ", \"kernels_per_step\": " << shape.kernels_per_step << ", \"straggler_rank\": " << shape.straggler_rank
        << ", \"straggler_ns\": " << shape.straggler_ns << ", \"hosts\": [";
    for (int32_t h = 0; h < shape.hosts; ++h)
        out << (h ? ", " : "") << "{\"host\": \"node" << h << "\", \"clock_offset_ns\": " << host_clock_offset_ns(h)
            << "}";
    out << "]}\n";
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Writes the per-rank traces of one synthetic multi-GPU job for the multi-rank benchmark",
        "fp8scope_make_rank_traces" };
    std::string out;
    Shape shape;
    unsigned jobs = std::max(1U, std::thread::hardware_concurrency());
    app.add_option("--out", out, "directory for rank-NN.sqlite and planted.json (traces in it are replaced)")
        ->required();
    app.add_option("--ranks", shape.ranks, "ranks (default 64)")->check(CLI::Range(2, 4096));
    app.add_option("--steps", shape.steps, "steps per rank (default 200)")
        ->check(CLI::Range(int64_t { 1 }, int64_t { 100'000 }));
    app.add_option("--kernels-per-step", shape.kernels_per_step,
           "compute kernels per step and rank; 14 collectives come on top (default 1000)")
        ->check(CLI::Range(int64_t { 100 }, int64_t { 1'000'000 }));
    app.add_option("--hosts", shape.hosts, "hosts the ranks are spread over (default one per 8 ranks)")
        ->check(CLI::Range(1, 4096));
    app.add_option(
        "--straggler-rank", shape.straggler_rank, "the rank that starts its collectives late (default none)");
    app.add_option("--straggler-ns", shape.straggler_ns, "how late, in ns, each collective of the step")
        ->check(CLI::Range(int64_t { 0 }, int64_t { 1'000'000'000 }));
    app.add_option("--jobs", jobs, "ranks written at once (default: the cores)")->check(CLI::Range(1U, 256U));
    CLI11_PARSE(app, argc, argv);
    if (shape.hosts == 0)
        shape.hosts = (shape.ranks + 7) / 8;
    if (shape.hosts > shape.ranks || shape.straggler_rank >= shape.ranks) {
        std::fprintf(stderr, "make_rank_traces: --hosts and --straggler-rank must be below --ranks\n");
        return 2;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::filesystem::create_directories(out);
    std::vector<StepPlan> plans; // the same on every rank
    for (int64_t step = 1; step <= shape.steps; ++step)
        plans.push_back(plan_step(shape, step));
    std::atomic<int32_t> next { 0 };
    std::atomic<int> failures { 0 };
    const int width = static_cast<int>(std::to_string(shape.ranks - 1).size());
    const auto work = [&] {
        for (int32_t rank = next++; rank < shape.ranks; rank = next++) {
            char name[32];
            std::snprintf(name, sizeof name, "/rank-%0*d.sqlite", width, rank);
            failures += write_rank(shape, plans, rank, out + name);
        }
    };
    {
        std::vector<std::jthread> threads;
        for (unsigned j = 1; j < std::min<unsigned>(jobs, static_cast<unsigned>(shape.ranks)); ++j)
            threads.emplace_back(work);
        work();
    }
    if (failures > 0)
        return 1;
    write_planted(shape, out);
    uintmax_t bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(out))
        if (entry.path().extension() == ".sqlite")
            bytes += entry.file_size();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("wrote %d rank traces to %s: %lld steps x %lld kernels (+14 collectives) each, %d hosts, straggler "
                "rank %d (+%lld ns per collective), in %.1f s, %.1f MB\n",
        shape.ranks, out.c_str(), static_cast<long long>(shape.steps), static_cast<long long>(shape.kernels_per_step),
        shape.hosts, shape.straggler_rank, static_cast<long long>(shape.straggler_ns), seconds,
        static_cast<double>(bytes) / 1e6);
    return 0;
}
