// The viewer's analyzer side on a large trace (docs/benchmarks.md "The viewer's queries on 10 M kernels"; goals: on
// 10 M kernels it opens in <= 10 s, and any zoom repaints in <= 16 ms): how long loading, analysing and building the
// timeline index take, and what a level-of-detail query costs per lane at full, step and kernel zoom. Not a test: it
// prints figures.
//
//   fp8scope_timeline_bench TRACE [--width PX (1920)] [--queries N (200)] [--plain-load]
//
// The load reports progress to a hook that only counts its calls (--plain-load: the overload without a hook, to see
// what the hook costs); analyze() reports to a hook that notes when each analysis ended, which gives each analysis's
// share of the time (the weights of analyze()'s progress, report.cpp).
// Queries pan across the trace (N windows per zoom, evenly spread) so that caches do not flatter them; each figure
// is the median and the maximum over those N calls, for the busiest GPU stream lane, the busiest host thread's lane
// and for all lanes of the index together (one repaint of every track).
#include "fp8scope/analyzer/kernels/kernel_table.hpp"
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"

#include "peak_rss.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// The lane with the most items among the tracks of `kind`.
LaneRef busiest(const TimelineIndex& index, TrackKind kind)
{
    LaneRef best;
    size_t most = 0;
    for (uint32_t t = 0; t < index.tracks.size(); ++t)
        for (uint32_t l = 0; l < index.tracks[t].lanes.size(); ++l)
            if (index.tracks[t].kind == kind && index.tracks[t].lanes[l].size() > most) {
                most = index.tracks[t].lanes[l].size();
                best = { t, l };
            }
    return best;
}

struct Timing {
    double median_us = 0, max_us = 0;
    size_t entries = 0; // of the median call's window
};

// `lanes` queried over `count` windows of `span_ns` spread over [first_ns, last_ns).
Timing time_queries(const TimelineIndex& index, const std::vector<LaneRef>& lanes, int64_t first_ns, int64_t last_ns,
    int64_t span_ns, int width, int count)
{
    std::vector<double> micros;
    std::vector<size_t> entries;
    std::vector<TimelineEntry> out;
    const int64_t room = std::max<int64_t>(1, last_ns - first_ns - span_ns);
    for (int i = 0; i < count; ++i) {
        const int64_t t0 = first_ns + room * i / std::max(1, count - 1);
        size_t n = 0;
        const auto start = Clock::now();
        for (const LaneRef lane : lanes) {
            query(index, lane, t0, t0 + span_ns, width, kFoldMinPx, out);
            n += out.size();
        }
        micros.push_back(seconds_since(start) * 1e6);
        entries.push_back(n);
    }
    std::vector<size_t> order(micros.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::ranges::sort(order, {}, [&](size_t i) { return micros[i]; });
    const size_t median = order[order.size() / 2];
    return { micros[median], micros[order.back()], entries[median] };
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Times the viewer's analyzer queries on a trace" };
    std::string path;
    int width = 1920;
    int count = 200;
    app.add_option("trace", path, "trace file")->required();
    app.add_option("--width", width, "timeline width in pixels");
    app.add_option("--queries", count, "windows per zoom level")->check(CLI::Range(1, 100000));
    bool plain_load = false;
    app.add_flag("--plain-load", plain_load, "load without a progress hook");
    CLI11_PARSE(app, argc, argv);

    auto start = Clock::now();
    int reports = 0;
    auto model = plain_load ? load_trace(path) : load_trace(path, [&](double) { return ++reports > 0; });
    if (!model) {
        std::fprintf(stderr, "timeline_bench: %s\n", model.error().message.c_str());
        return 3;
    }
    std::printf("load_trace (%s): %.2f s; %zu kernels, %zu API calls\n",
        plain_load ? "no progress hook" : fmt::format("{} progress reports", reports).c_str(), seconds_since(start),
        model->kernels.size(), model->api_calls.size());
    start = Clock::now();
    std::vector<std::pair<double, double>> stages; // (fraction, seconds since the start)
    const Report report = *analyze(*model, {}, [&](double fraction) {
        stages.emplace_back(fraction, seconds_since(start));
        return true;
    });
    const double analysed_s = seconds_since(start);
    std::printf("analyze: %.2f s; %zu steps; share of the time at each progress report:", analysed_s,
        report.steps.steps.size());
    for (const auto& [fraction, at] : stages)
        std::printf(" %.2f@%.2f", fraction, at / analysed_s);
    std::printf("\n");
    start = Clock::now();
    const TimelineIndex index = build_timeline(*model, report);
    size_t items = 0;
    for (const TimelineTrack& t : index.tracks)
        items += t.items;
    std::printf("build_timeline: %.2f s; %zu tracks, %zu items; peak RSS so far %.2f GB\n", seconds_since(start),
        index.tracks.size(), items, bench::peak_rss_gb());
    start = Clock::now();
    const KernelTableResult table = kernel_table(*model, report.steps);
    std::printf("kernel_table: %.3f s; %zu names\n", seconds_since(start), table.rows.size());

    std::vector<LaneRef> all;
    for (uint32_t t = 0; t < index.tracks.size(); ++t)
        for (uint32_t l = 0; l < index.tracks[t].lanes.size(); ++l)
            all.push_back({ t, l });
    const LaneRef gpu = busiest(index, TrackKind::GpuStream);
    const LaneRef host = busiest(index, TrackKind::HostThread);
    const auto& steps = report.steps.steps;
    const int64_t step_ns = steps.empty() ? (index.end_ns - index.start_ns) / 1000
                                          : steps[steps.size() / 2].end_ns - steps[steps.size() / 2].start_ns;
    const TimelineLane& gpu_lane = index.lane(gpu);
    // Kernel zoom: a window holding about 20 of the busiest lane's items, at its mean density.
    const int64_t kernel_ns = std::max<int64_t>(
        1, (index.end_ns - index.start_ns) / std::max<int64_t>(1, static_cast<int64_t>(gpu_lane.size()) / 20));
    struct Zoom {
        const char* name;
        int64_t span_ns;
    };
    const Zoom zooms[] = { { "full (whole trace)", index.end_ns - index.start_ns + 1 }, { "step", step_ns },
        { "kernel (~20 kernels)", kernel_ns } };
    std::printf("queries at %d px, %d windows each: median / max µs per call (entries returned)\n", width, count);
    std::printf("%-22s %-30s %-30s %-30s\n", "zoom", "busiest GPU stream lane", "busiest thread's API lane",
        "all lanes together");
    for (const Zoom& z : zooms) {
        const Timing g = time_queries(index, { gpu }, index.start_ns, index.end_ns, z.span_ns, width, count);
        const Timing h = time_queries(index, { host }, index.start_ns, index.end_ns, z.span_ns, width, count);
        const Timing a = time_queries(index, all, index.start_ns, index.end_ns, z.span_ns, width, count);
        std::printf("%-22s %8.1f / %8.1f (%5zu)        %8.1f / %8.1f (%5zu)        %8.1f / %8.1f (%5zu)\n", z.name,
            g.median_us, g.max_us, g.entries, h.median_us, h.max_us, h.entries, a.median_us, a.max_us, a.entries);
    }
    std::printf("lane sizes: busiest GPU stream lane %zu items, busiest API lane %zu items, %zu lanes\n",
        gpu_lane.size(), index.lane(host).size(), all.size());
    return 0;
}
