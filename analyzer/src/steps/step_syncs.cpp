// Step evidence from host-blocking calls (docs/analysis.md "Steps", automatic detection). Jobs without optimizer
// kernels (a hand-written SGD update, a CUDA C++ program) often close each step with a sync (`.item()`,
// `torch.cuda.synchronize()`, cudaDeviceSynchronize): the first activity launched after it returns is where the next
// step begins.
#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "model/median.hpp"
#include "steps/step_period.hpp"

#include <algorithm>
#include <unordered_map>

namespace fp8scope::analyzer::detail {
namespace {

constexpr uint32_t kMaxSyncsPerStep = 4;

// The thread that launched most of the sequence's activities.
int64_t main_launching_thread(const Sequence& s)
{
    std::unordered_map<int64_t, size_t> launched;
    int64_t best_tid = 0;
    size_t best = 0;
    for (int64_t tid : s.launch_tid) {
        if (tid == 0)
            continue;
        if (const size_t n = ++launched[tid]; n > best) {
            best = n;
            best_tid = tid;
        }
    }
    return best_tid;
}

// Leading places much closer together than the loop's spacing are set-up (weights copied in, allocations freed
// before the loop), not steps: dropped while the first spacing is under half the median spacing.
void drop_prologue(std::vector<uint32_t>& positions)
{
    if (positions.size() < 4)
        return;
    std::vector<int64_t> spacings;
    for (size_t i = 0; i + 1 < positions.size(); ++i)
        spacings.push_back(int64_t(positions[i + 1]) - int64_t(positions[i]));
    const int64_t median = median_of(spacings);
    size_t first = 0;
    while (positions.size() - first > 3 && 2 * (int64_t(positions[first + 1]) - int64_t(positions[first])) < median)
        ++first;
    positions.erase(positions.begin(), positions.begin() + std::ptrdiff_t(first));
}

// k places per step: every k-th spacing is regular. The smallest such k; of its k phases, the one after which the
// thread paused longest before launching (data loading, logging: the top of the loop).
std::vector<uint32_t> recurring(const Sequence& s, const std::vector<uint32_t>& positions, uint32_t& per_step)
{
    for (uint32_t k = 1; k <= kMaxSyncsPerStep && positions.size() >= 3 * size_t(k); ++k) {
        std::vector<uint32_t> best;
        int64_t best_pause = -1;
        bool regular = true;
        for (uint32_t phase = 0; phase < k && regular; ++phase) {
            std::vector<uint32_t> every_kth;
            std::vector<int64_t> pauses;
            for (size_t i = phase; i < positions.size(); i += k) {
                every_kth.push_back(positions[i]);
                pauses.push_back(s.host_gap_ns[positions[i]]);
            }
            regular = regular_spacing(every_kth);
            const int64_t pause = median_of(pauses);
            if (regular && pause > best_pause) {
                best_pause = pause;
                best = std::move(every_kth);
            }
        }
        if (regular) {
            per_step = k;
            return best;
        }
    }
    return {};
}

} // namespace

namespace {

// The places of the main launching thread's host-blocking calls: all of them, and those of device-wide syncs.
void return_places(
    const TraceModel& model, const Sequence& s, std::vector<uint32_t>& all, std::vector<uint32_t>& device_wide)
{
    const int64_t tid = main_launching_thread(s);
    if (tid == 0)
        return;
    // The thread's launches by call start, with their positions in the sequence.
    std::vector<std::pair<int64_t, uint32_t>> launches;
    for (size_t i = 0; i < s.launch_tid.size(); ++i)
        if (s.launch_tid[i] == tid)
            launches.emplace_back(s.launch_start_ns[i], uint32_t(i));
    std::sort(launches.begin(), launches.end());
    // The earliest position launched at or after each of the thread's host-blocking calls returned. A call after
    // the last launch closes the trace and begins no step.
    for (const HostBlockingCall& call : find_host_blocking_calls(model)) {
        if (call.global_tid != tid)
            continue;
        auto it = std::lower_bound(launches.begin(), launches.end(), std::pair<int64_t, uint32_t>(call.end_ns, 0));
        if (it == launches.end())
            continue;
        uint32_t position = it->second;
        // Launches of one thread reach the device in order per stream, not across streams: the earliest position
        // among the next few launches is the step's first activity.
        for (auto next = it; next != launches.end() && next - it < 8; ++next)
            position = std::min(position, next->second);
        all.push_back(position);
        if (call.kind == HostBlockingKind::DeviceSync)
            device_wide.push_back(position);
    }
    for (auto* positions : { &all, &device_wide }) {
        std::sort(positions->begin(), positions->end());
        positions->erase(std::unique(positions->begin(), positions->end()), positions->end());
    }
}

} // namespace

std::vector<uint32_t> sync_return_positions(const TraceModel& model, const Sequence& s)
{
    std::vector<uint32_t> all, device_wide;
    return_places(model, s, all, device_wide);
    return all;
}

std::vector<uint32_t> sync_boundaries(const TraceModel& model, const Sequence& s, uint32_t& per_step)
{
    per_step = 0;
    std::vector<uint32_t> all, device_wide;
    return_places(model, s, all, device_wide);
    drop_prologue(all);
    drop_prologue(device_wide);
    // A device-wide sync (torch.cuda.synchronize(), cudaDeviceSynchronize) waits for everything the step launched on
    // every stream: when one recurs once per step, it is the step's end, whatever other syncs the step makes (a
    // stream sync halfway, a copy). Otherwise every host-blocking call counts.
    if (device_wide.size() >= 3 && regular_spacing(device_wide)) {
        per_step = 1;
        return device_wide;
    }
    return all.size() >= 3 ? recurring(s, all, per_step) : std::vector<uint32_t> {};
}

} // namespace fp8scope::analyzer::detail
