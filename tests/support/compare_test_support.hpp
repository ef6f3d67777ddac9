// Shared by the compare tests (header-only, as analysis_test_support.hpp): a pair of synthetic jobs written through
// the real writer, loaded back, analysed with the same options and compared.
#pragma once

#include "analysis_test_support.hpp"

#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fp8scope::testing {

constexpr int64_t kStepNs = 1'000'000;
constexpr std::string_view kFp8Gemm
    = "sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_cgasize1x2x1_warpgroupsize";
constexpr std::string_view kBf16Gemm = "nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NNN";
constexpr std::string_view kCast
    = "void transformer_engine::cast_transpose_kernel<8, 4, __nv_bfloat16, __nv_fp8_e4m3>(__nv_bfloat16 const*, "
      "__nv_fp8_e4m3*)";

// One side of a pair: `steps` steps of 1 ms marked by fp8scope.step(), each with the given kernels back to back
// from 100 us into the step.
struct Job {
    Scenario s;
    HostThread host;

    explicit Job(const std::string& command = "python3 train.py")
    {
        s.session().command_line = command;
        host = s.thread(4242, 4242);
    }

    void steps(int count,
        const std::vector<std::pair<std::string_view, int64_t>>& kernels = { { "elementwise", 50'000 } }, int first = 0)
    {
        for (int i = first; i < first + count; ++i) {
            const int64_t t0 = i * kStepNs;
            s.step_marker(host, t0, i);
            int64_t at = t0 + 100'000;
            for (const auto& [name, length] : kernels) {
                s.launch(host, { .api_start_ns = at - 10'000, .api_end_ns = at - 5'000 },
                    { .start_ns = at, .end_ns = at + length, .name = std::string(name) });
                at += length;
            }
        }
        // The last step ends where the trace does: a host range closing at the step's end keeps it 1 ms long.
        s.nvtx_range(host, (first + count) * kStepNs - 1'000, (first + count) * kStepNs, "end of the loop");
    }

    int64_t gemm(const std::string& path, const std::string& shape, schema::TensorRole role, schema::Dtype dtype)
    {
        return s.tensor_site("gemm " + shape, role, dtype, 16, 16, schema::StatsSource::GemmInterception, path);
    }

    // A sample of `site` in step `step` at `position` (0..1) of the step.
    TensorStatsRow& sample(int64_t site, int step, double position, schema::Dtype dtype, double amax,
        std::optional<double> scale_inv = std::nullopt, int64_t numel = 1'000'000)
    {
        TensorStatsRow row;
        row.site_id = site;
        row.step = step;
        row.timestamp_ns = step * kStepNs + static_cast<int64_t>(position * static_cast<double>(kStepNs));
        row.dtype = dtype;
        row.numel = numel;
        row.amax = amax;
        row.scale_inv = scale_inv;
        pending.push_back(row);
        return pending.back();
    }

    analyzer::TraceModel load(const std::string& name)
    {
        for (const TensorStatsRow& row : pending)
            s.tensor_stats(row);
        pending.clear();
        return write_and_load(s, "compare-" + name);
    }

    std::vector<TensorStatsRow> pending;
};

// One GEMM operand site in both jobs, FP8 in the run and BF16 in the reference, with the same steady sample in each
// of the first `steps` steps: a pair whose tensors compare, and nothing drifts.
inline void one_steady_site(Job& run, Job& ref, int steps)
{
    const int64_t run_site = run.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t ref_site = ref.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    for (int i = 0; i < steps; ++i) {
        run.sample(run_site, i, 0.1, schema::Dtype::E4M3, 1.0, 1.0 / 448);
        ref.sample(ref_site, i, 0.1, schema::Dtype::BFloat16, 1.0);
    }
}

struct Compared {
    analyzer::TraceModel run_model, ref_model;
    analyzer::Report run_report, ref_report;
    std::variant<analyzer::CompareResult, analyzer::CompareRefusal> outcome;

    const analyzer::CompareResult& result() const
    {
        if (const auto* refusal = std::get_if<analyzer::CompareRefusal>(&outcome))
            FAIL("refused: " << refusal->message);
        return std::get<analyzer::CompareResult>(outcome);
    }
};

inline Compared compare_jobs(Job& run, Job& ref, const std::string& name, int warmup = 0)
{
    Compared c { run.load(name + "-run"), ref.load(name + "-ref"), {}, {}, analyzer::CompareRefusal {} };
    analyzer::CompareOptions options;
    options.report.steps.warmup = warmup;
    c.run_report = analyzer::analyze(c.run_model, options.report);
    c.ref_report = analyzer::analyze(c.ref_model, options.report);
    c.outcome = analyzer::compare_runs({ c.run_model, c.run_report, c.ref_model, c.ref_report }, options);
    return c;
}

// The matched site whose run site is `run_site` (the test fails when none is).
inline const analyzer::CompareSite& site_with(const analyzer::CompareResult& r, int64_t run_site)
{
    for (const analyzer::CompareSite& s : r.sites)
        if (s.run_site_id == run_site)
            return s;
    FAIL("run site " << run_site << " is not matched");
    throw 0;
}

// Deterministic noise in [-0.08, 0.08] bits.
inline double noise(int i)
{
    constexpr double kValues[] = { 0.03, -0.05, 0.08, -0.02, 0.0, 0.06, -0.08, 0.01, -0.04, 0.05, -0.01, 0.02 };
    return kValues[static_cast<size_t>(i) % std::size(kValues)];
}

} // namespace fp8scope::testing
