// What the timeline shows about an item: category names, the text in its box, its tooltip and details (timeline.hpp).
#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"
#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::analyzer {

// CUpti_ActivityMemcpyKind's short names, as Nsight Systems shows them.
std::string_view copy_kind_name(int32_t kind)
{
    constexpr std::string_view kNames[]
        = { "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
    return kind >= 0 && static_cast<size_t>(kind) < std::size(kNames) ? kNames[kind] : "unknown";
}

// nsys' memory kind (schema::MemoryKind).
std::string_view memory_kind_name(int32_t kind)
{
    constexpr std::string_view kNames[]
        = { "pageable", "pinned", "device", "array", "managed", "device static", "managed static", "unknown" };
    return kind >= 0 && static_cast<size_t>(kind) < std::size(kNames) ? kNames[kind] : "unknown";
}

namespace {

using Unit = DetailField::Unit;

std::string_view kernel_name(const TraceModel& model, size_t row)
{
    const std::string_view name = model.strings[model.kernels.name[row]];
    return name.empty() ? model.strings[model.kernels.short_name[row]] : name;
}

// The analysed step whose [start, end) holds t, as its StepInterval::index.
std::optional<int64_t> step_at(const Report& report, int64_t t_ns)
{
    const auto& steps = report.steps.steps;
    const auto after = std::ranges::upper_bound(steps, t_ns, {}, &StepInterval::start_ns);
    if (after == steps.begin() || t_ns >= std::prev(after)->end_ns)
        return std::nullopt;
    return std::prev(after)->index;
}

class Fields {
public:
    explicit Fields(std::vector<DetailField>& out)
        : out_(out)
    {
    }
    void text(std::string label, std::string value)
    {
        out_.push_back({ std::move(label), Unit::Text, std::move(value), 0 });
    }
    void number(std::string label, Unit unit, int64_t value) { out_.push_back({ std::move(label), unit, {}, value }); }
    void interval(int64_t start_ns, int64_t end_ns)
    {
        number("start", Unit::Time, start_ns);
        number("duration", Unit::Duration, end_ns - start_ns);
    }
    void step(const Report& report, int64_t t_ns)
    {
        if (const auto s = step_at(report, t_ns))
            number("step", Unit::Count, *s);
    }
    void thread(int64_t global_tid) { number("thread", Unit::Count, schema::tid_of(global_tid)); }
    void on_stream(uint32_t device, uint32_t stream)
    {
        number("device", Unit::Count, device);
        number("stream", Unit::Count, stream);
    }
    // The launch call of GPU work starting at start_ns: its name, thread and the launch delay.
    void launch(const TimelineIndex& index, const TraceModel& model, ItemRef item, int64_t start_ns)
    {
        const auto call = launching_call(index, model, item);
        if (!call) {
            text("launched by", "unknown (no API call with its correlation id)");
            return;
        }
        text("launched by", std::string(api_base_name(model.strings[model.api_calls.name[*call]])));
        thread(model.api_calls.global_tid[*call]);
        number("launch delay", Unit::Duration, start_ns - model.api_calls.end_ns[*call]);
    }

private:
    std::vector<DetailField>& out_;
};

void describe_gpu(
    ItemDetails& d, const TimelineIndex& index, const TraceModel& model, const Report& report, ItemRef item)
{
    Fields f(d.fields);
    const size_t r = item.row;
    int64_t start_ns = 0;
    uint32_t correlation_id = 0;
    const auto common = [&](const auto& t) {
        start_ns = t.start_ns[r];
        correlation_id = t.correlation_id[r];
        f.interval(t.start_ns[r], t.end_ns[r]);
        f.on_stream(t.device_id[r], t.stream_id[r]);
    };
    if (item.kind == ItemKind::Kernel) {
        common(model.kernels);
        f.text("class", std::string(kernel_class_label(classify_kernel_name(kernel_name(model, r)).cls)));
    } else if (item.kind == ItemKind::Memcpy) {
        common(model.memcpys);
        f.number("size", Unit::Bytes, static_cast<int64_t>(model.memcpys.bytes[r]));
        f.text("from", std::string(memory_kind_name(model.memcpys.src_kind[r])));
        f.text("to", std::string(memory_kind_name(model.memcpys.dst_kind[r])));
    } else {
        common(model.memsets);
        f.number("size", Unit::Bytes, static_cast<int64_t>(model.memsets.bytes[r]));
        f.text("memory", std::string(memory_kind_name(model.memsets.mem_kind[r])));
    }
    f.launch(index, model, item, start_ns);
    f.number("correlation id", Unit::Count, correlation_id);
    if (item.kind == ItemKind::Kernel && model.kernels.graph_id[r] != 0)
        f.number("graph id", Unit::Count, model.kernels.graph_id[r]);
    f.step(report, start_ns);
}

void describe_api(ItemDetails& d, const TimelineIndex& index, const TraceModel& model, const Report& report, size_t r)
{
    Fields f(d.fields);
    const ApiTable& t = model.api_calls;
    f.interval(t.start_ns[r], t.end_ns[r]);
    f.thread(t.global_tid[r]);
    f.text("API", t.is_driver[r] != 0 ? "driver" : "runtime");
    f.number("correlation id", Unit::Count, t.correlation_id[r]);
    if (t.return_value[r] != 0)
        f.number("return value", Unit::Count, t.return_value[r]);
    const std::vector<ItemRef> work = launched_work(index, model, r);
    if (!work.empty())
        f.number("GPU work launched", Unit::Count, static_cast<int64_t>(work.size()));
    f.step(report, t.start_ns[r]);
}

void describe_nvtx(ItemDetails& d, const TimelineIndex& index, const TraceModel& model, size_t r)
{
    Fields f(d.fields);
    const NvtxTable& t = model.nvtx;
    const int32_t type = t.event_type[r];
    if (type == static_cast<int32_t>(schema::NvtxEventType::Mark)) {
        f.number("time", Unit::Time, t.start_ns[r]);
        f.text("type", "mark");
    } else {
        const bool open = t.end_ns[r] == NvtxTable::kNoEnd;
        f.interval(t.start_ns[r], open ? std::max(t.start_ns[r], index.end_ns) : t.end_ns[r]);
        f.text("type",
            type == static_cast<int32_t>(schema::NvtxEventType::StartEndRange) ? "start/end range" : "push/pop range");
        if (open)
            f.text("end", "never closed (drawn to the end of the trace)");
    }
    f.thread(t.global_tid[r]);
}

void describe_step(ItemDetails& d, const Report& report, size_t r)
{
    Fields f(d.fields);
    const StepInterval& step = report.steps.steps[r];
    f.interval(step.start_ns, step.end_ns);
    f.text("source", step_source_name(report.steps.source));
    if (r < report.kernel_classes.steps.size())
        f.number("kernels", Unit::Count, report.kernel_classes.steps[r].total.count);
    for (const DeviceStepBubbles& s : report.bubbles.per_device_step)
        if (s.step_index == step.index) {
            f.text(
                fmt::format("GPU {} bubble ratio", s.device_id), fmt::format("{:.1f}%", 100 * s.totals.bubble_ratio));
            f.number(fmt::format("GPU {} idle", s.device_id), Unit::Duration, s.totals.idle_ns);
        }
}

void describe_bubble(ItemDetails& d, const TraceModel& model, const Report& report, size_t r)
{
    Fields f(d.fields);
    const Bubble& b = report.bubbles.bubbles[r];
    f.interval(b.start_ns, b.end_ns);
    f.text("cause", bubble_cause_name(b.cause));
    f.number("device", Unit::Count, b.device_id);
    f.number("step", Unit::Count, b.step_index);
    if (b.sync_call && *b.sync_call < report.blocking_calls.size()) {
        const HostBlockingCall& call = report.blocking_calls[*b.sync_call];
        f.text("sync call", std::string(api_base_name(model.strings[model.api_calls.name[call.api_index]])));
        f.thread(call.global_tid);
    }
    if (b.next_api_index && *b.next_api_index < model.api_calls.size())
        f.text("ended by work of", std::string(api_base_name(model.strings[model.api_calls.name[*b.next_api_index]])));
}

void describe_sync(ItemDetails& d, const TimelineIndex& index, const Report& report, size_t r)
{
    Fields f(d.fields);
    const HostBlockingCall& call = report.blocking_calls[r];
    f.interval(call.start_ns, call.end_ns);
    f.text("kind", host_blocking_kind_name(call.kind));
    f.thread(call.global_tid);
    if (call.device_id)
        f.number("device", Unit::Count, *call.device_id);
    if (call.stream_id)
        f.number("stream", Unit::Count, *call.stream_id);
    // The sync report lists the calls in the order of Report::blocking_calls.
    if (r < report.syncs.calls.size()) {
        const SyncCallReport& s = report.syncs.calls[r];
        f.number("GPU idle caused", Unit::Duration, s.idle_caused_ns);
        if (!s.nvtx_path.empty())
            f.text("NVTX path", s.nvtx_path);
    }
    f.number("bubbles caused", Unit::Count, static_cast<int64_t>(sync_bubbles(index, r).size()));
    f.step(report, call.start_ns);
}

bool in_range(const TraceModel& model, const Report& report, ItemRef item)
{
    switch (item.kind) {
    case ItemKind::Kernel:
        return item.row < model.kernels.size();
    case ItemKind::Memcpy:
        return item.row < model.memcpys.size();
    case ItemKind::Memset:
        return item.row < model.memsets.size();
    case ItemKind::ApiCall:
        return item.row < model.api_calls.size();
    case ItemKind::Nvtx:
        return item.row < model.nvtx.size();
    case ItemKind::Step:
        return item.row < report.steps.steps.size();
    case ItemKind::Bubble:
        return item.row < report.bubbles.bubbles.size();
    case ItemKind::Sync:
        return item.row < report.blocking_calls.size()
            && report.blocking_calls[item.row].api_index < model.api_calls.size();
    }
    return false;
}

} // namespace

std::string_view timeline_category_name(TrackKind kind, uint8_t category)
{
    switch (kind) {
    case TrackKind::GpuStream:
        if (category == kCategoryMemcpy)
            return "memcpy";
        if (category == kCategoryMemset)
            return "memset";
        return category < kKernelClassCount ? kernel_class_label(static_cast<KernelClass>(category)) : "unknown";
    case TrackKind::HostThread: {
        constexpr std::string_view kApi[] = { "launch", "host-blocking", "other" };
        return category < std::size(kApi) ? kApi[category] : "unknown";
    }
    case TrackKind::Syncs:
        return category <= static_cast<uint8_t>(HostBlockingKind::Other)
            ? host_blocking_kind_name(static_cast<HostBlockingKind>(category))
            : "unknown";
    case TrackKind::Bubbles:
        return category < kBubbleCauseCount ? bubble_cause_name(static_cast<BubbleCause>(category)) : "unknown";
    case TrackKind::Nvtx: {
        constexpr std::string_view kNvtx[] = { "push/pop range", "start/end range", "mark" };
        return category < std::size(kNvtx) ? kNvtx[category] : "unknown";
    }
    case TrackKind::Steps:
        return "step";
    }
    return "unknown";
}

std::string item_name(const TraceModel& model, const Report& report, ItemRef item)
{
    if (!in_range(model, report, item))
        return {};
    const size_t r = item.row;
    switch (item.kind) {
    case ItemKind::Kernel:
        return std::string(kernel_name(model, r));
    case ItemKind::Memcpy:
        return fmt::format("memcpy {}", copy_kind_name(model.memcpys.copy_kind[r]));
    case ItemKind::Memset:
        return "memset";
    case ItemKind::ApiCall:
        return std::string(model.strings[model.api_calls.name[r]]);
    case ItemKind::Nvtx:
        return std::string(model.strings[model.nvtx.text[r]]);
    case ItemKind::Step:
        return fmt::format("step {}", report.steps.steps[r].index);
    case ItemKind::Bubble:
        return bubble_cause_name(report.bubbles.bubbles[r].cause);
    case ItemKind::Sync:
        return std::string(api_base_name(model.strings[model.api_calls.name[report.blocking_calls[r].api_index]]));
    }
    return {};
}

ItemDetails describe_item(const TimelineIndex& index, const TraceModel& model, const Report& report, ItemRef item)
{
    ItemDetails d;
    if (!in_range(model, report, item))
        return d;
    d.title = item_name(model, report, item);
    switch (item.kind) {
    case ItemKind::Kernel:
    case ItemKind::Memcpy:
    case ItemKind::Memset:
        describe_gpu(d, index, model, report, item);
        break;
    case ItemKind::ApiCall:
        describe_api(d, index, model, report, item.row);
        break;
    case ItemKind::Nvtx:
        describe_nvtx(d, index, model, item.row);
        break;
    case ItemKind::Step:
        describe_step(d, report, item.row);
        break;
    case ItemKind::Bubble:
        describe_bubble(d, model, report, item.row);
        break;
    case ItemKind::Sync:
        describe_sync(d, index, report, item.row);
        break;
    }
    return d;
}

} // namespace fp8scope::analyzer
