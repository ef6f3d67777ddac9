// TraceDb::add_*: one prepared INSERT per row, columns bound in schema.hpp order. Kernels go to the compact
// FP8SCOPE_KERNEL table plus one FP8SCOPE_KERNEL_CONFIG row per distinct launch configuration. The tensor statistics
// tables are written by trace_db_tensor_rows.cpp.
#include "trace_db_impl.hpp"

#include <cmath>
#include <limits>

namespace fp8scope {

using writer_detail::Binder;
using writer_detail::Insert;

namespace writer_detail {

size_t KernelConfigHash::operator()(const KernelConfig& c) const noexcept
{
    // FNV-1a style mixing over the fields (not over the struct's bytes: padding is unspecified).
    uint64_t h = 1469598103934665603ull;
    const auto mix = [&h](int64_t value) {
        h ^= static_cast<uint64_t>(value);
        h *= 1099511628211ull;
        h ^= h >> 29;
    };
    mix(c.mangled_name.value);
    for (int i = 0; i < 3; ++i) {
        mix(c.grid[i]);
        mix(c.block[i]);
        mix(c.cluster[i]);
    }
    mix(c.registers_per_thread);
    mix(c.static_shared_bytes);
    mix(c.dynamic_shared_bytes);
    mix(c.local_per_thread_bytes);
    mix(c.local_total_bytes);
    mix(c.shared_executed_bytes);
    mix(static_cast<int64_t>(c.launch_type));
    return static_cast<size_t>(h);
}

} // namespace writer_detail

Expected<void> TraceDb::Impl::insert_config(int64_t id, const writer_detail::StoredConfig& stored)
{
    const KernelConfig& c = stored.config;
    Binder(statement(Insert::KernelConfig))
        .integer(id)
        .integer(c.mangled_name.value)
        .integer(stored.demangled_name)
        .integer(stored.short_name)
        .integer(c.grid[0])
        .integer(c.grid[1])
        .integer(c.grid[2])
        .integer(c.block[0])
        .integer(c.block[1])
        .integer(c.block[2])
        .integer(c.cluster[0])
        .integer(c.cluster[1])
        .integer(c.cluster[2])
        .integer(c.registers_per_thread)
        .integer(c.static_shared_bytes)
        .integer(c.dynamic_shared_bytes)
        .integer(c.local_per_thread_bytes)
        .integer(c.local_total_bytes)
        .integer(c.shared_executed_bytes)
        .integer(static_cast<int64_t>(c.launch_type));
    return insert(Insert::KernelConfig, "cannot insert into FP8SCOPE_KERNEL_CONFIG");
}

Expected<int64_t> TraceDb::Impl::config_id(const KernelConfig& config)
{
    if (const auto it = configs.find(config); it != configs.end())
        return it->second;
    // First launch of this config. Names are derived once per mangled name, not once per config.
    writer_detail::DerivedNames names;
    if (const auto it = derived_names.find(config.mangled_name.value); it != derived_names.end()) {
        names = it->second;
    } else {
        const auto index = static_cast<size_t>(config.mangled_name.value - 1);
        // An id this TraceDb did not hand out has no text; its derived names are the id itself.
        if (config.mangled_name.value >= 1 && index < strings_by_id.size()) {
            // A reference into the map's node, which stays put when interning below adds strings or rehashes.
            const std::string& mangled = *strings_by_id[index];
            const std::string demangled = demangle_kernel_name(mangled);
            const std::string short_name = kernel_short_name(demangled);
            names.demangled = intern(demangled);
            names.short_name = intern(short_name);
        } else {
            names.demangled = names.short_name = config.mangled_name.value;
        }
        derived_names.emplace(config.mangled_name.value, names);
    }
    const auto id = static_cast<int64_t>(configs_by_id.size()) + 1;
    configs_by_id.push_back({ config, names.demangled, names.short_name });
    if (auto ok = insert_config(id, configs_by_id.back()); !ok) {
        // Not remembered, so the next launch of this config tries again instead of pointing at a missing row.
        configs_by_id.pop_back();
        return std::unexpected(std::move(ok.error()));
    }
    configs.emplace(config, id);
    return id;
}

Expected<void> TraceDb::add_kernel(const KernelRow& row)
{
    Impl& impl = *impl_;
    if (impl.closed)
        return impl.finished_error();
    const auto config = impl.config_id(row.config);
    if (!config)
        return std::unexpected(config.error());
    const int64_t kernel_id = impl.next_kernel_id++;
    int64_t* values = impl.kernel_batch.next_row(); // in schema column order
    values[0] = kernel_id;
    values[1] = row.start_ns;
    values[2] = row.end_ns - row.start_ns;
    values[3] = row.device_id;
    values[4] = row.context_id;
    values[5] = row.stream_id;
    values[6] = row.correlation_id;
    values[7] = *config;
    values[8] = row.graph_id;
    values[9] = row.graph_node_id;
    if (auto ok = impl.push_batched(impl.kernel_batch); !ok)
        return ok;
    if (row.queued_ns != 0 || row.submitted_ns != 0) {
        Binder(impl.statement(Insert::KernelLatency))
            .integer(kernel_id)
            .integer(row.queued_ns)
            .integer(row.submitted_ns);
        return impl.insert(Insert::KernelLatency, "cannot insert into FP8SCOPE_KERNEL_LATENCY");
    }
    return {};
}

Expected<void> TraceDb::add_api(const ApiRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    int64_t* values = impl_->api_batch.next_row(); // in schema column order
    values[0] = row.start_ns;
    values[1] = row.end_ns;
    values[2] = static_cast<int64_t>(row.event_class);
    values[3] = row.global_tid;
    values[4] = row.correlation_id;
    values[5] = row.name.value;
    values[6] = row.return_value;
    return impl_->push_batched(impl_->api_batch);
}

Expected<void> TraceDb::add_sync(const SyncRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::Synchronization))
        .integer(row.start_ns)
        .integer(row.end_ns)
        .integer(row.device_id)
        .integer(row.context_id)
        .integer(row.stream_id)
        .integer(row.correlation_id)
        .integer(impl_->global_pid)
        .integer(static_cast<int64_t>(row.sync_type))
        .integer(row.event_id)
        .integer(row.event_sync_id);
    auto ok = impl_->insert(Insert::Synchronization, "cannot insert into CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
    if (ok)
        ++impl_->pending_syncs;
    return ok;
}

