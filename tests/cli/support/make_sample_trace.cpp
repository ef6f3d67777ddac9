// fp8scope_make_sample_trace: writes samples/traces/scenario-demo.sqlite, the synthetic trace that the README's
// demo command shows until a real H100 recording replaces it. It is made by the scenario builder through the
// real writer, so it is exactly what the collector would write for this timeline, but no GPU ran anything.
//
//   fp8scope_make_sample_trace samples/traces/scenario-demo.sqlite
//
// The timeline looks like three steps of an FP8 training loop (TransformerEngine-style delayed scaling): per
// layer a cast/transpose, an amax reduction and an FP8 GEMM forward, two GEMMs backward, an optimizer kernel
// and the amax/scale update, then `loss.item()` (a 4-byte device-to-host copy and a stream sync).
#include "scenario.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

using namespace fp8scope;
using testing::HostThread;
using testing::Scenario;

constexpr int kSteps = 3;
constexpr int kLayers = 4;
constexpr int64_t kStepPeriodNs = 2'000'000;
constexpr int64_t kLaunchLatencyNs = 4'000; // API end to kernel start when the GPU is idle
constexpr int64_t kApiGapNs = 1'500; // host time between two launches (Python, framework)

constexpr const char* kGemmForward = "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128_cublas";
constexpr const char* kGemmBackward = "sm90_xmma_gemm_e5m2e4m3_e4m3f32_f32_nn_n_tilesize128x128x128_cublas";
constexpr const char* kCast = "void transformer_engine::cast_transpose_kernel<128, float, __nv_fp8_e4m3>(float "
                              "const*, __nv_fp8_e4m3*, __nv_fp8_e4m3*, float const*, float*, float*, unsigned long)";
constexpr const char* kAmax = "void transformer_engine::amax_kernel<float>(float const*, float*, unsigned long)";
constexpr const char* kScaleUpdate
    = "void transformer_engine::delayed_scaling::kernel::update_scale_kernel(float const*, float*, float*)";
constexpr const char* kOptimizer = "void multi_tensor_apply_kernel<AdamFunctor<float>>(int, int*, AdamFunctor<float>)";

// Host and device clocks of one stream: a launch starts when the host gets to it, the kernel when both the
// launch has landed and the previous kernel has finished.
class Timeline {
public:
    Timeline(Scenario& scenario, HostThread thread)
        : scenario_(scenario)
        , thread_(thread)
    {
    }

    void host_at(int64_t ns) { host_ns_ = ns; }
    int64_t host_ns() const { return host_ns_; }

    void kernel(const char* name, int64_t api_ns, int64_t kernel_ns, std::array<int32_t, 3> grid)
    {
        const int64_t api_end = host_ns_ + api_ns;
        const int64_t start = std::max(api_end + kLaunchLatencyNs, device_free_ns_);
        scenario_.launch(thread_, { .api_start_ns = host_ns_, .api_end_ns = api_end },
            { .start_ns = start, .end_ns = start + kernel_ns, .name = name, .grid = grid });
        device_free_ns_ = start + kernel_ns;
        host_ns_ = api_end + kApiGapNs;
    }

    // loss.item(): an async 4-byte copy to pinned memory, then the host waits for the stream.
    void read_back_loss()
    {
        const int64_t api_end = host_ns_ + 6'000;
        const int64_t start = std::max(api_end + kLaunchLatencyNs, device_free_ns_);
        scenario_.memcpy(thread_, { .api_start_ns = host_ns_, .api_end_ns = api_end, .name = "cudaMemcpyAsync_v3020" },
            { .start_ns = start,
                .end_ns = start + 2'000,
                .bytes = 4,
                .kind = schema::MemcpyKind::DtoH,
                .src_kind = schema::MemoryKind::Device,
                .dst_kind = schema::MemoryKind::Pinned });
        device_free_ns_ = start + 2'000;
        const int64_t sync_start = api_end + 500;
        const int64_t sync_end = device_free_ns_ + 3'000;
        scenario_.sync(thread_, sync_start, sync_end, schema::SyncType::StreamSynchronize, 7u);
        host_ns_ = sync_end + kApiGapNs;
    }

private:
    Scenario& scenario_;
    HostThread thread_;
    int64_t host_ns_ = 0;
    int64_t device_free_ns_ = 0;
};

