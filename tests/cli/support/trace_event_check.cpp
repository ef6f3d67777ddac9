#include "trace_event_check.hpp"

#include "cli_test_support.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace fp8scope::cli_test {

using nlohmann::json;

std::string read_export_file(const std::string& path)
{
    if (!path.ends_with(".gz"))
        return read_text_file(path);
    gzFile file = gzopen(path.c_str(), "rb");
    if (file == nullptr)
        return {};
    std::string text;
    char block[1 << 16];
    int n = 0;
    while ((n = gzread(file, block, sizeof block)) > 0)
        text.append(block, static_cast<size_t>(n));
    gzclose(file);
    return n < 0 ? std::string() : text;
}

int64_t json_time_ns(const json& microseconds)
{
    return std::llround(microseconds.get<double>() * 1000.0);
}

namespace {

using Track = std::pair<int64_t, int64_t>; // pid, tid

struct Slice {
    int64_t start_ns, end_ns;
};

class Checker {
public:
    explicit Checker(TraceEventSummary& summary)
        : summary_(summary)
    {
    }

    void problem(std::string text)
    {
        if (summary_.problems.size() < 20)
            summary_.problems.push_back(std::move(text));
    }

    void event(const json& e, size_t index)
    {
        const std::string where = fmt::format("event {}", index);
        if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) {
            problem(where + ": not an object with a string \"ph\"");
            return;
        }
        const std::string ph = e["ph"];
        ++summary_.by_phase[ph];
        auto need = [&](const char* key, bool ok) {
            if (!ok)
                problem(fmt::format("{} (ph {}): field \"{}\" missing or of the wrong type", where, ph, key));
            return ok;
        };
        auto is_string = [&](const char* key) { return e.contains(key) && e[key].is_string(); };
        auto is_int = [&](const char* key) { return e.contains(key) && e[key].is_number_integer(); };
        auto is_number = [&](const char* key) { return e.contains(key) && e[key].is_number(); };
        const bool ids = need("pid", is_int("pid")) && (ph == "C" || ph == "M" || need("tid", is_int("tid")));
        if (!ids)
            return;
        const int64_t pid = e["pid"];
        const int64_t tid = e.contains("tid") && e["tid"].is_number_integer() ? e["tid"].get<int64_t>() : 0;
        if (ph == "X") {
            if (need("name", is_string("name")) && need("cat", is_string("cat")) && need("ts", is_number("ts"))
                && need("dur", is_number("dur") && e["dur"].get<double>() >= 0)) {
                const int64_t start = json_time_ns(e["ts"]);
                slices_[{ pid, tid }].push_back({ start, start + json_time_ns(e["dur"]) });
                starts_.emplace(pid, tid, start);
                ++summary_.slices_by_cat[e["cat"].get<std::string>()];
                used_.insert({ pid, tid });
            }
            need("args", !e.contains("args") || e["args"].is_object());
        } else if (ph == "i") {
            need("name", is_string("name"));
            need("ts", is_number("ts"));
            need("s", is_string("s") && std::string("gpt").find(e["s"].get<std::string>()) != std::string::npos);
            used_.insert({ pid, tid });
        } else if (ph == "C") {
            need("name", is_string("name"));
            need("ts", is_number("ts"));
            bool numbers = e.contains("args") && e["args"].is_object() && !e["args"].empty();
            for (const auto& value : numbers ? e["args"] : json::object())
                numbers = numbers && value.is_number();
            need("args", numbers);
            counter_pids_.insert(pid);
        } else if (ph == "M") {
            metadata(e, pid, tid, where);
        } else if (ph == "s" || ph == "f") {
            if (need("id", e.contains("id") && (e["id"].is_number_integer() || e["id"].is_string()))
                && need("cat", is_string("cat")) && need("name", is_string("name")) && need("ts", is_number("ts"))
                && (ph == "s" || need("bp", is_string("bp") && e["bp"] == "e"))) {
                auto& ends = flows_[{ e["cat"].get<std::string>(), e["name"].get<std::string>(), e["id"].dump() }];
                (ph == "s" ? ends.first : ends.second).push_back({ pid, tid, json_time_ns(e["ts"]) });
            }
        } else {
            problem(fmt::format("{}: unexpected phase \"{}\"", where, ph));
        }
    }

