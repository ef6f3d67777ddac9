// The GEMM period learner (collector/src/stats/gemm_period.cpp) fed synthetic key sequences: which calls get which
// ordinal and period, and which calls the sampler measures, call by call.
#include "stats/gemm_period.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <vector>

using namespace fp8scope::collector;

namespace {

// Keys of an MLP of 8 layers of one shape: the forward GEMM, the gradient of the input and of the weight (their
// dtypes differ from the forward one's), an extra GEMM, and evaluation.
constexpr uint64_t kForward = 11, kDgrad = 12, kWgrad = 13, kExtra = 14;

// One training step: 8 forward GEMMs, then dgrad and wgrad per layer (last layer first): 24 calls.
std::vector<uint64_t> mlp_step()
{
    std::vector<uint64_t> step(8, kForward);
    for (int layer = 0; layer < 8; ++layer) {
        step.push_back(kDgrad);
        step.push_back(kWgrad);
    }
    return step;
}
// The ordinal each position of mlp_step() must get: its rank among same-key calls of the step.
constexpr int32_t kStepOrdinals[24] = { 0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7 };

void append(std::vector<uint64_t>& keys, const std::vector<uint64_t>& more, int times = 1)
{
    for (int i = 0; i < times; ++i)
        keys.insert(keys.end(), more.begin(), more.end());
}

std::vector<GemmPlace> feed(GemmPeriodLearner& learner, const std::vector<uint64_t>& keys)
{
    std::vector<GemmPlace> places;
    for (uint64_t key : keys)
        places.push_back(learner.observe(key));
    return places;
}

// Calls [0, first_locked) unlocked; from there on ordinal and period as `expected(i)` says.
template <typename Expected>
void check_places(const std::vector<GemmPlace>& places, size_t first_locked, Expected expected)
{
    for (size_t i = 0; i < places.size(); ++i) {
        INFO("call " << i);
        if (i < first_locked) {
            REQUIRE(places[i].ordinal == -1);
            REQUIRE(places[i].period == -1);
            continue;
        }
        const GemmPlace want = expected(i);
        REQUIRE(places[i].ordinal == want.ordinal);
        REQUIRE(places[i].period == want.period);
    }
}

} // namespace

TEST_CASE("gemm period: a clean loop of 8 same-shaped layers locks its step and numbers the layers", "[gemm_period]")
{
    std::vector<uint64_t> keys;
    append(keys, mlp_step(), 100);
    GemmPeriodLearner learner;
    const auto places = feed(learner, keys);
    // Three periods (72 calls) are not enough: 256 calls are (min_lock_calls), so the lock comes at call 255, in
    // period 10; the phase is the first call of the job.
    check_places(places, 255, [](size_t i) { return GemmPlace { kStepOrdinals[i % 24], int64_t(i / 24) }; });
    CHECK(learner.period() == 24);
    CHECK(learner.locks() == 1);
}

TEST_CASE(
    "gemm period: the sampler measures every 10th period, and one GEMM per 20 ms before the lock", "[gemm_period]")
{
    std::vector<uint64_t> keys;
    append(keys, mlp_step(), 100);
    GemmSampler sampler(10);
    std::set<size_t> sampled;
    for (size_t i = 0; i < keys.size(); ++i) {
        const int64_t now_ns = int64_t(i) * 1'000'000; // one GEMM a millisecond
        const GemmDecision d = sampler.on_gemm(keys[i], now_ns);
        INFO("call " << i);
        if (d.sampled)
            sampled.insert(i);
        if (i < 255) {
            REQUIRE(d.ordinal == -1);
            REQUIRE(d.cap_unit == cap_unit_of_second(now_ns));
        } else {
            REQUIRE(d.ordinal == kStepOrdinals[i % 24]);
            REQUIRE(d.cap_unit == cap_unit_of_period(int64_t(i / 24)));
        }
    }
    std::set<size_t> expected;
    for (size_t i = 0; i < 255; i += 20) // fallback: calls 0, 20, ..., 240
        expected.insert(i);
    for (size_t i = 255; i < 264; ++i) // the rest of period 10, where the lock came
        expected.insert(i);
    for (size_t period = 20; period < 100; period += 10)
        for (size_t i = period * 24; i < period * 24 + 24; ++i)
            expected.insert(i);
    CHECK(sampled == expected);
}

