// OwnWorkScope: marks the CUDA calls the collector itself makes (tensor statistics kernels, the scratch memset,
// its allocations) so that the analyzer never counts them as the job's work
// (docs/analysis.md "The collector's own GPU work").
//
// CUPTI's external correlation (cupti_activity.h, cuptiActivityPushExternalCorrelationId): while an id is pushed
// on a thread, every runtime and driver API record of that thread is preceded by a
// CUpti_ActivityExternalCorrelation record carrying the pushed id and the API call's correlationId, which its
// kernels, copies and memsets share. The decoder keeps the correlation ids of records with our kind and id
// (FP8SCOPE_COLLECTOR_WORK). Kineto uses CUSTOM0 and CUSTOM1; we take CUSTOM2 with an id of our own. API records
// taken from callbacks (api_calls.hpp) carry the mark themselves, as no API activity record is made then.
#pragma once

#include "calls/api_calls.hpp"
#include "cupti/cupti_api.hpp"
#include "session/session.hpp"

#include <cupti.h>

#include <cstdint>

namespace fp8scope::collector {

inline constexpr CUpti_ExternalCorrelationKind kOwnWorkKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
inline constexpr uint64_t kOwnWorkId = 0xF8'5C'09E0'0000'0001ull;

class OwnWorkScope {
public:
    OwnWorkScope()
    {
        enter_own_work(); // API records from callbacks (api_calls.hpp) are marked at the source
        const SessionServices* s = running_session_services();
        if (s && cupti_attached() && s->cupti->pushExternalCorrelationId && s->cupti->popExternalCorrelationId)
            pushed_ = s->cupti->pushExternalCorrelationId(kOwnWorkKind, kOwnWorkId) == CUPTI_SUCCESS;
        cupti_ = s ? s->cupti : nullptr;
    }
    ~OwnWorkScope()
    {
        leave_own_work();
        if (pushed_) {
            uint64_t id = 0;
            cupti_->popExternalCorrelationId(kOwnWorkKind, &id);
        }
    }
    OwnWorkScope(const OwnWorkScope&) = delete;
    OwnWorkScope& operator=(const OwnWorkScope&) = delete;

private:
    const CuptiApi* cupti_ = nullptr;
    bool pushed_ = false;
};

} // namespace fp8scope::collector