    void finish()
    {
        for (const auto& [key, ends] : flows_) {
            const auto& [cat, name, id] = key;
            if (ends.first.size() != 1 || ends.second.size() != 1) {
                problem(fmt::format(
                    "flow {}/{} id {}: {} starts and {} ends", cat, name, id, ends.first.size(), ends.second.size()));
                continue;
            }
            ++summary_.flows;
            // Both ends bind to a slice: they are written at a slice's start on their track.
            for (const auto& end : { ends.first.front(), ends.second.front() })
                if (!starts_.contains(end))
                    problem(fmt::format("flow id {}: no slice starts at ts {} ns on pid {} tid {}", id,
                        std::get<2>(end), std::get<0>(end), std::get<1>(end)));
        }
        for (auto& [track, slices] : slices_) {
            std::ranges::sort(slices, [](const Slice& l, const Slice& r) {
                return l.start_ns != r.start_ns ? l.start_ns < r.start_ns : l.end_ns > r.end_ns;
            });
            std::vector<int64_t> open_ends;
            for (const Slice& s : slices) {
                while (!open_ends.empty() && open_ends.back() <= s.start_ns)
                    open_ends.pop_back();
                if (!open_ends.empty() && s.end_ns > open_ends.back())
                    problem(fmt::format("pid {} tid {}: slice [{}, {}) ns overlaps its parent, which ends at {}",
                        track.first, track.second, s.start_ns, s.end_ns, open_ends.back()));
                open_ends.push_back(s.end_ns);
            }
        }
        for (const Track& track : used_) {
            if (!thread_names_.contains(track))
                problem(fmt::format("pid {} tid {} has no thread_name", track.first, track.second));
            if (!process_names_.contains(track.first))
                problem(fmt::format("pid {} has no process_name", track.first));
        }
        for (int64_t pid : counter_pids_)
            if (!process_names_.contains(pid))
                problem(fmt::format("pid {} (counters) has no process_name", pid));
    }

private:
    void metadata(const json& e, int64_t pid, int64_t tid, const std::string& where)
    {
        static const std::set<std::string> kKinds { "process_name", "process_labels", "process_sort_index",
            "thread_name", "thread_sort_index" };
        if (!e.contains("name") || !e["name"].is_string() || !kKinds.contains(e["name"].get<std::string>())) {
            problem(where + ": metadata of an unknown kind");
            return;
        }
        const std::string kind = e["name"];
        const json args = e.contains("args") ? e["args"] : json();
        const char* key = kind.ends_with("sort_index") ? "sort_index" : kind == "process_labels" ? "labels" : "name";
        const bool ok = args.is_object() && args.contains(key)
            && (kind.ends_with("sort_index") ? args[key].is_number_integer() : args[key].is_string());
        if (!ok)
            problem(fmt::format("{}: {} without args.{}", where, kind, key));
        if (kind.starts_with("thread") && !e.contains("tid"))
            problem(where + ": thread metadata without tid");
        if (kind == "process_name")
            process_names_.insert(pid);
        if (kind == "thread_name")
            thread_names_.insert({ pid, tid });
    }

    using FlowEnd = std::tuple<int64_t, int64_t, int64_t>; // pid, tid, ts ns
    TraceEventSummary& summary_;
    std::map<Track, std::vector<Slice>> slices_;
    std::set<FlowEnd> starts_;
    std::set<Track> used_, thread_names_;
    std::set<int64_t> process_names_, counter_pids_;
    std::map<std::tuple<std::string, std::string, std::string>, std::pair<std::vector<FlowEnd>, std::vector<FlowEnd>>>
        flows_;
};

} // namespace

TraceEventSummary check_trace_events(const json& doc)
{
    TraceEventSummary summary;
    Checker checker(summary);
    if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
        checker.problem("not an object with a traceEvents array");
        return summary;
    }
    if (!doc.contains("displayTimeUnit") || (doc["displayTimeUnit"] != "ns" && doc["displayTimeUnit"] != "ms"))
        checker.problem("displayTimeUnit is not \"ns\" or \"ms\"");
    if (!doc.contains("baseTimeNanoseconds") || !doc["baseTimeNanoseconds"].is_number_integer())
        checker.problem("no integer baseTimeNanoseconds");
    const json& events = doc["traceEvents"];
    summary.events = static_cast<int64_t>(events.size());
    for (size_t i = 0; i < events.size(); ++i)
        checker.event(events[i], i);
    checker.finish();
    return summary;
}

} // namespace fp8scope::cli_test
