// The C API of probes/include/fp8scope.h, exported by libfp8scope.so. Every function checks its arguments,
// never throws and never blocks on the GPU; without a running session it returns FP8SCOPE_E_NOT_RECORDING.
#include "fp8scope.h"

#include "calls/nvtx_paths.hpp"
#include "session/collector.hpp"
#include "session/warn.hpp"
#include "stats/stats_engine.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#define FP8SCOPE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace fp8scope;
using namespace fp8scope::collector;

std::optional<schema::Dtype> dtype_of(int32_t value)
{
    if (value < FP8SCOPE_DTYPE_F32 || value > FP8SCOPE_DTYPE_E5M2)
        return std::nullopt;
    return static_cast<schema::Dtype>(value);
}

template <typename Fn> int guarded(Fn&& fn)
{
    try {
        return fn();
    } catch (...) {
        warn_once("c-api-exception", "unexpected error in the fp8scope C API (the call did nothing)");
        return FP8SCOPE_E_INVALID_ARGUMENT;
    }
}

int probe(const fp8scope_probe_args* args)
{
    if (!args || args->struct_size < sizeof(fp8scope_probe_args) || !args->name || !*args->name || !args->data)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    const auto dtype = dtype_of(args->dtype);
    if (!dtype || args->target_format < FP8SCOPE_FP8_NONE || args->target_format > FP8SCOPE_FP8_E5M2 || args->role < 0
        || args->role > int32_t(schema::TensorRole::Other) || args->scale_kind < FP8SCOPE_SCALE_NONE
        || args->scale_kind > FP8SCOPE_SCALE_INV_DEVICE)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    const bool device_scale
        = args->scale_kind == FP8SCOPE_SCALE_DEVICE || args->scale_kind == FP8SCOPE_SCALE_INV_DEVICE;
    if (device_scale && !args->scale_device)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    if (!device_scale && args->scale_kind != FP8SCOPE_SCALE_NONE && !(std::isfinite(args->scale) && args->scale > 0))
        return FP8SCOPE_E_INVALID_ARGUMENT;

    ProbeRequest request;
    request.site.name = args->name;
    request.site.nvtx_path = current_nvtx_path();
    request.site.rows = int64_t(args->numel);
    request.site.cols = 1;
    request.site.dtype = *dtype;
    request.site.role = static_cast<schema::TensorRole>(args->role);
    request.site.source = schema::StatsSource::ExplicitProbe;
    request.params.data = args->data;
    request.params.numel = args->numel;
    request.params.dtype = *dtype;
    // An FP8 tensor is measured in its own format.
    request.params.target = *dtype == schema::Dtype::E4M3 ? schema::Fp8Format::E4M3
        : *dtype == schema::Dtype::E5M2                   ? schema::Fp8Format::E5M2
                                                          : static_cast<schema::Fp8Format>(args->target_format);
    request.params.scale_kind = static_cast<probes::ScaleKind>(args->scale_kind);
    request.params.scale = args->scale;
    request.params.scale_ptr = args->scale_device;
    request.stream = args->stream;
    return enqueue_probe(request);
}

// The process's collector while it records in this process; null otherwise.
Collector* recording()
{
    Collector* c = Collector::get();
    return c && c->running_session() ? c : nullptr;
}

StepMarkerRow marker_now(Collector& c, int64_t number, schema::StepMarkerSource source)
{
    return { c.now_ns(), number, schema::global_tid(getpid(), static_cast<uint32_t>(syscall(SYS_gettid))), source };
}

// Markers are written inside and outside capture windows (one row per step): the analyzer then knows every step's
// bounds, and a window's edges are these very timestamps.
bool post_marker(Collector& c, const StepMarkerRow& row)
{
    return c.post_rows([row](TraceDb& db) { [[maybe_unused]] auto added = db.add_step_marker(row); });
}

int step(int64_t number)
{
    if (number < 0)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    Collector* c = recording();
    if (!c)
        return FP8SCOPE_E_NOT_RECORDING;
    c->steps().mark(number);
    const StepMarkerRow row = marker_now(*c, number, schema::StepMarkerSource::Job);
    const bool posted = post_marker(*c, row);
    c->capture().on_marker_step(number, row.timestamp_ns);
    return posted ? FP8SCOPE_OK : FP8SCOPE_E_SAMPLED_OUT;
}

int step_end(int64_t number, int32_t source)
{
    static_assert(int32_t(schema::StepMarkerSource::Optimizer) == FP8SCOPE_STEP_END_OPTIMIZER
        && int32_t(schema::StepMarkerSource::OptimizerSkipped) == FP8SCOPE_STEP_END_OPTIMIZER_SKIPPED);
    if (number < 0 || number == INT64_MAX
        || (source != FP8SCOPE_STEP_END_OPTIMIZER && source != FP8SCOPE_STEP_END_OPTIMIZER_SKIPPED))
        return FP8SCOPE_E_INVALID_ARGUMENT;
    Collector* c = recording();
    if (!c)
        return FP8SCOPE_E_NOT_RECORDING;
    const StepMarkerRow row = marker_now(*c, number, static_cast<schema::StepMarkerSource>(source));
    const bool posted = post_marker(*c, row);
    // The next step begins here for sampling and capture windows, unless the job marks steps or NVTX ranges do.
    if (c->steps().begin_optimizer_step(number + 1))
        c->capture().on_optimizer_step(number + 1, row.timestamp_ns);
    return posted ? FP8SCOPE_OK : FP8SCOPE_E_SAMPLED_OUT;
}

} // namespace

FP8SCOPE_EXPORT int fp8scope_probe(const struct fp8scope_probe_args* args)
{
    return guarded([&] { return probe(args); });
}

FP8SCOPE_EXPORT int fp8scope_step(int64_t number)
{
    return guarded([&] { return step(number); });
}

FP8SCOPE_EXPORT int fp8scope_step_end(int64_t number, int32_t source)
{
    return guarded([&] { return step_end(number, source); });
}

FP8SCOPE_EXPORT int fp8scope_scalar(const char* name, double value)
{
    return guarded([&] { return name && *name ? log_scalar(name, value) : FP8SCOPE_E_INVALID_ARGUMENT; });
}

FP8SCOPE_EXPORT int fp8scope_scalar_device(const char* name, const void* device_value, int32_t dtype, void* stream)
{
    return guarded([&] {
        const auto type = dtype_of(dtype);
        if (!name || !*name || !type)
            return int(FP8SCOPE_E_INVALID_ARGUMENT);
        return log_scalar_device(name, device_value, *type, stream);
    });
}

FP8SCOPE_EXPORT int fp8scope_stats_wanted(void)
{
    return guarded([] { return stats_wanted() ? 1 : 0; });
}

FP8SCOPE_EXPORT int fp8scope_stats_wanted_in_step(int32_t boundary)
{
    return guarded([&] {
        if (boundary != FP8SCOPE_BOUNDARY_MARKER && boundary != FP8SCOPE_BOUNDARY_OPTIMIZER)
            return int(FP8SCOPE_E_INVALID_ARGUMENT);
        return stats_wanted_in_step(boundary == FP8SCOPE_BOUNDARY_OPTIMIZER) ? 1 : 0;
    });
}

FP8SCOPE_EXPORT int fp8scope_recording(void)
{
    return guarded([] {
        Collector* c = recording();
        return c && c->capture().recording() ? 1 : 0;
    });
}

FP8SCOPE_EXPORT int fp8scope_api_version(void)
{
    return FP8SCOPE_C_API_VERSION;
}
