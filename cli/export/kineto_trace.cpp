#include "export/kineto_trace.hpp"

#include "export/kineto_trace_layout.hpp"
#include "export/start_order.hpp"
#include "export/trace_event_tracks.hpp"

#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/views/launch_calls.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"
#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace fp8scope::cli {

namespace {

using analyzer::Report;
using analyzer::TraceModel;

constexpr size_t kProgressEveryRows = size_t { 1 } << 16;

// Which correlation ids already have a flow. A flow's id is its correlation id, as Kineto writes it; the further
// GPU work of one call (a CUDA graph launch's kernels) gets ids above 2^32, so that every flow's 's' and 'f' pair
// up. A bitmap when the ids are dense enough (as CUPTI's are), a set otherwise.
class SeenIds {
public:
    explicit SeenIds(const TraceModel& model)
    {
        uint32_t max_id = 0;
        for (const auto* ids :
            { &model.kernels.correlation_id, &model.memcpys.correlation_id, &model.memsets.correlation_id })
            for (uint32_t id : *ids)
                max_id = std::max(max_id, id);
        const size_t rows = model.kernels.size() + model.memcpys.size() + model.memsets.size();
        if (max_id <= 8 * rows + 1024)
            bits_.assign(size_t(max_id) + 1, false);
    }
    bool insert(uint32_t id)
    {
        if (bits_.empty())
            return set_.insert(id).second;
        if (bits_[id])
            return false;
        bits_[id] = true;
        return true;
    }

private:
    std::vector<bool> bits_;
    std::unordered_set<uint32_t> set_;
};

class Exporter {
public:
    Exporter(const TraceModel& model, const Report& report, const PerfettoExportOptions& options, ChromeTraceFile& file,
        const analyzer::ProgressHook& progress)
        : model_(model)
        , report_(report)
        , options_(options)
        , file_(file)
        , progress_(progress)
        , layout_(model, report, options)
        , events_(file, layout_.base_ns())
        , tracks_(events_)
        , launch_calls_(model.api_calls)
        , kernel_classes_(model)
        , flow_ids_(model)
        , total_rows_(model.api_calls.size() + model.nvtx.size() + model.kernels.size() + model.memcpys.size()
              + model.memsets.size())
    {
        for (const analyzer::HostBlockingCall& call : report.blocking_calls)
            blocking_.emplace_back(call.api_index, call.kind);
        std::ranges::sort(blocking_);
    }

    std::optional<PerfettoExportCounts> run()
    {
        layout_.write_header(file_.buffer(), options_.producer);
        mark_calls_launching_into_window();
        if (!write_host_calls() || !write_gpu_work())
            return std::nullopt;
        write_analysis_tracks(layout_, tracks_, events_, model_, report_);
        write_counters(layout_, tracks_, events_, model_, counts_);
        file_.buffer().append(std::string_view("\n]}\n"));
        counts_.events = events_.events();
        counts_.overflow_lanes = tracks_.overflow_lanes();
        if (progress_)
            progress_(1.0);
        return counts_;
    }

private:
    bool tick(size_t rows_done)
    {
        if (!progress_ || rows_done < reported_rows_ + kProgressEveryRows)
            return true;
        reported_rows_ = rows_done;
        return progress_(static_cast<double>(rows_done) / static_cast<double>(std::max<size_t>(total_rows_, 1)));
    }

    // With --steps, a launch call made before the window whose GPU work runs inside it (an async copy queued a step
    // ahead) is written too: HTA keeps GPU work only when its launch call is in the file (trace.py,
    // _filter_irrelevant_gpu_kernels), so without the call the report's busy time in the first step would be missing
    // from HTA's, and the work's flow would have no start.
    void mark_calls_launching_into_window()
    {
        if (!layout_.windowed())
            return;
        const auto& api = model_.api_calls;
        auto mark = [&](const auto& t) {
            for (size_t r = 0; r < t.size(); ++r) {
                if (!layout_.device_wanted(t.device_id[r]) || !layout_.in_window(t.start_ns[r], t.end_ns[r]))
                    continue;
                const std::optional<size_t> call = launch_calls_.find(t.correlation_id[r]);
                if (call && !layout_.in_window(api.start_ns[*call], api.end_ns[*call]))
                    early_calls_.insert(*call);
            }
        };
        mark(model_.kernels);
        mark(model_.memcpys);
        mark(model_.memsets);
    }

