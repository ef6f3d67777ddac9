// Multi-rank analysis (docs/analysis.md "Across ranks"): the per-rank traces of one job analysed together.
// Communication time and exposed communication per step, collectives matched across ranks, stragglers, clock
// alignment across hosts and FP8 scale agreement across data-parallel ranks.
//
// Two layers, so that the per-rank part can come from elsewhere (`report --merge` of per-rank JSON summaries, run as
// independent jobs):
// - summarize_rank(): one trace and its Report -> RankSummary, everything the cross-rank rules need from that rank,
//   computed from its trace alone, in its own clock;
// - analyze_across_ranks(): RankSummaries of one job -> CrossRankReport, no trace needed.
// analyze_rank_set() does both for trace files, each rank loaded and analysed in parallel.
#pragma once

#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/common/error.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::analyzer {

// ---- Collectives, classed by kernel name ----

// HostStaged: no kernel, a buffer the rank copied to pinned host memory and back (gloo's collectives on CUDA tensors:
// device -> host, the collective on the CPU, host -> device), found only on a rank with no communication kernel.
enum class CollectiveKind : uint8_t {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    AllToAll,
    SendRecv,
    Other,
    HostStaged
};
inline constexpr size_t kCollectiveKindCount = 9;

// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all", "send_recv", "other",
// "host_staged".
std::string_view collective_kind_id(CollectiveKind kind);

// One rule of the collective table: `matches` receives the kernel name in lower case. The first rule that matches
// decides; a communication kernel no rule matches is CollectiveKind::Other (ncclDevKernel_Generic, userbuffers).
struct CollectiveRule {
    CollectiveKind kind;
    std::string_view pattern; // the rule in words, for docs and reports
    bool (*matches)(std::string_view lower_name);
};
std::span<const CollectiveRule> collective_rules();
CollectiveKind classify_collective(std::string_view kernel_name);

// ---- Per rank ----

// A communication kernel inside an analysed step, in the rank's own time (ns from its session start). A host-staged
// collective spans from its device-to-host copy's end (the rank's data is on the host: its arrival) to the start of
// the copy back (the collective's result is there: its release).
struct RankCollective {
    CollectiveKind kind = CollectiveKind::Other;
    int64_t step_index = 0; // the step that contains its start
    int32_t ordinal = 0; // its place among the rank's collectives of its kind in that step, by start, from 0
    uint32_t device_id = 0, stream_id = 0;
    int64_t start_ns = 0, end_ns = 0;
    // Until when the rank's own non-communication kernels on the device kept it busy while the collective ran: the
    // end of the last that started before the collective's end (at most that end), or the collective's start when
    // none ran during it. A wait before this is hidden by the rank's own work (its backward, as DDP's first bucket
    // all-reduces mid-backward); from it on the device only waits.
    int64_t compute_until_ns = 0;
};

struct RankStep {
    int64_t index = 0; // StepInterval::index
    int64_t start_ns = 0, end_ns = 0; // the rank's own time
    // |union of communication kernels ∩ step|, summed over devices.
    int64_t comm_ns = 0;
    // The part of comm_ns that no non-communication kernel of the same device overlaps, summed over devices.
    int64_t exposed_comm_ns = 0;
    std::array<int64_t, kBubbleCauseCount> cause_ns {}; // the rank's idle time per BubbleCause, all devices
    // The step's bubble ratio over the devices the report counts (bubbles_per_step()): `check --max-bubble-ratio`
    // over ranks names the worst rank's worst step by it.
    double bubble_ratio = 0;
    // Before the rank arrived at the step's first collective (the step's end without one): its arrival time, the
    // time its non-communication kernels ran (|union ∩ [start, arrival)|, summed over devices) and its idle time by
    // cause in that window. What makes a straggler late (docs/analysis.md "Across ranks", lead cause).
    int64_t arrival_ns = 0;
    int64_t compute_before_ns = 0;
    std::array<int64_t, kBubbleCauseCount> idle_before_ns {};
};

// One tensor statistics sample's scale, for the agreement check.
struct RankScaleSample {
    std::string site; // tensor_site_label()
    int64_t step = 0; // the sample's step number
    int32_t sample = 0; // its place among the site's samples of that step, by time, from 0
    bool is_scale_inv = true; // value is scale_inv; false: scale (the row had no scale_inv)
    double value = 0;
};

