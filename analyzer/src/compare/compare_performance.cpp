// The performance half of compare (compare_performance.hpp; docs/analysis.md "Compare", performance): each run's
// figures per step over its compared steps, FP8's price, the per-step medians, idle by cause, kernel classes, the
// kernels that appeared, vanished or changed most, and what recording added.
#include "compare/compare_detail.hpp"
#include "idle/launch_call_index.hpp"
#include "model/median.hpp"
#include "model/step_locator.hpp"

#include "fp8scope/analyzer/load/collector_work.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>

namespace fp8scope::analyzer::detail {

namespace {

bool counted(const Report& report, uint32_t device_id)
{
    return !report.device || device_id == *report.device;
}

// Idle of the compared steps' bubbles in which the collector's own work started on the bubble's device.
int64_t recording_idle(const TraceModel& model, const Report& report, const std::set<int64_t>& steps)
{
    std::map<uint32_t, std::vector<int64_t>> starts; // the collector's activity starts per device, ascending
    const CollectorWorkTable& work = model.collector_work;
    for (size_t i = 0; i < work.size(); ++i)
        starts[work.device_id[i]].push_back(work.start_ns[i]);
    for (auto& [device, times] : starts)
        std::ranges::sort(times);
    int64_t idle = 0;
    for (const Bubble& b : report.bubbles.bubbles) {
        const auto found = starts.find(b.device_id);
        if (found == starts.end() || !steps.contains(b.step_index) || !counted(report, b.device_id))
            continue;
        const auto first = std::ranges::lower_bound(found->second, b.start_ns);
        if (first != found->second.end() && *first < b.end_ns)
            idle += b.end_ns - b.start_ns;
    }
    return idle;
}

// RunPerformance::queued_gap_ns over the compared steps: kernels in start order, per device the latest end so far;
// a kernel that starts after it, launched by a call that had returned before it, waited only for the GPU.
double queued_gap_mean(const TraceModel& model, const Report& report, const std::set<int64_t>& steps)
{
    const CorrelationIndex launches = detail::launch_call_index(model.api_calls);
    const KernelTable& k = model.kernels;
    std::map<uint32_t, int64_t> frontier; // device -> latest kernel end so far
    detail::StepWalker walker(report.steps.steps);
    int64_t sum = 0, count = 0;
    for (size_t i = 0; i < k.size(); ++i) {
        const auto [at, fresh] = frontier.try_emplace(k.device_id[i], k.end_ns[i]);
        if (fresh)
            continue;
        const int64_t previous_end = at->second;
        at->second = std::max(previous_end, k.end_ns[i]);
        const std::optional<size_t> step = walker.position_of(k.start_ns[i]);
        if (!step || !steps.contains(report.steps.steps[*step].index))
            continue;
        const int64_t gap = k.start_ns[i] - previous_end;
        const std::optional<size_t> call = launches.find(k.correlation_id[i]);
        if (gap < 0 || gap > kQueuedGapCapNs || !call || model.api_calls.end_ns[*call] >= previous_end)
            continue;
        sum += gap;
        ++count;
    }
    return count > 0 ? static_cast<double>(sum) / static_cast<double>(count) : 0.0;
}

// One run's per-step figures: the means of RunPerformance and, per step, what the medians are taken of.
struct RunFigures {
    RunPerformance means;
    std::vector<int64_t> step_lengths, busy;
    std::vector<double> bubble_ratios;
    std::array<int64_t, kBubbleCauseCount> cause_ns {};
    std::array<ClassTotals, kKernelClassCount> classes {};
};

RunFigures figures_of(const TraceModel& model, const Report& report, const std::set<int64_t>& steps)
{
    RunFigures f;
    RunPerformance& p = f.means;
    int64_t step_ns = 0, idle_ns = 0, bubble_step_ns = 0, kernels = 0, gemm = 0, fp8_gemm = 0, bookkeeping = 0;
    int64_t other_kernels = 0, busy = 0, launch_idle = 0, graph_removable = 0, fused = 0, fused_only = 0;
    for (const StepInterval& s : report.steps.steps)
        if (steps.contains(s.index)) {
            ++p.steps;
            step_ns += s.end_ns - s.start_ns;
            f.step_lengths.push_back(s.end_ns - s.start_ns);
        }
    // The devices of the report's totals, as bubbles_per_step() counts them; read here per device, since the launch
    // idle needs each row's host idle inside the step's launches. Rows come by device, then step.
    std::map<int64_t, BubbleTotals> per_step; // over the devices counted
    for (const DeviceStepBubbles& d : report.bubbles.per_device_step)
        if (steps.contains(d.step_index) && counted(report, d.device_id)) {
            const BubbleTotals& t = d.totals;
            idle_ns += t.idle_ns;
            bubble_step_ns += t.step_ns;
            busy += t.busy_ns;
            launch_idle += t.cause_ns[static_cast<size_t>(BubbleCause::Launch)] + t.host_in_launches_ns;
            graph_removable += t.graph_removable_ns + t.host_in_launches_ns;
            for (size_t c = 0; c < kBubbleCauseCount; ++c)
                f.cause_ns[c] += t.cause_ns[c];
            BubbleTotals& step = per_step[d.step_index];
            step.step_ns += t.step_ns;
            step.busy_ns += t.busy_ns;
            step.idle_ns += t.idle_ns;
        }
    for (const auto& [index, t] : per_step) {
        f.busy.push_back(t.busy_ns);
        f.bubble_ratios.push_back(t.step_ns > 0 ? static_cast<double>(t.idle_ns) / static_cast<double>(t.step_ns) : 0);
    }
    const auto time
        = [](const StepKernelClasses& s, KernelClass c) { return s.by_class[static_cast<size_t>(c)].time_ns; };
    for (const StepKernelClasses& s : report.kernel_classes.steps)
        if (steps.contains(s.step_index)) {
            kernels += s.total.count;
            fp8_gemm += time(s, KernelClass::Fp8Gemm);
            gemm += time(s, KernelClass::Fp8Gemm) + time(s, KernelClass::OtherGemm);
            bookkeeping += time(s, KernelClass::Cast) + time(s, KernelClass::AmaxScale)
                + time(s, KernelClass::FusedBookkeeping);
            fused += time(s, KernelClass::FusedBookkeeping);
            fused_only += s.fused_only_bookkeeping.time_ns;
            other_kernels += time(s, KernelClass::Communication) + time(s, KernelClass::Other);
            for (size_t c = 0; c < kKernelClassCount; ++c) {
                f.classes[c].time_ns += s.by_class[c].time_ns;
                f.classes[c].count += s.by_class[c].count;
            }
        }
    if (p.steps == 0)
        return f;
    const auto per_step_mean = [&](int64_t v) { return static_cast<double>(v) / static_cast<double>(p.steps); };
    p.step_ns = per_step_mean(step_ns);
    p.bubble_ratio = bubble_step_ns > 0 ? static_cast<double>(idle_ns) / static_cast<double>(bubble_step_ns) : 0;
    p.kernels_per_step = per_step_mean(kernels);
    p.gemm_ns = per_step_mean(gemm);
    p.fp8_gemm_ns = per_step_mean(fp8_gemm);
    p.bookkeeping_ns = per_step_mean(bookkeeping);
    p.fused_bookkeeping_ns = per_step_mean(fused);
    p.fused_with_model_work_ns = per_step_mean(fused - fused_only);
    p.other_kernel_ns = per_step_mean(other_kernels);
    p.launch_idle_ns = per_step_mean(launch_idle);
    p.graph_removable_ns = per_step_mean(graph_removable);
    p.busy_ns = per_step_mean(busy);
    p.idle_ns = per_step_mean(idle_ns);
    p.recording_idle_ns = per_step_mean(recording_idle(model, report, steps));
    p.queued_gap_ns = queued_gap_mean(model, report, steps);
    return f;
}

// FP8's price (docs/analysis.md "Compare"): the traced step change split into GEMM time, bookkeeping kernel time, the
// idle the extra launches add and the rest, and what would win each back. The launch part is the change in the idle the
// trace charges to launches (`launch`, and `host` inside the step's launches: the framework's dispatch between them),
// measured gap by gap, rather than kernels added x a cost per launch: a launch costs the host's dispatch of its op,
// not the launch call's few microseconds, and hides entirely behind a long kernel.
void price_fp8(PerformanceComparison& perf)
{
    const RunPerformance &run = perf.run, &ref = perf.ref;
    perf.gemm_saved_ns = ref.gemm_ns - run.gemm_ns;
    // torch.compile fuses FP8's bookkeeping into kernels that also do the model's own work (an RMSNorm that takes
    // its output's amax): that work left the other kernels, whose time falls by as much. The fall, up to the added
    // time of such fused kernels, is the model work they absorbed, not FP8's price.
    const double other_added = run.other_kernel_ns - ref.other_kernel_ns;
    const double fused_mixed_added = run.fused_with_model_work_ns - ref.fused_with_model_work_ns;
    perf.fused_absorbed_ns = std::clamp(-other_added, 0.0, std::max(0.0, fused_mixed_added));
    perf.bookkeeping_added_ns = run.bookkeeping_ns - ref.bookkeeping_ns - perf.fused_absorbed_ns;
    perf.net_gain_ns = perf.gemm_saved_ns - perf.bookkeeping_added_ns;
    perf.step_change_ns = run.step_ns - ref.step_ns;
    perf.launch_idle_added_ns = run.launch_idle_ns - ref.launch_idle_ns;
    perf.other_kernels_added_ns = other_added + perf.fused_absorbed_ns;
    perf.kernel_time_added_ns = -perf.gemm_saved_ns + perf.bookkeeping_added_ns + perf.other_kernels_added_ns;
    const double gap = ref.queued_gap_ns > 0 ? ref.queued_gap_ns : run.queued_gap_ns;
    perf.kernels_added_per_step = run.kernels_per_step - ref.kernels_per_step;
    perf.gpu_bound_change_ns = perf.kernel_time_added_ns + perf.kernels_added_per_step * gap;
    perf.recording_idle_added_ns = run.recording_idle_ns - ref.recording_idle_ns;
    perf.untraced_change_estimate_ns = perf.step_change_ns - perf.recording_idle_added_ns;
    const double explained = -perf.gemm_saved_ns + perf.bookkeeping_added_ns + perf.launch_idle_added_ns;
    perf.rest_ns = perf.step_change_ns - explained;
    if (perf.step_change_ns != 0)
        perf.explained_share = explained / perf.step_change_ns;
    perf.graphs_recover_ns = std::max(0.0, run.graph_removable_ns - ref.graph_removable_ns);
    // Fusing helps the separate cast and amax/scale kernels only: fused ones are fused already.
    perf.fused_casts_recover_ns = std::max(
        0.0, (run.bookkeeping_ns - run.fused_bookkeeping_ns) - (ref.bookkeeping_ns - ref.fused_bookkeeping_ns));
    perf.compile_recovers_up_to_ns = std::max(0.0, perf.launch_idle_added_ns) + perf.fused_casts_recover_ns
        + std::max(0.0, perf.other_kernels_added_ns);
}

// Per kernel name, its time and count summed over the compared steps (the kernel table's per-step figures).
std::map<std::string_view, std::pair<KernelClass, ClassTotals>> kernels_by_name(
    const TraceModel& model, const Report& report, const std::set<int64_t>& steps)
{
    std::map<std::string_view, std::pair<KernelClass, ClassTotals>> out;
    for (const KernelTableRow& row : report.top_kernels.rows)
        for (const KernelStepFigures& s : row.per_step)
            if (s.step < report.steps.steps.size() && steps.contains(report.steps.steps[s.step].index)) {
                auto& [cls, totals] = out[model.strings[row.name]];
                cls = row.cls;
                totals.time_ns += s.time_ns;
                totals.count += s.count;
            }
    return out;
}

KernelDiff kernel_diff(const CompareInput& in, const std::set<int64_t>& run_steps, const std::set<int64_t>& ref_steps,
    int64_t run_step_count, int64_t ref_step_count)
{
    const auto run = kernels_by_name(in.run_model, in.run_report, run_steps);
    const auto ref = kernels_by_name(in.ref_model, in.ref_report, ref_steps);
    const auto per_step = [](int64_t value, int64_t steps) {
        return steps > 0 ? static_cast<double>(value) / static_cast<double>(steps) : 0.0;
    };
    KernelDiff diff;
    const auto add = [&](std::string_view name, KernelClass cls, const ClassTotals* r, const ClassTotals* f) {
        KernelChange change { .name = std::string(name), .cls = cls, .time_ns = {}, .count = {} };
        if (r) {
            change.time_ns.run = per_step(r->time_ns, run_step_count);
            change.count.run = per_step(r->count, run_step_count);
        }
        if (f) {
            change.time_ns.ref = per_step(f->time_ns, ref_step_count);
            change.count.ref = per_step(f->count, ref_step_count);
        }
        if (r && f) {
            ++diff.common_names;
            diff.changed.push_back(std::move(change));
        } else if (r) {
            ++diff.appeared_names;
            diff.appeared_ns += change.time_ns.run;
            diff.appeared.push_back(std::move(change));
        } else {
            ++diff.vanished_names;
            diff.vanished_ns += change.time_ns.ref;
            diff.vanished.push_back(std::move(change));
        }
    };
    for (const auto& [name, entry] : run) {
        const auto other = ref.find(name);
        add(name, entry.first, &entry.second, other == ref.end() ? nullptr : &other->second.second);
    }
    for (const auto& [name, entry] : ref)
        if (!run.contains(name))
            add(name, entry.first, nullptr, &entry.second);
    // Most time first; names come sorted from the maps, and a stable sort keeps that order among ties.
    const auto keep_top = [](std::vector<KernelChange>& list, auto key) {
        std::ranges::stable_sort(list, [&](const KernelChange& a, const KernelChange& b) { return key(a) > key(b); });
        if (list.size() > kKernelChangesListed)
            list.resize(kKernelChangesListed);
    };
    keep_top(diff.appeared, [](const KernelChange& c) { return c.time_ns.run; });
    keep_top(diff.vanished, [](const KernelChange& c) { return c.time_ns.ref; });
    keep_top(diff.changed, [](const KernelChange& c) { return std::abs(c.time_ns.change()); });
    return diff;
}

// The collector's own GPU time over the compared steps of one run.
CollectorWorkSummary collector_work_in(const TraceModel& model, const Report& report, const std::set<int64_t>& steps)
{
    StepSet compared = report.steps;
    std::erase_if(compared.steps, [&](const StepInterval& s) { return !steps.contains(s.index); });
    return summarize_collector_work(model, compared, report.device);
}

} // namespace

PerformanceComparison compare_performance(
    const CompareInput& in, const std::set<int64_t>& run_steps, const std::set<int64_t>& ref_steps)
{
    PerformanceComparison perf;
    RunFigures run = figures_of(in.run_model, in.run_report, run_steps);
    RunFigures ref = figures_of(in.ref_model, in.ref_report, ref_steps);
    perf.run = run.means;
    perf.ref = ref.means;
    price_fp8(perf);

    perf.step_median_ns
        = { static_cast<double>(median_of(run.step_lengths)), static_cast<double>(median_of(ref.step_lengths)) };
    perf.busy_median_ns = { static_cast<double>(median_of(run.busy)), static_cast<double>(median_of(ref.busy)) };
    perf.bubble_ratio_median = { upper_median_value(run.bubble_ratios), upper_median_value(ref.bubble_ratios) };
    const auto per_step = [](int64_t value, int64_t steps) {
        return steps > 0 ? static_cast<double>(value) / static_cast<double>(steps) : 0.0;
    };
    const int64_t run_n = perf.run.steps, ref_n = perf.ref.steps;
    for (size_t c = 0; c < kBubbleCauseCount; ++c)
        perf.idle_by_cause_ns[c] = { per_step(run.cause_ns[c], run_n), per_step(ref.cause_ns[c], ref_n) };
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        perf.class_time_ns[c] = { per_step(run.classes[c].time_ns, run_n), per_step(ref.classes[c].time_ns, ref_n) };
        perf.class_count[c] = { per_step(run.classes[c].count, run_n), per_step(ref.classes[c].count, ref_n) };
    }
    perf.kernels = kernel_diff(in, run_steps, ref_steps, run_n, ref_n);

    const CollectorWorkSummary run_work = collector_work_in(in.run_model, in.run_report, run_steps);
    const CollectorWorkSummary ref_work = collector_work_in(in.ref_model, in.ref_report, ref_steps);
    RecordingInflation& rec = perf.recording;
    rec.collector_ns = { run_work.time_per_step_ns(), ref_work.time_per_step_ns() };
    rec.share = { run_work.share(), ref_work.share() };
    rec.notable = rec.share.run >= kRecordingNotableShare || rec.share.ref >= kRecordingNotableShare;
    rec.inflation_ns = perf.recording_idle_added_ns;
    return perf;
}

} // namespace fp8scope::analyzer::detail
