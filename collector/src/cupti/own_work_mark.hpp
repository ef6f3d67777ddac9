// The mark of the collector's own CUDA calls in CUPTI's records (session/own_work.hpp pushes it, the decoder keeps
// the correlation ids it marks: FP8SCOPE_COLLECTOR_WORK). CUPTI's external correlation (cupti_activity.h,
// cuptiActivityPushExternalCorrelationId): while an id is pushed on a thread, every runtime and driver API record of
// that thread is preceded by a CUpti_ActivityExternalCorrelation record carrying the pushed id and the API call's
// correlationId. Kineto uses CUSTOM0 and CUSTOM1; we take CUSTOM2 with an id of our own.
#pragma once

#include "cupti/cupti_types.hpp"

#include <cstdint>

namespace fp8scope::collector {

inline constexpr CUpti_ExternalCorrelationKind kOwnWorkKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
inline constexpr uint64_t kOwnWorkId = 0xF8'5C'09E0'0000'0001ull;

} // namespace fp8scope::collector
