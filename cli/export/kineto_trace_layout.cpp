#include "export/kineto_trace_layout.hpp"

#include "fp8scope/analyzer/steps/steps.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"
#include "fp8scope/format/schema.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace fp8scope::cli {

namespace {

// Kineto names memory kinds capitalised ("Pinned -> Device").
std::string capitalised(std::string_view word)
{
    std::string out(word);
    if (!out.empty())
        out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return out;
}

// The earliest time the export writes, or 0 when none is earlier than the session start.
int64_t earliest_time(const analyzer::TraceModel& model)
{
    int64_t earliest = 0;
    if (const auto span = model.time_span_ns())
        earliest = std::min(earliest, span->first);
    for (const auto& sample : model.tensor_stats)
        earliest = std::min(earliest, sample.timestamp_ns);
    for (const auto& scalar : model.scalars)
        earliest = std::min(earliest, scalar.timestamp_ns);
    for (int64_t start : model.collector_work.start_ns)
        earliest = std::min(earliest, start);
    return earliest;
}

} // namespace

ExportLayout::ExportLayout(
    const analyzer::TraceModel& model, const analyzer::Report& report, const PerfettoExportOptions& options)
    : model_(model)
    , report_(report)
    , window_(options.window_ns)
    , device_(options.device)
    , base_ns_(earliest_time(model))
{
    for (const auto& thread : model.thread_names)
        thread_names_.emplace(thread.global_tid, std::string(model.strings[thread.name]));
    // Kineto's GPU pid is the device id. A host process with a pid that small (pid 1 in a container) would share its
    // process, so then every GPU moves up by 2^32.
    uint32_t max_device = 0;
    for (const auto& gpu : model.gpus)
        max_device = std::max(max_device, static_cast<uint32_t>(std::max(gpu.id, 0)));
    for (uint32_t device : report.bubbles.devices)
        max_device = std::max(max_device, device);
    bool clash = model.meta.pid >= 0 && model.meta.pid <= int64_t { max_device };
    int64_t last = -1;
    for (size_t r = 0; r < model.api_calls.size() && !clash; ++r) {
        const int64_t global_tid = model.api_calls.global_tid[r];
        if (global_tid != last)
            clash = host_pid(global_tid) <= int64_t { max_device };
        last = global_tid;
    }
    gpu_pid_offset_ = clash ? int64_t { 1 } << 32 : 0;
    const int64_t main_tid = report.bubbles.launching_thread_tid;
    main_host_pid_ = main_tid != 0   ? host_pid(main_tid)
        : model.api_calls.size() > 0 ? host_pid(model.api_calls.global_tid[0])
                                     : std::max<int64_t>(model.meta.pid, 0);
}

int64_t ExportLayout::host_pid(int64_t global_tid) const
{
    const int64_t pid = schema::pid_of(global_tid);
    return pid != 0 ? pid : std::max<int64_t>(model_.meta.pid, 0);
}

void ExportLayout::name_host_process(ChromeTraceTracks& tracks, int64_t pid) const
{
    // The program's name from the command line, as a process list shows it; the host as its label.
    std::string name = "host process";
    const std::string& command = model_.meta.command_line;
    if (pid == model_.meta.pid || model_.meta.pid < 0) {
        const std::string program = command.substr(0, command.find(' '));
        if (!program.empty())
            name = program.substr(program.rfind('/') + 1);
    }
    tracks.name_process(pid, name, 0, model_.meta.host);
}

HostTrack ExportLayout::host_track(ChromeTraceTracks& tracks, int64_t global_tid)
{
    if (have_last_host_ && global_tid == last_global_tid_)
        return last_host_;
    const HostTrack host { host_pid(global_tid), schema::tid_of(global_tid) };
    if (named_threads_.insert(global_tid).second) {
        name_host_process(tracks, host.pid);
        const auto name = thread_names_.find(global_tid);
        // Kineto's "thread <tid> (<name>)".
        tracks.name_track(host.pid, host.tid,
            name == thread_names_.end() ? fmt::format("thread {}", host.tid)
                                        : fmt::format("thread {} ({})", host.tid, name->second),
            host.tid + 1);
    }
    have_last_host_ = true;
    last_global_tid_ = global_tid;
    last_host_ = host;
    return host;
}