    bool call_written(size_t r) const
    {
        return layout_.in_window(model_.api_calls.start_ns[r], model_.api_calls.end_ns[r]) || early_calls_.contains(r);
    }

    // Host threads: CUDA API calls and NVTX ranges, on one track per thread as Kineto puts CPU ops and user
    // annotations. Calls put on an overflow lane are remembered, for their flows.
    bool write_host_calls()
    {
        const auto& api = model_.api_calls;
        const auto& nvtx = model_.nvtx;
        StartOrder<2> order({ { { api.start_ns, api.end_ns }, { nvtx.start_ns, nvtx.end_ns } } });
        std::vector<TableRow> group;
        while (order.next(group)) {
            for (const TableRow& item : group) {
                if (item.table == 0)
                    write_api_call(item.row);
                else
                    write_nvtx(item.row);
            }
            if (!tick(order.visited()))
                return false;
        }
        done_rows_ = order.visited();
        return true;
    }

    void write_api_call(uint32_t r)
    {
        const auto& api = model_.api_calls;
        if (!call_written(r))
            return;
        const HostTrack host = layout_.host_track(tracks_, api.global_tid[r]);
        const int64_t tid = tracks_.place(host.pid, host.tid, api.start_ns[r], api.end_ns[r]);
        if (tid != host.tid)
            call_lanes_.emplace(r, tid);
        events_.begin_complete(api.is_driver[r] != 0 ? "cuda_driver" : "cuda_runtime",
            analyzer::api_base_name(model_.strings[api.name[r]]), host.pid, tid, api.start_ns[r], api.end_ns[r]);
        events_.arg("correlation", int64_t { api.correlation_id[r] });
        const auto blocking
            = std::ranges::lower_bound(blocking_, r, {}, &std::pair<size_t, analyzer::HostBlockingKind>::first);
        if (blocking != blocking_.end() && blocking->first == r)
            events_.arg("host_blocking", analyzer::host_blocking_kind_name(blocking->second));
        events_.end();
    }

    void write_nvtx(uint32_t r)
    {
        const auto& nvtx = model_.nvtx;
        const auto type = static_cast<schema::NvtxEventType>(nvtx.event_type[r]);
        const bool range = type != schema::NvtxEventType::Mark && nvtx.end_ns[r] != analyzer::NvtxTable::kNoEnd;
        const int64_t start = nvtx.start_ns[r];
        const int64_t end = range ? nvtx.end_ns[r] : start;
        if (!layout_.in_window(start, end))
            return;
        const HostTrack host = layout_.host_track(tracks_, nvtx.global_tid[r]);
        const std::string_view text = model_.strings[nvtx.text[r]];
        if (!range) {
            tracks_.use(host.pid, host.tid);
            events_.begin_instant("user_annotation", text, host.pid, host.tid, start);
            events_.arg("nvtx", type == schema::NvtxEventType::Mark ? "mark" : "range never closed");
            events_.end();
            return;
        }
        const int64_t tid = tracks_.place(host.pid, host.tid, start, end);
        events_.begin_complete("user_annotation", text, host.pid, tid, start, end);
        events_.arg("nvtx", type == schema::NvtxEventType::PushPopRange ? "push/pop range" : "start/end range");
        events_.end();
    }

    // GPU streams: kernels, copies and memsets, with the flow from each one's launch call.
    bool write_gpu_work()
    {
        const auto& k = model_.kernels;
        const auto& c = model_.memcpys;
        const auto& s = model_.memsets;
        StartOrder<3> order({ { { k.start_ns, k.end_ns }, { c.start_ns, c.end_ns }, { s.start_ns, s.end_ns } } });
        std::vector<TableRow> group;
        while (order.next(group)) {
            for (const TableRow& item : group) {
                if (item.table == 0)
                    write_gpu_item(k, item.row, "kernel");
                else if (item.table == 1)
                    write_gpu_item(c, item.row, "gpu_memcpy");
                else
                    write_gpu_item(s, item.row, "gpu_memset");
            }
            if (!tick(done_rows_ + order.visited()))
                return false;
        }
        return true;
    }

