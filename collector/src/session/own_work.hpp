// OwnWorkScope: marks the CUDA calls the collector itself makes (tensor statistics kernels, the scratch memset,
// its allocations) so that the analyzer never counts them as the job's work
// (docs/analysis.md "The collector's own GPU work").
//
// While the scope lives, CUPTI's external correlation id of ours (cupti/own_work_mark.hpp) is pushed on the thread;
// the decoder keeps the correlation ids of records with our kind and id. API records taken from callbacks
// (api_calls.hpp) carry the mark themselves, as no API activity record is made then.
#pragma once

#include "calls/api_calls.hpp"
#include "cupti/cupti_api.hpp"
#include "cupti/own_work_mark.hpp"
#include "session/collector.hpp"
#include "session/session.hpp"

#include <cstdint>

namespace fp8scope::collector {

class OwnWorkScope {
public:
    OwnWorkScope()
    {
        enter_own_work(); // API records from callbacks (api_calls.hpp) are marked at the source
        Collector* c = Collector::get();
        const Session* s = c ? c->running_session() : nullptr;
        if (s && c->cupti_attached() && s->cupti->pushExternalCorrelationId && s->cupti->popExternalCorrelationId)
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
