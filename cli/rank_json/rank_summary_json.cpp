// A RankSummary as JSON and back (rank_summary_json.hpp): one description of its fields, walked by a writer and by a
// reader that checks every value as untrusted input. Reading files and checking a set: rank_summary_file.cpp.
#include "rank_json/rank_summary_json.hpp"

#include "report/report_render.hpp"

#include <fmt/format.h>

#include <cmath>
#include <concepts>
#include <limits>
#include <type_traits>
#include <unordered_set>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kUint32Max = std::numeric_limits<uint32_t>::max();
// A rank's times are ns from its session start, within the loader's limit (trace_model.hpp).
constexpr int64_t kTime = kMaxTraceTimeNs;

const std::array<const char*, kBubbleCauseCount>& cause_keys()
{
    static const auto keys = [] {
        std::array<const char*, kBubbleCauseCount> names {};
        for (size_t c = 0; c < kBubbleCauseCount; ++c)
            names[c] = bubble_cause_name(static_cast<BubbleCause>(c));
        return names;
    }();
    return keys;
}

// ---- The one description of the fields, for writing (Writer) and reading (Reader) ----

template <class T, class U>
concept Of = std::same_as<std::remove_const_t<T>, U>;

template <class Io, Of<BubbleTotals> T> void fields(Io& io, T& t)
{
    io.integer("step_ns", t.step_ns, 0, kInt64Max);
    io.integer("busy_ns", t.busy_ns, 0, kInt64Max);
    io.integer("idle_ns", t.idle_ns, 0, kInt64Max);
    io.number("bubble_ratio", t.bubble_ratio, 0.0, 1.0);
    io.integer("bubbles", t.bubble_count, 0, kInt64Max);
    io.counts("idle_by_cause_ns", t.cause_ns, cause_keys());
    io.counts("gap_counts", t.gap_counts, kGapCountKeys);
    io.integer("graph_removable_ns", t.graph_removable_ns, 0, kInt64Max);
}

template <class Io, Of<RankStep> T> void fields(Io& io, T& s)
{
    io.integer("index", s.index, kInt64Min, kInt64Max);
    io.integer("start_ns", s.start_ns, -kTime, kTime);
    io.integer("end_ns", s.end_ns, -kTime, kTime);
    io.integer("comm_ns", s.comm_ns, 0, kInt64Max);
    io.integer("exposed_comm_ns", s.exposed_comm_ns, 0, kInt64Max);
    io.counts("idle_by_cause_ns", s.cause_ns, cause_keys());
    io.number("bubble_ratio", s.bubble_ratio, 0.0, 1.0);
    io.integer("arrival_ns", s.arrival_ns, -kTime, kTime);
    io.integer("compute_before_ns", s.compute_before_ns, 0, kInt64Max);
    io.counts("idle_before_ns", s.idle_before_ns, cause_keys());
}

template <class Io, Of<RankCollective> T> void fields(Io& io, T& c)
{
    io.choice("kind", c.kind, kCollectiveKindCount, collective_kind_id);
    io.integer("step", c.step_index, kInt64Min, kInt64Max);
    io.integer("ordinal", c.ordinal, 0, kInt32Max);
    io.integer("device", c.device_id, 0, kUint32Max);
    io.integer("stream", c.stream_id, 0, kUint32Max);
    io.integer("start_ns", c.start_ns, -kTime, kTime);
    io.integer("end_ns", c.end_ns, -kTime, kTime);
    io.integer("compute_until_ns", c.compute_until_ns, -kTime, kTime);
}

template <class Io, Of<RankScaleSample> T> void fields(Io& io, T& s)
{
    io.text("site", s.site);
    io.integer("step", s.step, kInt64Min, kInt64Max);
    io.integer("sample", s.sample, 0, kInt32Max);
    io.flag("is_scale_inv", s.is_scale_inv);
    io.real("value", s.value);
}

template <class Io, Of<RecordingStatus> T> void fields(Io& io, T& r)
{
    io.flag("finished", r.finished);
    io.text("finish_reason", r.finish_reason);
    io.integer("dropped_records", r.dropped_records, 0, kInt64Max);
    io.integer("clipped_kernels", r.clipped_kernels.count, 0, kInt64Max);
    io.integer("clipped_ns", r.clipped_kernels.clipped_ns, 0, kInt64Max);
    io.integer("api_calls", r.api_calls, 0, kInt64Max);
}