// What the cross-rank rules need from one rank. Plain data: the CLI can write it as JSON and `--merge` read it back.
struct RankSummary {
    std::string path;
    int32_t rank = -1, world_size = -1;
    std::string host, command_line;
    int64_t session_start_utc_ns = 0; // the rank's times + this = its clock's UTC time
    StepSource step_source = StepSource::WholeTrace;
    BubbleTotals totals; // the rank's bubbles over its analysed steps (Report::totals), the comm cause included
    std::vector<RankStep> steps; // the analysed steps, in time order
    std::vector<RankCollective> collectives; // in start order
    std::vector<RankScaleSample> scales; // by site, step, sample
    RecordingStatus recording; // how complete the rank's recording is (Report::recording): `check` warns per rank
};

RankSummary summarize_rank(const TraceModel& model, const Report& report);

// Why traces are not one job, or nullopt when they are: every rank known (meta rank >= 0), the same world size, the
// same command line (an argument `--local_rank=N` / `--local-rank=N`, which torch.distributed.launch adds per rank,
// ignored), distinct ranks below the world size. One line, naming the traces at fault.
std::optional<std::string> check_one_job(std::span<const RankSummary> ranks);

// ---- Across ranks ----

// FP8 scales agree when |a - b| <= kScaleRelativeTolerance * max(|a|, |b|): the ranks compute them from the same
// reduced amax in float32, so they are bit-equal in practice; the tolerance only absorbs a different rounding order.
inline constexpr double kScaleRelativeTolerance = 1e-6;

// A clock: the ranks that share it and the shift that puts their times on the reference rank's time line.
struct HostClock {
    std::string host; // meta host; "" when unknown (each such rank is then a clock of its own)
    std::vector<int32_t> ranks;
    int64_t offset_ns = 0; // added to the host's UTC-anchored times; 0 for the reference rank's host
    int64_t samples = 0; // end differences the offset is the median of (0: the reference host, or nothing matched)
};

struct ClockAlignment {
    int32_t reference_rank = -1; // the lowest rank: time 0 is its session start
    std::vector<HostClock> hosts; // the reference rank's host first, then by lowest rank
    bool aligned_by_collectives = false; // more than one clock, shifted by the ends of matched collectives
    // Median over every matched collective and every rank but the reference one of |end - reference end| after the
    // shift; 0 with no matched collective. On one host it measures how closely collectives end together.
    int64_t residual_ns = 0;
    int64_t residual_samples = 0;
};

// The same collective on every rank: the n-th collective of one kind in one step.
struct MatchedCollective {
    int64_t step_index = 0;
    CollectiveKind kind = CollectiveKind::Other;
    int32_t ordinal = 0;
    // Per rank (CrossRankReport::ranks order), on the reference rank's time line (clock shift applied).
    std::vector<int64_t> start_ns, end_ns;
    std::vector<int64_t> wait_ns; // last arrival's start - own start, clipped to [0, own kernel length]
    std::vector<int64_t> compute_until_ns; // RankCollective::compute_until_ns, shifted
    int32_t last_rank = -1; // the rank that started last (the lowest such rank on a tie)
    int64_t max_wait_ns = 0;
};

// Why a straggler arrived late: the idle causes, or Compute (its kernels ran longer than the others').
enum class LeadCause : uint8_t { Sync, Dependency, Launch, Host, Comm, Compute };
std::string_view lead_cause_name(LeadCause cause); // bubble_cause_name() of the idle causes, or "compute"

// How the slowest rank of a step was chosen.
enum class SlowestBy : uint8_t {
    CausedWait, // the rank whose late arrivals made the others wait longest in the step's collectives
    StepTime, // nobody waited: the rank with the longest step
};
const char* slowest_by_name(SlowestBy by); // "caused_wait", "step_time"

struct StepAcrossRanks {
    int64_t step_index = 0;
    // Per rank (CrossRankReport::ranks order).
    std::vector<int64_t> step_ns, comm_ns, exposed_comm_ns;
    // The rank's waits in the step's matched collectives, the time its device did nothing but wait: each wait less
    // the part its own kernels hid (RankCollective::compute_until_ns); waits in collectives that overlap in time
    // (host-staged buckets reduced concurrently) are one wait, from its last arrival among them.
    std::vector<int64_t> wait_ns;
    // The others' waits, counted so, in the collectives where this rank arrived last, summed over them.
    std::vector<int64_t> caused_wait_ns;
    int32_t slowest_rank = -1;
    SlowestBy slowest_by = SlowestBy::StepTime;
    // Why it was late: of its kernel time and its idle time by cause (comm left out) before it arrived at the step's
    // first collective, the one it had the most more of than the other ranks (their median); when it had more of
    // none, its cause with the most idle time in the step; none when it had no idle time either.
    std::optional<LeadCause> slowest_lead_cause;
};

