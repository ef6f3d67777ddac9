#include "steps/step_period.hpp"

#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/format/schema_enums.hpp"
#include "model/correlation_index.hpp"
#include "model/device_activity.hpp"
#include "model/median.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace fp8scope::analyzer::detail {

bool optimizer_name(std::string_view name)
{
    std::string lower(name.substr(0, 256));
    for (char& c : lower)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    // PyTorch's foreach and fused optimizers (multi_tensor_apply_kernel, _fused_adam(w)_kernel, _fused_sgd), Apex's
    // and TransformerEngine's multi_tensor_* kernels. Not "lamb": lambdas fill PyTorch's element-wise kernel names.
    for (std::string_view word : { "multi_tensor_apply", "multi_tensor_adam", "fused_adam", "fused_sgd" })
        if (lower.find(word) != std::string::npos)
            return true;
    return false;
}

namespace {

Sequence read_sequence(const TraceModel& model, uint32_t device)
{
    Sequence s;
    CorrelationIndex calls(model.api_calls.correlation_id, &model.api_calls.is_driver);
    KernelClassCache classes(model);
    std::unordered_map<uint32_t, uint8_t> optimizer_names; // name index -> 0/1
    int64_t latest_launch_ns = INT64_MIN;
    Activity activity;
    for (ActivityCursor cursor(model, device); cursor.next(activity);) {
        s.start_ns.push_back(activity.start_ns);
        const uint32_t base = uint32_t(model.strings.size());
        s.token.push_back(activity.kind == ActivityKind::Kernel ? model.kernels.name[activity.row].index
                : activity.kind == ActivityKind::Memcpy
                ? base + 1 + uint32_t(std::clamp(model.memcpys.copy_kind[activity.row], 0, 15))
                : base);
        int64_t gap = 0;
        int64_t launch_start_ns = -1, launch_tid = 0;
        if (const auto call = calls.find(activity.correlation_id)) {
            const int64_t launch_ns = model.api_calls.start_ns[*call];
            launch_start_ns = launch_ns;
            launch_tid = model.api_calls.global_tid[*call];
            if (latest_launch_ns != INT64_MIN)
                gap = std::max<int64_t>(0, launch_ns - latest_launch_ns);
            latest_launch_ns = std::max(latest_launch_ns, launch_ns);
        }
        s.host_gap_ns.push_back(gap);
        s.launch_start_ns.push_back(launch_start_ns);
        s.launch_tid.push_back(launch_tid);
        uint8_t optimizer = 0, gemm = 0;
        if (activity.kind == ActivityKind::Kernel) {
            const StringRef name = model.kernels.name[activity.row];
            auto [it, inserted] = optimizer_names.try_emplace(name.index, 0);
            if (inserted)
                it->second = optimizer_name(model.strings[name]) ? 1 : 0;
            optimizer = it->second;
            const KernelClass cls = classes.of(activity.row).cls;
            gemm = cls == KernelClass::Fp8Gemm || cls == KernelClass::OtherGemm ? 1 : 0;
        }
        s.optimizer.push_back(optimizer);
        s.gemm.push_back(gemm);
        s.to_host.push_back(activity.kind == ActivityKind::Memcpy
                    && model.memcpys.copy_kind[activity.row] == int32_t(schema::MemcpyKind::DtoH)
                ? 1
                : 0);
    }
    return s;
}

// Where the loop's step begins, relative to the anchor (docs/analysis.md "Steps", phase): a training step ends
// with its optimizer update, and the next begins where the launching thread paused longest between the end of
// the optimizer's kernels and the next GEMM (data loading, logging, the step's Python top). Each such place is
// a candidate; the offset from the anchor shared by at least half the steps, with the longest median pause,
// wins. nullopt: no optimizer kernels, or no consistent offset (the anchor's phase stays).
// One boundary per optimizer group: the position after the group where the launching thread paused longest before
// the next GEMM (within 64 activities).
std::vector<uint32_t> optimizer_boundaries(
    const Sequence& s, const std::vector<uint32_t>& after_sync, std::vector<uint32_t>* group_ends = nullptr)
{
    const size_t n = s.start_ns.size();
    std::vector<uint32_t> boundaries;
    size_t i = 0;
    while (i < n) {
        if (!s.optimizer[i]) {
            ++i;
            continue;
        }
        // The optimizer's group: its kernels and the non-GEMM work between them, up to the next GEMM (the next
        // forward pass). One update can run its optimizer kernels far apart: clip_grad_norm_'s foreach norm, its
        // non-finite check and clipping before the update, GradScaler's unscale before it, and a first step's lazy
        // state initialisation between them (zoo clip_grad_nonfinite: 31 steps for 30, fp16_gradscaler 21 for 20,
        // when groups ended after 8 activities without an optimizer kernel).
        size_t last = i;
        for (size_t j = i + 1; j < n && !s.gemm[j]; ++j)
            if (s.optimizer[j])
                last = j;
        // A device-to-host copy is not where a step begins: after the update it carries the step's results out (its
        // loss's .item(), a checkpoint's tensors, whose file writes pause the thread longer than the loop's top
        // does: zoo save_every_n, 3.9-11.5 ms against 0.65 ms, had the steps after each checkpoint begin inside it).
        size_t best = n;
        for (size_t k = last + 1; k < n && k <= last + 64; ++k) {
            if (!s.to_host[k] && (best == n || s.host_gap_ns[k] > s.host_gap_ns[best]))
                best = k;
            if (s.gemm[k])
                break;
        }
        // A host-blocking call that returned before the next update (an evaluation pass's .item() after this one)
        // closes the step where the thread then paused longer: the work between belongs to this step.
        size_t next_update = last + 1;
        while (next_update < n && next_update <= last + 1024 && !s.optimizer[next_update])
            ++next_update;
        for (auto it = std::upper_bound(after_sync.begin(), after_sync.end(), uint32_t(last));
             it != after_sync.end() && *it < next_update; ++it)
            if (!s.to_host[*it] && (best == n || s.host_gap_ns[*it] > s.host_gap_ns[best]))
                best = *it;
        i = last + 1;
        if (best != n && (boundaries.empty() || best > boundaries.back())) {
            boundaries.push_back(uint32_t(best));
            if (group_ends)
                group_ends->push_back(uint32_t(last));
        }
    }
    return boundaries;
}

} // namespace