template <class Io, Of<RankSummary> T> void fields(Io& io, T& s)
{
    io.text("path", s.path);
    // Any rank and world size: check_one_job() says what is wrong with them, as for traces.
    io.integer("rank", s.rank, kInt32Min, kInt32Max);
    io.integer("world_size", s.world_size, kInt32Min, kInt32Max);
    io.text("host", s.host);
    io.text("command_line", s.command_line);
    io.integer("session_start_utc_ns", s.session_start_utc_ns, kInt64Min, kInt64Max);
    io.choice("step_source", s.step_source, 5, step_source_name);
    io.object("totals", s.totals);
    io.rows("steps", s.steps);
    io.rows("collectives", s.collectives);
    io.rows("scales", s.scales);
    io.object("recording", s.recording);
}

struct Writer {
    ojson& out;

    template <class T> void integer(const char* key, const T& value, int64_t, int64_t) { out[key] = value; }
    void number(const char* key, double value, double, double) { out[key] = value; }
    // JSON has no NaN or infinity (nlohmann would write null): those are written as strings.
    void real(const char* key, double value)
    {
        if (std::isfinite(value))
            out[key] = value;
        else
            out[key] = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
    }
    void text(const char* key, const std::string& value) { out[key] = value; }
    void flag(const char* key, bool value) { out[key] = value; }
    template <class Enum, class Name> void choice(const char* key, Enum value, size_t, Name name)
    {
        out[key] = std::string(name(value));
    }
    template <size_t N>
    void counts(const char* key, const std::array<int64_t, N>& values, const std::array<const char*, N>& keys)
    {
        ojson& object = out[key] = ojson::object();
        for (size_t i = 0; i < N; ++i)
            object[keys[i]] = values[i];
    }
    template <class T> void object(const char* key, const T& value)
    {
        Writer inner { out[key] = ojson::object() };
        fields(inner, value);
    }
    template <class T> void rows(const char* key, const std::vector<T>& values)
    {
        ojson& array = out[key] = ojson::array();
        for (const T& value : values) {
            Writer row { array.emplace_back(ojson::object()) };
            fields(row, value);
        }
    }
};

struct Invalid {
    std::string message;
};

// Reads one JSON object; a field that is missing, of the wrong type or out of range throws Invalid naming its key
// path ("rank_summary.steps[2].end_ns"), built only then.
class Reader {
public:
    Reader(const json& in, std::string_view root)
        : in_(in)
        , key_(root)
    {
        expect_object();
    }

    template <class T> void integer(const char* key, T& value, int64_t min, int64_t max)
    {
        const json& x = field(key);
        int64_t read = 0;
        if (x.is_number_unsigned() && x.get<uint64_t>() > static_cast<uint64_t>(kInt64Max))
            fail(key, fmt::format("{} is out of range ({} to {})", x.get<uint64_t>(), min, max));
        if (x.is_number_integer())
            read = x.get<int64_t>();
        else
            fail(key, fmt::format("expected an integer, found {}", describe(x)));
        if (read < min || read > max)
            fail(key, fmt::format("{} is out of range ({} to {})", read, min, max));
        value = static_cast<T>(read);
    }
    void number(const char* key, double& value, double min, double max)
    {
        const json& x = field(key);
        if (!x.is_number())
            fail(key, fmt::format("expected a number, found {}", describe(x)));
        value = x.get<double>();
        if (!(value >= min && value <= max))
            fail(key, fmt::format("{} is out of range ({} to {})", x.dump(), min, max));
    }
    void real(const char* key, double& value)
    {
        const json& x = field(key);
        if (x.is_number())
            value = x.get<double>();
        else if (x == "inf" || x == "-inf")
            value = (x == "inf" ? 1 : -1) * std::numeric_limits<double>::infinity();
        else if (x == "nan")
            value = std::numeric_limits<double>::quiet_NaN();
        else
            fail(key, fmt::format("expected a number, \"inf\", \"-inf\" or \"nan\", found {}", describe(x)));
    }
    void text(const char* key, std::string& value)
    {
        const json& x = field(key);
        if (!x.is_string())
            fail(key, fmt::format("expected a string, found {}", describe(x)));
        value = x.get<std::string>();
    }
    void flag(const char* key, bool& value)
    {
        const json& x = field(key);
        if (!x.is_boolean())
            fail(key, fmt::format("expected true or false, found {}", describe(x)));
        value = x.get<bool>();
    }
    template <class Enum, class Name> void choice(const char* key, Enum& value, size_t count, Name name)
    {
        const json& x = field(key);
        for (size_t i = 0; i < count && x.is_string(); ++i)
            if (x.get_ref<const std::string&>() == name(static_cast<Enum>(i))) {
                value = static_cast<Enum>(i);
                return;
            }
        fail(key, fmt::format("{} is not a known value", describe(x)));
    }
    template <size_t N>
    void counts(const char* key, std::array<int64_t, N>& values, const std::array<const char*, N>& keys)
    {
        Reader inner(field(key), this, key);
        for (size_t i = 0; i < N; ++i)
            inner.integer(keys[i], values[i], 0, kInt64Max);
    }
    template <class T> void object(const char* key, T& value)
    {
        Reader inner(field(key), this, key);
        fields(inner, value);
    }
    template <class T> void rows(const char* key, std::vector<T>& values)
    {
        const json& array = field(key);
        if (!array.is_array())
            fail(key, fmt::format("expected an array, found {}", describe(array)));
        values.reserve(array.size());
        for (size_t i = 0; i < array.size(); ++i) {
            Reader row(array[i], this, key, i);
            fields(row, values.emplace_back());
        }
    }

