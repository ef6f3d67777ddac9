// What tensor statistics read of the collector (session/collector.hpp), through its one pointer: the statistics engine
// it holds, the session's clock, the steps, the capture windows' say, the writer and CUPTI's stream ids.
#include "stats/stats_engine.hpp"
#include "stats/stats_slots.hpp"

#include "cupti/cupti_api.hpp"
#include "session/collector.hpp"
#include "session/session.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace fp8scope::collector {

namespace stats {

Engine& engine()
{
    // Held by the collector, made on first use and never destroyed: probes may arrive during exit. Only reached once a
    // session records (every caller checks stats_recording() first, or runs on its writer), so the collector exists.
    std::atomic<Engine*>& slot = Collector::get()->stats_engine();
    if (Engine* e = slot.load(std::memory_order_acquire))
        return *e;
    auto* made = new Engine;
    Engine* expected = nullptr;
    if (slot.compare_exchange_strong(expected, made, std::memory_order_acq_rel))
        return *made;
    delete made; // another thread made it first
    return *expected;
}

int64_t now_ns()
{
    Collector* c = Collector::get();
    return std::max<int64_t>(0, c ? c->now_ns() : -1);
}

int64_t calling_thread_gtid()
{
    return schema::global_tid(getpid(), static_cast<uint32_t>(syscall(SYS_gettid)));
}

uint32_t stream_id_of(void* stream)
{
    Collector* c = Collector::get();
    const Session* s = c ? c->running_session() : nullptr;
    uint32_t id = 0;
    if (!s || !c->cupti_attached() || !s->cupti->getStreamIdEx
        || s->cupti->getStreamIdEx(nullptr, static_cast<CUstream>(stream), 0, &id) != CUPTI_SUCCESS)
        return 0;
    return id;
}

} // namespace stats

bool stats_recording()
{
    Collector* c = Collector::get();
    return c && c->running_session();
}

bool stats_allowed()
{
    Collector* c = Collector::get();
    return c && c->capture().allows_stats();
}

std::optional<int64_t> current_step()
{
    Collector* c = Collector::get();
    return c ? c->steps().current() : std::nullopt;
}

bool steps_begin_at(bool optimizer)
{
    Collector* c = Collector::get();
    return c && c->capture().edges_on_steps() && c->steps().begun_by(optimizer);
}

bool post_stats_rows(std::function<void(TraceDb&)> task)
{
    Collector* c = Collector::get();
    return c && c->post_rows(std::move(task));
}

} // namespace fp8scope::collector
