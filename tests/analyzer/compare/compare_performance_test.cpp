// Compare's performance per step (compare_performance.hpp; docs/analysis.md "Compare", performance): synthetic pairs
// with exact expected numbers, one rule per test: the medians, idle by cause and kernel classes per step; the kernels
// that appeared, vanished or changed most; per-step figures of traces with different step counts and no common step;
// the list cut; what recording added and its threshold.
#include "compare_test_support.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::WithinAbs;

namespace {

using Kernels = std::vector<std::pair<std::string_view, int64_t>>;

// The run: FP8 GEMM 100 us, two element-wise kernels of 50 us, a cast 30 us, layernorm 10 us, norm_backward 5 us:
// busy 245 us of each 1 ms step. The reference: BF16 GEMM 200 us, element-wise 50 us, softmax 20 us, layernorm 10 us,
// norm_backward 80 us: busy 360 us.
const Kernels kRunKernels { { kFp8Gemm, 100'000 }, { "elementwise", 50'000 }, { "elementwise", 50'000 },
    { kCast, 30'000 }, { "layernorm", 10'000 }, { "norm_backward", 5'000 } };
const Kernels kRefKernels { { kBf16Gemm, 200'000 }, { "elementwise", 50'000 }, { "softmax_kernel", 20'000 },
    { "layernorm", 10'000 }, { "norm_backward", 80'000 } };

size_t cause(BubbleCause c)
{
    return static_cast<size_t>(c);
}

size_t cls(KernelClass c)
{
    return static_cast<size_t>(c);
}

void check_kernel(const KernelChange& k, std::string_view name, KernelClass kind, double run_ns, double ref_ns,
    double run_count, double ref_count)
{
    INFO(name);
    CHECK(k.name == name);
    CHECK(k.cls == kind);
    CHECK(k.time_ns.run == run_ns);
    CHECK(k.time_ns.ref == ref_ns);
    CHECK(k.count.run == run_count);
    CHECK(k.count.ref == ref_count);
}

} // namespace

TEST_CASE("performance per step: medians, idle by cause, kernel classes and the kernel diff, without tensor statistics",
    "[compare][performance]")
{
    // The same figures per step whether the reference shares the run's step numbers (4 common of its 6) or not (its
    // own 6 steps from 10): every figure is per step.
    Job run, ref;
    run.steps(4, kRunKernels);
    const bool common = GENERATE(true, false);
    ref.steps(6, kRefKernels, common ? 0 : 10);
    const Compared c = compare_jobs(run, ref, common ? "perf-common" : "perf-own");
    const CompareResult& r = c.result();
    CHECK_FALSE(r.numerics_compared());
    const PerformanceComparison& p = r.performance;
    CHECK(p.steps_basis == (common ? PerformanceSteps::Common : PerformanceSteps::EachOwn));
    CHECK(p.run.steps == 4);
    CHECK(p.ref.steps == (common ? 4 : 6));

    CHECK(p.step_median_ns.run == 1'000'000);
    CHECK(p.step_median_ns.ref == 1'000'000);
    CHECK(p.busy_median_ns.run == 245'000);
    CHECK(p.busy_median_ns.ref == 360'000);
    CHECK(p.busy_median_ns.change() == -115'000);
    CHECK_THAT(p.bubble_ratio_median.run, WithinAbs(0.755, 1e-12));
    CHECK_THAT(p.bubble_ratio_median.ref, WithinAbs(0.640, 1e-12));
    CHECK_THAT(p.bubble_ratio_median.change(), WithinAbs(0.115, 1e-12));

    // Idle by cause, means per step. Every gap is `launch` (the thread keeps launching), except a trace's last gap,
    // after its last kernel, which nothing ends: `host`. The run's last step has that 655 us tail; the reference's
    // last step is compared only when its own steps are (540 us: 1 ms - 100 us - 360 us).
    CHECK(p.idle_by_cause_ns[cause(BubbleCause::Launch)].run == (3 * 755'000 + 100'000) / 4.0);
    CHECK(p.idle_by_cause_ns[cause(BubbleCause::Host)].run == 655'000 / 4.0);
    CHECK(p.idle_by_cause_ns[cause(BubbleCause::Launch)].ref == (common ? 640'000 : (5 * 640'000 + 100'000) / 6.0));
    CHECK(p.idle_by_cause_ns[cause(BubbleCause::Host)].ref == (common ? 0 : 540'000 / 6.0));
    // They add up to the idle per step; these steps have no sync and no collective.
    double run_idle = 0, ref_idle = 0;
    for (const SideBySide& idle : p.idle_by_cause_ns) {
        run_idle += idle.run;
        ref_idle += idle.ref;
    }
    CHECK(run_idle == 755'000);
    CHECK(ref_idle == 640'000);
    CHECK(p.run.idle_ns == 755'000);
    CHECK(p.idle_by_cause_ns[cause(BubbleCause::Sync)].run == 0);
    CHECK(p.idle_by_cause_ns[cause(BubbleCause::Comm)].ref == 0);

    // Kernel time and count per step by class.
    CHECK(p.class_time_ns[cls(KernelClass::Fp8Gemm)].run == 100'000);
    CHECK(p.class_time_ns[cls(KernelClass::Fp8Gemm)].ref == 0);
    CHECK(p.class_time_ns[cls(KernelClass::OtherGemm)].ref == 200'000);
    CHECK(p.class_time_ns[cls(KernelClass::Cast)].run == 30'000);
    CHECK(p.class_time_ns[cls(KernelClass::Other)].run == 115'000);
    CHECK(p.class_time_ns[cls(KernelClass::Other)].ref == 160'000);
    CHECK(p.class_count[cls(KernelClass::Other)].run == 4);
    CHECK(p.class_count[cls(KernelClass::Other)].ref == 4);
    CHECK(p.class_count[cls(KernelClass::AmaxScale)].run == 0);

    // The kernel diff, per step: the FP8 GEMM and the cast appeared, the BF16 GEMM and softmax vanished; of the
    // names in both, norm_backward changed most (-75 us), then the element-wise kernels (+50 us), then layernorm (0).
    const KernelDiff& d = p.kernels;
    CHECK(d.appeared_names == 2);
    CHECK(d.vanished_names == 2);
    CHECK(d.common_names == 3);
    CHECK(d.appeared_ns == 130'000);
    CHECK(d.vanished_ns == 220'000);
    REQUIRE(d.appeared.size() == 2);
    check_kernel(d.appeared[0], kFp8Gemm, KernelClass::Fp8Gemm, 100'000, 0, 1, 0);
    check_kernel(d.appeared[1], kCast, KernelClass::Cast, 30'000, 0, 1, 0);
    REQUIRE(d.vanished.size() == 2);
    check_kernel(d.vanished[0], kBf16Gemm, KernelClass::OtherGemm, 0, 200'000, 0, 1);
    check_kernel(d.vanished[1], "softmax_kernel", KernelClass::Other, 0, 20'000, 0, 1);
    REQUIRE(d.changed.size() == 3);
    check_kernel(d.changed[0], "norm_backward", KernelClass::Other, 5'000, 80'000, 1, 1);
    check_kernel(d.changed[1], "elementwise", KernelClass::Other, 100'000, 50'000, 2, 1);
    check_kernel(d.changed[2], "layernorm", KernelClass::Other, 10'000, 10'000, 1, 1);

    // No collector work in either: nothing recorded to inflate the difference.
    CHECK(p.recording.collector_ns.run == 0);
    CHECK_FALSE(p.recording.notable);
}

TEST_CASE("performance per step: the same figures when both traces have tensor statistics", "[compare][performance]")
{
    Job run, ref;
    run.steps(4, kRunKernels);
    ref.steps(4, kRefKernels);
    one_steady_site(run, ref, 4);
    const Compared c = compare_jobs(run, ref, "perf-stats");
    const CompareResult& r = c.result();
    CHECK(r.numerics_compared());
    CHECK(r.sites.size() == 1);
    const PerformanceComparison& p = r.performance;
    CHECK(p.busy_median_ns.change() == -115'000);
    CHECK(p.kernels.appeared_names == 2);
    CHECK(p.kernels.changed.at(0).name == "norm_backward");
}

TEST_CASE("performance per step: each kernel list keeps the 10 names with the most time, ties by name",
    "[compare][performance]")
{
    const auto name_of
        = [](size_t n) { return std::string(n < 10 ? "new_kernel_0" : "new_kernel_") + std::to_string(n); };
    Kernels many;
    std::vector<std::string> names;
    for (size_t k = 0; k < 12; ++k)
        names.push_back(name_of(11 - k)); // launched in the reverse of their names' order
    for (const std::string& name : names)
        many.emplace_back(name, 10'000);
    many.emplace_back("bigger_kernel", 20'000);
    Job run, ref;
    run.steps(3, many);
    ref.steps(3);
    const Compared c = compare_jobs(run, ref, "perf-cut");
    const KernelDiff& d = c.result().performance.kernels;
    CHECK(d.appeared_names == 13);
    CHECK(d.appeared_ns == 140'000);
    REQUIRE(d.appeared.size() == kKernelChangesListed);
    CHECK(d.appeared[0].name == "bigger_kernel");
    for (size_t i = 1; i < d.appeared.size(); ++i)
        CHECK(d.appeared[i].name == name_of(i - 1));
    // The reference's one element-wise kernel is not in the run.
    REQUIRE(d.vanished.size() == 1);
    check_kernel(d.vanished[0], "elementwise", KernelClass::Other, 0, 50'000, 0, 1);
    CHECK(d.changed.empty());
    CHECK(d.common_names == 0);
}

namespace {

// Steps of 1 ms: kernel A at 100-200 us, the collector's statistics kernel of `collector_ns` launched at 200 us
// and running from 210 us (none when 0), kernel B at 260-300 us. The collector's kernel starts in the 60 us
// bubble between A and B, since its time is not the job's.
void recorded_steps(Job& job, int steps, int64_t collector_ns)
{
    for (int i = 0; i < steps; ++i) {
        const int64_t t0 = i * kStepNs;
        job.s.step_marker(job.host, t0, i);
        job.s.launch(job.host, { .api_start_ns = t0 + 90'000, .api_end_ns = t0 + 95'000 },
            { .start_ns = t0 + 100'000, .end_ns = t0 + 200'000, .name = "kernel_a" });
        if (collector_ns > 0)
            job.s.collector_work(job.s.launch(job.host, { .api_start_ns = t0 + 200'000, .api_end_ns = t0 + 205'000 },
                { .start_ns = t0 + 210'000,
                    .end_ns = t0 + 210'000 + collector_ns,
                    .name = "fp8scope::probes::stats_kernel" }));
        job.s.launch(job.host, { .api_start_ns = t0 + 250'000, .api_end_ns = t0 + 255'000 },
            { .start_ns = t0 + 260'000, .end_ns = t0 + 300'000, .name = "kernel_b" });
    }
    job.s.nvtx_range(job.host, steps * kStepNs - 1'000, steps * kStepNs, "end of the loop");
}

} // namespace

TEST_CASE("performance per step: recording inflated the difference from 2% of the step in either run",
    "[compare][performance]")
{
    struct Case {
        int64_t run_collector_ns, ref_collector_ns;
        bool notable;
        double inflation_ns;
    };
    const Case k = GENERATE(Case { 40'000, 0, true, 60'000 }, // 4% of the run's step
        Case { 20'000, 0, true, 60'000 }, // exactly 2%
        Case { 19'000, 0, false, 60'000 }, // 1.9%: the figure is there, the line is not
        Case { 0, 30'000, true, -60'000 }); // the reference's recording: its step is the longer for it
    CAPTURE(k.run_collector_ns, k.ref_collector_ns);
    Job run, ref;
    recorded_steps(run, 4, k.run_collector_ns);
    recorded_steps(ref, 4, k.ref_collector_ns);
    const Compared c = compare_jobs(run, ref, "perf-recording");
    const PerformanceComparison& p = c.result().performance;
    const RecordingInflation& rec = p.recording;
    CHECK(rec.collector_ns.run == static_cast<double>(k.run_collector_ns));
    CHECK(rec.collector_ns.ref == static_cast<double>(k.ref_collector_ns));
    CHECK(rec.share.run == static_cast<double>(k.run_collector_ns) / 1e6);
    CHECK(rec.share.ref == static_cast<double>(k.ref_collector_ns) / 1e6);
    CHECK(rec.notable == k.notable);
    // The bubble the collector's kernel ran in, 60 us per step, is what recording added to its run.
    CHECK(rec.inflation_ns == k.inflation_ns);
    CHECK(rec.inflation_ns == p.recording_idle_added_ns);
    // Its time is not the job's: busy is kernel A and B alone in both runs.
    CHECK(p.busy_median_ns.run == 140'000);
    CHECK(p.busy_median_ns.ref == 140'000);
}