    [[noreturn]] void fail(std::string_view key, std::string_view what) const
    {
        throw Invalid { fmt::format("{}{}{}: {}", where(), key.empty() ? "" : ".", key, what) };
    }

private:
    Reader(const json& in, const Reader* parent, std::string_view key, size_t index = SIZE_MAX)
        : in_(in)
        , parent_(parent)
        , key_(key)
        , index_(index)
    {
        expect_object();
    }

    void expect_object() const
    {
        if (!in_.is_object())
            fail({}, fmt::format("expected an object, found {}", describe(in_)));
    }

    const json& field(const char* key) const
    {
        const auto it = in_.find(key);
        if (it == in_.end())
            fail(key, "missing");
        return *it;
    }

    std::string where() const
    {
        std::string path = parent_ ? parent_->where() : std::string();
        if (!path.empty() && !key_.empty())
            path += '.';
        path += key_;
        if (index_ != SIZE_MAX)
            path += fmt::format("[{}]", index_);
        return path;
    }

    static std::string describe(const json& x)
    {
        if (x.is_string() || x.is_number())
            return x.dump().substr(0, 40);
        return fmt::format("{} {}", x.is_array() || x.is_object() ? "an" : "a", x.type_name());
    }

    const json& in_;
    const Reader* parent_ = nullptr;
    std::string_view key_;
    size_t index_ = SIZE_MAX;
};

// The relations between fields that the analyzer's summaries always hold.
void check_relations(const Reader& root, const RankSummary& s)
{
    const BubbleTotals& t = s.totals;
    if (t.idle_ns > t.step_ns || t.busy_ns != t.step_ns - t.idle_ns)
        root.fail("totals", "busy_ns + idle_ns is not step_ns");
    if (t.bubble_ratio != (t.step_ns > 0 ? double(t.idle_ns) / double(t.step_ns) : 0.0))
        root.fail("totals.bubble_ratio", "is not idle_ns / step_ns");
    std::unordered_set<int64_t> step_indices;
    for (size_t i = 0; i < s.steps.size(); ++i) {
        const RankStep& step = s.steps[i];
        const std::string key = fmt::format("steps[{}]", i);
        if (step.end_ns < step.start_ns)
            root.fail(key, fmt::format("end_ns {} is before start_ns {}", step.end_ns, step.start_ns));
        if (i > 0 && step.start_ns < s.steps[i - 1].end_ns)
            root.fail(key, "starts before the step before it ends (steps are in time order and do not overlap)");
        if (step.exposed_comm_ns > step.comm_ns)
            root.fail(key, "exposed_comm_ns is more than comm_ns");
        step_indices.insert(step.index);
    }
    for (size_t i = 0; i < s.collectives.size(); ++i) {
        const RankCollective& c = s.collectives[i];
        const std::string key = fmt::format("collectives[{}]", i);
        if (c.end_ns < c.start_ns)
            root.fail(key, fmt::format("end_ns {} is before start_ns {}", c.end_ns, c.start_ns));
        if (!step_indices.contains(c.step_index))
            root.fail(key, fmt::format("step {} is none of the rank's steps", c.step_index));
    }
}

} // namespace

ojson rank_summary_json(const RankSummary& summary)
{
    ojson out = { { "schema", kRankSummarySchema } };
    Writer writer { out };
    fields(writer, summary);
    return out;
}

Expected<RankSummary> rank_summary_from_json(const json& value, std::string_view where)
{
    try {
        Reader reader(value, where);
        std::string schema;
        reader.text("schema", schema);
        if (schema != kRankSummarySchema)
            reader.fail(
                "schema", fmt::format("'{}' is not {}, the rank summary this build reads", schema, kRankSummarySchema));
        RankSummary summary;
        fields(reader, summary);
        check_relations(reader, summary);
        return summary;
    } catch (const Invalid& bad) {
        return make_error(ErrorCode::InvalidTrace, bad.message);
    }
}

} // namespace fp8scope::cli