// A training step ends with its update: activity after the last update (an evaluation pass, a checkpoint's copies)
// is no step of its own, however long.
void drop_after_last_update(const Sequence& s, std::vector<int64_t>& starts)
{
    if (starts.empty())
        return;
    const auto last = std::lower_bound(s.start_ns.begin(), s.start_ns.end(), starts.back()) - s.start_ns.begin();
    if (std::find(s.optimizer.begin() + last, s.optimizer.end(), uint8_t(1)) == s.optimizer.end())
        starts.pop_back();
}

// At least 70% of the spacings within 10% of their median: a loop's steps are alike.
bool regular_spacing(const std::vector<uint32_t>& positions)
{
    if (positions.size() < 3)
        return false;
    std::vector<int64_t> lengths;
    for (size_t i = 0; i + 1 < positions.size(); ++i)
        lengths.push_back(int64_t(positions[i + 1]) - int64_t(positions[i]));
    const int64_t median = median_of(lengths);
    const auto close = std::count_if(
        lengths.begin(), lengths.end(), [&](int64_t length) { return std::abs(length - median) <= median / 10; });
    return close * 10 >= int64_t(lengths.size()) * 7;
}

std::vector<int64_t> aligned_starts(
    const Sequence& s, const std::vector<uint32_t>& positions, int64_t offset, bool prepend)
{
    std::vector<int64_t> lengths;
    for (size_t i = 0; i + 1 < positions.size(); ++i)
        lengths.push_back(int64_t(positions[i + 1]) - int64_t(positions[i]));
    const int64_t median = median_of(lengths);
    const int64_t n = int64_t(s.start_ns.size());
    std::vector<int64_t> starts;
    std::vector<int64_t> at;
    // The step before the first boundary, when the sequence holds it: it begins where the thread paused longest
    // about one step earlier (the first step often runs extra work, lazy initialisation, so not exactly one
    // median step before).
    const int64_t first = int64_t(positions.front()) + offset;
    if (prepend && 2 * first >= median) {
        // The later steps begin with the same few activities (the data copy, the first forward kernels): the last
        // place at least half a step before the first boundary where those begin is the first step's start, also
        // when lazy initialisation or compilation made that step longer. Without one, the longest pause about one
        // step earlier.
        constexpr size_t kSignature = 8;
        auto same_start = [&](int64_t p) {
            for (size_t k = 0; k < kSignature; ++k) {
                const size_t a = size_t(p) + k, b = size_t(first) + k;
                if (a >= s.token.size() || b >= s.token.size() || s.token[a] != s.token[b])
                    return false;
            }
            return true;
        };
        // A place inside a run of one token is no start (400 launches of one kernel: every place inside matches).
        int64_t best = -1;
        for (int64_t p = first - median / 2; p >= 0 && best < 0; --p)
            if (same_start(p) && (p == 0 || s.token[size_t(p) - 1] != s.token[size_t(p)]))
                best = p;
        if (best < 0) {
            best = std::max<int64_t>(0, first - median);
            for (int64_t p = std::max<int64_t>(0, first - median - median / 2); p <= first - median / 2; ++p)
                if (s.host_gap_ns[size_t(p)] > s.host_gap_ns[size_t(best)])
                    best = p;
        }
        at.push_back(best);
    }
    for (uint32_t p : positions)
        if (int64_t(p) + offset >= 0 && int64_t(p) + offset < n)
            at.push_back(int64_t(p) + offset);
    if (!at.empty() && n - at.back() < median / 2)
        at.pop_back();
    for (int64_t p : at)
        if (starts.empty() || s.start_ns[size_t(p)] > starts.back())
            starts.push_back(s.start_ns[size_t(p)]);
    return starts;
}

