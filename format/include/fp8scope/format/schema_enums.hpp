// The trace format's enums (docs/trace-format.md): the values of CUPTI's enums and of fp8scope's own, each stored in
// an ENUM_* table. Part of schema.hpp, which includes it; split off to keep each file readable.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace fp8scope::schema {

// Enums. Values are those of the CUPTI headers (CUDA 13.0) or of the nsys export where the two differ; each
// enum is stored in its ENUM_* table with (id, name, label).
struct EnumValue {
    int32_t id;
    std::string_view name;
    std::string_view label;
};
struct Enum {
    std::string_view table;
    std::span<const EnumValue> values;
};

// nsys ENUM_NSYS_EVENT_CLASS (subset): which API a CUPTI_ACTIVITY_KIND_RUNTIME row came from.
enum class EventClass : int32_t { CudaRuntime = 0, CudaDriver = 1 };
// CUpti_ActivityMemcpyKind; nsys uses the same numbers.
enum class MemcpyKind : int32_t {
    Unknown = 0,
    HtoD = 1,
    DtoH = 2,
    HtoA = 3,
    AtoH = 4,
    AtoA = 5,
    AtoD = 6,
    DtoA = 7,
    DtoD = 8,
    HtoH = 9,
    PtoP = 10
};
// nsys' memory kind, which is CUPTI's CUpti_ActivityMemoryKind shifted by one (CUPTI: 0 UNKNOWN, 1 PAGEABLE,
// ...). The collector converts; the trace always holds these values.
enum class MemoryKind : int32_t {
    Pageable = 0,
    Pinned = 1,
    Device = 2,
    Array = 3,
    Managed = 4,
    DeviceStatic = 5,
    ManagedStatic = 6,
    Unknown = 7
};
// CUpti_ActivitySynchronizationType.
enum class SyncType : int32_t {
    Unknown = 0,
    EventSynchronize = 1,
    StreamWaitEvent = 2,
    StreamSynchronize = 3,
    ContextSynchronize = 4
};
// nsys ENUM_NSYS_EVENT_TYPE values used for NVTX rows.
enum class NvtxEventType : int32_t { Mark = 34, PushPopRange = 59, StartEndRange = 60 };
// CUpti_ActivityLaunchType.
enum class KernelLaunchType : int32_t { Regular = 0, CooperativeSingleDevice = 1, CooperativeMultiDevice = 2 };

enum class Dtype : int32_t { Float32 = 0, BFloat16 = 1, Float16 = 2, E4M3 = 3, E5M2 = 4 };
enum class Fp8Format : int32_t { None = 0, E4M3 = 1, E5M2 = 2 };
enum class TensorRole : int32_t { A = 0, B = 1, D = 2, Input = 3, Weight = 4, Output = 5, Gradient = 6, Other = 7 };
// TorchScaledMm (1.5): PyTorch's _scaled_mm family, intercepted in the dispatcher (docs/python.md), for a GEMM that no
// cuBLASLt interception saw (a CUTLASS kernel).
enum class StatsSource : int32_t { GemmInterception = 0, ExplicitProbe = 1, Annotate = 2, TorchScaledMm = 3 };
// How an FP8 GEMM operand is scaled (1.5): one scale for the tensor, one per row (cuBLASLt's outer vector), one per
// 1x128 or 128x128 block, or an E8M0 scale per 32 elements (MXFP8), an E4M3 scale per 16 (NVFP4).
enum class ScaleRecipe : int32_t {
    Tensorwise = 0,
    Rowwise = 1,
    Blockwise1x128 = 2,
    Blockwise128x128 = 3,
    Mx32 = 4,
    Nvfp4x16 = 5
};
enum class OverheadKind : int32_t {
    CuptiBufferFlush = 0,
    CuptiInstrumentation = 1,
    CuptiResource = 2,
    DriverCompiler = 3,
    CommandBufferFull = 4,
    WriterCommit = 5,
    WriterDecode = 6,
    Other = 7
};
// TensorStatsCap is found in older traces only: their collectors counted statistics samples skipped by
// FP8SCOPE_STATS_CAP as dropped. Skipped samples are not lost records; they are counted in meta
// tensor_stats_skipped. TensorStatsLost is a real loss (every result slot in flight, or kernels still pending when
// the trace ended). CaptureDetach: records CUPTI handed over while it was being detached between capture windows
// (a kernel of the window that ended after the window's last flush), which cannot be decoded once it is gone.
enum class DropSource : int32_t {
    CuptiNoBuffer = 0,
    BufferPoolExhausted = 1,
    WriterQueueFull = 2,
    WriterError = 3,
    TensorStatsCap = 4,
    TensorStatsLost = 5,
    CaptureDetach = 6
};
// What opened a capture window (FP8SCOPE_CAPTURE_WINDOW.trigger): --capture-steps, --capture-every,
// --capture-range cudaProfilerApi, --delay/--duration.
enum class CaptureTrigger : int32_t { Steps = 0, Periodic = 1, ProfilerApi = 2, Time = 3 };
// Who wrote a step marker (FP8SCOPE_STEP_MARKER.source, 1.7; NULL in older traces means Job): the job, where a step
// begins (fp8scope_step()); or the Python package's optimizer hook, where an optimizer step ended (its `step` is the
// count of optimizer steps, from 0), or where torch.amp.GradScaler skipped the optimizer step that would have ended
// step `step` (docs/python.md, "Steps and loss without code").
enum class StepMarkerSource : int32_t { Job = 0, Optimizer = 1, OptimizerSkipped = 2 };

std::span<const Enum> enums();
// The name of an enum value ("CONTEXT_SYNCHRONIZE"), or an empty view if the id is not in the enum.
std::string_view enum_name(std::string_view enum_table, int32_t id);
// CREATE TABLE text for an ENUM_* table: tables::kEnum under the enum's table name.
std::string create_enum_sql(const Enum& e);

} // namespace fp8scope::schema