int64_t ExportLayout::gpu_process(ChromeTraceTracks& tracks, uint32_t device) const
{
    const int64_t pid = gpu_pid_offset_ + device;
    const auto gpu = std::ranges::find(model_.gpus, static_cast<int32_t>(device), &analyzer::GpuInfo::id);
    tracks.name_process(pid, fmt::format("GPU {}", device), 1 + int64_t { device },
        gpu == model_.gpus.end() ? std::string() : gpu->name);
    return pid;
}

int64_t ExportLayout::stream_track(ChromeTraceTracks& tracks, uint32_t device, uint32_t stream)
{
    if (named_streams_.emplace(device, stream).second)
        tracks.name_track(gpu_pid_offset_ + device, stream, fmt::format("stream {}", stream), int64_t { stream } + 1);
    return stream;
}

void ExportLayout::write_header(fmt::memory_buffer& out, std::string_view producer) const
{
    using Json = nlohmann::ordered_json;
    // Kineto's header (output_json.cpp, handleTraceStart): schemaVersion, deviceProperties, distributedInfo,
    // displayTimeUnit, baseTimeNanoseconds, then traceEvents.
    Json devices = Json::array();
    for (const auto& gpu : model_.gpus)
        devices.push_back({ { "id", gpu.id }, { "name", gpu.name }, { "totalGlobalMem", gpu.total_memory_bytes },
            { "computeMajor", gpu.compute_major }, { "computeMinor", gpu.compute_minor }, { "numSms", gpu.sm_count } });
    Json about = {
        { "export_schema", "fp8scope.export/1" },
        { "producer", producer },
        { "trace", model_.path },
        { "recorded_by", model_.meta.producer },
        { "host", model_.meta.host },
        { "command_line", model_.meta.command_line },
        { "time_unit",
            "ts and dur are microseconds after baseTimeNanoseconds (UTC ns), with the nanoseconds as three "
            "decimals; counter values and args carry their unit in their name" },
        { "step_source", analyzer::step_source_name(report_.steps.source) },
        { "steps", report_.steps.steps.size() },
        { "warmup_excluded", report_.steps.warmup_excluded },
        { "window_ns", window_ ? Json::array({ window_->first, window_->second }) : Json(nullptr) },
        { "device", device_ ? Json(*device_) : Json(nullptr) },
    };
    const auto dump = [](const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); };
    fmt::format_to(fmt::appender(out), "{{\"schemaVersion\": 1,\n\"deviceProperties\": {},\n", dump(devices));
    // HTA finds the rank with the regex "rank":\s+(\d+) (hta/common/trace_file.py): the space is needed.
    if (model_.meta.rank >= 0)
        fmt::format_to(fmt::appender(out), "\"distributedInfo\": {{\"rank\": {}, \"world_size\": {}}},\n",
            model_.meta.rank, std::max(model_.meta.world_size, 1));
    fmt::format_to(fmt::appender(out),
        "\"fp8scope\": {},\n\"displayTimeUnit\": \"ns\",\n\"baseTimeNanoseconds\": {},\n\"traceEvents\": [",
        dump(about), model_.meta.session_start_utc_ns + base_ns_);
}

std::string gpu_work_name(const analyzer::MemcpyTable& copies, size_t row)
{
    return fmt::format("Memcpy {} ({} -> {})", analyzer::copy_kind_name(copies.copy_kind[row]),
        capitalised(analyzer::memory_kind_name(copies.src_kind[row])),
        capitalised(analyzer::memory_kind_name(copies.dst_kind[row])));
}

std::string gpu_work_name(const analyzer::MemsetTable& sets, size_t row)
{
    return fmt::format("Memset ({})", capitalised(analyzer::memory_kind_name(sets.mem_kind[row])));
}

} // namespace fp8scope::cli
