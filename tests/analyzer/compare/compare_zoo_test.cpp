// Compare on the zoo's FP8/BF16 pairs (samples/traces/zoo, recorded on an H100 by tests/gpu/run_all.sh; each
// <name>.truth.json is what the job printed: its twin, the drift it planted or "clean", its scaling recipe). The
// drift rule as docs/analysis.md "Compare" states it: a clean pair flags nothing; a planted drift is named first at
// the planted layer, its onset within 3 steps of the planting, with the series that rule expects (stale-scale bursts
// for a delayed scale that cannot follow its amax, the dynamic range for a current scale squeezed by an exploding
// amax). The flagged counts and onsets are the table in docs/analysis.md "Compare".
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "recorded_pair.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::Contains;

namespace {

struct ZooPair {
    nlohmann::json truth;
    RecordedPair compared;
};

// The run `name` against the twin its truth names, default options (warm-up 2) as `compare RUN REF`.
ZooPair compare_zoo(const std::string& name)
{
    nlohmann::json truth = recorded_truth("zoo/" + name + ".truth.json");
    REQUIRE(truth.at("pair").at("role") == "run");
    const std::string twin = truth.at("pair").at("twin").get<std::string>();
    return { std::move(truth), compare_recorded("zoo/" + name + ".sqlite", "zoo/" + twin + ".sqlite") };
}

// The recipe with the most FP8 sites, as the zoo's judge reads it.
std::string majority_recipe(const CompareResult& r)
{
    const std::map<std::string, int64_t> counts { { "delayed", r.delayed_sites }, { "current", r.current_sites },
        { "static", r.static_sites }, { "current or static", r.current_or_static_sites },
        { "unknown", r.unknown_recipe_sites } };
    return std::ranges::max_element(counts, {}, [](const auto& c) { return c.second; })->first;
}

bool has_series(const CompareSite& site, const std::string& series)
{
    return std::ranges::any_of(site.drift, [&](const DriftEvidence& e) { return e.series == series; });
}

} // namespace

TEST_CASE("zoo clean pairs: no site drifts, and the recipe with the most sites is the job's", "[compare][real][zoo]")
{
    for (const char* name : { "fp8_delayed_clean", "fp8_current_clean", "torchao_tensorwise_clean" }) {
        INFO(name);
        const ZooPair p = compare_zoo(name);
        CHECK(p.truth.at("drift") == "clean");
        CHECK(p.compared.result.flagged.empty());
        CHECK_FALSE(p.compared.result.first_divergent);
        CHECK(majority_recipe(p.compared.result) == p.truth.at("recipe").get<std::string>());
        CHECK(p.compared.result.current_or_static_sites == 0); // every weight's amax moves in these runs
    }
    // The delayed run's activations whose history maximum did not change stay "static", a minority.
    const ZooPair delayed = compare_zoo("fp8_delayed_clean");
    CHECK(delayed.compared.result.delayed_sites == 28);
    CHECK(delayed.compared.result.static_sites == 20);
}

TEST_CASE("zoo planted drifts: the planted layer is the first divergent site, within 3 steps of the planting",
    "[compare][real][zoo]")
{
    struct Expected {
        const char* name;
        const char* series; // the evidence the first divergent site must carry
        size_t flagged;
        int64_t onset;
    };
    // fp8_delayed_drift: the missed case (history 8, x1.15 a step from 18); fp8_delayed_drift_early: x1.3
    // from 6; torchao_drift: current scaling, x1.6 a step from 8, the amax rising from 4.6 to 7,600. The counts are
    // tensors (issue 43): before, each tensor's forward and backward readers were two flagged sites (6, 4 and 8);
    // fp8_delayed_drift's onset moved from 21 to 20 with the outgrown-scale series.
    for (const Expected& x : { Expected { "fp8_delayed_drift", "stale_scale_bursts", 3, 20 },
             Expected { "fp8_delayed_drift_early", "stale_scale_bursts", 2, 7 },
             Expected { "torchao_drift", "run_dynamic_range_bits", 4, 9 } }) {
        INFO(x.name);
        const ZooPair p = compare_zoo(x.name);
        const nlohmann::json& planted = p.truth.at("drift");
        const std::string layer = planted.at("layer").get<std::string>();
        const int64_t planted_onset = planted.at("onset_step").get<int64_t>();
        const CompareResult& r = p.compared.result;
        REQUIRE(r.first_divergent);
        const CompareSite& first = r.sites[*r.first_divergent];
        INFO(first.label);
        CHECK_THAT(first.label, Contains(layer + " · gemm"));
        REQUIRE(first.onset_step);
        CHECK(std::llabs(*first.onset_step - planted_onset) <= 3);
        CHECK(*first.onset_step == x.onset);
        CHECK(has_series(first, x.series));
        CHECK(r.flagged.size() == x.flagged);
        // The other flagged sites are consequences: none starts before the planted layer does.
        for (const size_t i : r.flagged)
            CHECK(*r.sites[i].onset_step >= *first.onset_step);
        CHECK(majority_recipe(r) == p.truth.at("recipe").get<std::string>());
    }
}