TensorStatsRow stats_row(int64_t site, int64_t step, int64_t at_ns, schema::Dtype dtype, schema::Fp8Format format,
    double amax, double fp8_max)
{
    TensorStatsRow row;
    row.site_id = site;
    row.step = step;
    row.timestamp_ns = at_ns;
    row.stream_id = 7;
    row.dtype = dtype;
    row.target_format = format;
    row.numel = 4096 * 4096;
    row.scale = fp8_max / amax;
    row.scale_inv = amax / fp8_max;
    row.amax = amax;
    row.min_nonzero_abs = amax * 1e-6;
    row.zeros = 1'024;
    row.underflows = 2'048 + step * 16;
    row.subnormals = 8'192;
    row.sum = 0.5;
    row.sum_squares = static_cast<double>(row.numel) * amax * amax / 64.0;
    row.sum_cubes = 0.0;
    row.sum_fourth = static_cast<double>(row.numel) * amax * amax * amax * amax / 1024.0;
    row.hist_first_exponent = -20;
    row.exponent_histogram = { 16, 64, 256, 1'024, 4'096, 16'384, 65'536, 262'144, 1'048'576, 4'194'304, 8'388'608,
        2'097'152, 524'288, 131'072, 32'768, 8'192, 2'048, 512, 128, 32, 8 };
    return row;
}

Scenario demo_scenario()
{
    Scenario s;
    s.session().producer = "fp8scope " FP8SCOPE_PROJECT_VERSION " (scenario builder: synthetic demo trace)";
    s.session().command_line = "python train_fp8.py --steps 3 (synthetic: no process ran)";
    s.session().host = "scenario-builder";
    s.session().rank = 0;
    s.session().world_size = 1;
    const HostThread host = s.thread(s.session().pid, s.session().pid, "python");

    const int64_t weight_site = s.tensor_site("layers.0.fc1.weight", schema::TensorRole::Weight, schema::Dtype::E4M3,
        4096, 4096, schema::StatsSource::ExplicitProbe, "ProfilerStep/forward/layers.0");
    const int64_t grad_site = s.tensor_site("layers.0.fc1.grad_output", schema::TensorRole::Gradient,
        schema::Dtype::E5M2, 4096, 4096, schema::StatsSource::ExplicitProbe, "ProfilerStep/backward/layers.0");

    Timeline timeline(s, host);
    for (int step = 0; step < kSteps; ++step) {
        const int64_t step_start = 1'000'000 + step * kStepPeriodNs;
        timeline.host_at(step_start);
        s.step_marker(host, step_start, step);

        const int64_t forward_start = timeline.host_ns();
        for (int layer = 0; layer < kLayers; ++layer) {
            timeline.kernel(kCast, 5'000, 9'000, { 512, 1, 1 });
            timeline.kernel(kAmax, 4'000, 3'000, { 132, 1, 1 });
            timeline.kernel(kGemmForward, 7'000, 62'000, { 32, 32, 1 });
        }
        s.nvtx_range(host, forward_start, timeline.host_ns(), "forward");
        s.tensor_stats(stats_row(weight_site, step, timeline.host_ns(), schema::Dtype::E4M3, schema::Fp8Format::E4M3,
            2.5 + 0.1 * step, 448.0));

        const int64_t backward_start = timeline.host_ns();
        for (int layer = kLayers - 1; layer >= 0; --layer) {
            timeline.kernel(kCast, 5'000, 9'000, { 512, 1, 1 });
            timeline.kernel(kGemmBackward, 7'000, 60'000, { 32, 32, 1 });
            timeline.kernel(kGemmBackward, 7'000, 61'000, { 32, 32, 1 });
        }
        s.nvtx_range(host, backward_start, timeline.host_ns(), "backward");
        s.tensor_stats(stats_row(grad_site, step, timeline.host_ns(), schema::Dtype::E5M2, schema::Fp8Format::E5M2,
            0.03 * (step + 1), 57344.0));

        const int64_t optimizer_start = timeline.host_ns();
        timeline.kernel(kOptimizer, 8'000, 40'000, { 264, 1, 1 });
        timeline.kernel(kScaleUpdate, 5'000, 2'000, { 1, 1, 1 });
        s.nvtx_range(host, optimizer_start, timeline.host_ns(), "optimizer");

        timeline.read_back_loss();
        s.scalar(host, timeline.host_ns(), "loss", 4.0 - 0.25 * step, step);
        s.nvtx_range(host, step_start, timeline.host_ns(), "ProfilerStep#" + std::to_string(step));
    }
    return s;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT.sqlite\n", argv[0]);
        return 2;
    }
    const std::string path = argv[1];
    // The writer never replaces an existing file (it may be another process's trace); this program owns its
    // output, so it removes the old one first.
    std::error_code ignored;
    for (const char* suffix : { "", "-wal", "-shm", "-journal" })
        std::filesystem::remove(path + suffix, ignored);
    const auto written = demo_scenario().write_fp8scope(path);
    if (!written) {
        std::fprintf(stderr, "fp8scope_make_sample_trace: %s\n", written.error().message.c_str());
        return 1;
    }
    std::printf("wrote %s\n", path.c_str());
    return 0;
}
