// The names of a trace's tables and how nsys encodes process and thread ids (docs/trace-format.md): the part of the
// schema (schema.hpp, which includes this) that readers name most.
#pragma once

#include <cstdint>
#include <string_view>

namespace fp8scope::schema {

namespace table {
inline constexpr std::string_view kStringIds = "StringIds";
inline constexpr std::string_view kKernel = "CUPTI_ACTIVITY_KIND_KERNEL"; // a view in our traces
inline constexpr std::string_view kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr std::string_view kSynchronization = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
inline constexpr std::string_view kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr std::string_view kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr std::string_view kNvtxEvents = "NVTX_EVENTS";
inline constexpr std::string_view kThreadNames = "ThreadNames";
inline constexpr std::string_view kTargetInfoGpu = "TARGET_INFO_GPU";
inline constexpr std::string_view kSessionStart = "TARGET_INFO_SESSION_START_TIME";
inline constexpr std::string_view kMeta = "FP8SCOPE_META";
inline constexpr std::string_view kFp8Kernel = "FP8SCOPE_KERNEL";
inline constexpr std::string_view kKernelConfig = "FP8SCOPE_KERNEL_CONFIG";
inline constexpr std::string_view kKernelLatency = "FP8SCOPE_KERNEL_LATENCY";
inline constexpr std::string_view kTensorSite = "FP8SCOPE_TENSOR_SITE";
inline constexpr std::string_view kTensorStats = "FP8SCOPE_TENSOR_STATS";
inline constexpr std::string_view kScalar = "FP8SCOPE_SCALAR";
inline constexpr std::string_view kStepMarker = "FP8SCOPE_STEP_MARKER";
inline constexpr std::string_view kOverhead = "FP8SCOPE_OVERHEAD";
inline constexpr std::string_view kDropped = "FP8SCOPE_DROPPED";
inline constexpr std::string_view kCollectorWork = "FP8SCOPE_COLLECTOR_WORK";
inline constexpr std::string_view kCaptureWindow = "FP8SCOPE_CAPTURE_WINDOW";
inline constexpr std::string_view kScalarNan = "FP8SCOPE_SCALAR_NAN";
inline constexpr std::string_view kBlockStats = "FP8SCOPE_BLOCK_STATS";
} // namespace table

// nsys encodes process and thread ids into one integer: globalTid = (pid << 24) | (tid & 0xFFFFFF) and
// globalPid = pid << 24 (shared/reference/nsys_cupti.md §1.2).
inline constexpr int64_t global_pid(int64_t pid)
{
    return pid << 24;
}
inline constexpr int64_t global_tid(int64_t pid, int64_t tid)
{
    return (pid << 24) | (tid & 0xFFFFFF);
}
inline constexpr int64_t pid_of(int64_t global_tid)
{
    return (global_tid >> 24) & 0xFFFFFF;
}
inline constexpr int64_t tid_of(int64_t global_tid)
{
    return global_tid & 0xFFFFFF;
}

} // namespace fp8scope::schema