Expected<void> TraceDb::add_memcpy(const MemcpyRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::Memcpy))
        .integer(row.start_ns)
        .integer(row.end_ns)
        .integer(row.device_id)
        .integer(row.context_id)
        .integer(row.stream_id)
        .integer(row.correlation_id)
        .integer(impl_->global_pid)
        .integer(static_cast<int64_t>(row.bytes))
        .integer(static_cast<int64_t>(row.copy_kind))
        .integer(static_cast<int64_t>(row.src_kind))
        .integer(static_cast<int64_t>(row.dst_kind))
        .integer(row.src_device_id)
        .integer(row.dst_device_id)
        .integer(row.graph_node_id);
    return impl_->insert(Insert::Memcpy, "cannot insert into CUPTI_ACTIVITY_KIND_MEMCPY");
}

Expected<void> TraceDb::add_memset(const MemsetRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::Memset))
        .integer(row.start_ns)
        .integer(row.end_ns)
        .integer(row.device_id)
        .integer(row.context_id)
        .integer(row.stream_id)
        .integer(row.correlation_id)
        .integer(impl_->global_pid)
        .integer(row.value)
        .integer(static_cast<int64_t>(row.bytes))
        .integer(static_cast<int64_t>(row.mem_kind))
        .integer(row.graph_node_id);
    return impl_->insert(Insert::Memset, "cannot insert into CUPTI_ACTIVITY_KIND_MEMSET");
}

Expected<void> TraceDb::add_nvtx(const NvtxRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    // Text always travels interned, so `text` stays NULL and textId holds it (StringId 0: no text).
    Binder binder(impl_->statement(Insert::Nvtx));
    binder.integer(row.start_ns)
        .integer(row.end_ns)
        .integer(static_cast<int64_t>(row.event_type))
        .integer(row.range_id)
        .integer(row.category)
        .integer(row.color)
        .null()
        .integer(row.global_tid)
        .integer(row.end_global_tid);
    if (row.text.value != 0)
        binder.integer(row.text.value);
    else
        binder.null();
    binder.integer(row.domain_id);
    return impl_->insert(Insert::Nvtx, "cannot insert into NVTX_EVENTS");
}

Expected<void> TraceDb::add_thread_name(const ThreadNameRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::ThreadNames)).integer(row.name.value).integer(row.priority).integer(row.global_tid);
    return impl_->insert(Insert::ThreadNames, "cannot insert into ThreadNames");
}