TEST_CASE("zoo torchao drift: the planted site's dynamic range climbs about 10 bits, its neighbours' underflow is a "
          "later consequence",
    "[compare][real][zoo]")
{
    const ZooPair p = compare_zoo("torchao_drift");
    const CompareResult& r = p.compared.result;
    REQUIRE(r.first_divergent);
    const CompareSite& first = r.sites[*r.first_divergent];
    CHECK(first.recipe == ScalingRecipe::Current);
    REQUIRE(!first.steps.empty());
    // The amax grows from about 5 to about 7,400 (x1,500) while the bulk stays: the range climbs by over 10 bits.
    CHECK(*first.steps.back().run_dynamic_range_bits - *first.steps.front().run_dynamic_range_bits > 10);
    CHECK(*first.steps.back().amax_run / *first.steps.front().amax_run > 1000);
    for (const size_t i : r.flagged) {
        const CompareSite& s = r.sites[i];
        if (has_series(s, "ref_underflow_under_run_scale") && !has_series(s, "run_dynamic_range_bits"))
            CHECK(*s.onset_step >= *first.onset_step + 9); // steps 18 and 19, against 9
    }
}

TEST_CASE("zoo slow drifts (issue 43): a delayed scale lagging a 10-18% growth is named at the planted input, its "
          "clean twin stays quiet",
    "[compare][real][zoo]")
{
    for (const char* name : { "fp8_slow_drift_fc2", "fp8_slow_drift_qkv", "fp8_slow_drift_proj" }) {
        INFO(name);
        const ZooPair p = compare_zoo(name);
        const nlohmann::json& planted = p.truth.at("drift");
        const CompareResult& r = p.compared.result;
        REQUIRE(r.first_divergent);
        const CompareSite& first = r.sites[*r.first_divergent];
        INFO(first.label);
        CHECK(first.module == planted.at("layer").get<std::string>());
        CHECK(first.logical_role == "activation");
        REQUIRE(first.onset_step);
        CHECK(std::llabs(*first.onset_step - planted.at("onset_step").get<int64_t>()) <= 3);
        CHECK(has_series(first, "outgrown_scale"));
    }
    const ZooPair clean = compare_zoo("fp8_slow_clean");
    CHECK(clean.compared.result.flagged.empty());
}

TEST_CASE("zoo drifts: one finding per FP8 tensor, the others of its sites named with it", "[compare][real][zoo]")
{
    for (const char* name : { "fp8_delayed_drift", "fp8_delayed_drift_early", "torchao_drift", "fp8_slow_drift_qkv" }) {
        INFO(name);
        const ZooPair p = compare_zoo(name);
        const CompareResult& r = p.compared.result;
        std::vector<size_t> tensors;
        for (const size_t i : r.flagged)
            if (r.sites[i].tensor)
                tensors.push_back(*r.sites[i].tensor);
        std::ranges::sort(tensors);
        CHECK(std::ranges::adjacent_find(tensors) == tensors.end());
        // Every drifting site is either flagged or named by the flagged site of its tensor.
        size_t drifting = 0, named = 0;
        for (const CompareSite& s : r.sites)
            drifting += s.onset_step ? 1 : 0;
        for (const size_t i : r.flagged)
            named += 1 + r.sites[i].also.size();
        CHECK(named == drifting);
    }
}