TEST_CASE("gemm period: cap units of steps, periods and seconds never collide", "[gemm_period]")
{
    CHECK(cap_unit_of_step(3) != cap_unit_of_period(3));
    CHECK(cap_unit_of_period(3) != cap_unit_of_second(3'000'000'000));
    CHECK(cap_unit_of_step(3) != cap_unit_of_second(3'000'000'000));
    CHECK(cap_unit_of_second(1'000'000'000) == cap_unit_of_second(1'999'999'999));
    CHECK(cap_unit_of_second(1'999'999'999) != cap_unit_of_second(2'000'000'000));
}

TEST_CASE("gemm period: a prologue before the loop is skipped, and the phase is the loop's first call", "[gemm_period]")
{
    std::vector<uint64_t> keys;
    for (uint64_t k = 100; k < 110; ++k) // 10 set-up GEMMs, each once
        keys.push_back(k);
    append(keys, mlp_step(), 100);
    GemmPeriodLearner learner;
    const auto places = feed(learner, keys);
    // The whole sequence never repeats; at 512 calls its periodic suffix (502 calls) covers 7/8 of it.
    check_places(places, 511, [](size_t i) {
        return GemmPlace { kStepOrdinals[(i - 10) % 24], int64_t((i - 10) / 24) };
    });
    CHECK(learner.locks() == 1);
}

TEST_CASE(
    "gemm period: after an evaluation breaks the pattern, the loop relocks with the same ordinals", "[gemm_period]")
{
    std::vector<uint64_t> keys;
    append(keys, mlp_step(), 30); // calls 0-719; locked at 255, established from 511
    append(keys, std::vector<uint64_t>(40, kForward)); // evaluation: 5 batches forward only, calls 720-759
    append(keys, mlp_step(), 60); // training again from call 760
    GemmPeriodLearner learner;
    const auto places = feed(learner, keys);
    // The evaluation's first 8 forward GEMMs fit the training pattern (period 30); its 9th (call 728) breaks it.
    // Learning restarts there; at 256 calls (call 983) the periodic suffix from call 760 is 224 calls, too short;
    // at 512 calls (call 1239) it is 480. The period is the same as before, rotated: ordinals keep the old phase
    // (call 760 is a step's first), and periods go on from the broken one's number.
    for (size_t i = 0; i < places.size(); ++i) {
        INFO("call " << i);
        if (i < 255 || (i >= 728 && i < 1239)) {
            REQUIRE(places[i].ordinal == -1);
            REQUIRE(places[i].period == -1);
        } else if (i < 728) {
            REQUIRE(places[i].ordinal == kStepOrdinals[i % 24]);
            REQUIRE(places[i].period == int64_t(i / 24));
        } else {
            REQUIRE(places[i].ordinal == kStepOrdinals[(i - 760) % 24]);
            REQUIRE(places[i].period == int64_t(31 + (i - 1216) / 24));
        }
    }
    CHECK(learner.locks() == 2);
    CHECK(learner.period() == 24);

    // While unlocked the sampler goes on, one GEMM per 20 ms (a GEMM a millisecond here): sampling never stops.
    GemmSampler sampler(10);
    std::set<size_t> fallback;
    for (size_t i = 0; i < keys.size(); ++i) {
        const GemmDecision d = sampler.on_gemm(keys[i], int64_t(i) * 1'000'000);
        if (d.sampled && d.ordinal < 0)
            fallback.insert(i);
    }
    std::set<size_t> expected;
    for (size_t i = 0; i < 255; i += 20)
        expected.insert(i);
    for (size_t i = 728; i < 1239; i += 20) // the last fallback sample was at call 240, long before
        expected.insert(i);
    CHECK(fallback == expected);
}

TEST_CASE("gemm period: a once-per-step extra GEMM is part of the period and gets its own ordinal", "[gemm_period]")
{
    std::vector<uint64_t> step = mlp_step();
    step.insert(step.begin() + 8, kExtra); // e.g. a loss-head GEMM after the forward pass: 25 calls
    std::vector<uint64_t> keys;
    append(keys, step, 60);
    GemmPeriodLearner learner;
    const auto places = feed(learner, keys);
    constexpr int32_t kOrdinals[25] = { 0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7 };
    check_places(places, 255, [&](size_t i) { return GemmPlace { kOrdinals[i % 25], int64_t(i / 25) }; });
    CHECK(learner.period() == 25);
}

TEST_CASE(
    "gemm period: a lock on a run of identical layers is superseded by the step in the same window", "[gemm_period]")
{
    // Small limits so that a forward pass of 20 identical GEMMs is long enough to lock (min_lock_calls 16).
    const GemmPeriodOptions options { .max_period = 64, .repeats = 3, .min_lock_calls = 16 };
    std::vector<uint64_t> step(20, kForward);
    for (int layer = 0; layer < 20; ++layer) {
        step.push_back(kDgrad);
        step.push_back(kWgrad);
    }
    std::vector<uint64_t> keys;
    append(keys, step, 10); // 60 calls a step
    GemmPeriodLearner learner(options);
    const auto places = feed(learner, keys);
    // Calls 15-19: the forward run locks with period 1 (a young lock; this is the first step's limit); call 20
    // breaks it, the window goes on from call 0, and at 180 calls (3 steps) the step's period locks.
    for (size_t i = 15; i < 20; ++i) {
        INFO("call " << i);
        CHECK(places[i].ordinal == 0);
        CHECK(places[i].period == int64_t(i));
    }
    for (size_t i = 20; i < 179; ++i) {
        INFO("call " << i);
        REQUIRE(places[i].ordinal == -1);
    }
    for (size_t i = 179; i < keys.size(); ++i) {
        INFO("call " << i);
        const size_t at = i % 60;
        const int32_t ordinal = at < 20 ? int32_t(at) : int32_t((at - 20) / 2);
        REQUIRE(places[i].ordinal == ordinal);
        // The young lock counted periods 15-19 and broke in 20; the step's periods go on from 21.
        REQUIRE(places[i].period == int64_t(21 + (i - 120) / 60));
    }
    CHECK(learner.period() == 60);
    CHECK(learner.locks() == 2);
}

TEST_CASE("gemm period: a long run of identical layers locked as the period gives way to the step within 3 steps",
    "[gemm_period]")
{
    // 40 identical layers, with min_lock_calls 16: the forward run (40 calls) and the backward run (80) each last
    // long enough to be locked and established, and to be locked again in every step.
    const GemmPeriodOptions options { .max_period = 128, .repeats = 3, .min_lock_calls = 16 };
    std::vector<uint64_t> step(40, kForward);
    for (int layer = 0; layer < 40; ++layer) {
        step.push_back(kDgrad);
        step.push_back(kWgrad);
    }
    std::vector<uint64_t> keys;
    append(keys, step, 8); // 120 calls a step
    GemmPeriodLearner learner(options);
    const auto places = feed(learner, keys);
    // Calls 15-39 are locked on the forward run (period 1), 55-119 on the backward run (period 2), and so on in
    // steps 1 and 2: the runs' own ordinals (all 0 in the forward run). The window the first run was found in,
    // followed in the background from call 0, repeats the step 3 times at call 359: from there the step's period.
    CHECK(places[20].ordinal == 0);
    CHECK(places[150].ordinal == 0); // layer 10's forward GEMM in step 1: the run's ordinal, not 10
    for (size_t i = 359; i < keys.size(); ++i) {
        INFO("call " << i);
        const size_t at = i % 120;
        const int32_t ordinal = at < 40 ? int32_t(at) : int32_t((at - 40) / 2);
        REQUIRE(places[i].ordinal == ordinal);
        REQUIRE(places[i].period == places[360].period + int64_t(i / 120) - 3);
    }
    CHECK(learner.period() == 120);
}

TEST_CASE("gemm period: a sequence without a period never locks, a full window moves on and finds a later one",
    "[gemm_period]")
{
    const GemmPeriodOptions options { .max_period = 8, .repeats = 3, .min_lock_calls = 4 };
    std::vector<uint64_t> keys;
    for (uint64_t k = 1000; k < 1100; ++k) // 100 distinct GEMMs: the window (24 calls) fills four times
        keys.push_back(k);
    const std::vector<uint64_t> pattern { 1, 2, 3, 1, 2 };
    append(keys, pattern, 10);
    GemmPeriodLearner learner(options);
    const auto places = feed(learner, keys);
    for (size_t i = 0; i < 100; ++i)
        REQUIRE(places[i].period == -1);
    // The window (24 calls) fills at calls 23, 39, ..., 103 with no period in it, and keeps its last 8 calls each
    // time: at call 103 calls 96-103. At call 111 (16 calls, a checkpoint) the pattern has 12 calls, fewer than 3
    // periods; at call 119 the window is full again, and its periodic suffix (calls 100-119, 4 periods) is taken
    // whatever its share of the window.
    size_t first = 0;
    while (first < places.size() && places[first].period < 0)
        ++first;
    REQUIRE(first == 119);
    CHECK(places[119].period == 3); // the fourth period since call 100, the phase
    for (size_t i = first; i < places.size(); ++i) {
        constexpr int32_t kOrdinals[5] = { 0, 0, 0, 1, 1 };
        INFO("call " << i);
        REQUIRE(places[i].ordinal == kOrdinals[(i - 100) % 5]);
    }
    CHECK(learner.period() == 5);
}

TEST_CASE("gemm period: keys differ by path, shape, batch, dtypes and transposes", "[gemm_period]")
{
    const uint64_t base = gemm_call_key("layers.0", 64, 128, 256, 1, 282828, 1);
    CHECK(base == gemm_call_key("layers.0", 64, 128, 256, 1, 282828, 1));
    CHECK(base != gemm_call_key("layers.1", 64, 128, 256, 1, 282828, 1));
    CHECK(base != gemm_call_key("layers.0", 128, 64, 256, 1, 282828, 1));
    CHECK(base != gemm_call_key("layers.0", 64, 128, 256, 2, 282828, 1));
    CHECK(base != gemm_call_key("layers.0", 64, 128, 256, 1, 282829, 1));
    CHECK(base != gemm_call_key("layers.0", 64, 128, 256, 1, 282828, 0));
    CHECK(gemm_call_key("", 1, 2, 3, 1, 0, 0) != gemm_call_key("a", 1, 2, 3, 1, 0, 0));
}

TEST_CASE("gemm period: explicit probes without steps follow the locked period, else every Nth call of the site",
    "[gemm_period]")
{
    GemmSampler sampler(10);
    CHECK(sampler.probe_unit(0, 5'000'000'000) == cap_unit_of_second(5'000'000'000));
    CHECK_FALSE(sampler.probe_unit(3, 5'000'000'000));
    std::vector<uint64_t> keys;
    append(keys, mlp_step(), 21); // ends in period 20, a sampled one
    for (uint64_t key : keys)
        sampler.on_gemm(key, 0);
    CHECK(sampler.probe_unit(3, 0) == cap_unit_of_period(20));
    append(keys, mlp_step(), 1);
    for (size_t i = 0; i < 24; ++i)
        sampler.on_gemm(keys[i], 0);
    CHECK_FALSE(sampler.probe_unit(0, 0)); // period 21
}
