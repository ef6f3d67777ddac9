// The performance half of compare (compare.hpp; docs/analysis.md "Compare", performance): two runs side by side per
// step, as Holistic Trace Analysis's trace diff sets two traces side by side. It needs no tensor statistics, so
// `compare` makes it for every pair it can read, also when drift and loss cannot be compared. Every figure is per
// step, so that traces with different step counts compare.
#pragma once

#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

// Kernel names listed per kernel list (appeared, vanished, changed most).
inline constexpr size_t kKernelChangesListed = 10;
// The collector's own GPU time counts as notable, and `compare` says that recording inflated the difference, from
// this share of the step in either run. Recording adds its work to every step, so it biases the difference rather
// than adding noise; below 2% of a step its GPU time cannot move the difference by more (docs/analysis.md "Compare").
inline constexpr double kRecordingNotableShare = 0.02;

// One figure of the run beside the reference's.
struct SideBySide {
    double run = 0, ref = 0;
    double change() const { return run - ref; }
};

// The steps the performance reads: the common steps when the traces share step numbers, else each trace's own
// analysed steps (two runs with different step numbering still compare, per step).
enum class PerformanceSteps { Common, EachOwn };

// Queued kernel-to-kernel gaps above this are waits on something else (another stream, an event), not the GPU's own
// gap between kernels: left out of RunPerformance::queued_gap_ns.
inline constexpr int64_t kQueuedGapCapNs = 20'000;

struct RunPerformance {
    int64_t steps = 0;
    double step_ns = 0; // mean over the compared steps
    double bubble_ratio = 0;
    double kernels_per_step = 0;
    double gemm_ns = 0; // FP8 GEMM + other GEMM kernel time per step
    double fp8_gemm_ns = 0;
    double bookkeeping_ns = 0; // cast/quantize + amax/scale + fused bookkeeping kernel time per step
    double fused_bookkeeping_ns = 0; // of which Inductor's fused bookkeeping kernels (torch.compile)
    double fused_with_model_work_ns = 0; // of those, the kernels that also do the model's own work
    // FP8's price (docs/analysis.md "Compare"), per step, summed over the devices counted:
    double other_kernel_ns = 0; // kernel time of the other classes (communication, other)
    // The mean gap between two kernels the GPU ran one after the other on a device while the second was already
    // queued (its launch call had returned before the first ended), gaps above kQueuedGapCapNs left out: what each
    // kernel costs beyond its own time when the GPU is the bottleneck. 0 when no such pair.
    double queued_gap_ns = 0;
    double launch_idle_ns = 0; // idle caused by `launch`, plus `host` idle inside the step's launches
    double graph_removable_ns = 0; // the part of launch_idle_ns a CUDA graph replay removes
    double busy_ns = 0, idle_ns = 0;
    // Idle in the bubbles during which the collector's own work (its tensor statistics) started on the device: what
    // recording cost the step, which an untraced run does not pay.
    double recording_idle_ns = 0;
};

// One kernel name's time and count per step in both runs (0 in a run where it did not run in the compared steps).
struct KernelChange {
    std::string name; // the kernel table's name: demangled, else the short name
    KernelClass cls = KernelClass::Other;
    SideBySide time_ns; // summed durations per step
    SideBySide count; // kernels per step
};

// Kernels by name, HTA's trace diff "added", "deleted" and "changed" ops: names matched by their full text over the
// compared steps. Each list is cut at kKernelChangesListed; the totals count every name.
struct KernelDiff {
    std::vector<KernelChange> appeared; // only in the run: most time per step first (ties: name)
    std::vector<KernelChange> vanished; // only in the reference: likewise
    std::vector<KernelChange> changed; // in both: the largest |time change| per step first (ties: name)
    int64_t appeared_names = 0, vanished_names = 0, common_names = 0;
    double appeared_ns = 0, vanished_ns = 0; // the time per step of every appeared (vanished) name
};

