// The GEMM timer of `fp8scope calibrate` (gemm_timer.hpp): cuBLASLt calls captured in a CUDA graph and replayed
// between two events, the way tests/gpu/tools/gemm_table.py times torch's GEMMs, so that launch cost never shows in
// a small GEMM's figure.
#include "fp8scope/calibrate/gemm_timer.hpp"

#include "cuda_libraries.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>

namespace fp8scope::calibrate {
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;
constexpr size_t kFillChunkBytes = 8u << 20;
constexpr int kWarmupCalls = 3;
constexpr int kFirstShapeExtraReps = 50;

double median_of(std::vector<double> values)
{
    std::ranges::sort(values);
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

enum class Variant { Bf16, Fp8Tensorwise, Fp8Rowwise };

// The CUDA and cuBLASLt state of one measurement, released in the destructor whatever failed.
class Bench {
public:
    Bench(const CudaDriver& d, const CublasLt& lt)
        : d_(d)
        , lt_(lt)
    {
    }
    Bench(const Bench&) = delete;
    Bench& operator=(const Bench&) = delete;
    ~Bench()
    {
        for (CUdeviceptr p : buffers_)
            d_.free(p);
        if (start_)
            d_.event_destroy(start_);
        if (end_)
            d_.event_destroy(end_);
        if (handle_)
            lt_.destroy(handle_);
        if (stream_)
            d_.stream_destroy(stream_);
        if (retained_)
            d_.primary_release(device_);
    }

    Expected<std::string> open(int ordinal)
    {
        if (d_.init(0) != CUDA_SUCCESS)
            return make_error(ErrorCode::Unavailable, "the CUDA driver does not initialise (no GPU, or no permission)");
        int count = 0;
        if (d_.device_count(&count) != CUDA_SUCCESS || count == 0)
            return make_error(ErrorCode::Unavailable, "no CUDA device on this machine");
        if (ordinal < 0 || ordinal >= count)
            return make_error(ErrorCode::Usage,
                "no CUDA device " + std::to_string(ordinal) + " (this machine has " + std::to_string(count) + ")");
        if (auto r = check(d_.device_get(&device_, ordinal), "cuDeviceGet"); !r)
            return std::unexpected(r.error());
        char name[256] = {};
        d_.device_name(name, sizeof name - 1, device_);
        int major = 0, minor = 0;
        d_.device_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_);
        d_.device_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_);
        if (major * 10 + minor < 89)
            return make_error(ErrorCode::Unavailable,
                std::string(name) + " has no FP8 GEMM (compute capability " + std::to_string(major) + "."
                    + std::to_string(minor) + "; FP8 needs 8.9 or later)");
        if (auto r = check(d_.primary_retain(&context_, device_), "cuDevicePrimaryCtxRetain"); !r)
            return std::unexpected(r.error());
        retained_ = true;
        for (auto r : { check(d_.set_current(context_), "cuCtxSetCurrent"),
                 check(d_.stream_create(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"),
                 check(d_.event_create(&start_, CU_EVENT_DEFAULT), "cuEventCreate"),
                 check(d_.event_create(&end_, CU_EVENT_DEFAULT), "cuEventCreate"),
                 check_lt(lt_.create(&handle_), "cublasLtCreate") }) {
            if (!r)
                return std::unexpected(r.error());
        }
        auto ws = allocate(kWorkspaceBytes);
        if (!ws)
            return std::unexpected(ws.error());
        workspace_ = *ws;
        return std::string(name);
    }

    // Device memory that lives until the next release_operands() (or the end).
    Expected<CUdeviceptr> allocate(size_t bytes)
    {
        CUdeviceptr p = 0;
        if (auto r = check(d_.alloc(&p, bytes), "cuMemAlloc"); !r)
            return std::unexpected(r.error());
        buffers_.push_back(p);
        return p;
    }

    void release_operands()
    {
        // The workspace is the first buffer and stays.
        for (size_t i = 1; i < buffers_.size(); ++i)
            d_.free(buffers_[i]);
        buffers_.resize(std::min<size_t>(buffers_.size(), 1));
    }

    // `bytes` of device memory filled by repeating `pattern` (at most kFillChunkBytes of host memory).
    Expected<CUdeviceptr> filled(size_t bytes, const std::vector<unsigned char>& pattern)
    {
        auto p = allocate(bytes);
        if (!p)
            return p;
        for (size_t done = 0; done < bytes;) {
            const size_t n = std::min(pattern.size(), bytes - done);
            if (auto r = check(d_.copy_to_device(*p + done, pattern.data(), n), "cuMemcpyHtoD"); !r)
                return std::unexpected(r.error());
            done += n;
        }
        return p;
    }

    struct Operands {
        CUdeviceptr a = 0, b = 0, d = 0, scale_a = 0, scale_b = 0, row_scale_a = 0, row_scale_b = 0;
    };

    // The descriptors and the captured CUDA graph of one variant's GEMM, destroyed together.
    struct Prepared;

    // One variant's GEMM captured `calls_per_graph` times into a CUDA graph, after its warm-up calls; nullptr where
    // cuBLASLt has no algorithm for it.
    Expected<std::unique_ptr<Prepared>> prepare(
        Variant variant, const GemmShape& s, const Operands& o, const TimerOptions& options)
    {
        const bool fp8 = variant != Variant::Bf16;
        const cudaDataType_t in = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
        auto prepared = std::make_unique<Prepared>(lt_, d_);
        Lt& lt = prepared->lt;
        if (auto r = check_lt(lt_.desc_create(&lt.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
            !r)
            return std::unexpected(r.error());
        // cuBLASLt's FP8 GEMMs take A transposed ("TN"); BF16 is timed in the same layout.
        const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
        lt_.desc_set(lt.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa);
        lt_.desc_set(lt.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb);
        if (fp8) {
            const bool rows = variant == Variant::Fp8Rowwise;
            const void* sa = reinterpret_cast<const void*>(rows ? o.row_scale_a : o.scale_a);
            const void* sb = reinterpret_cast<const void*>(rows ? o.row_scale_b : o.scale_b);
            lt_.desc_set(lt.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa);
            lt_.desc_set(lt.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb);
            if (rows) {
                const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
                if (lt_.desc_set(lt.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode)
                        != CUBLAS_STATUS_SUCCESS
                    || lt_.desc_set(lt.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode)
                        != CUBLAS_STATUS_SUCCESS)
                    return nullptr; // this cuBLASLt has no outer-vector scaling
            }
        }
        const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
        for (auto r : { check_lt(lt_.layout_create(&lt.a, in, u(s.k), u(s.m), s.k), "cublasLtMatrixLayoutCreate"),
                 check_lt(lt_.layout_create(&lt.b, in, u(s.k), u(s.n), s.k), "cublasLtMatrixLayoutCreate"),
                 check_lt(lt_.layout_create(&lt.d, CUDA_R_16BF, u(s.m), u(s.n), s.m), "cublasLtMatrixLayoutCreate"),
                 check_lt(lt_.preference_create(&lt.preference), "cublasLtMatmulPreferenceCreate") }) {
            if (!r)
                return std::unexpected(r.error());
        }
        const uint64_t workspace_bytes = kWorkspaceBytes;
        lt_.preference_set(
            lt.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof workspace_bytes);
        cublasLtMatmulHeuristicResult_t heuristic {};
        int found = 0;
        if (lt_.heuristic(handle_, lt.desc, lt.a, lt.b, lt.d, lt.d, lt.preference, 1, &heuristic, &found)
                != CUBLAS_STATUS_SUCCESS
            || found == 0) {
            if (fp8 && variant == Variant::Fp8Tensorwise)
                return make_error(ErrorCode::Unavailable, "cuBLASLt has no FP8 (E4M3) GEMM on this GPU");
            if (!fp8)
                return make_error(ErrorCode::Unavailable, "cuBLASLt has no BF16 GEMM on this GPU");
            return nullptr;
        }
        const float alpha = 1, beta = 0;
        auto call = [&] {
            return lt_.matmul(handle_, lt.desc, &alpha, reinterpret_cast<const void*>(o.a), lt.a,
                reinterpret_cast<const void*>(o.b), lt.b, &beta, reinterpret_cast<const void*>(o.d), lt.d,
                reinterpret_cast<void*>(o.d), lt.d, &heuristic.algo, reinterpret_cast<void*>(workspace_),
                kWorkspaceBytes, reinterpret_cast<cudaStream_t>(stream_));
        };
        for (int i = 0; i < kWarmupCalls; ++i) {
            if (auto r = check_lt(call(), "cublasLtMatmul"); !r) {
                if (variant == Variant::Fp8Rowwise)
                    return nullptr; // offered by the heuristic, refused by the call
                return std::unexpected(r.error());
            }
        }
        if (auto r = check(d_.stream_sync(stream_), "cuStreamSynchronize (a warm-up GEMM failed)"); !r)
            return std::unexpected(r.error());
        Graph& graph = prepared->graph;
        if (auto r = check(d_.begin_capture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture"); !r)
            return std::unexpected(r.error());
        cublasStatus_t captured = CUBLAS_STATUS_SUCCESS;
        for (int i = 0; i < options.calls_per_graph && captured == CUBLAS_STATUS_SUCCESS; ++i)
            captured = call();
        const CUresult ended = d_.end_capture(stream_, &graph.graph); // always end a capture that began
        for (auto r : { check_lt(captured, "cublasLtMatmul (captured)"), check(ended, "cuStreamEndCapture"),
                 check(d_.graph_instantiate(&graph.exec, graph.graph, 0), "cuGraphInstantiate"),
                 check(d_.graph_launch(graph.exec, stream_), "cuGraphLaunch"),
                 check(d_.stream_sync(stream_), "cuStreamSynchronize") }) {
            if (!r)
                return std::unexpected(r.error());
        }
        return prepared;
    }

    // The GPU time of one replay of a prepared graph, in ns per call.
    Expected<double> replay(const Prepared& prepared, const TimerOptions& options)
    {
        float ms = 0;
        for (auto r : { check(d_.event_record(start_, stream_), "cuEventRecord"),
                 check(d_.graph_launch(prepared.graph.exec, stream_), "cuGraphLaunch"),
                 check(d_.event_record(end_, stream_), "cuEventRecord"),
                 check(d_.event_sync(end_), "cuEventSynchronize"),
                 check(d_.event_elapsed(&ms, start_, end_), "cuEventElapsedTime") }) {
            if (!r)
                return std::unexpected(r.error());
        }
        return static_cast<double>(ms) * 1e6 / options.calls_per_graph;
    }

private:
    // The descriptors of one variant's GEMM, destroyed when it is timed.
    struct Lt {
        const CublasLt& api;
        cublasLtMatmulDesc_t desc = nullptr;
        cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
        cublasLtMatmulPreference_t preference = nullptr;
        explicit Lt(const CublasLt& lt)
            : api(lt)
        {
        }
        Lt(const Lt&) = delete;
        Lt& operator=(const Lt&) = delete;
        ~Lt()
        {
            if (preference)
                api.preference_destroy(preference);
            for (cublasLtMatrixLayout_t l : { a, b, d })
                if (l)
                    api.layout_destroy(l);
            if (desc)
                api.desc_destroy(desc);
        }
    };
    struct Graph {
        const CudaDriver& api;
        CUgraph graph = nullptr;
        CUgraphExec exec = nullptr;
        explicit Graph(const CudaDriver& d)
            : api(d)
        {
        }
        Graph(const Graph&) = delete;
        Graph& operator=(const Graph&) = delete;
        ~Graph()
        {
            if (exec)
                api.graph_exec_destroy(exec);
            if (graph)
                api.graph_destroy(graph);
        }
    };

    Expected<void> check(CUresult r, const char* what) const
    {
        if (r == CUDA_SUCCESS)
            return {};
        const char* text = nullptr;
        d_.error_string(r, &text);
        return make_error(ErrorCode::Io,
            std::string(what) + " failed: " + (text ? text : "CUDA error " + std::to_string(static_cast<int>(r))));
    }
    static Expected<void> check_lt(cublasStatus_t s, const char* what)
    {
        if (s == CUBLAS_STATUS_SUCCESS)
            return {};
        return make_error(ErrorCode::Io, std::string(what) + " failed: cuBLAS status " + std::to_string(s));
    }

public:
    struct Prepared {
        Lt lt;
        Graph graph;
        Prepared(const CublasLt& api, const CudaDriver& driver)
            : lt(api)
            , graph(driver)
        {
        }
    };

private:
    const CudaDriver& d_;
    const CublasLt& lt_;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
    bool retained_ = false;
    CUstream stream_ = nullptr;
    CUevent start_ = nullptr, end_ = nullptr;
    cublasLtHandle_t handle_ = nullptr;
    CUdeviceptr workspace_ = 0;
    std::vector<CUdeviceptr> buffers_;
};

// Operand values: normally distributed BF16, and E4M3 codes of magnitude 2^-3 to 2^3 (never NaN), so that the
// GEMMs toggle as many bits as a training job's do (zeros would make them faster than any real operand).
std::vector<unsigned char> bf16_pattern()
{
    std::mt19937 random(1);
    std::normal_distribution<float> normal;
    std::vector<unsigned char> bytes(kFillChunkBytes);
    for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
        const float v = normal(random);
        uint32_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        bytes[i] = static_cast<unsigned char>((bits >> 16) & 0xff); // little-endian BF16: the float's top half
        bytes[i + 1] = static_cast<unsigned char>(bits >> 24);
    }
    return bytes;
}

std::vector<unsigned char> e4m3_pattern()
{
    std::mt19937 random(2);
    std::uniform_int_distribution<int> sign(0, 1), exponent(4, 10), mantissa(0, 7);
    std::vector<unsigned char> bytes(kFillChunkBytes);
    for (unsigned char& b : bytes)
        b = static_cast<unsigned char>(sign(random) << 7 | exponent(random) << 3 | mantissa(random));
    return bytes;
}

std::vector<unsigned char> ones_pattern(size_t count)
{
    std::vector<unsigned char> bytes(count * sizeof(float));
    const float one = 1;
    for (size_t i = 0; i < count; ++i)
        std::memcpy(bytes.data() + i * sizeof(float), &one, sizeof one);
    return bytes;
}

} // namespace

std::vector<GemmShape> standard_sweep()
{
    std::vector<GemmShape> shapes;
    for (int64_t m = 256; m <= 16384; m *= 2)
        for (int64_t n = 256; n <= 8192; n *= 2)
            for (int64_t k = 256; k <= 8192; k *= 2)
                shapes.push_back({ m, n, k });
    return shapes;
}

Expected<TimerResult> time_gemms(std::span<const GemmShape> shapes, const TimerOptions& options,
    const std::function<void(size_t done, size_t total)>& progress)
{
    if (shapes.empty())
        return make_error(ErrorCode::Usage, "no GEMM shape to measure");
    if (options.reps < 1 || options.calls_per_graph < 1)
        return make_error(ErrorCode::Usage, "reps and calls per graph must be at least 1");
    for (const GemmShape& s : shapes)
        if (s.m < 1 || s.n < 1 || s.k < 1 || s.m > kMaxDimension || s.n > kMaxDimension || s.k > kMaxDimension)
            return make_error(ErrorCode::Usage,
                "GEMM shape " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k)
                    + " is out of range (each of m, n, k from 1 to " + std::to_string(kMaxDimension) + ")");
    const auto driver = cuda_driver();
    if (!driver)
        return std::unexpected(driver.error());
    const auto lt = cublas_lt(options.cublaslt_path);
    if (!lt)
        return std::unexpected(lt.error());
    Bench bench(**driver, **lt);
    const auto gpu = bench.open(options.device);
    if (!gpu)
        return std::unexpected(gpu.error());
    TimerResult result;
    result.gpu = *gpu;
    const size_t version = (*lt)->version();
    result.cublaslt = (*lt)->path + " (cuBLASLt " + std::to_string(version / 10000) + "."
        + std::to_string(version / 100 % 100) + "." + std::to_string(version % 100) + ")";
    result.method = "fp8scope calibrate: cublasLtMatmul, A transposed (TN), BF16 x BF16 -> BF16 and E4M3 x E4M3 -> "
                    "BF16 with tensorwise and outer-vector (rowwise) scales, FP32 accumulation, the heuristic's first "
                    "algorithm; GPU time per call of a CUDA graph of "
        + std::to_string(options.calls_per_graph) + " calls, median of " + std::to_string(options.reps)
        + " replays, the three types replayed in turn, after " + std::to_string(kWarmupCalls) + " warm-up calls (and "
        + std::to_string(kFirstShapeExtraReps) + " unkept replays of the first shape)";
    const auto bf16_values = bf16_pattern();
    const auto e4m3_values = e4m3_pattern();
    for (size_t i = 0; i < shapes.size(); ++i) {
        const GemmShape& s = shapes[i];
        const auto mk = static_cast<size_t>(s.m * s.k), kn = static_cast<size_t>(s.k * s.n),
                   mn = static_cast<size_t>(s.m * s.n);
        Bench::Operands bf16, fp8;
        for (auto [target, bytes, pattern] :
            { std::tuple { &bf16.a, mk * 2, &bf16_values }, std::tuple { &bf16.b, kn * 2, &bf16_values },
                std::tuple { &fp8.a, mk, &e4m3_values }, std::tuple { &fp8.b, kn, &e4m3_values } }) {
            auto p = bench.filled(bytes, *pattern);
            if (!p)
                return std::unexpected(p.error());
            *target = *p;
        }
        auto d = bench.allocate(mn * 2);
        auto one = bench.filled(sizeof(float), ones_pattern(1));
        auto rows_a = bench.filled(static_cast<size_t>(s.m) * sizeof(float), ones_pattern(static_cast<size_t>(s.m)));
        auto rows_b = bench.filled(static_cast<size_t>(s.n) * sizeof(float), ones_pattern(static_cast<size_t>(s.n)));
        for (const auto* p : { &d, &one, &rows_a, &rows_b })
            if (!*p)
                return std::unexpected(p->error());
        bf16.d = fp8.d = *d;
        fp8.scale_a = fp8.scale_b = *one;
        fp8.row_scale_a = *rows_a;
        fp8.row_scale_b = *rows_b;
        // The three variants replayed in turn, rep after rep, so that a change of clock or of a neighbour's load
        // falls on all three alike and their ratios (what the what-if uses) hold from one run to the next.
        std::array<std::unique_ptr<Bench::Prepared>, 3> prepared;
        for (const Variant v : { Variant::Bf16, Variant::Fp8Tensorwise, Variant::Fp8Rowwise }) {
            auto p = bench.prepare(v, s, v == Variant::Bf16 ? bf16 : fp8, options);
            if (!p)
                return std::unexpected(p.error());
            prepared[static_cast<size_t>(v)] = std::move(*p);
        }
        if (!prepared[0] || !prepared[1])
            return make_error(ErrorCode::Unavailable, "cuBLASLt has no algorithm for this GEMM");
        std::array<std::vector<double>, 3> times;
        for (int rep = 0; rep < options.reps + (i == 0 ? kFirstShapeExtraReps : 0); ++rep) {
            for (size_t v = 0; v < prepared.size(); ++v) {
                if (!prepared[v])
                    continue;
                const auto ns = bench.replay(*prepared[v], options);
                if (!ns)
                    return std::unexpected(ns.error());
                // The first shape's extra replays bring the GPU to its working clock; they are not kept.
                if (i != 0 || rep >= kFirstShapeExtraReps)
                    times[v].push_back(*ns);
            }
        }
        GemmTiming t;
        t.shape = s;
        t.bf16_ns = std::llround(median_of(times[0]));
        t.fp8_tensorwise_ns = std::llround(median_of(times[1]));
        if (prepared[2])
            t.fp8_rowwise_ns = std::llround(median_of(times[2]));
        prepared = {};
        result.timings.push_back(t);
        bench.release_operands();
        if (progress)
            progress(i + 1, shapes.size());
    }
    return result;
}

} // namespace fp8scope::calibrate
