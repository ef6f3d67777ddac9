// Across ranks (docs/analysis.md "Across ranks"): one scenario per rule, written per rank through the real writer and
// loaded back, with exact expected numbers. No GPU: the rules are tested on scenario traces only.
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

TEST_CASE("collectives are classed by kernel name", "[ranks]")
{
    CHECK(classify_collective("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == CollectiveKind::AllReduce);
    CHECK(classify_collective("ncclKernel_AllReduce_RING_LL_Sum_half") == CollectiveKind::AllReduce);
    CHECK(classify_collective("ncclKernel_AllGather_RING_LL_Sum_int8_t") == CollectiveKind::AllGather);
    CHECK(classify_collective("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE") == CollectiveKind::ReduceScatter);
    CHECK(classify_collective("ncclKernel_ReduceScatter_RING_LL_Sum_float") == CollectiveKind::ReduceScatter);
    CHECK(classify_collective("ncclKernel_Broadcast_RING_LL_Sum_int8_t") == CollectiveKind::Broadcast);
    CHECK(classify_collective("ncclDevKernel_Reduce_Sum_f32_RING_LL") == CollectiveKind::Reduce);
    CHECK(classify_collective("ncclDevKernel_Reduce") == CollectiveKind::Reduce);
    CHECK(classify_collective("ncclDevKernel_SendRecv") == CollectiveKind::SendRecv);
    CHECK(classify_collective("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t") == CollectiveKind::SendRecv);
    CHECK(classify_collective("ncclKernel_Send_RING_SIMPLE_Sum_int8_t") == CollectiveKind::SendRecv);
    CHECK(classify_collective("ncclDevKernel_Recv") == CollectiveKind::SendRecv);
    CHECK(classify_collective("all_to_all_combine_kernel") == CollectiveKind::AllToAll);
    CHECK(classify_collective("void vllm::cross_device_reduce_1stage<float, 8>(vllm::RankData*, float*, int)")
        == CollectiveKind::AllReduce);
    CHECK(classify_collective("ncclDevKernel_Generic_4") == CollectiveKind::Other);
    CHECK(classify_collective("userbuffers_fp16_sum_inplace_gpu_rw") == CollectiveKind::Other);
    // "Reduce" is the whole first field only: a name that merely starts with it is not NCCL's Reduce.
    CHECK(classify_collective("ncclDevKernel_ReduceFoo") == CollectiveKind::Other);
    CHECK(collective_kind_id(CollectiveKind::ReduceScatter) == "reduce_scatter");
    CHECK(collective_rules().size() == 7);
}

TEST_CASE("communication time and exposed communication, with and without overlap", "[ranks]")
{
    RankTrace trace(0);
    // Step 1 [0, 10000): a GEMM [1000, 5000) overlaps the all-reduce [4000, 7000) for 1000 ns.
    trace.kernel(1000, 5000);
    trace.collective(4000, 7000);
    // Step 2 [10000, 20000): nothing overlaps the all-reduce [13000, 16000) or the all-gather [16000, 17000);
    // an all-reduce fully under a GEMM [17500, 19500) hides all of its 500 ns.
    trace.kernel(11'000, 13'000);
    trace.collective(13'000, 16'000);
    trace.collective(16'000, 17'000, kAllGather);
    trace.kernel(17'500, 19'500);
    trace.collective(18'000, 18'500);
    const RankSummary rank = summarize(trace, "ranks-exposed");
    REQUIRE(rank.steps.size() == 2);
    CHECK(step_of(rank, 1).comm_ns == 3000);
    CHECK(step_of(rank, 1).exposed_comm_ns == 2000);
    CHECK(step_of(rank, 2).comm_ns == 4500);
    CHECK(step_of(rank, 2).exposed_comm_ns == 4000);
    // The collectives, numbered per kind within their step.
    REQUIRE(rank.collectives.size() == 4);
    CHECK(rank.collectives[0].step_index == 1);
    CHECK(rank.collectives[1].kind == CollectiveKind::AllReduce);
    CHECK(rank.collectives[1].ordinal == 0);
    CHECK(rank.collectives[2].kind == CollectiveKind::AllGather);
    CHECK(rank.collectives[2].ordinal == 0);
    CHECK(rank.collectives[3].ordinal == 1);
    CHECK(rank.collectives[3].stream_id == kCommStream);
}

TEST_CASE("collectives are matched across ranks by step, kind and place", "[ranks]")
{
    RankTrace r0(0), r1(1, { 0, 10'000, 20'000, 30'000 });
    for (RankTrace* r : { &r0, &r1 }) {
        r->collective(1000, 2000);
        r->collective(3000, 4000);
        r->collective(5000, 6000, kAllGather);
        r->collective(12'000, 13'000);
    }
    r1.collective(7000, 8000, kBroadcast); // only rank 1 broadcasts: no counterpart
    r1.collective(22'000, 23'000); // step 3, which rank 0 did not analyse
    r1.kernel(24'000, 25'000);
    const std::vector<RankSummary> ranks { summarize(r1, "ranks-match-1"), summarize(r0, "ranks-match-0") };
    const CrossRankReport across = analyze_across_ranks(ranks);
    CHECK(across.ranks == std::vector<int32_t> { 0, 1 });
    CHECK(across.common_steps == std::vector<int64_t> { 1, 2 });
    REQUIRE(across.collectives.size() == 4);
    CHECK(across.collectives[0].kind == CollectiveKind::AllReduce);
    CHECK(across.collectives[0].ordinal == 0);
    CHECK(across.collectives[1].kind == CollectiveKind::AllReduce);
    CHECK(across.collectives[1].ordinal == 1);
    CHECK(across.collectives[1].start_ns == std::vector<int64_t> { 3000, 3000 });
    CHECK(across.collectives[2].kind == CollectiveKind::AllGather);
    CHECK(across.collectives[3].step_index == 2);
    CHECK(across.per_rank[0].unmatched_collectives == 0);
    CHECK(across.per_rank[1].unmatched_collectives == 1);
    CHECK(across.per_rank[0].steps_not_common == 0);
    CHECK(across.per_rank[1].steps_not_common == 1);
    // Nobody waited: every step's slowest rank is the one with the longest step.
    REQUIRE(across.steps.size() == 2);
    CHECK(across.steps[0].slowest_by == SlowestBy::StepTime);
    CHECK(across.per_rank[0].wait_ns == 0);
    CHECK_FALSE(across.clock.aligned_by_collectives);
}

TEST_CASE("the straggler: the last rank to arrive, and each other rank's wait", "[ranks]")
{
    // Three ranks of one host. In step 1 rank 2 arrives at the all-reduce 600 ns late; in step 2 at the all-gather
    // 2500 ns late, longer than rank 0's whole kernel (1000 ns), so rank 0's wait is clipped to it.
    RankTrace r0(0, { 0, 10'000, 20'000 }, 3), r1(1, { 0, 10'000, 20'000 }, 3), r2(2, { 0, 10'000, 20'000 }, 3);
    r0.collective(4000, 7000);
    r1.collective(4100, 7000);
    r2.kernel(1000, 4500); // rank 2's compute ran long
    r2.collective(4600, 7000);
    // After it, rank 2's host waits for its communication stream: its idle after the GEMM is `sync` (the all-reduce
    // covers 2400 of the 5500 ns gap, under rule 4's half, and a stream sync on its thread ends inside the gap).
    r2.s.sync(r2.host, 7100, 7200, schema::SyncType::StreamSynchronize, kCommStream);
    r0.collective(16'000, 17'000, kAllGather);
    r1.collective(16'000, 19'000, kAllGather);
    r2.collective(18'500, 19'000, kAllGather);
    const std::vector<RankSummary> ranks { summarize(r0, "ranks-straggler-0"), summarize(r1, "ranks-straggler-1"),
        summarize(r2, "ranks-straggler-2") };
    REQUIRE_FALSE(check_one_job(ranks).has_value());
    const CrossRankReport across = analyze_across_ranks(ranks);
    REQUIRE(across.collectives.size() == 2);
    const MatchedCollective& all_reduce = across.collectives[0];
    CHECK(all_reduce.last_rank == 2);
    CHECK(all_reduce.wait_ns == std::vector<int64_t> { 600, 500, 0 });
    CHECK(all_reduce.max_wait_ns == 600);
    const MatchedCollective& all_gather = across.collectives[1];
    CHECK(all_gather.last_rank == 2);
    CHECK(all_gather.wait_ns == std::vector<int64_t> { 1000, 2500, 0 });
    REQUIRE(across.worst_collective.has_value());
    CHECK(*across.worst_collective == 1);
    CHECK(across.per_rank[2].times_last == 2);
    CHECK(across.per_rank[2].caused_wait_ns == 600 + 500 + 1000 + 2500);
    CHECK(across.per_rank[0].wait_ns == 1600);
    REQUIRE(across.steps.size() == 2);
    const StepAcrossRanks& step1 = across.steps[0];
    CHECK(step1.slowest_rank == 2);
    CHECK(step1.slowest_by == SlowestBy::CausedWait);
    CHECK(step1.caused_wait_ns == std::vector<int64_t> { 0, 0, 1100 });
    CHECK(step1.wait_ns == std::vector<int64_t> { 600, 500, 0 });
    // The lead cause: what rank 2 had more of than the others before it arrived, its 3.5 us GEMM (the others ran
    // no kernel before the all-reduce), not its longest idle cause in the step (sync, after the all-reduce).
    REQUIRE(step1.slowest_lead_cause.has_value());
    CHECK(*step1.slowest_lead_cause == LeadCause::Compute);
    CHECK(ranks[2].steps[0].compute_before_ns == 3500);
    CHECK(ranks[2].steps[0].arrival_ns == 4600);
    CHECK(lead_cause_name(LeadCause::Compute) == "compute");
    CHECK(lead_cause_name(LeadCause::Host) == "host");
    CHECK(step1.comm_ns == std::vector<int64_t> { 3000, 2900, 2400 });
    CHECK(step1.exposed_comm_ns == std::vector<int64_t> { 3000, 2900, 2400 });
}

TEST_CASE("ranks of one host share a clock: session starts differ, nothing is shifted", "[ranks]")
{
    // Rank 1's session began 1000 ns after rank 0's, so its times are 1000 ns smaller for the same moment.
    RankTrace r0(0), r1(1, { -1000, 9000, 19'000 });
    r1.s.session().utc_epoch_ns = kUtc + 1000;
    r0.collective(4000, 7000);
    r1.collective(3400, 6000); // at 4400 on rank 0's time line: 400 ns after rank 0
    const std::vector<RankSummary> ranks { summarize(r0, "ranks-onehost-0"), summarize(r1, "ranks-onehost-1") };
    const CrossRankReport across = analyze_across_ranks(ranks);
    REQUIRE(across.clock.hosts.size() == 1);
    CHECK(across.clock.hosts[0].host == "node0");
    CHECK(across.clock.hosts[0].ranks == std::vector<int32_t> { 0, 1 });
    CHECK(across.clock.hosts[0].offset_ns == 0);
    CHECK_FALSE(across.clock.aligned_by_collectives);
    REQUIRE(across.collectives.size() == 1);
    CHECK(across.collectives[0].start_ns == std::vector<int64_t> { 4000, 4400 });
    CHECK(across.collectives[0].wait_ns == std::vector<int64_t> { 400, 0 });
    CHECK(across.clock.residual_ns == 0);
}

TEST_CASE("clock alignment across hosts: a planted offset is found from collective ends", "[ranks]")
{
    // Ranks 0 and 1 on host a, rank 2 on host b, whose clock reads 5 ms ahead: its session start says 5 ms later
    // for the same moment. Its collectives end 20, 30 and -10 ns from rank 0's (link latency); rank 1's end 5 ns
    // after rank 0's.
    constexpr int64_t kSkew = 5'000'000;
    RankTrace r0(0, { 0, 10'000, 20'000 }, 3, "a"), r1(1, { 0, 10'000, 20'000 }, 3, "a"),
        r2(2, { 0, 10'000, 20'000 }, 3, "b");
    r2.s.session().utc_epoch_ns = kUtc + kSkew;
    const int64_t starts[] = { 1000, 3000, 5000 };
    const int64_t r2_end_delta[] = { 20, 30, -10 };
    for (int i = 0; i < 3; ++i) {
        r0.collective(starts[i], starts[i] + 1000);
        r1.collective(starts[i], starts[i] + 1005);
        r2.collective(starts[i] + 300, starts[i] + 1000 + r2_end_delta[i]); // rank 2 arrives 300 ns late
    }
    const std::vector<RankSummary> ranks { summarize(r2, "ranks-clock-2"), summarize(r0, "ranks-clock-0"),
        summarize(r1, "ranks-clock-1") };
    const CrossRankReport across = analyze_across_ranks(ranks);
    const ClockAlignment& clock = across.clock;
    CHECK(clock.reference_rank == 0);
    CHECK(clock.aligned_by_collectives);
    REQUIRE(clock.hosts.size() == 2);
    CHECK(clock.hosts[0].host == "a");
    CHECK(clock.hosts[0].offset_ns == 0);
    CHECK(clock.hosts[1].host == "b");
    CHECK(clock.hosts[1].ranks == std::vector<int32_t> { 2 });
    // End differences (rank 0 - rank 2, on UTC): -kSkew - 20, -kSkew - 30, -kSkew + 10; the (upper) median.
    CHECK(clock.hosts[1].offset_ns == -kSkew - 20);
    CHECK(clock.hosts[1].samples == 3);
    // |end - rank 0's end| after the shift: rank 1: 5, 5, 5; rank 2: 0, 10, 30. The upper median of six.
    CHECK(clock.residual_samples == 6);
    CHECK(clock.residual_ns == 5);
    // Aligned, rank 2 is the late one by 300 - 20 ns, not 5 ms.
    REQUIRE(across.collectives.size() == 3);
    CHECK(across.collectives[0].start_ns == std::vector<int64_t> { 1000, 1000, 1280 });
    CHECK(across.collectives[0].last_rank == 2);
    CHECK(across.collectives[0].wait_ns == std::vector<int64_t> { 280, 280, 0 });
}

TEST_CASE("FP8 scale agreement: a mismatch planted on one rank is named", "[ranks]")
{
    std::vector<RankTrace> traces;
    traces.reserve(3);
    for (int32_t rank = 0; rank < 3; ++rank)
        traces.emplace_back(rank, std::vector<int64_t> { 0, 10'000, 20'000 }, 3);
    for (int32_t rank = 0; rank < 3; ++rank) {
        RankTrace& trace = traces[static_cast<size_t>(rank)];
        trace.kernel(1000, 2000);
        trace.kernel(11'000, 12'000);
        const int64_t fc1
            = trace.s.tensor_site("encoder.fc1", schema::TensorRole::Weight, schema::Dtype::BFloat16, 8, 8);
        const int64_t fc2
            = trace.s.tensor_site("encoder.fc2", schema::TensorRole::Weight, schema::Dtype::BFloat16, 8, 8);
        for (int64_t step = 1; step <= 2; ++step)
            for (const int64_t site : { fc1, fc2 }) {
                TensorStatsRow row;
                row.site_id = site;
                row.step = step;
                row.timestamp_ns = step * 10'000 - 5000;
                row.scale_inv = 0.5 * static_cast<double>(step);
                // Rank 1 within the tolerance (a rounding difference); rank 2 off by 1e-3 at fc2, step 2.
                if (rank == 1)
                    *row.scale_inv *= 1 + 1e-9;
                if (rank == 2 && site == fc2 && step == 2)
                    row.scale_inv = 1.001;
                trace.s.tensor_stats(row);
            }
    }
    std::vector<RankSummary> ranks;
    for (size_t r = 0; r < traces.size(); ++r)
        ranks.push_back(summarize(traces[r], "ranks-scales-" + std::to_string(r)));
    REQUIRE(ranks[2].scales.size() == 4);
    const ScaleAgreement scales = analyze_across_ranks(ranks).scales;
    CHECK(scales.compared == 4);
    CHECK(scales.mismatches == 1);
    REQUIRE(scales.first.has_value());
    CHECK(scales.first->site == "encoder.fc2 · weight");
    CHECK(scales.first->step == 2);
    CHECK(scales.first->sample == 0);
    CHECK(scales.first->rank_a == 0);
    CHECK(scales.first->rank_b == 2);
    CHECK(scales.first->value_a == 1.0);
    CHECK(scales.first->value_b == 1.001);

    SECTION("a clean run agrees")
    {
        ranks.pop_back();
        const ScaleAgreement clean = analyze_across_ranks(ranks).scales;
        CHECK(clean.compared == 4);
        CHECK(clean.mismatches == 0);
        CHECK_FALSE(clean.first.has_value());
    }
}

TEST_CASE("traces of different jobs are refused with one line", "[ranks]")
{
    RankTrace r0(0), r1(1);
    r0.collective(4000, 7000);
    r1.collective(4000, 7000);
    const RankSummary rank0 = summarize(r0, "ranks-job-0");
    RankSummary other = summarize(r1, "ranks-job-1");
    const auto refusal = [&](const RankSummary& second) {
        const std::vector<RankSummary> ranks { rank0, second };
        const std::optional<std::string> why = check_one_job(ranks);
        REQUIRE(why.has_value());
        CHECK(why->find('\n') == std::string::npos);
        return *why;
    };
    REQUIRE_FALSE(check_one_job(std::vector<RankSummary> { rank0, other }).has_value());

    SECTION("different command line")
    {
        other.command_line = "python eval.py --fp8";
        CHECK(refusal(other).starts_with("the traces are of different jobs: '"));
        CHECK(refusal(other).ends_with("ran 'python train.py --fp8', '" + other.path + "' 'python eval.py --fp8'"));
    }
    SECTION("torch.distributed.launch's --local_rank is not a different job")
    {
        RankSummary launched = rank0;
        launched.command_line = "python train.py --local_rank=0 --fp8";
        other.command_line = "python train.py --local-rank=1 --fp8";
        CHECK_FALSE(check_one_job(std::vector<RankSummary> { launched, other }).has_value());
    }
    SECTION("duplicate rank")
    {
        other.rank = 0;
        CHECK(refusal(other) == "'" + rank0.path + "' and '" + other.path + "' are both rank 0: one trace per rank");
    }
    SECTION("world size mismatch")
    {
        other.world_size = 4;
        CHECK(refusal(other)
            == "the traces are of different jobs: '" + rank0.path + "' has world size 2, '" + other.path + "' 4");
    }
    SECTION("a rank outside the world size")
    {
        other.rank = 2;
        CHECK(refusal(other) == "'" + other.path + "' is rank 2, not below its world size 2");
    }
    SECTION("a trace without rank information")
    {
        other.rank = -1;
        CHECK(refusal(other).find("does not say its rank and world size") != std::string::npos);
    }
}
