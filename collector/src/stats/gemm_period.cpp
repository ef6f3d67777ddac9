#include "stats/gemm_period.hpp"

#include <algorithm>
#include <unordered_map>

namespace fp8scope::collector {
namespace {

// Periods locked before whose phase and ordinals a later lock may take up again (training and, say, a long
// evaluation loop); the oldest is forgotten first.
constexpr size_t kKnownPatterns = 4;

uint64_t fnv1a(uint64_t hash, const void* data, size_t bytes)
{
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        hash ^= p[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

// The shift s with text[(s + j) % n] == pattern[j] for every j, if `pattern` is a rotation of `text` (KMP search
// of the pattern in text + text). Both have the same length n.
std::optional<uint32_t> rotation_of(const std::vector<uint64_t>& text, const std::vector<uint64_t>& pattern)
{
    const size_t n = pattern.size();
    if (n == 0 || text.size() != n)
        return std::nullopt;
    std::vector<uint32_t> pi(n, 0);
    for (size_t i = 1; i < n; ++i) {
        uint32_t j = pi[i - 1];
        while (j > 0 && pattern[i] != pattern[j])
            j = pi[j - 1];
        pi[i] = pattern[i] == pattern[j] ? j + 1 : j;
    }
    uint32_t matched = 0;
    for (size_t i = 0; i + 1 < 2 * n; ++i) {
        const uint64_t key = text[i % n];
        while (matched > 0 && key != pattern[matched])
            matched = pi[matched - 1];
        if (key == pattern[matched])
            ++matched;
        if (matched == n)
            return uint32_t(i + 1 - n);
    }
    return std::nullopt;
}

constexpr int64_t kUnitMask = (int64_t(1) << 60) - 1;

} // namespace

uint64_t gemm_call_key(
    std::string_view nvtx_path, int64_t m, int64_t n, int64_t k, int64_t batch, int32_t dtypes, int32_t transposes)
{
    const int64_t numbers[] = { int64_t(nvtx_path.size()), m, n, k, batch, dtypes, transposes };
    uint64_t hash = 14695981039346656037ull;
    hash = fnv1a(hash, nvtx_path.data(), nvtx_path.size());
    return fnv1a(hash, numbers, sizeof numbers);
}

GemmPeriodLearner::GemmPeriodLearner(GemmPeriodOptions options)
    : options_(options)
{
    options_.max_period = std::max<uint32_t>(options_.max_period, 1);
    options_.repeats = std::max<uint32_t>(options_.repeats, 2);
    options_.min_lock_calls = uint32_t(std::min<int64_t>(options_.min_lock_calls, capacity()));
    size_t ring = 1;
    while (ring < size_t(capacity()) + options_.max_period) // the window, and one period before it for the phase
        ring <<= 1;
    ring_.assign(ring, 0);
    ring_mask_ = ring - 1;
    window_.pi.reserve(size_t(capacity()));
}

uint32_t GemmPeriodLearner::period() const
{
    return locked_ ? uint32_t(known_.back().keys.size()) : 0;
}

bool GemmPeriodLearner::lockable(const Window& w) const
{
    const int64_t period = w.smallest_period();
    return period <= options_.max_period && w.length() >= options_.repeats * period
        && w.length() >= options_.min_lock_calls;
}

GemmPlace GemmPeriodLearner::observe(uint64_t key)
{
    const int64_t index = calls_++;
    ring_[size_t(index) & ring_mask_] = key;
    if (background_) {
        extend(*background_, index);
        if (lockable(*background_) && !(locked_ && period() == background_->smallest_period())) {
            // Everything since the background window's start repeats: that period is the job's.
            window_ = std::move(*background_);
            background_.reset();
            window_stopped_ = false;
            locked_ = false;
            return lock(uint32_t(window_.smallest_period()), index);
        }
        if (background_->length() >= capacity())
            background_.reset();
    }
    if (locked_) {
        if (known_.back().keys[position_] == key) {
            if (!window_stopped_) {
                extend(window_, index);
                window_stopped_ = window_.length() >= capacity();
            }
            return place_and_advance();
        }
        // The pattern broke. A young lock (it held for fewer calls than it took to find) may have been a run of
        // identical layers rather than the step: the window goes on from its anchor, where the step's longer
        // period shows. An established lock was likely the job's period, and something else runs now
        // (evaluation, a changed order): learning starts afresh at this call, the old window in the background.
        locked_ = false;
        const bool young = index - locked_at_ < lock_window_length_;
        if (window_stopped_ || !young) {
            if (!window_stopped_ && !background_) {
                background_ = std::move(window_);
                extend(*background_, index);
            }
            window_stopped_ = false;
            window_ = Window {};
            window_.anchor = index;
        }
    }
    return learn(index);
}

void GemmPeriodLearner::restart(Window& w, int64_t anchor) const
{
    w.anchor = anchor;
    w.pi.clear();
    for (int64_t i = anchor; i < calls_; ++i)
        extend(w, i);
}

void GemmPeriodLearner::extend(Window& w, int64_t index) const
{
    const uint64_t key = at(index);
    if (w.pi.empty()) {
        w.pi.push_back(0);
        return;
    }
    uint32_t j = w.pi.back();
    while (j > 0 && at(w.anchor + j) != key)
        j = w.pi[j - 1];
    w.pi.push_back(at(w.anchor + j) == key ? j + 1 : j);
}

GemmPlace GemmPeriodLearner::learn(int64_t index)
{
    extend(window_, index);
    if (lockable(window_))
        return lock(uint32_t(window_.smallest_period()), index);
    const int64_t length = window_.length();
    const bool full = length >= capacity();
    const bool checkpoint = (length & (length - 1)) == 0 && length >= options_.min_lock_calls;
    if (!full && !checkpoint)
        return {};
    const auto suffix = periodic_suffix();
    if (suffix && (full || suffix->first * 8 >= length * 7)) {
        restart(window_, calls_ - suffix->first);
        return lock(uint32_t(window_.smallest_period()), index);
    }
    if (full) // no period within reach: keep the last max_period calls, where one may be starting
        restart(window_, calls_ - options_.max_period);
    return {};
}

std::optional<std::pair<int64_t, uint32_t>> GemmPeriodLearner::periodic_suffix() const
{
    // The prefix function of the window read backwards: entry m - 1 gives the smallest period of the last m calls.
    const int64_t length = window_.length();
    std::vector<uint32_t> pi(size_t(length), 0);
    const auto back = [this](int64_t i) { return at(calls_ - 1 - i); };
    for (int64_t i = 1; i < length; ++i) {
        uint32_t j = pi[size_t(i - 1)];
        const uint64_t key = back(i);
        while (j > 0 && back(j) != key)
            j = pi[j - 1];
        pi[size_t(i)] = back(j) == key ? j + 1 : j;
    }
    for (int64_t m = length; m >= std::max<int64_t>(options_.min_lock_calls, 1); --m) {
        const int64_t period = m - pi[size_t(m - 1)];
        if (period <= options_.max_period && m >= options_.repeats * period)
            return std::pair { m, uint32_t(period) };
    }
    return std::nullopt;
}

GemmPlace GemmPeriodLearner::lock(uint32_t period, int64_t index)
{
    // The phase: the earliest call from which the pattern held (the first step of a job without a prologue).
    int64_t origin = window_.anchor;
    const int64_t oldest = std::max<int64_t>(0, calls_ - int64_t(ring_.size()));
    while (origin > oldest && at(origin - 1) == at(origin - 1 + period))
        --origin;
    std::vector<uint64_t> keys(period);
    for (uint32_t j = 0; j < period; ++j)
        keys[j] = at(origin + j);
    bool known = false;
    for (size_t i = known_.size(); i-- > 0;) {
        const auto shift = rotation_of(keys, known_[i].keys);
        if (!shift)
            continue;
        // The same period as before, perhaps entered elsewhere: its earlier phase and ordinals.
        origin += *shift;
        std::rotate(known_.begin() + std::ptrdiff_t(i), known_.begin() + std::ptrdiff_t(i) + 1, known_.end());
        known = true;
        break;
    }
    if (!known) {
        Pattern pattern;
        pattern.ordinals.resize(period);
        std::unordered_map<uint64_t, int32_t> seen;
        for (uint32_t j = 0; j < period; ++j)
            pattern.ordinals[j] = seen[keys[j]]++;
        pattern.keys = std::move(keys);
        if (known_.size() == kKnownPatterns)
            known_.erase(known_.begin());
        known_.push_back(std::move(pattern));
    }
    const int64_t offset = index - origin; // >= 0: the pattern held from origin through index
    position_ = uint32_t(offset % period);
    period_index_ = locks_ == 0 ? offset / period : period_index_ + 1;
    ++locks_;
    locked_ = true;
    locked_at_ = index;
    lock_window_length_ = window_.length();
    window_stopped_ = window_.length() >= capacity();
    return place_and_advance();
}

GemmPlace GemmPeriodLearner::place_and_advance()
{
    const Pattern& pattern = known_.back();
    const GemmPlace place { pattern.ordinals[position_], period_index_ };
    if (++position_ == pattern.keys.size()) {
        position_ = 0;
        ++period_index_;
    }
    return place;
}

int64_t cap_unit_of_step(int64_t step)
{
    return step & kUnitMask;
}

int64_t cap_unit_of_period(int64_t period)
{
    return (int64_t(1) << 60) | (period & kUnitMask);
}

int64_t cap_unit_of_second(int64_t now_ns)
{
    return (int64_t(2) << 60) | ((now_ns / 1'000'000'000) & kUnitMask);
}

GemmSampler::GemmSampler(int64_t every, GemmPeriodOptions options, int64_t fallback_interval_ns)
    : learner_(options)
    , every_(std::max<int64_t>(every, 1))
    , fallback_interval_ns_(fallback_interval_ns)
{
}

GemmDecision GemmSampler::on_gemm(uint64_t key, int64_t now_ns)
{
    const GemmPlace place = learner_.observe(key);
    current_period_ = place.period;
    GemmDecision decision;
    decision.ordinal = place.ordinal;
    if (place.period >= 0) {
        decision.sampled = place.period % every_ == 0;
        decision.cap_unit = cap_unit_of_period(place.period);
        return decision;
    }
    decision.cap_unit = cap_unit_of_second(now_ns);
    if (!last_fallback_ns_ || now_ns - *last_fallback_ns_ >= fallback_interval_ns_) {
        last_fallback_ns_ = now_ns;
        decision.sampled = true;
    }
    return decision;
}

std::optional<int64_t> GemmSampler::probe_unit(int64_t site_calls, int64_t now_ns) const
{
    if (current_period_ >= 0)
        return current_period_ % every_ == 0 ? std::optional(cap_unit_of_period(current_period_)) : std::nullopt;
    return site_calls % every_ == 0 ? std::optional(cap_unit_of_second(now_ns)) : std::nullopt;
}

} // namespace fp8scope::collector
