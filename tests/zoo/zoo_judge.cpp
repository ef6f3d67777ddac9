// The rules each cell is judged by are docs/accuracy.md's; each is the same for every workload (no workload has a
// threshold of its own).
#include "zoo_judge.hpp"

#include "zoo_cells.hpp"

#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"
#include "job_truth.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>

namespace fp8scope::zoo {
namespace detail {

using nlohmann::json;

namespace {

json read_json(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    return json::parse(in);
}

} // namespace

Trace load(const std::string& dir, const std::string& stem)
{
    const std::string path = dir + "/" + stem + ".sqlite";
    auto model = analyzer::load_trace(path);
    if (!model)
        throw std::runtime_error(path + ": " + model.error().message);
    return { stem, read_json(dir + "/" + stem + ".truth.json"), std::move(*model) };
}

Cell cell(bool right, std::string text)
{
    return { std::move(text), right ? Verdict::Right : Verdict::Wrong };
}
Cell not_judged(std::string text)
{
    return { std::move(text), Verdict::NotJudged };
}

std::optional<double> number(const json& j, const char* key)
{
    if (j.is_object() && j.contains(key) && j.at(key).is_number())
        return j.at(key).get<double>();
    return std::nullopt;
}

bool within(double value, double expected, double tolerance)
{
    return std::abs(value - expected) <= tolerance * std::abs(expected);
}

} // namespace detail

namespace {

using namespace detail;

using namespace analyzer;
using nlohmann::json;

constexpr double kIdleTolerance = 0.25; // planted stall against the cause's idle per step
constexpr double kSavingTolerance = 0.25; // planted stall against the top recommendation's saving
constexpr double kGraphTolerance = 0.20; // the CUDA-graph what-if against the measured replay
constexpr double kDominantStallShare = 0.30; // a stall of at least this share of the step must lead the advice
constexpr size_t kUnjudgedFirstSteps = 2; // compilation, lazy init: the first steps' boundaries are not judged

// The workload's traces: <name>.sqlite, or <name>-rank<r>.sqlite per rank, ascending.
std::vector<Trace> load_workload(const std::string& dir, const std::string& workload)
{
    std::vector<Trace> traces;
    if (std::filesystem::exists(dir + "/" + workload + ".truth.json")) {
        traces.push_back(load(dir, workload));
        return traces;
    }
    for (int rank = 0; std::filesystem::exists(dir + "/" + workload + "-rank" + std::to_string(rank) + ".truth.json");
         ++rank)
        traces.push_back(load(dir, workload + "-rank" + std::to_string(rank)));
    if (traces.empty())
        throw std::runtime_error("no truth for workload " + workload + " in " + dir);
    return traces;
}

std::string ms(double ns)
{
    return fmt::format("{:.2f} ms", ns / 1e6);
}

StepOptions automatic_only()
{
    StepOptions options;
    options.ignore_markers = true;
    options.ignore_nvtx = true;
    options.warmup = 0;
    return options;
}

// The steps the job marked itself (step markers, or NVTX step ranges in the CUDA sample), all of them.
StepSet true_steps(const TraceModel& model)
{
    StepOptions options;
    options.warmup = 0;
    return find_steps(model, options);
}

Cell judge_steps(const std::vector<Trace>& traces)
{
    std::vector<std::string> parts;
    bool right = true;
    for (const Trace& t : traces) {
        const int64_t expected = t.truth.at("steps").get<int64_t>();
        const StepSet found = find_steps(t.model, automatic_only());
        const int64_t n = found.source == StepSource::Automatic ? int64_t(found.steps.size()) : 0;
        right = right && n == expected;
        parts.push_back(fmt::format("{}/{}", n, expected));
    }
    return cell(right, fmt::format("{}", fmt::join(parts, ", ")));
}

Cell judge_boundaries(const std::vector<Trace>& traces)
{
    std::vector<std::string> parts;
    bool right = true;
    for (const Trace& t : traces) {
        // A zero-code job marks nothing itself: its steps (from the optimizer hook) would be the analyzer's own.
        if (t.truth.value("planted", json::object()).value("markers", "") == "none")
            return not_judged("no step markers of its own");
        const StepSet found = find_steps(t.model, automatic_only());
        const StepSet truth = true_steps(t.model);
        if (found.steps.size() != truth.steps.size()) {
            right = false;
            parts.push_back("step count differs");
            continue;
        }
        const testing::JobActivities a = testing::job_activities(t.model);
        std::vector<int64_t> starts;
        for (const StepInterval& s : truth.steps)
            starts.push_back(s.host_start_ns); // the markers' own host times: true_boundaries maps them
        const std::vector<size_t> expected = testing::true_boundaries(a, starts);
        size_t judged = 0, within = 0;
        std::vector<std::string> misses; // "step:offset" of each boundary further than 1 activity
        for (size_t i = kUnjudgedFirstSteps; i < found.steps.size(); ++i) {
            const int64_t off = int64_t(testing::position_of(a, found.steps[i].start_ns)) - int64_t(expected[i]);
            ++judged;
            within += std::llabs(off) <= 1 ? 1 : 0;
            if (std::llabs(off) > 1)
                misses.push_back(fmt::format("{}:{:+d}", i, off));
        }
        right = right && within == judged;
        if (misses.size() > 6)
            misses.resize(6), misses.push_back("...");
        parts.push_back(within == judged
                ? fmt::format("{}/{} within 1", within, judged)
                : fmt::format("{}/{} within 1 (step:offset {})", within, judged, fmt::join(misses, " ")));
    }
    return cell(right, fmt::format("{}", fmt::join(parts, "; ")));
}

int64_t median_ns(std::vector<int64_t> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct StepFigures {
    int64_t host_ns = 0, host_in_launches_ns = 0, sync_ns = 0, launch_ns = 0, dependency_ns = 0, comm_ns = 0;
    int64_t syncs = 0;
};

// Medians over the analysed steps of one device (device 0's rows: every zoo workload runs on one device a trace).
StepFigures step_medians(const Report& r)
{
    std::vector<int64_t> host, in_launches, sync, launch, dependency, comm, syncs;
    for (const DeviceStepBubbles& row : r.bubbles.per_device_step) {
        const auto cause = [&](BubbleCause c) { return row.totals.cause_ns[size_t(c)]; };
        host.push_back(cause(BubbleCause::Host));
        in_launches.push_back(row.totals.host_in_launches_ns);
        sync.push_back(cause(BubbleCause::Sync));
        launch.push_back(cause(BubbleCause::Launch));
        dependency.push_back(cause(BubbleCause::Dependency));
        comm.push_back(cause(BubbleCause::Comm));
    }
    for (size_t s = 0; s < r.steps.steps.size(); ++s) {
        int64_t n = 0;
        for (const SyncCallReport& call : r.syncs.calls)
            n += call.step == s ? 1 : 0;
        syncs.push_back(n);
    }
    return { median_ns(host), median_ns(in_launches), median_ns(sync), median_ns(launch), median_ns(dependency),
        median_ns(comm), median_ns(syncs) };
}

// The stall the job planted, as it measured it when it did (its own sleep, or its wait on the loader).
std::optional<double> planted_stall_ms(const json& truth)
{
    const json& measured = truth.value("measured", json::object());
    for (const char* key : { "slept_ms_median", "stall_ms_median", "host_wait_ms_median" })
        if (const auto v = number(measured, key))
            return v;
    return number(truth.value("planted", json::object()), "host_stall_ms");
}

// The trace the idle and advice cells judge: the straggler's rank for a DDP job, else the only one.
const Trace& subject(const std::vector<Trace>& traces)
{
    for (const Trace& t : traces)
        if (t.truth.contains("straggler") && t.truth.at("straggler").is_object()
            && t.truth.value("rank", -1) == t.truth.at("straggler").value("rank", -2))
            return t;
    return traces.front();
}

Cell judge_idle(const Trace& t, const Report& r)
{
    const StepFigures f = step_medians(r);
    const json& planted = t.truth.value("planted", json::object());
    std::string text = fmt::format("host {} (in launches {}), sync {}, launch {}", ms(double(f.host_ns)),
        ms(double(f.host_in_launches_ns)), ms(double(f.sync_ns)), ms(double(f.launch_ns)));
    if (f.comm_ns > 0)
        text += ", comm " + ms(double(f.comm_ns));
    bool judged = false, right = true;
    if (const auto stall = planted_stall_ms(t.truth)) {
        judged = true;
        const bool in_step = planted.value("host_stall_where", "") == "in_step";
        const double host = double(in_step ? f.host_in_launches_ns : f.host_ns - f.host_in_launches_ns) / 1e6;
        right = right && within(host, *stall, kIdleTolerance);
        text += fmt::format(
            "; host {} the launches {:.2f} ms vs stall {:.2f} ms", in_step ? "inside" : "outside", host, *stall);
    }
    // The job counts its own syncs; in a multi-rank job the communication library makes more on the same thread
    // (DDP's and NCCL's event and stream syncs), which the job cannot count: not judged there.
    const bool library_syncs = t.truth.value("world_size", 1) > 1;
    if (planted.contains("syncs_per_step") && !planted.contains("sync_every") && !planted.contains("sync_steps")
        && !library_syncs) {
        judged = true;
        const int64_t expected = planted.at("syncs_per_step").get<int64_t>();
        right = right && f.syncs == expected;
        text += fmt::format("; syncs/step {} (planted {})", f.syncs, expected);
    }
    return judged ? cell(right, text) : not_judged(text);
}

Cell judge_top_recommendation(const Trace& t, const Report& r)
{
    const WhatIf w = estimate_what_if(r);
    if (w.recommendations.empty())
        return not_judged("none");
    const Recommendation& top = w.recommendations.front();
    std::string text
        = fmt::format("{} saves {}", recommendation_kind_name(top.kind), ms(double(top.saving_per_step_ns)));
    const json& measured = t.truth.value("measured", json::object());
    if (const auto replay = number(measured, "graph_replay_ms")) {
        const double predicted = double(w.without_launch_overhead_ns) / 1e6;
        text += fmt::format("; graph what-if {:.2f} ms vs replay {:.2f} ms", predicted, *replay);
        return cell(top.kind == RecommendationKind::CudaGraphs && within(predicted, *replay, kGraphTolerance), text);
    }
    const json& planted = t.truth.value("planted", json::object());
    const auto stall = planted_stall_ms(t.truth);
    const auto step_ms = number(measured, "median_step_ms");
    if (stall && step_ms && planted.value("host_stall_where", "") == "between_steps"
        && *stall >= kDominantStallShare * *step_ms) {
        text += fmt::format(" (stall {:.2f} ms of a {:.2f} ms step)", *stall, *step_ms);
        // The stall's advice must be there with the stall's saving, and first, unless CUDA Graphs save more while
        // their what-if keeps the stall in the step (a loop whose launch overhead costs more than its stall: both are
        // right, by saving).
        const auto host = std::find_if(w.recommendations.begin(), w.recommendations.end(),
            [](const Recommendation& rec) { return rec.kind == RecommendationKind::ReduceHostWork; });
        if (host == w.recommendations.end())
            return cell(false, text + "; reduce_host_work not listed");
        const double graph_ms = double(w.without_launch_overhead_ns) / 1e6;
        const bool graphs_keep_stall
            = top.kind == RecommendationKind::CudaGraphs && host == w.recommendations.begin() + 1 && graph_ms >= *stall;
        if (host != w.recommendations.begin())
            text += fmt::format("; reduce_host_work second, saves {}; graph what-if {:.2f} ms keeps the stall",
                ms(double(host->saving_per_step_ns)), graph_ms);
        return cell((host == w.recommendations.begin() || graphs_keep_stall)
                && within(double(host->saving_per_step_ns) / 1e6, *stall, kSavingTolerance),
            text);
    }
    return not_judged(text);
}

Cell judge_straggler(const std::string& dir, const std::vector<Trace>& traces, const ReportOptions& options)
{
    if (traces.size() < 2)
        return not_judged("");
    const json& straggler = subject(traces).truth.value("straggler", json());
    if (!straggler.is_object())
        return not_judged("no straggler planted");
    std::vector<std::string> paths;
    for (const Trace& t : traces)
        paths.push_back(dir + "/" + t.file + ".sqlite");
    auto set = analyze_rank_set(paths, options);
    if (!set)
        throw std::runtime_error(set.error().message);
    const int32_t expected = straggler.at("rank").get<int32_t>();
    // A sleeping rank is late by `host`, a rank with a larger batch by `compute`.
    const std::optional<LeadCause> cause = straggler.contains("sleep_ms") ? std::optional(LeadCause::Host)
        : straggler.value("cause", "") == "compute"                       ? std::optional(LeadCause::Compute)
                                                                          : std::nullopt;
    size_t slowest = 0, led = 0;
    for (const StepAcrossRanks& s : set->across.steps) {
        slowest += s.slowest_rank == expected ? 1 : 0;
        led += s.slowest_rank == expected && cause && s.slowest_lead_cause == cause ? 1 : 0;
    }
    const size_t n = set->across.steps.size();
    std::string text = fmt::format("rank {} slowest in {}/{} steps", expected, slowest, n);
    bool right = n > 0 && slowest * 10 >= n * 8;
    if (cause) {
        text += fmt::format(", lead cause {} in {}", lead_cause_name(*cause), led);
        right = right && led * 10 >= n * 8;
    }
    return cell(right, text);
}

const char* mark(Verdict v)
{
    switch (v) {
    case Verdict::Right:
        return "✓";
    case Verdict::Wrong:
        return "✗";
    case Verdict::NotJudged:
        break;
    }
    return "–";
}

std::string escape_cell(std::string text)
{
    std::string out;
    for (char c : text)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

} // namespace

std::vector<KnownWrong> read_known_wrong(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::vector<KnownWrong> known;
    const auto trim = [](std::string text) {
        const size_t a = text.find_first_not_of(" \t"), b = text.find_last_not_of(" \t");
        return a == std::string::npos ? std::string() : text.substr(a, b - a + 1);
    };
    for (std::string line; std::getline(in, line);) {
        if (trim(line).empty() || trim(line)[0] == '#')
            continue;
        const size_t first = line.find('|'), second = line.find('|', first + 1);
        if (first == std::string::npos || second == std::string::npos)
            throw std::runtime_error(path + ": expected 'workload | column | why': " + line);
        known.push_back({ trim(line.substr(0, first)), trim(line.substr(first + 1, second - first - 1)),
            trim(line.substr(second + 1)) });
    }
    return known;
}

std::vector<std::string> zoo_workloads(const std::string& dir)
{
    std::set<std::string> names;
    const std::regex rank_suffix("-rank[0-9]+$");
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string file = entry.path().filename().string();
        const std::string suffix = ".truth.json";
        if (file.size() > suffix.size() && file.ends_with(suffix))
            names.insert(std::regex_replace(file.substr(0, file.size() - suffix.size()), rank_suffix, ""));
    }
    return { names.begin(), names.end() };
}

Row judge_workload(const std::string& dir, const std::string& workload)
{
    const std::vector<Trace> traces = load_workload(dir, workload);
    Row row;
    row.workload = workload;
    row.pattern = traces.front().truth.value("pattern", "");
    row.cells[0] = judge_steps(traces);
    row.cells[1] = judge_boundaries(traces);
    const Trace& t = subject(traces);
    ReportOptions markers, automatic;
    automatic.steps.ignore_markers = automatic.steps.ignore_nvtx = true;
    const Report r = analyze(t.model, markers);
    const Report a = analyze(t.model, automatic);
    row.cells[2] = judge_idle(t, r);
    row.cells[3] = judge_idle(t, a);
    row.cells[4] = judge_top_recommendation(t, r);
    row.cells[5] = judge_top_recommendation(t, a);
    row.cells[6] = judge_straggler(dir, traces, markers);
    row.cells[7] = judge_straggler(dir, traces, automatic);
    const PairCells pair = judge_pair(dir, traces.front());
    row.cells[8] = pair.drift;
    // The FP8 run judged alone: its first trace, analysed once (the subject's report when it is that trace).
    const bool front_is_subject = &t == &traces.front();
    const Report front = front_is_subject ? Report {} : analyze(traces.front().model, markers);
    row.cells[9] = judge_numerics_verdict(traces.front(), front_is_subject ? r : front);
    row.cells[10] = pair.recipe;
    row.cells[11] = judge_price(traces.front());
    row.cells[12] = judge_fused_bookkeeping(traces.front());
    row.cells[13] = judge_compiled_whatif(t, r);
    return row;
}

std::string scoreboard_markdown(const std::vector<Row>& rows, const std::vector<KnownWrong>& known)
{
    const auto known_why = [&](const std::string& workload, const char* column) -> const std::string* {
        for (const KnownWrong& k : known)
            if (k.workload == workload && k.column == column)
                return &k.why;
        return nullptr;
    };
    std::string out = "| workload |";
    for (const char* column : kColumns)
        out += fmt::format(" {} |", column);
    out += "\n|---|";
    for (size_t i = 0; i < kColumnCount; ++i)
        out += "---|";
    out += "\n";
    size_t right = 0, wrong = 0, open = 0;
    for (const Row& row : rows) {
        out += fmt::format("| `{}` |", row.workload);
        for (size_t i = 0; i < kColumnCount; ++i) {
            const Cell& c = row.cells[i];
            const std::string* why = c.verdict == Verdict::Wrong ? known_why(row.workload, kColumns[i]) : nullptr;
            out += fmt::format(" {} {}{} |", mark(c.verdict), escape_cell(c.text),
                why ? " (known: " + escape_cell(*why) + ")" : std::string());
            right += c.verdict == Verdict::Right ? 1 : 0;
            wrong += c.verdict == Verdict::Wrong ? 1 : 0;
            open += c.verdict == Verdict::NotJudged ? 1 : 0;
        }
        out += "\n";
    }
    out += fmt::format("\n{} workloads: {} cells right, {} wrong, {} not judged.\n", rows.size(), right, wrong, open);
    return out;
}

} // namespace fp8scope::zoo
