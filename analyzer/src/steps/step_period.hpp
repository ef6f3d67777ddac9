// Automatic step detection (docs/analysis.md "Steps", rule 4): the period of the repeating activity sequence of a
// trace's busiest device, for jobs with no step markers and no NVTX steps. Internal to the analyzer; steps.cpp
// turns the period into steps.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::analyzer::detail {

struct Period {
    std::vector<int64_t> step_starts_ns;
    std::string description;
    // Set (and no starts) when the evidence disagrees: the report falls back to the whole trace and says why.
    std::string disagreement;
};

// What the phase alignment needs of each activity of the device, in sequence order.
struct Sequence {
    std::vector<int64_t> start_ns;
    std::vector<int64_t> host_gap_ns; // launch-call start - the latest earlier launch-call start (0: unknown)
    std::vector<int64_t> launch_start_ns; // the launch call's start (-1: no launch call)
    std::vector<int64_t> launch_tid; // the launch call's globalTid (0: no launch call)
    std::vector<uint8_t> optimizer, gemm;
    std::vector<uint8_t>
        to_host; // a device-to-host copy: results leaving the step (a loss, a checkpoint), never its start
    std::vector<uint32_t> token; // kernel name index, or strings.size() + 1 + copy kind, or strings.size() (memset)
};

// An optimizer's kernel by name: PyTorch's foreach and fused optimizers (multi_tensor_apply_kernel, _fused_adam(w),
// _fused_sgd), Apex's and TransformerEngine's multi_tensor_* kernels. A training step ends with them.
bool optimizer_name(std::string_view name);

// At least 70% of the spacings between consecutive positions within 10% of their median (at least 3 positions): a
// loop's steps are alike.
bool regular_spacing(const std::vector<uint32_t>& positions);

// Step starts from boundary positions in `s`: each position + offset, one more step before the first when
// `prepend` and the sequence holds at least half a step there, and a last repetition with fewer than half the
// median step's activities dropped (a trace that ends inside a step).
std::vector<int64_t> aligned_starts(
    const Sequence& s, const std::vector<uint32_t>& positions, int64_t offset, bool prepend);

// Step evidence from host-blocking calls (step_syncs.cpp; docs/analysis.md "Steps"): on the thread that launched most
// of the sequence, the position of the first activity launched after each host-blocking call returned (calls with no
// activity between them share one; leading places much closer together than the loop's spacing are set-up and
// dropped). A device-wide sync that recurs once per step (regular spacing) is the step's end; otherwise, when all
// the calls' places recur k = 1..4 times per step (every k-th spacing regular), the places of the phase after which
// the thread paused longest. Empty when neither holds. `per_step` receives k.
std::vector<uint32_t> sync_boundaries(const TraceModel& model, const Sequence& s, uint32_t& per_step);

// Every such place, ascending and distinct, without the filtering: where a host-blocking call of the main launching
// thread returned.
std::vector<uint32_t> sync_return_positions(const TraceModel& model, const Sequence& s);

// The fewest repetitions that make a loop.
inline constexpr uint32_t kMinSteps = 3;

// A training step ends with its update: activity after the last update (an evaluation pass, a checkpoint's copies)
// is no step of its own, however long. Drops the starts after the sequence's last optimizer kernel.
void drop_after_last_update(const Sequence& s, std::vector<int64_t>& starts);

// The kernel-sequence period on `device` (step_sequence.cpp): the largest step count that (nearly) all repeated
// tokens' counts agree with and that has a regular anchor, its steps beginning at the anchor or, where more steps
// share that distance, a fixed distance after the optimizer's last kernel (`group_ends`) at the launching thread's
// longest pause (`boundaries`). nullopt when no candidate count has a regular anchor.
std::optional<Period> sequence_period(const TraceModel& model, uint32_t device, const Sequence& sequence,
    const std::vector<uint32_t>& boundaries, const std::vector<uint32_t>& group_ends);

// The repeating activity sequence of the busiest device (docs/analysis.md "Steps", automatic detection).
// Each activity is a token (kernel name, copy kind, memset). A loop of S steps makes each periodic token occur
// about a multiple of S times, so S is the largest number that the counts of (nearly) all tokens seen at least
// three times are compatible with. The steps then begin at the occurrences of an anchor token that occurs a few times
// per step: the one after the longest typical device idle time, which is where a training loop's host work (data
// loading, logging, the optimizer's bookkeeping) sits. O(n), two passes, no per-activity allocation.
std::optional<Period> find_step_period(const TraceModel& model);

// Steps from CUDA graph launches (step_graphs.cpp): the thread with the most cudaGraphLaunch/cuGraphLaunch calls,
// when its graphs' activities outnumber the activities launched otherwise over the same span, and the launched
// graph ids repeat with a period of k = 1..8 launches. Each step begins at the first activity of every k-th launch.
std::optional<Period> find_graph_step_period(const TraceModel& model);

} // namespace fp8scope::analyzer::detail
