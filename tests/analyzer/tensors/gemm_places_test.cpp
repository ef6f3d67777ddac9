// Where a zero-code GEMM site sits in the step (docs/analysis.md "Tensor health", Where a GEMM site sits): on scenarios
// whose threads and launch order are planted, and on the zoo's real FP8 traces, whose workloads print how many FP8
// Linear layers they run (tests/gpu/zoo/, tests/gpu/realjobs/whatif.py).
#include "tensor_test_support.hpp"

#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

constexpr int64_t kMs = 1'000'000;

// A GEMM sampled at `at_ns` in step `step` (its A operand's site) after a launch of `thread` that ended just before.
// The scenario numbers GEMM sites in the order they are added (their ordinal, "#k").
struct Planted {
    std::string name;
    HostThread thread;
    int64_t at_ns;
};

int64_t plant(Scenario& s, const Planted& g, int64_t step, int64_t site = -1)
{
    if (site < 0)
        site = s.tensor_site(
            g.name, schema::TensorRole::A, schema::Dtype::E4M3, 64, 64, schema::StatsSource::GemmInterception);
    s.api_call(g.thread, { g.at_ns - 3'000, g.at_ns - 1'000 });
    s.tensor_stats(healthy_sample(site, step, g.at_ns));
    return site;
}

std::map<std::string, std::string> places_by_label(const TensorHealth& h)
{
    std::map<std::string, std::string> out;
    for (const TensorSiteHealth& site : h.sites)
        out[site.label] = site.place ? gemm_place_text(*site.place) : "-";
    return out;
}

} // namespace

TEST_CASE("GEMMs launched from two threads are placed in the forward and backward pass", "[tensor_health][places]")
{
    Scenario s;
    const HostThread main = s.thread(4242, 4242, "python");
    const HostThread autograd = s.thread(4242, 4300, "pt_autograd_0");
    // Step 0: forward on the main thread (two GEMMs), backward on autograd's (three), in that launch order.
    const std::vector<Planted> gemms { { "gemm 64x64x1", main, 1 * kMs }, { "gemm 64x64x2", main, 2 * kMs },
        { "gemm 64x64x3", autograd, 3 * kMs }, { "gemm 64x64x4", autograd, 4 * kMs },
        { "gemm 64x64x5", autograd, 5 * kMs } };
    for (const Planted& g : gemms)
        plant(s, g, 0);
    const TraceModel model = write_and_load(s, "gemm-places-threads");
    const TensorHealth h = analyze_tensor_health(model, step_set(StepSource::Markers, 0, 1, 0, 10 * kMs));
    const auto places = places_by_label(h);
    CHECK(places.at("gemm 64x64x1 #0 · A") == "forward GEMM 1 of 2 sampled");
    CHECK(places.at("gemm 64x64x2 #1 · A") == "forward GEMM 2 of 2 sampled");
    CHECK(places.at("gemm 64x64x3 #2 · A") == "backward GEMM 1 of 3 sampled");
    CHECK(places.at("gemm 64x64x5 #4 · A") == "backward GEMM 3 of 3 sampled");
    CHECK(located_site_label(site(h, h.sites.front().site_id)) == "gemm 64x64x1 #0 · A (forward GEMM 1 of 2 sampled)");
    CHECK(h.totals.unnamed_gemm_sites == 5);
}

TEST_CASE("GEMMs from one thread are placed in the step, and the fullest sampled step sets the count",
    "[tensor_health][places]")
{
    Scenario s;
    const HostThread main = s.thread(4242, 4242, "main");
    std::vector<int64_t> sites;
    // Step 0 sampled 3 GEMMs, step 1 only the last 2 (a capped step): the places come from step 0.
    for (int i = 0; i < 3; ++i)
        sites.push_back(plant(s, { "gemm 32x32x" + std::to_string(i + 1), main, (i + 1) * kMs }, 0));
    for (int i = 1; i < 3; ++i)
        plant(s, { "", main, 10 * kMs + (i + 1) * kMs }, 1, sites[i]);
    // A probe (not a zero-code site) gets no place and does not count as unnamed.
    const int64_t probe = probe_site(s, "input");
    s.tensor_stats(healthy_sample(probe, 0, 500'000));
    const TraceModel model = write_and_load(s, "gemm-places-one-thread");
    const TensorHealth h = analyze_tensor_health(model, step_set(StepSource::Markers, 0, 2, 0, 10 * kMs));
    const auto places = places_by_label(h);
    CHECK(places.at("gemm 32x32x1 #0 · A") == "GEMM 1 of 3 sampled in the step");
    CHECK(places.at("gemm 32x32x3 #2 · A") == "GEMM 3 of 3 sampled in the step");
    CHECK(places.at("input") == "-");
    CHECK(site(h, sites[1]).place->step == 0);
    CHECK(h.totals.unnamed_gemm_sites == 3);
}

TEST_CASE("the zoo's FP8 jobs: the forward pass holds as many GEMMs as the job has FP8 Linear layers, in launch order",
    "[tensor_health][places][samples]")
{
    struct Job {
        std::string trace;
        int64_t layers; // FP8 Linear layers the workload prints (its truth)
        std::string forward_shape; // the forward GEMM's name: its ordinal is the layer's index
        int64_t unnamed;
    };
    // whatif_tiny_fp8: 24 Fp8Linear(256, 256); manual_sgd_fp8: 4 Fp8Linear(1024, 1024); both without NVTX paths.
    // fp8_delayed_clean: train.py's 2 blocks of 4 FP8 Linears and the FP8 output head, annotated (module paths).
    const Job job = GENERATE(Job { "zoo/whatif_tiny_fp8.sqlite", 24, "gemm 256x64x256", 149 },
        Job { "zoo/manual_sgd_fp8.sqlite", 4, "gemm 1024x256x1024", 28 },
        Job { "zoo/fp8_delayed_clean.sqlite", 9, "", 0 });
    INFO(job.trace);
    const TraceModel model = load_recorded(job.trace);
    const Report report = analyze(model);
    const TensorHealth& h = report.tensor_health;
    CHECK(h.totals.unnamed_gemm_sites == job.unnamed);
    int64_t forward = 0, backward = 0;
    std::map<int64_t, int64_t> forward_of; // `of` per forward site
    for (const TensorSiteHealth& site : h.sites) {
        if (!site.place)
            continue;
        forward += site.place->phase == GemmPhase::Forward;
        backward += site.place->phase == GemmPhase::Backward;
        CHECK(site.place->phase != GemmPhase::Unknown);
        if (site.place->phase == GemmPhase::Forward) {
            CHECK(site.place->of == job.layers);
            // Same-shaped GEMMs without a path are numbered in step order: the forward's k-th is the layer k.
            if (!job.forward_shape.empty() && site.label.starts_with(job.forward_shape + " #")) {
                const TensorSite* s = nullptr;
                for (const TensorSite& t : model.tensor_sites)
                    if (t.id == site.site_id)
                        s = &t;
                REQUIRE(s != nullptr);
                CHECK(site.place->position == s->ordinal + 1);
            }
        }
    }
    CHECK(forward > 0);
    CHECK(backward > 0);
}
