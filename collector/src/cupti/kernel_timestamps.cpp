#include "cupti/kernel_timestamps.hpp"

#include <algorithm>
#include <iterator>

namespace fp8scope::collector {
namespace {

constexpr CUpti_CallbackId kMakesContext[] = { CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRetain,
    CUPTI_DRIVER_TRACE_CBID_cuCtxCreate, CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v2, CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v3,
    CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v4, CUPTI_DRIVER_TRACE_CBID_cuGreenCtxCreate };

} // namespace

KernelTimestamps enable_kernel_timestamps(const CuptiApi& cupti, bool wanted)
{
    if (!wanted)
        return { .hardware = false, .meta = "software: FP8SCOPE_HW_TRACE=0" };
    if (!cupti.activityEnableHWTrace)
        return { .hardware = false, .meta = "software: this CUPTI has no cuptiActivityEnableHWTrace (CUDA 12.8+)" };
    const CUptiResult result = cupti.activityEnableHWTrace(1);
    if (result == CUPTI_SUCCESS)
        return { .hardware = true, .meta = "hardware" };
    return { .hardware = false,
        .meta = std::string("software: cuptiActivityEnableHWTrace: ") + cupti.result_name(result) };
}

bool makes_context(CUpti_CallbackId driver_cbid)
{
    return std::ranges::find(kMakesContext, driver_cbid) != std::end(kMakesContext);
}

KernelTimestampChoice::KernelTimestampChoice(const CuptiApi& cupti, bool wanted, CUpti_SubscriberHandle subscriber)
    : cupti_(cupti)
    , subscriber_(subscriber)
{
    if (!wanted || !cupti.activityEnableHWTrace) {
        decided_at_start_ = enable_kernel_timestamps(cupti, wanted); // decided without asking CUPTI
        return;
    }
    if (!subscriber) {
        decided_at_start_ = KernelTimestamps { .hardware = false, .meta = "software: no callback subscriber" };
        return;
    }
    waiting_.store(true, std::memory_order_release);
    for (CUpti_CallbackId cbid : kMakesContext)
        cupti.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
}

std::string KernelTimestampChoice::meta_at_start() const
{
    return decided_at_start_ ? decided_at_start_->meta : std::string(kTimestampsUndecided);
}

std::optional<KernelTimestamps> KernelTimestampChoice::at_context_creation(std::span<const uint8_t> driver_traced)
{
    if (!waiting_.exchange(false, std::memory_order_acq_rel))
        return std::nullopt; // decided already, or by another thread's context at this moment
    for (CUpti_CallbackId cbid : kMakesContext)
        if (cbid >= driver_traced.size() || !driver_traced[cbid])
            cupti_.enableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    return enable_kernel_timestamps(cupti_, true);
}

} // namespace fp8scope::collector
