// The repeating period of a job's GEMM calls, learned online, for tensor statistics without step markers
// (docs/collector.md "Tensor statistics"). Plain C++ with no CUDA, so that unit tests can feed it key sequences.
//
// A job without fp8scope.step() and without NVTX step ranges still repeats the same GEMMs in the same order every
// step. The learner keys each call (NVTX path, shape, dtypes, transposes), finds the smallest period p of the key
// sequence with the KMP prefix function, and once the sequence has repeated p for `repeats` whole periods (and at
// least `min_lock_calls` calls) it locks p. A locked call's place is then its position in the period: its ordinal
// is its rank among same-key calls within the period (the 8 same-shaped GEMMs of 8 layers get 0..7, the same in
// every step), and periods are counted, so that sampling can take every N-th period as it takes every N-th step.
//
// The details (docs/collector.md has the user's view):
// - The prefix function runs over a window that starts at an anchor: the first call, or where the pattern last
//   broke. The window holds at most repeats * max_period calls.
// - A prologue (set-up GEMMs, a first step unlike the others) keeps the whole window from being periodic. At
//   window lengths that are powers of two, and when the window is full, the learner looks for the longest
//   periodic suffix (the prefix function of the reversed window) and moves the anchor to its start when it covers
//   at least 7/8 of the window (any share when the window is full).
// - While locked, each call is checked against the period's keys. On a mismatch (evaluation, a changed order) the
//   lock ends. A young lock (it held for fewer calls than the window it was found in) may have been a run of
//   identical layers rather than the step: the window goes on from its anchor, where the step's longer period
//   shows later. After an established lock, learning restarts at the mismatching call, for a quick relock after
//   an evaluation; the old window is still followed in the background until it fills, and if it shows a period
//   (the lock was a long run of identical layers, and the step repeats from the window's start) that one wins.
// - The phase (which call is the period's first) is the earliest call from which the pattern held, looking back
//   through the history. A period that is a rotation of one locked before keeps that one's phase and ordinals, so
//   that identities survive a break.
// Cost: O(1) amortised per call (the suffix checks are O(window) at doubling window lengths). Memory: 128 KiB of
// key history and 48 KiB per window, about 250 KB; up to about 450 KB with periods of thousands of calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fp8scope::collector {

// The key of one GEMM call: NVTX path, m, n, k, batch count, the three dtypes and the transposes (FNV-1a).
uint64_t gemm_call_key(
    std::string_view nvtx_path, int64_t m, int64_t n, int64_t k, int64_t batch, int32_t dtypes, int32_t transposes);

struct GemmPeriodOptions {
    uint32_t max_period = 4096; // calls; a longer period is not learned
    uint32_t repeats = 3; // whole periods the sequence must repeat before a period is locked
    // ... and at least this many calls: the forward pass of many identical layers repeats one layer's GEMMs, and
    // must not be taken for the step (a run shorter than this never is).
    uint32_t min_lock_calls = 256;
};

// Where a GEMM call sits in the locked period; both -1 when no period is locked.
struct GemmPlace {
    int32_t ordinal = -1; // rank among calls with the same key within the period
    int64_t period = -1; // the period's index, counted over the job (0 = the first period of the first lock)
};

class GemmPeriodLearner {
public:
    explicit GemmPeriodLearner(GemmPeriodOptions options = {});
    GemmPlace observe(uint64_t key);

    uint32_t period() const; // the locked period in calls; 0 when none is locked
    int64_t calls() const { return calls_; }
    int64_t locks() const { return locks_; } // how often a period was locked (for tests and diagnostics)

private:
    struct Pattern {
        std::vector<uint64_t> keys;
        std::vector<int32_t> ordinals;
    };
    // The prefix function of the keys [anchor, anchor + pi.size()).
    struct Window {
        int64_t anchor = 0;
        std::vector<uint32_t> pi;
        int64_t length() const { return int64_t(pi.size()); }
        int64_t smallest_period() const { return length() - pi.back(); }
    };
    uint64_t at(int64_t index) const { return ring_[size_t(index) & ring_mask_]; }
    int64_t capacity() const { return int64_t(options_.max_period) * options_.repeats; }
    bool lockable(const Window& w) const;
    void extend(Window& w, int64_t index) const;
    void restart(Window& w, int64_t anchor) const; // anchored there, holding the calls from there to now
    GemmPlace learn(int64_t index);
    std::optional<std::pair<int64_t, uint32_t>> periodic_suffix() const; // (length, period)
    GemmPlace lock(uint32_t period, int64_t index);
    GemmPlace place_and_advance();

    GemmPeriodOptions options_;
    std::vector<uint64_t> ring_; // the last ring_.size() keys
    size_t ring_mask_ = 0;
    int64_t calls_ = 0;
    int64_t locks_ = 0;

    Window window_;
    bool window_stopped_ = false; // a long lock filled the window: it no longer follows the calls
    // After an established lock broke: the window it was found in, still followed. If the lock was a run of
    // identical layers rather than the step, this window, which began earlier, shows the step's period.
    std::optional<Window> background_;

    std::vector<Pattern> known_; // periods locked so far, the current or latest last; at most kKnownPatterns
    bool locked_ = false; // known_.back() is locked
    int64_t locked_at_ = 0; // the call at which the lock was found
    int64_t lock_window_length_ = 0; // how many calls the window held then
    uint32_t position_ = 0; // of the next call in the period
    int64_t period_index_ = -1; // of the next call's period
};

// Tensor statistics sampling for GEMMs when no step is known (docs/collector.md "Tensor statistics"): with a
// locked period, every `every`-th period, and the call's ordinal; before a period is locked or after the pattern
// broke, at most one GEMM per `fallback_interval_ns`, with ordinal -1 (position unknown), so that sampling never
// stops and never floods.
struct GemmDecision {
    bool sampled = false;
    int32_t ordinal = -1;
    int64_t cap_unit = 0; // what FP8SCOPE_STATS_CAP counts within (cap_unit_of_* below)
};

// Cap units: a step, a locked period, or a second of the collector's clock (never equal to one another).
int64_t cap_unit_of_step(int64_t step);
int64_t cap_unit_of_period(int64_t period);
int64_t cap_unit_of_second(int64_t now_ns);

class GemmSampler {
public:
    static constexpr int64_t kFallbackIntervalNs = 20'000'000; // 50 GEMMs (150 samples) a second at most

    explicit GemmSampler(
        int64_t every, GemmPeriodOptions options = {}, int64_t fallback_interval_ns = kFallbackIntervalNs);
    GemmDecision on_gemm(uint64_t key, int64_t now_ns);
    // An explicit probe made without steps, its site's `site_calls`-th: its cap unit when it is sampled (the
    // current period's, when a period is locked and sampled; else every `every`-th call of the site, per second).
    std::optional<int64_t> probe_unit(int64_t site_calls, int64_t now_ns) const;
    const GemmPeriodLearner& learner() const { return learner_; }

private:
    GemmPeriodLearner learner_;
    int64_t every_;
    int64_t fallback_interval_ns_;
    std::optional<int64_t> last_fallback_ns_;
    int64_t current_period_ = -1; // of the latest GEMM; -1 when it was not in a locked period
};

} // namespace fp8scope::collector