Expected<void> TraceDb::add_gpu(const GpuInfoRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::Gpu))
        .integer(row.id)
        .text(row.name)
        .text(row.bus_location)
        .integer(row.total_memory_bytes)
        .integer(row.memory_bandwidth_bytes_per_s)
        .integer(row.clock_rate_hz)
        .integer(row.sm_count)
        .text(row.uuid)
        .text(row.chip_name)
        .integer(row.compute_major)
        .integer(row.compute_minor);
    return impl_->insert(Insert::Gpu, "cannot insert into TARGET_INFO_GPU");
}

Expected<void> TraceDb::add_scalar(const ScalarRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    // SQLite stores a bound NaN as NULL, which FP8SCOPE_SCALAR.value (NOT NULL) refuses: a NaN, the first sign of a
    // diverging run, goes to FP8SCOPE_SCALAR_NAN instead (1.4). +-Inf is stored as a REAL like any other value.
    if (std::isnan(row.value)) {
        Binder(impl_->statement(Insert::ScalarNan))
            .integer(row.timestamp_ns)
            .integer(row.step)
            .integer(row.name.value)
            .integer(row.global_tid);
        return impl_->insert(Insert::ScalarNan, "cannot insert into FP8SCOPE_SCALAR_NAN");
    }
    Binder(impl_->statement(Insert::Scalar))
        .integer(row.timestamp_ns)
        .integer(row.step)
        .integer(row.name.value)
        .real(row.value)
        .integer(row.global_tid);
    return impl_->insert(Insert::Scalar, "cannot insert into FP8SCOPE_SCALAR");
}

Expected<void> TraceDb::add_step_marker(const StepMarkerRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::StepMarker))
        .integer(row.timestamp_ns)
        .integer(row.step)
        .integer(row.global_tid)
        .integer(static_cast<int64_t>(row.source));
    return impl_->insert(Insert::StepMarker, "cannot insert into FP8SCOPE_STEP_MARKER");
}

Expected<void> TraceDb::add_overhead(const OverheadRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::Overhead))
        .integer(row.start_ns)
        .integer(row.end_ns)
        .integer(static_cast<int64_t>(row.kind))
        .integer(row.global_tid)
        .integer(row.device_id);
    return impl_->insert(Insert::Overhead, "cannot insert into FP8SCOPE_OVERHEAD");
}

Expected<void> TraceDb::add_dropped(const DroppedRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    // Counted even if the row cannot be written: the total lands in meta dropped_records at finish(). Saturating, and
    // negative counts ignored: the total never wraps, whatever a caller passes (found by fuzz_rows:
    // docs/reliability.md "Findings").
    int64_t& total = impl_->counters.dropped_records;
    if (row.count > 0)
        total = row.count > std::numeric_limits<int64_t>::max() - total ? std::numeric_limits<int64_t>::max()
                                                                        : total + row.count;
    Binder(impl_->statement(Insert::Dropped))
        .integer(row.timestamp_ns)
        .integer(static_cast<int64_t>(row.source))
        .integer(row.count)
        .integer(row.device_id);
    return impl_->insert(Insert::Dropped, "cannot insert into FP8SCOPE_DROPPED");
}

Expected<void> TraceDb::add_collector_work(uint32_t correlation_id)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::CollectorWork)).integer(correlation_id);
    return impl_->insert(Insert::CollectorWork, "cannot insert into FP8SCOPE_COLLECTOR_WORK");
}

Expected<void> TraceDb::set_capture_window(const CaptureWindowRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::CaptureWindow))
        .integer(row.id)
        .integer(row.start_ns)
        .integer(row.end_ns)
        .integer(row.first_step)
        .integer(row.last_step)
        .integer(static_cast<int64_t>(row.trigger));
    return impl_->insert(Insert::CaptureWindow, "cannot write FP8SCOPE_CAPTURE_WINDOW");
}

Expected<void> TraceDb::set_tensor_stats_skipped(int64_t total)
{
    if (impl_->closed)
        return impl_->finished_error();
    // Meta rows are INSERT OR REPLACE: written again as the total grows, committed with the rows around it.
    Binder(impl_->statement(Insert::Meta)).text(schema::meta::kTensorStatsSkipped).integer(total);
    return impl_->insert(Insert::Meta, "cannot write FP8SCOPE_META");
}

Expected<void> TraceDb::set_nvtx_step_ranges(int64_t total)
{
    if (impl_->closed)
        return impl_->finished_error();
    Binder(impl_->statement(Insert::Meta)).text(schema::meta::kNvtxStepRanges).integer(total);
    return impl_->insert(Insert::Meta, "cannot write FP8SCOPE_META");
}

} // namespace fp8scope
