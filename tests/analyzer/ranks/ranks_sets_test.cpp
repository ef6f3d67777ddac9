// Rank sets (docs/multi-rank.md): ranks loaded from files in parallel, more ranks than threads, gloo's host-staged
// collectives, NCCL, and a wait hidden by the rank's own kernels. The per-rank rules are in ranks_test.cpp.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "rank_scenario.hpp"
#include "ranks_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

TEST_CASE("a rank set from files: loaded and analysed in parallel, refused as one bad-trace error", "[ranks]")
{
    RankTrace r0(0), r1(1), stranger(1, { 0, 10'000, 20'000 }, 2, "node0", "python other.py");
    r0.collective(4000, 7000);
    r1.kernel(1000, 4500);
    r1.collective(4600, 7000);
    stranger.collective(4000, 7000);
    const std::string path0 = fp8scope::testing::write_and_load(r0.s, "ranks-set-0").path;
    const std::string path1 = fp8scope::testing::write_and_load(r1.s, "ranks-set-1").path;
    const std::string stranger_path = fp8scope::testing::write_and_load(stranger.s, "ranks-set-stranger").path;

    const auto set = analyze_rank_set({ path1, path0 }, no_warmup());
    REQUIRE(set.has_value());
    REQUIRE(set->ranks.size() == 2);
    CHECK(set->ranks[0].rank == 0);
    CHECK(set->ranks[0].path == path0);
    REQUIRE(set->across.collectives.size() == 1);
    CHECK(set->across.collectives[0].last_rank == 1);
    CHECK(set->across.collectives[0].wait_ns == std::vector<int64_t> { 600, 0 });

    const auto refused = analyze_rank_set({ path0, stranger_path }, no_warmup());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == ErrorCode::InvalidTrace);
    CHECK(refused.error().message.starts_with("the traces are of different jobs"));

    const auto missing = analyze_rank_set({ path0, path0 + ".missing" }, no_warmup());
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == ErrorCode::Io);
}

TEST_CASE("more ranks than threads, a rank without a host is a clock of its own", "[ranks]")
{
    // Five ranks: 0-2 on node0, 3 and 4 without a host. Rank r arrives at the all-reduce 100 * r ns late, and every
    // rank's all-reduce ends at 7000, so no clock needs a shift.
    std::vector<std::string> paths;
    for (int32_t rank = 4; rank >= 0; --rank) {
        RankTrace trace(rank, { 0, 10'000, 20'000 }, 5, rank < 3 ? "node0" : "");
        trace.collective(4000 + 100 * rank, 7000);
        paths.push_back(fp8scope::testing::write_and_load(trace.s, "ranks-five-" + std::to_string(rank)).path);
    }
    const auto set = analyze_rank_set(paths, no_warmup());
    REQUIRE(set.has_value());
    const CrossRankReport& across = set->across;
    CHECK(across.ranks == std::vector<int32_t> { 0, 1, 2, 3, 4 });
    REQUIRE(across.clock.hosts.size() == 3);
    CHECK(across.clock.hosts[0].ranks == std::vector<int32_t> { 0, 1, 2 });
    CHECK(across.clock.hosts[1].host.empty());
    CHECK(across.clock.hosts[1].ranks == std::vector<int32_t> { 3 });
    CHECK(across.clock.hosts[2].ranks == std::vector<int32_t> { 4 });
    CHECK(across.clock.hosts[2].offset_ns == 0);
    CHECK(across.clock.hosts[2].samples == 1);
    CHECK(across.clock.aligned_by_collectives);
    REQUIRE(across.collectives.size() == 1);
    CHECK(across.collectives[0].last_rank == 4);
    CHECK(across.collectives[0].wait_ns == std::vector<int64_t> { 400, 300, 200, 100, 0 });
    REQUIRE(across.steps.size() == 2);
    CHECK(across.steps[0].slowest_rank == 4);
    CHECK(across.steps[0].caused_wait_ns == std::vector<int64_t> { 0, 0, 0, 0, 1000 });
    CHECK(std::string(slowest_by_name(across.steps[0].slowest_by)) == "caused_wait");
    // Step 2 has no collective: the slowest rank is the one with the longest step (all equal: the lowest rank).
    CHECK(across.steps[1].slowest_by == SlowestBy::StepTime);
    CHECK(across.steps[1].slowest_rank == 0);
}