namespace {

// The device with the most activities (kernels, copies, memsets); nullopt without any.
std::optional<uint32_t> busiest_device(const TraceModel& model)
{
    std::vector<std::pair<uint32_t, size_t>> per_device;
    auto count_device = [&](uint32_t device) {
        for (auto& [id, count] : per_device)
            if (id == device) {
                ++count;
                return;
            }
        per_device.emplace_back(device, 1);
    };
    for (uint32_t device : model.kernels.device_id)
        count_device(device);
    for (uint32_t device : model.memcpys.device_id)
        count_device(device);
    for (uint32_t device : model.memsets.device_id)
        count_device(device);
    if (per_device.empty())
        return std::nullopt;
    return std::max_element(per_device.begin(), per_device.end(), [](auto& l, auto& r) {
        return l.second < r.second;
    })->first;
}

} // namespace

std::optional<Period> find_step_period(const TraceModel& model)
{
    const std::optional<uint32_t> busiest = busiest_device(model);
    if (!busiest)
        return std::nullopt;
    const uint32_t device = *busiest;
    const Sequence sequence = read_sequence(model, device);
    std::vector<uint32_t> group_ends; // each optimizer group's last kernel, one per boundary
    const std::vector<uint32_t> boundaries
        = optimizer_boundaries(sequence, sync_return_positions(model, sequence), &group_ends);
    std::optional<Period> found = sequence_period(model, device, sequence, boundaries, group_ends);
    // The optimizer's evidence: it runs once per step. When its groups are regular and the kernel sequence gave a
    // different count, the sequence repeated over several steps (or a fragment of one): a whole multiple is
    // explained and the optimizer wins; anything else is a disagreement, and no period is reported.
    // Host-blocking syncs that recur k times per step (docs/analysis.md "Steps", automatic detection): as strong as the
    // optimizer's kernels, and exact about where a step begins. Without a regular optimizer they decide, unless the
    // kernel sequence is a whole multiple finer (a sync every few steps); with one, they break a disagreement.
    uint32_t syncs_per_step = 0;
    const std::vector<uint32_t> sync_positions = sync_boundaries(model, sequence, syncs_per_step);
    std::vector<int64_t> sync_starts;
    if (!sync_positions.empty())
        sync_starts = aligned_starts(sequence, sync_positions, 0, true);
    const int64_t by_sync = int64_t(sync_starts.size()) >= kMinSteps ? int64_t(sync_starts.size()) : 0;
    const int64_t by_sequence = found ? int64_t(found->step_starts_ns.size()) : 0;
    auto whole_multiple = [](int64_t finer, int64_t coarser) {
        if (coarser <= 0)
            return false;
        const int64_t multiple = (finer + coarser / 2) / coarser;
        return multiple >= 2 && std::llabs(finer - multiple * coarser) <= 1;
    };
    auto from_syncs = [&](std::string_view other) {
        Period period;
        period.step_starts_ns = sync_starts;
        period.description = fmt::format("{} steps closed by host-blocking calls on device {} ({} per step), each "
                                         "step beginning at the first activity launched after its last one "
                                         "returned{}",
            by_sync, device, syncs_per_step, other);
        return period;
    };
    // A kernel sequence a whole multiple finer than the syncs is believed (a sync every few steps, `.item()` logging)
    // only when the launching thread also paused at its other step starts: a sequence of too few distinct tokens
    // repeats within a step (400 launches of one kernel), and its "steps" then begin with no pause at all.
    auto median_pause_at = [&](const std::vector<int64_t>& starts) {
        std::vector<int64_t> pauses;
        for (int64_t start : starts) {
            const size_t p = size_t(std::lower_bound(sequence.start_ns.begin(), sequence.start_ns.end(), start)
                - sequence.start_ns.begin());
            if (p < sequence.host_gap_ns.size() && p > 0)
                pauses.push_back(sequence.host_gap_ns[p]);
        }
        return median_of(pauses);
    };
    auto syncs_every_few_steps = [&] {
        return found && whole_multiple(by_sequence, by_sync)
            && 4 * median_pause_at(found->step_starts_ns) >= median_pause_at(sync_starts);
    };
    if (!regular_spacing(boundaries)) {
        const std::string no_optimizer
            = boundaries.empty() ? "no optimizer kernels" : "the optimizer's kernels are irregular";
        if (by_sync > 0 && !syncs_every_few_steps()) {
            if (!found)
                return from_syncs(fmt::format("; {}, no kernel-sequence period", no_optimizer));
            // The same count: the sequence's own starts stand (its anchor and offset fit every step); one step more or
            // less is a partial repetition at an end, which the syncs, at the steps' exact ends, do not have.
            if (by_sequence == by_sync) {
                found->description
                    += fmt::format("; {} steps closed by host-blocking calls, which agrees; {}", by_sync, no_optimizer);
                return found;
            }
            return from_syncs(
                fmt::format("; the kernel sequence alone repeats {} times, overruled; {}", by_sequence, no_optimizer));
        }
        if (found) {
            found->description
                += "; " + no_optimizer + (boundaries.empty() ? " to check it against" : ", no second opinion");
            if (by_sync > 0)
                found->description += fmt::format(
                    "; host-blocking syncs close one step in {}, which agrees", (by_sequence + by_sync / 2) / by_sync);
        }
        return found;
    }
    std::vector<int64_t> starts = aligned_starts(sequence, boundaries, 0, true);
    drop_after_last_update(sequence, starts);
    if (starts.size() < kMinSteps)
        return found;
    const int64_t by_optimizer = int64_t(starts.size());
    if (found && std::llabs(by_sequence - by_optimizer) <= 1) {
        found->description += fmt::format("; the optimizer ran {} times, which agrees", by_optimizer);
        return found;
    }
    Period period;
    // A kernel sequence that repeats less often than the optimizer runs, but not a whole multiple less, locked onto a
    // longer period than the loop's (tokens that a first step or a rotating buffer made incompatible with the true
    // count): the optimizer's count stands, and the description says so.
    const bool sequence_coarser = found && by_sequence < by_optimizer;
    if (found && !sequence_coarser) {
        if (!whole_multiple(by_optimizer, by_sequence)) {
            // The syncs side with one of the two.
            if (by_sync > 0 && std::llabs(by_sync - by_sequence) <= 1)
                return from_syncs(fmt::format("; the kernel sequence repeats {} times, which agrees, and the "
                                              "optimizer ran {} times",
                    by_sequence, by_optimizer));
            if (by_sync == 0 || std::llabs(by_sync - by_optimizer) > 1) {
                period.disagreement = fmt::format(
                    "the kernel sequence repeats {} times but the optimizer ran {} times", by_sequence, by_optimizer);
                return period;
            }
        }
    }
    period.step_starts_ns = std::move(starts);
    period.description = fmt::format("{} optimizer updates on device {}, each step beginning at the launching "
                                     "thread's longest pause after them{}",
        by_optimizer, device,
        !found ? std::string()
            : whole_multiple(by_optimizer, by_sequence)
            ? fmt::format(" (the kernel sequence alone repeats {} times: it spans several steps)", by_sequence)
            : fmt::format(
                " (the kernel sequence alone repeats {} times: it locked onto a longer period)", by_sequence));
    return period;
}

} // namespace fp8scope::analyzer::detail
