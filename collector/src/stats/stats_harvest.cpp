// The statistics engine's harvest (docs/collector.md "Tensor statistics"): on the writer thread, every finished slot
// becomes a tensor statistics or scalar row; lost and skipped samples are counted. Never a device sync: a slot is
// finished when the kernel has written its sequence number, which it writes last.
#include "stats/stats_engine.hpp"
#include "stats/stats_slots.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <chrono>
#include <cmath>
#include <thread>

namespace fp8scope::collector {

using namespace stats;

namespace {

double scalar_value(const probes::StatsResult& r)
{
    if (r.nans > 0)
        return std::nan("");
    if (r.infs > 0)
        return INFINITY; // the sign is not kept: sums are over finite values
    return r.sum;
}

void write_slot(Engine& e, const SlotMeta& slot, const probes::StatsResult& r, TraceDb& db)
{
    if (slot.is_scalar) {
        std::string name;
        {
            std::lock_guard lock(e.sites_mutex);
            name = e.scalar_names[size_t(slot.site_id)];
        }
        [[maybe_unused]] auto added
            = db.add_scalar({ slot.timestamp_ns, slot.step, db.intern(name), scalar_value(r), slot.global_tid });
        return;
    }
    TensorStatsRow row;
    row.site_id = slot.site_id;
    row.step = slot.step;
    row.timestamp_ns = slot.timestamp_ns;
    row.device_id = slot.device_id;
    row.stream_id = slot.stream_id;
    row.dtype = slot.dtype;
    row.target_format = slot.target;
    row.numel = int64_t(slot.numel);
    if (slot.has_scale) {
        row.scale = r.scale;
        row.scale_inv = r.scale_inv;
    }
    row.amax = r.amax;
    if (std::isfinite(r.min_nonzero_abs))
        row.min_nonzero_abs = r.min_nonzero_abs;
    row.zeros = int64_t(r.zeros);
    row.nans = int64_t(r.nans);
    row.infs = int64_t(r.infs);
    row.overflows = int64_t(r.overflows);
    row.underflows = int64_t(r.underflows);
    row.subnormals = int64_t(r.subnormals);
    row.saturated = int64_t(r.saturated);
    row.sum = r.sum;
    row.sum_squares = r.sum_squares;
    row.sum_cubes = r.sum_cubes;
    row.sum_fourth = r.sum_fourth;
    const probes::TrimmedHistogram histogram = probes::trim_histogram(r);
    row.hist_first_exponent = histogram.first_exponent;
    row.exponent_histogram = histogram.counts;
    [[maybe_unused]] auto added = db.add_tensor_stats(row);
}

// One pass over the slots; returns how many are still in flight.
size_t harvest_once(Engine& e, TraceDb& db)
{
    size_t pending = 0;
    for (size_t i = 0; i < kSlots; ++i) {
        SlotMeta& slot = e.slots[i];
        if (slot.state.load(std::memory_order_acquire) != kInFlight)
            continue;
        // The kernel writes `sequence` last, after a system-wide fence (probes/tensor_stats.hpp).
        const uint64_t done = std::atomic_ref<uint64_t>(e.results[i].sequence).load(std::memory_order_acquire);
        if (done != slot.sequence) {
            ++pending;
            continue;
        }
        write_slot(e, slot, e.results[i], db);
        slot.state.store(kFree, std::memory_order_release);
    }
    return pending;
}

} // namespace

void harvest_tensor_stats(TraceDb& db, bool final)
{
    Engine& e = engine();
    if (!e.ready)
        return;
    size_t pending = harvest_once(e, db) + harvest_block_slots(db);
    if (final) {
        // The job is ending: give kernels still queued a second to finish, by polling, never by a device sync.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (pending > 0 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            pending = harvest_once(e, db) + harvest_block_slots(db);
        }
    }
    // Lost: every slot was in flight, or (at the end) the kernel has not finished. Skipped by the cap: not lost.
    const int64_t lost = e.lost_full.load() + (final ? int64_t(pending) : 0);
    if (lost > e.lost_written) {
        DroppedRow row;
        row.timestamp_ns = now_ns();
        row.source = schema::DropSource::TensorStatsLost;
        row.count = lost - e.lost_written;
        [[maybe_unused]] auto added = db.add_dropped(row);
        e.lost_written = lost;
    }
    const int64_t skipped = e.skipped_cap.load();
    if (skipped != e.skipped_written) {
        [[maybe_unused]] auto written = db.set_tensor_stats_skipped(skipped);
        e.skipped_written = skipped;
    }
}

} // namespace fp8scope::collector
