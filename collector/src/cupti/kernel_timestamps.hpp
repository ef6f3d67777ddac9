// How the kernels are timed (docs/collector.md "Kernel timestamps: hardware or software"): CUPTI's Hardware Event
// System (HES, cuptiActivityEnableHWTrace: Blackwell, CUDA 12.8+), or the instrumented ("software") path.
//
// CUPTI takes the hardware event trace only after the driver is initialized and before any context exists. The
// collector starts inside the driver's cuInit (the injection), where the call returns CUPTI_ERROR_NOT_INITIALIZED
// (measured on an H200, 2026-11-30). So the choice waits for the entry of the first driver call that makes a context
// (cuDevicePrimaryCtxRetain, the runtime's way; cuCtxCreate and its versions; cuGreenCtxCreate): the driver is up
// by then and the context not made yet. Those callbacks are enabled for that one call, and switched off once the
// choice is made. Every CUPTI call goes through the injected CuptiApi table: tested with fakes
// (tests/collector/cupti_attachment_test.cpp, "kernel timestamps").
#pragma once

#include "cupti/cupti_api.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace fp8scope::collector {

// The choice as the trace's meta kernel_timestamps says it: "hardware", or "software: <why>" where the hardware path
// was not taken (not asked for, refused, or missing from this CUPTI).
struct KernelTimestamps {
    bool hardware = false;
    std::string meta = "software";
};

// The meta a trace holds while the choice waits for the first context: a job that never makes one keeps it.
inline constexpr const char* kTimestampsUndecided = "software: no CUDA context was created";

// Asks CUPTI for the hardware event trace now, unless `wanted` is false (FP8SCOPE_HW_TRACE=0).
KernelTimestamps enable_kernel_timestamps(const CuptiApi& cupti, bool wanted);

// Whether this driver call makes a context: the hardware event trace is asked for at its entry.
bool makes_context(CUpti_CallbackId driver_cbid);

// The choice made once, at the first context's creation (the class comment at the top).
class KernelTimestampChoice {
public:
    // At the session's start: not wanted, or no such call in this CUPTI, is decided at once (software); otherwise
    // the callbacks of the calls that make a context are switched on (nothing without a subscriber: the choice then
    // stays "software: no callback subscriber").
    KernelTimestampChoice(const CuptiApi& cupti, bool wanted, CUpti_SubscriberHandle subscriber);
    KernelTimestampChoice(const KernelTimestampChoice&) = delete;
    KernelTimestampChoice& operator=(const KernelTimestampChoice&) = delete;

    // The trace's meta at its creation: the choice if made, else kTimestampsUndecided.
    std::string meta_at_start() const;
    bool waiting() const { return waiting_.load(std::memory_order_acquire); }
    // At the entry of a driver call that makes a context (makes_context): the first one switches those callbacks
    // off again, but for the ones `driver_traced` marks (CuptiSettings::driver_traced: API rows the session still
    // takes from them), asks CUPTI and returns the choice; every later one returns nothing.
    std::optional<KernelTimestamps> at_context_creation(std::span<const uint8_t> driver_traced);

private:
    const CuptiApi& cupti_;
    CUpti_SubscriberHandle subscriber_;
    std::optional<KernelTimestamps> decided_at_start_;
    std::atomic<bool> waiting_ { false };
};

} // namespace fp8scope::collector