TEST_CASE("gloo: buckets staged through pinned host memory are collectives, matched by arrival", "[ranks][issue25]")
{
    // Two ranks of one host, DDP over gloo (zoo ddp_gloo_sleep): no communication kernel. Each step copies three
    // gradient buckets to pinned host memory on their own streams, reduces them on the CPU and copies them back.
    // Rank 1 slept 5 us before its forward, so its buckets reach the host 5 us after rank 0's; the copies back start
    // together on both ranks. A 4-byte .item() copy and a pageable round trip are no collectives.
    RankTrace r0(0, { 0, 100'000, 200'000 }), r1(1, { 0, 100'000, 200'000 });
    const uint64_t bucket_bytes[3] = { 16 << 20, 64 << 20, 16 << 20 };
    const uint32_t streams[3] = { 105, 109, 113 };
    auto stage = [](RankTrace& r, int64_t step_start, int64_t late, uint32_t stream, uint64_t bytes, int64_t out_at,
                     int64_t back_at, schema::MemoryKind host_kind = schema::MemoryKind::Pinned) {
        r.s.memcpy(r.host, { step_start + out_at + late - 500, step_start + out_at + late - 400 },
            { .start_ns = step_start + out_at + late,
                .end_ns = step_start + out_at + late + 1'000,
                .bytes = bytes,
                .kind = schema::MemcpyKind::DtoH,
                .src_kind = schema::MemoryKind::Device,
                .dst_kind = host_kind,
                .stream_id = stream });
        r.s.memcpy(r.host, { step_start + back_at - 500, step_start + back_at - 400 },
            { .start_ns = step_start + back_at,
                .end_ns = step_start + back_at + 1'000,
                .bytes = bytes,
                .kind = schema::MemcpyKind::HtoD,
                .src_kind = host_kind,
                .dst_kind = schema::MemoryKind::Device,
                .stream_id = stream });
    };
    for (int64_t step_start : { 0, 100'000 }) {
        for (auto* r : { &r0, &r1 }) {
            const int64_t late = r == &r1 ? 5'000 : 0;
            r->kernel(step_start + 1'000 + late, step_start + 9'000 + late); // forward and backward
            for (int b = 0; b < 3; ++b)
                stage(*r, step_start, late, streams[b], bucket_bytes[b], 10'000 + b * 2'000, 40'000 + b * 3'000);
            stage(*r, step_start, 0, 7, 4, 60'000, 62'000); // .item() and a 4-byte copy in: too small
            stage(*r, step_start, 0, 7, 1 << 20, 64'000, 70'000, schema::MemoryKind::Pageable); // pageable
            r->kernel(step_start + 80'000, step_start + 81'000, "multi_tensor_apply_kernel");
        }
    }
    const std::vector<RankSummary> ranks { summarize(r0, "ranks-gloo-0"), summarize(r1, "ranks-gloo-1") };
    REQUIRE(ranks[0].collectives.size() == 6);
    for (const RankCollective& c : ranks[0].collectives)
        CHECK(c.kind == CollectiveKind::HostStaged);
    // The first bucket of step 1: from the copy out's end to the copy back's start.
    CHECK(ranks[0].collectives[0].start_ns == 11'000);
    CHECK(ranks[0].collectives[0].end_ns == 40'000);
    CHECK(collective_kind_id(CollectiveKind::HostStaged) == "host_staged");
    const CrossRankReport across = analyze_across_ranks(ranks);
    REQUIRE(across.collectives.size() == 6);
    for (const MatchedCollective& c : across.collectives) {
        CHECK(c.last_rank == 1);
        CHECK(c.wait_ns == std::vector<int64_t> { 5'000, 0 });
    }
    REQUIRE(across.steps.size() == 2);
    for (const StepAcrossRanks& step : across.steps) {
        CHECK(step.slowest_rank == 1);
        CHECK(step.slowest_by == SlowestBy::CausedWait);
        // The three waits overlap: one wait, from rank 0's last bucket on the host (15 us) to rank 1's (20 us).
        CHECK(step.wait_ns == std::vector<int64_t> { 5'000, 0 });
        CHECK(step.caused_wait_ns == std::vector<int64_t> { 0, 5'000 });
    }
    CHECK(across.per_rank[0].wait_ns == 10'000);
    CHECK(across.per_rank[1].caused_wait_ns == 10'000);
}

TEST_CASE("a rank with NCCL kernels has no host-staged collectives", "[ranks][issue25]")
{
    RankTrace r0(0);
    r0.collective(4000, 7000);
    r0.s.memcpy(r0.host, { 7000, 7100 },
        { .start_ns = 7200,
            .end_ns = 7300,
            .bytes = 1 << 20,
            .kind = schema::MemcpyKind::DtoH,
            .src_kind = schema::MemoryKind::Device,
            .dst_kind = schema::MemoryKind::Pinned,
            .stream_id = 9 });
    r0.s.memcpy(r0.host, { 8000, 8100 },
        { .start_ns = 8200,
            .end_ns = 8300,
            .bytes = 1 << 20,
            .kind = schema::MemcpyKind::HtoD,
            .src_kind = schema::MemoryKind::Pinned,
            .dst_kind = schema::MemoryKind::Device,
            .stream_id = 9 });
    const RankSummary rank = summarize(r0, "ranks-nccl-no-staging");
    REQUIRE(rank.collectives.size() == 1);
    CHECK(rank.collectives[0].kind == CollectiveKind::AllReduce);
}

TEST_CASE("a wait hidden by the rank's own kernels is no wait: DDP's first bucket all-reduces mid-backward",
    "[ranks][issue27]")
{
    // Rank 0 launches its first bucket's all-reduce at 2 us, in the middle of its backward (kernels until 6 us),
    // then the second bucket's right after the first ends. Rank 1 slept: it joins the first at 20 us and, after
    // 3 us more of its backward, the second at 23.5 us. Rank 0's device only waited from 6 us to 20 us and from the
    // second's start (20.5 us) to 23.5 us: 17 us, not the 18 + 3 us the two waits add up to.
    RankTrace r0(0, { 0, 50'000 }), r1(1, { 0, 50'000 });
    r0.kernel(1'000, 6'000, "backward_gemm");
    r0.collective(2'000, 20'500);
    r0.collective(20'500, 24'000);
    r1.kernel(15'000, 23'400, "backward_gemm");
    r1.collective(20'000, 20'500);
    r1.collective(23'500, 24'000);
    const std::vector<RankSummary> ranks { summarize(r0, "ranks-hidden-wait-0"), summarize(r1, "ranks-hidden-wait-1") };
    REQUIRE(ranks[0].collectives.size() == 2);
    CHECK(ranks[0].collectives[0].compute_until_ns == 6'000);
    CHECK(ranks[0].collectives[1].compute_until_ns == 20'500); // no kernel of its own during it
    CHECK(ranks[1].collectives[1].compute_until_ns == 23'500); // its backward ended before, at 23.4 us: the start
    const CrossRankReport across = analyze_across_ranks(ranks);
    REQUIRE(across.collectives.size() == 2);
    CHECK(across.collectives[0].wait_ns == std::vector<int64_t> { 18'000, 0 }); // per collective: unchanged
    CHECK(across.collectives[1].wait_ns == std::vector<int64_t> { 3'000, 0 });
    REQUIRE(across.steps.size() == 1);
    CHECK(across.steps[0].wait_ns == std::vector<int64_t> { 14'000 + 3'000, 0 });
    CHECK(across.steps[0].caused_wait_ns == std::vector<int64_t> { 0, 17'000 });
    CHECK(across.steps[0].slowest_rank == 1);
    CHECK(across.per_rank[0].wait_ns == 17'000);
}