// The collector's own GPU work (collector_work.hpp) over the compared steps. Its time is not the job's: the
// analyses leave it out of busy time, but the step still waited for it, so a run recorded with more statistics
// than its reference has a longer step for that reason alone.
struct RecordingInflation {
    SideBySide collector_ns; // collector GPU time per step
    SideBySide share; // of the step (collector time / step time on the devices counted)
    bool notable = false; // share.run or share.ref >= kRecordingNotableShare
    // About how much recording added to the run's step against the reference's: the recording idle added
    // (PerformanceComparison::recording_idle_added_ns, the bubbles the collector's work ran in).
    double inflation_ns = 0;
};

struct PerformanceComparison {
    PerformanceSteps steps_basis = PerformanceSteps::Common;
    RunPerformance run, ref;
    double gemm_saved_ns = 0; // ref.gemm - run.gemm
    // run.bookkeeping - ref.bookkeeping - fused_absorbed: what FP8's bookkeeping added, net of the model's own work
    // that moved into fused bookkeeping kernels
    double bookkeeping_added_ns = 0;
    // torch.compile: the model's own work that the run's fused bookkeeping kernels absorbed, measured as the fall of
    // the other kernels' time, at most the added time of the fused kernels that also do model work (docs/analysis.md
    // "Compare", FP8's price); 0 without fused bookkeeping
    double fused_absorbed_ns = 0;
    double net_gain_ns = 0; // gemm_saved - bookkeeping_added
    double step_change_ns = 0; // run.step - ref.step (negative: the run is faster)
    // FP8's price: the traced step change as GEMM time (-gemm_saved_ns) + bookkeeping_added_ns + launch_idle_added_ns
    // + rest_ns, which sum to step_change_ns exactly.
    double launch_idle_added_ns = 0; // run.launch_idle - ref.launch_idle: what the extra launches cost
    // The rest: other kernels, other idle (sync, dependency, host outside the step's launches), kernel overlap.
    double rest_ns = 0;
    // run.other_kernel - ref.other_kernel + fused_absorbed, the part of rest_ns named
    double other_kernels_added_ns = 0;
    // The kernel time the run adds: -gemm_saved + bookkeeping_added + other_kernels_added.
    double kernel_time_added_ns = 0;
    // What a GPU-bound step (no launch or host idle: a compiled job, untraced) changes by: the kernel time added plus
    // each added kernel's queued gap (kernels_added_per_step x ref.queued_gap_ns, the run's own gap without a
    // reference one). Recording makes a step launch-bound that untraced is not; this leaves the launch idle out.
    double gpu_bound_change_ns = 0;
    double kernels_added_per_step = 0; // run.kernels_per_step - ref.kernels_per_step
    double recording_idle_added_ns = 0; // run.recording_idle - ref.recording_idle (inside the parts above)
    double untraced_change_estimate_ns = 0; // step_change - recording_idle_added
    std::optional<double> explained_share; // (step_change - rest) / step_change; none when the change is 0
    // What would win the price back, each at most (0 when FP8 added none of it):
    double graphs_recover_ns = 0; // CUDA graphs: run.graph_removable - ref.graph_removable
    // fused cast/amax kernels: the separate (unfused) cast and amax/scale kernel time added
    double fused_casts_recover_ns = 0;
    double compile_recovers_up_to_ns = 0; // torch.compile: the launch idle, bookkeeping and other kernel time added

    // Medians over the compared steps (robust to the odd slow step): the step's length, its busy time (summed over
    // the devices counted) and its bubble ratio (the step's idle / step time on those devices).
    SideBySide step_median_ns, busy_median_ns, bubble_ratio_median;
    // Means per step, so that the causes add up to RunPerformance::idle_ns and the classes to the kernel time.
    std::array<SideBySide, kBubbleCauseCount> idle_by_cause_ns {}; // by BubbleCause
    std::array<SideBySide, kKernelClassCount> class_time_ns {}; // by KernelClass, summed durations
    std::array<SideBySide, kKernelClassCount> class_count {}; // kernels per step
    KernelDiff kernels;
    RecordingInflation recording;
};

} // namespace fp8scope::analyzer