    template <class Table> void write_gpu_item(const Table& t, uint32_t r, std::string_view cat)
    {
        const uint32_t device = t.device_id[r];
        const int64_t start = t.start_ns[r];
        const int64_t end = t.end_ns[r];
        if (!layout_.device_wanted(device) || !layout_.in_window(start, end))
            return;
        const int64_t pid = layout_.gpu_process(tracks_, device);
        const int64_t stream_tid = layout_.stream_track(tracks_, device, t.stream_id[r]);
        const int64_t tid = tracks_.place(pid, stream_tid, start, end);
        if constexpr (std::is_same_v<Table, analyzer::KernelTable>) {
            const std::string_view name = model_.strings[t.name[r]];
            events_.begin_complete(cat, name.empty() ? model_.strings[t.short_name[r]] : name, pid, tid, start, end);
        } else {
            events_.begin_complete(cat, gpu_work_name(t, r), pid, tid, start, end);
        }
        events_.arg("device", int64_t { device });
        events_.arg("stream", int64_t { t.stream_id[r] });
        events_.arg("correlation", int64_t { t.correlation_id[r] });
        if constexpr (std::is_same_v<Table, analyzer::KernelTable>) {
            events_.arg("class", analyzer::kernel_class_label(kernel_classes_.of(r).cls));
            if (t.graph_id[r] != 0)
                events_.arg("graph id", int64_t { t.graph_id[r] });
        } else {
            events_.arg("bytes", static_cast<int64_t>(t.bytes[r]));
            if (end > start) // bytes per ns is GB/s
                events_.arg_number("memory bandwidth (GB/s)", static_cast<double>(t.bytes[r]) / double(end - start));
        }
        events_.end();
        write_flow(t.correlation_id[r], pid, tid, start);
    }

    void write_flow(uint32_t correlation_id, int64_t pid, int64_t tid, int64_t start_ns)
    {
        const std::optional<size_t> call = launch_calls_.find(correlation_id);
        if (!call)
            return;
        const auto& api = model_.api_calls;
        const size_t r = *call;
        if (!call_written(r))
            return;
        const HostTrack host = layout_.host_track(tracks_, api.global_tid[r]);
        const auto lane = call_lanes_.find(static_cast<uint32_t>(r));
        const int64_t call_tid = lane == call_lanes_.end() ? host.tid : lane->second;
        const uint64_t id
            = flow_ids_.insert(correlation_id) ? correlation_id : (uint64_t { 1 } << 32) + extra_flow_ids_++;
        events_.flow('s', id, host.pid, call_tid, api.start_ns[r]);
        events_.flow('f', id, pid, tid, start_ns);
        ++counts_.flows;
    }

    const TraceModel& model_;
    const Report& report_;
    const PerfettoExportOptions& options_;
    ChromeTraceFile& file_;
    const analyzer::ProgressHook& progress_;
    ExportLayout layout_;
    ChromeTraceEvents events_;
    ChromeTraceTracks tracks_;
    analyzer::LaunchCalls launch_calls_;
    analyzer::KernelClassCache kernel_classes_;
    SeenIds flow_ids_;
    std::vector<std::pair<size_t, analyzer::HostBlockingKind>> blocking_; // by API row
    std::unordered_map<uint32_t, int64_t> call_lanes_; // API row -> overflow lane tid
    std::unordered_set<size_t> early_calls_; // API rows before the window that launched work inside it
    uint64_t extra_flow_ids_ = 0;
    size_t total_rows_ = 0, done_rows_ = 0, reported_rows_ = 0;
    PerfettoExportCounts counts_;
};

} // namespace

std::optional<PerfettoExportCounts> write_perfetto_trace(const TraceModel& model, const Report& report,
    const PerfettoExportOptions& options, ChromeTraceFile& file, const analyzer::ProgressHook& progress)
{
    return Exporter(model, report, options, file, progress).run();
}

} // namespace fp8scope::cli
