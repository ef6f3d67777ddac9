// TraceDb::add_*: one prepared INSERT per row, one value per column of the table's declaration (Impl::write, checked
// when compiled). Kernels go to the compact
// FP8SCOPE_KERNEL table plus one FP8SCOPE_KERNEL_CONFIG row per distinct launch configuration. The tensor statistics
// tables are written by trace_db_tensor_rows.cpp.
#include "trace_db_impl.hpp"

#include <cmath>
#include <limits>

namespace fp8scope {

namespace tables = schema::tables;

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
    return write<tables::kKernelConfig>(id, c.mangled_name, stored.demangled_name, stored.short_name, c.grid[0],
        c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2], c.cluster[0], c.cluster[1], c.cluster[2],
        c.registers_per_thread, c.static_shared_bytes, c.dynamic_shared_bytes, c.local_per_thread_bytes,
        c.local_total_bytes, c.shared_executed_bytes, c.launch_type);
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
    impl.kernel_batch.put(kernel_id, row.start_ns, row.end_ns - row.start_ns, row.device_id, row.context_id,
        row.stream_id, row.correlation_id, *config, row.graph_id, row.graph_node_id);
    if (auto ok = impl.push_batched(impl.kernel_batch); !ok)
        return ok;
    if (row.queued_ns != 0 || row.submitted_ns != 0)
        return impl.write<tables::kKernelLatency>(kernel_id, row.queued_ns, row.submitted_ns);
    return {};
}

Expected<void> TraceDb::add_api(const ApiRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    impl_->api_batch.put(row.start_ns, row.end_ns, row.event_class, row.global_tid, row.correlation_id, row.name.value,
        row.return_value);
    return impl_->push_batched(impl_->api_batch);
}

Expected<void> TraceDb::add_sync(const SyncRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    auto ok = impl_->write<tables::kSynchronization>(row.start_ns, row.end_ns, row.device_id, row.context_id,
        row.stream_id, row.correlation_id, impl_->global_pid, row.sync_type, row.event_id, row.event_sync_id);
    if (ok)
        ++impl_->pending_syncs;
    return ok;
}

Expected<void> TraceDb::add_memcpy(const MemcpyRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kMemcpy>(row.start_ns, row.end_ns, row.device_id, row.context_id, row.stream_id,
        row.correlation_id, impl_->global_pid, row.bytes, row.copy_kind, row.src_kind, row.dst_kind, row.src_device_id,
        row.dst_device_id, row.graph_node_id);
}

Expected<void> TraceDb::add_memset(const MemsetRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kMemset>(row.start_ns, row.end_ns, row.device_id, row.context_id, row.stream_id,
        row.correlation_id, impl_->global_pid, row.value, row.bytes, row.mem_kind, row.graph_node_id);
}

Expected<void> TraceDb::add_nvtx(const NvtxRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    // Text always travels interned, so `text` stays NULL and textId holds it (StringId 0: no text).
    const std::optional<StringId> text_id = row.text.value != 0 ? std::optional(row.text) : std::nullopt;
    return impl_->write<tables::kNvtxEvents>(row.start_ns, row.end_ns, row.event_type, row.range_id, row.category,
        row.color, std::nullopt, row.global_tid, row.end_global_tid, text_id, row.domain_id);
}

Expected<void> TraceDb::add_thread_name(const ThreadNameRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kThreadNames>(row.name, row.priority, row.global_tid);
}

Expected<void> TraceDb::add_gpu(const GpuInfoRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kTargetInfoGpu>(row.id, row.name, row.bus_location, row.total_memory_bytes,
        row.memory_bandwidth_bytes_per_s, row.clock_rate_hz, row.sm_count, row.uuid, row.chip_name, row.compute_major,
        row.compute_minor);
}

Expected<void> TraceDb::add_scalar(const ScalarRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    // SQLite stores a bound NaN as NULL, which FP8SCOPE_SCALAR.value (NOT NULL) refuses: a NaN, the first sign of a
    // diverging run, goes to FP8SCOPE_SCALAR_NAN instead (1.4). +-Inf is stored as a REAL like any other value.
    if (std::isnan(row.value))
        return impl_->write<tables::kScalarNan>(row.timestamp_ns, row.step, row.name, row.global_tid);
    return impl_->write<tables::kScalar>(row.timestamp_ns, row.step, row.name, row.value, row.global_tid);
}

Expected<void> TraceDb::add_step_marker(const StepMarkerRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kStepMarker>(row.timestamp_ns, row.step, row.global_tid, row.source);
}

Expected<void> TraceDb::add_overhead(const OverheadRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kOverhead>(row.start_ns, row.end_ns, row.kind, row.global_tid, row.device_id);
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
    return impl_->write<tables::kDropped>(row.timestamp_ns, row.source, row.count, row.device_id);
}

Expected<void> TraceDb::add_collector_work(uint32_t correlation_id)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kCollectorWork>(correlation_id);
}

Expected<void> TraceDb::set_capture_window(const CaptureWindowRow& row)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kCaptureWindow>(
        row.id, row.start_ns, row.end_ns, row.first_step, row.last_step, row.trigger);
}

Expected<void> TraceDb::set_tensor_stats_skipped(int64_t total)
{
    if (impl_->closed)
        return impl_->finished_error();
    // Meta rows are INSERT OR REPLACE: written again as the total grows, committed with the rows around it.
    return impl_->write<tables::kMeta>(schema::meta::kTensorStatsSkipped, total);
}

Expected<void> TraceDb::set_nvtx_step_ranges(int64_t total)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kMeta>(schema::meta::kNvtxStepRanges, total);
}

Expected<void> TraceDb::set_kernel_timestamps(std::string_view text)
{
    if (impl_->closed)
        return impl_->finished_error();
    return impl_->write<tables::kMeta>(schema::meta::kKernelTimestamps, text);
}

} // namespace fp8scope