struct RankAcross {
    int32_t rank = -1;
    int64_t wait_ns = 0; // StepAcrossRanks::wait_ns summed over the common steps
    int64_t caused_wait_ns = 0; // StepAcrossRanks::caused_wait_ns summed over the common steps
    int64_t times_last = 0; // matched collectives it arrived last at
    int64_t unmatched_collectives = 0; // its collectives in common steps with no counterpart on every rank
    int64_t steps_not_common = 0; // its analysed steps that some other rank did not analyse
};

struct ScaleMismatch {
    std::string site;
    int64_t step = 0;
    int32_t sample = 0;
    int32_t rank_a = -1, rank_b = -1; // rank_a: the lowest rank with the sample; rank_b: the first that disagrees
    double value_a = 0, value_b = 0; // scale_inv (1 / scale for a sample that had only scale)
};

struct ScaleAgreement {
    int64_t compared = 0; // (site, step, sample) found on at least two ranks
    int64_t mismatches = 0; // of those, how many disagree
    std::optional<ScaleMismatch> first; // the earliest step's, then by site and sample
};

struct CrossRankReport {
    std::vector<int32_t> ranks; // ascending; every per-rank vector below is in this order
    std::vector<int64_t> common_steps; // step indices every rank analysed, ascending
    ClockAlignment clock;
    std::vector<MatchedCollective> collectives; // by step, kind, ordinal
    std::optional<size_t> worst_collective; // the one with the largest max_wait_ns (earliest on a tie)
    std::vector<StepAcrossRanks> steps; // one per common step
    std::vector<RankAcross> per_rank;
    ScaleAgreement scales;
};

// The longest wait of one rank in one step (StepAcrossRanks::wait_ns), the earliest step and lowest rank on a tie:
// what `check --max-straggler-wait` gates and `report` names. None without a matched collective.
struct StepWait {
    int32_t rank = -1;
    int64_t step = 0, wait_ns = 0;
};
std::optional<StepWait> longest_step_wait(const CrossRankReport& across);

// `ranks` must be one job (check_one_job()), in any order.
CrossRankReport analyze_across_ranks(std::span<const RankSummary> ranks);

// The straggler waits of one collective kind, over its matched collectives (CrossRankReport::collectives).
struct KindWaits {
    CollectiveKind kind = CollectiveKind::Other;
    int64_t count = 0; // matched collectives of the kind
    // Per rank (CrossRankReport::ranks order).
    std::vector<int64_t> times_last; // how often the rank arrived last
    std::vector<int64_t> wait_ns, max_wait_ns; // its waits in them: the sum and the largest single one
    int32_t most_often_last = -1; // the rank with the most times_last (the lowest such rank on a tie)
};

// One entry per kind with a matched collective, in CollectiveKind order.
std::vector<KindWaits> waits_by_kind(const CrossRankReport& across);

// A trace that analyze_rank_set() leaves out of the job, and why.
struct LeftOutTrace {
    std::string path;
    std::string reason;
};

struct RankSetReport {
    std::vector<RankSummary> ranks; // ascending rank
    CrossRankReport across;
    // Traces that are not ranks: the launcher's own (torchrun initializes CUDA in its agent process on some
    // versions, which then writes a trace with no rank and no GPU work: `ranknorank.sqlite` beside the ranks').
    std::vector<LeftOutTrace> left_out;
};

// Why a trace is not one of the job's ranks, or nullopt when it may be: no rank in its meta and no kernel at all.
std::optional<std::string> not_a_rank(const TraceModel& model);
// The same for a rank summary (`report --merge`): no rank, no step and no collective.
std::optional<std::string> not_a_rank(const RankSummary& summary);

// Loads and analyses each trace (analyze() with `options`) on up to std::thread::hardware_concurrency() threads,
// leaves out those not_a_rank() names (RankSetReport::left_out), summarises the others, checks they are one job and
// analyses them across ranks. Errors: a trace's load error as
// load_trace() gives it (the first by argument order); a rank whose selection is empty, ErrorCode::Usage; traces
// that are not one job, ErrorCode::InvalidTrace with check_one_job()'s line (the CLI exits 3).
Expected<RankSetReport> analyze_rank_set(const std::vector<std::string>& paths, const ReportOptions& options = {});
// The same, reporting progress (the traces' mean fraction, each loaded then analysed) and stopping with
// ErrorCode::Cancelled when `progress` returns false (progress.hpp).
Expected<RankSetReport> analyze_rank_set(
    const std::vector<std::string>& paths, const ReportOptions& options, const ProgressHook& progress);

} // namespace fp8scope::analyzer
