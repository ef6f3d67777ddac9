// scenario_from_bytes(): a small interpreter from bytes to scenario-builder calls. Values are drawn mostly near
// the others (so that rows meet in time and form steps and gaps) and sometimes from the edges of their type.
// Every value is read in a statement of its own (or in a braced initializer, which is ordered): the order in which a
// call's arguments are evaluated is unspecified, and an input must build the same trace under clang and g++, so that
// a regression input found by the fuzz build replays the same in the g++ build.
#include "scenario_from_bytes.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace fp8scope::fuzz {

namespace {

using namespace testing;

// Reads values off the input; past its end every value is zero, so that any input is a valid program.
class ByteReader {
public:
    explicit ByteReader(std::span<const uint8_t> bytes)
        : bytes_(bytes)
    {
    }
    bool empty() const { return at_ >= bytes_.size(); }
    uint8_t byte() { return at_ < bytes_.size() ? bytes_[at_++] : 0; }
    template <class T> T raw()
    {
        std::array<uint8_t, sizeof(T)> buffer {};
        for (auto& b : buffer)
            b = byte();
        T value;
        std::memcpy(&value, buffer.data(), sizeof value);
        return value;
    }
    bool flag() { return byte() & 1; }
    uint32_t small(uint32_t count) { return byte() % count; }

private:
    std::span<const uint8_t> bytes_;
    size_t at_ = 0;
};

// A time: nearly all near the previous one (steps of up to 65 us forward or a little back), a few from the edges. A
// trace with one time out of range is refused whole, so edges are rare enough that most programs load.
class Clock {
public:
    int64_t next(ByteReader& in)
    {
        const uint8_t kind = in.byte();
        if (kind < 248) {
            now_ += int64_t { in.raw<uint16_t>() } - (kind < 20 ? 40'000 : 0);
            return now_;
        }
        constexpr int64_t kLimit = int64_t { 1 } << 53; // analyzer::kMaxTraceTimeNs
        constexpr std::array<int64_t, 8> kEdges { 0, -1, kLimit, kLimit + 1, -kLimit, -kLimit - 1,
            std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min() };
        return kind < 254 ? kEdges[kind % kEdges.size()] : in.raw<int64_t>();
    }
    // An end for `start`: usually a short length, sometimes before the start or at an edge.
    int64_t end_after(ByteReader& in, int64_t start)
    {
        const uint8_t kind = in.byte();
        if (kind < 248) {
            const int64_t length = in.raw<uint16_t>();
            return start > std::numeric_limits<int64_t>::max() - length ? start : start + length;
        }
        return kind < 252 ? start - 1 : next(in);
    }

private:
    int64_t now_ = 1'000;
};

double any_double(ByteReader& in)
{
    const uint8_t kind = in.byte();
    constexpr std::array<double, 8> kEdges { 0.0, -0.0, std::numeric_limits<double>::quiet_NaN(),
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(), 448.0 };
    if (kind < 224)
        return double(in.raw<uint16_t>()) / 64.0;
    return kind < 248 ? kEdges[kind % kEdges.size()] : in.raw<double>();
}

int64_t any_count(ByteReader& in)
{
    const uint8_t kind = in.byte();
    if (kind < 248)
        return in.raw<uint16_t>();
    return kind < 252 ? -int64_t { in.raw<uint16_t>() } : in.raw<int64_t>();
}

const char* kernel_name(ByteReader& in)
{
    // Names the kernel classifier and the collector-work detection look for, and a mangled one.
    constexpr std::array<const char*, 8> kNames { "sm90_xmma_gemm_e4m3", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "vectorized_elementwise_kernel", "flash_fwd_kernel", "_Z6kernelPfi", "fp8scope_tensor_stats", "cudaMemcpyAsync",
        "" };
    return kNames[in.small(kNames.size())];
}

void tensor_sample(FuzzedTrace& t, ByteReader& in, Clock& clock, std::vector<int64_t>& sites)
{
    if (sites.empty() || in.small(4) == 0) {
        const auto role = static_cast<schema::TensorRole>(in.small(8));
        const auto dtype = static_cast<schema::Dtype>(in.small(5));
        const int64_t rows = any_count(in);
        const int64_t cols = any_count(in);
        const auto source = static_cast<schema::StatsSource>(in.small(3));
        sites.push_back(
            t.scenario.tensor_site("layers." + std::to_string(sites.size()) + ".fc1", role, dtype, rows, cols, source));
    }
    TensorStatsRow row;
    row.site_id = sites[in.small(static_cast<uint32_t>(sites.size()))];
    if (in.flag())
        row.step = any_count(in);
    row.timestamp_ns = clock.next(in);
    row.device_id = in.small(3);
    row.stream_id = in.small(9);
    row.dtype = static_cast<schema::Dtype>(in.small(5));
    row.target_format = static_cast<schema::Fp8Format>(in.small(3));
    row.numel = any_count(in);
    if (in.flag())
        row.scale = any_double(in);
    if (in.flag())
        row.scale_inv = any_double(in);
    row.amax = any_double(in);
    if (in.flag())
        row.min_nonzero_abs = any_double(in);
    for (int64_t* count :
        { &row.zeros, &row.nans, &row.infs, &row.overflows, &row.underflows, &row.subnormals, &row.saturated })
        *count = in.flag() ? any_count(in) : 0;
    row.sum = any_double(in);
    row.sum_squares = any_double(in);
    row.sum_cubes = any_double(in);
    row.sum_fourth = any_double(in);
    row.hist_first_exponent = in.flag() ? in.raw<int32_t>() : -static_cast<int32_t>(in.small(64));
    row.exponent_histogram.resize(in.small(48));
    for (auto& bin : row.exponent_histogram)
        bin = in.flag() ? in.raw<uint64_t>() : in.small(100);
    if (in.small(4) == 0) { // a per-block sample beside it (format 1.6), its site scaled per row or block
        t.scenario.site_recipe(row.site_id, static_cast<schema::ScaleRecipe>(in.small(7)));
        BlockStatsRow b;
        b.site_id = row.site_id;
        b.step = row.step;
        b.timestamp_ns = row.timestamp_ns;
        for (int64_t* count : { &b.block_rows, &b.block_cols, &b.blocks, &b.bad_scale_blocks, &b.saturating_blocks,
                 &b.subnormal_blocks, &b.numel, &b.zeros, &b.nans, &b.infs, &b.subnormals, &b.saturated })
            *count = in.flag() ? any_count(in) : in.small(300);
        for (double* value : { &b.amax, &b.block_amax_min, &b.block_amax_p50, &b.block_amax_p99 })
            *value = any_double(in);
        if (in.flag())
            b.scale_inv_min = any_double(in);
        if (in.flag())
            b.scale_inv_max = any_double(in);
        b.hist_first_exponent = in.flag() ? in.raw<int32_t>() : -static_cast<int32_t>(in.small(64));
        b.exponent_histogram.resize(in.small(24));
        for (auto& bin : b.exponent_histogram)
            bin = in.flag() ? in.raw<uint64_t>() : in.small(100);
        t.scenario.block_stats(std::move(b));
    }
    t.scenario.tensor_stats(std::move(row));
}

void one_operation(FuzzedTrace& t, ByteReader& in, Clock& clock, std::vector<HostThread>& threads,
    std::vector<uint32_t>& correlations, std::vector<int64_t>& sites)
{
    Scenario& s = t.scenario;
    const HostThread thread = threads[in.small(static_cast<uint32_t>(threads.size()))];
    const auto api = [&](const char* name) {
        ApiSpec spec { .api_start_ns = clock.next(in), .name = name };
        spec.api_end_ns = clock.end_after(in, spec.api_start_ns);
        if (in.small(8) == 0)
            spec.event_class = schema::EventClass::CudaDriver;
        return spec;
    };
    const auto kernel = [&] {
        KernelSpec spec { .start_ns = clock.next(in), .name = kernel_name(in) };
        spec.end_ns = clock.end_after(in, spec.start_ns);
        spec.device_id = in.small(3);
        spec.stream_id = in.small(9);
        spec.graph_id = in.small(8) == 0 ? in.small(3) + 1 : 0;
        return spec;
    };
    switch (in.small(18)) {
    case 0:
    case 1:
    case 2: {
        const ApiSpec call = api("cudaLaunchKernel_v7000");
        correlations.push_back(s.launch(thread, call, kernel()));
        break;
    }
    case 3: {
        CopySpec copy { .start_ns = clock.next(in) };
        copy.end_ns = clock.end_after(in, copy.start_ns);
        copy.bytes = in.raw<uint32_t>();
        copy.kind = static_cast<schema::MemcpyKind>(in.small(12));
        copy.src_kind = static_cast<schema::MemoryKind>(in.small(8));
        copy.dst_kind = static_cast<schema::MemoryKind>(in.small(8));
        copy.device_id = in.small(3);
        copy.stream_id = in.small(9);
        correlations.push_back(s.memcpy(thread, api(in.flag() ? "cudaMemcpy_v3020" : "cudaMemcpyAsync_v3020"), copy));
        break;
    }
    case 4: {
        MemsetSpec set { .start_ns = clock.next(in) };
        set.end_ns = clock.end_after(in, set.start_ns);
        set.bytes = in.raw<uint32_t>();
        set.device_id = in.small(3);
        set.stream_id = in.small(9);
        correlations.push_back(s.memset(thread, api("cudaMemsetAsync_v3020"), set));
        break;
    }
    case 5: {
        const int64_t start = clock.next(in);
        const auto type = static_cast<schema::SyncType>(in.small(5));
        std::optional<uint32_t> stream;
        if (in.flag())
            stream = in.small(9);
        const int64_t end = clock.end_after(in, start);
        correlations.push_back(s.sync(thread, start, end, type, stream, in.small(3)));
        break;
    }
    case 6: {
        const int64_t start = clock.next(in);
        // Step ranges ("step 12", "train_step") are what the step finder looks for; the number may be anything.
        const std::string text = in.flag() ? "step " + std::to_string(any_count(in)) : "forward";
        s.nvtx_range(thread, start, clock.end_after(in, start), text);
        break;
    }
    case 7:
        s.nvtx_mark(thread, clock.next(in), "mark");
        break;
    case 8:
    case 9: {
        const int64_t at = clock.next(in);
        s.step_marker(thread, at, in.flag() ? any_count(in) : in.small(16));
        break;
    }
    case 10: {
        std::optional<int64_t> step;
        if (in.flag())
            step = any_count(in);
        const int64_t at = clock.next(in);
        const char* name = in.flag() ? "loss" : "lr";
        s.scalar(thread, at, name, any_double(in), step);
        break;
    }
    case 11:
        tensor_sample(t, in, clock, sites);
        break;
    case 12:
        s.orphan_kernel(kernel());
        break;
    case 13:
        // Another kernel of an earlier launch, or of a correlation id no call has.
        {
            const uint32_t correlation = correlations.empty() || in.flag()
                ? in.raw<uint32_t>()
                : correlations[in.small(uint32_t(correlations.size()))];
            s.more_of(correlation, kernel());
            break;
        }
    case 14:
        s.collector_work(correlations.empty() || in.flag() ? in.raw<uint32_t>() : correlations.back());
        break;
    case 15: {
        OverheadRow row;
        row.start_ns = clock.next(in);
        row.end_ns = clock.end_after(in, row.start_ns);
        row.kind = static_cast<schema::OverheadKind>(in.small(8));
        s.overhead(row);
        if (in.flag()) {
            DroppedRow dropped;
            dropped.timestamp_ns = clock.next(in);
            dropped.source = static_cast<schema::DropSource>(in.small(7));
            dropped.count = any_count(in);
            s.dropped(dropped);
        }
        break;
    }
    case 16: {
        const int64_t start = clock.next(in);
        std::optional<int64_t> end;
        if (in.flag())
            end = clock.end_after(in, start);
        std::optional<int64_t> first, last;
        if (in.flag())
            first = any_count(in), last = any_count(in);
        s.capture_window(start, end, static_cast<schema::CaptureTrigger>(in.small(4)), first, last);
        break;
    }
    default:
        correlations.push_back(s.api_call(thread, api(in.flag() ? "cudaEventRecord_v3020" : "cudaFree_v3020")));
        break;
    }
}

} // namespace

FuzzedTrace scenario_from_bytes(std::span<const uint8_t> bytes)
{
    ByteReader in(bytes);
    FuzzedTrace t;
    const uint8_t setup = in.byte();
    t.nsight = setup & 1;
    t.finished = !(setup & 2);
    if (setup & 4) {
        t.scenario.session().rank = in.small(4);
        t.scenario.session().world_size = int32_t(in.small(4)) - 1;
    }
    if (setup & 8)
        t.scenario.capture_mode(in.flag() ? "steps" : "periodic", "--capture-steps 2:5");
    if (setup & 16)
        t.options.steps.warmup = in.small(4);
    if (setup & 32) {
        t.options.first_step = any_count(in);
        t.options.last_step = any_count(in);
    }
    if (setup & 64)
        t.options.device = in.small(3);
    std::vector<HostThread> threads { t.scenario.thread(4242, 4242, "python") };
    if (setup & 128)
        threads.push_back(t.scenario.thread(4242, 4243, "pt_autograd_0"));
    Clock clock;
    std::vector<uint32_t> correlations;
    std::vector<int64_t> sites;
    // Bounded, so that an input's cost stays small and the fuzzer tries many.
    constexpr int kMaxOperations = 256;
    for (int i = 0; i < kMaxOperations && !in.empty(); ++i)
        one_operation(t, in, clock, threads, correlations, sites);
    return t;
}

} // namespace fp8scope::fuzz
