// What CUPTI calls back (activity buffers, runtime and driver API callbacks), and the session's set-up of CUPTI at
// its start: subscribing and enabling the activity kinds and traced API calls. The callbacks run on CUPTI's threads
// or inside the job's CUDA calls: they hand off and never block.
#pragma once

#include "cupti/cupti_attachment.hpp"

namespace fp8scope {
class TraceDb;
}

namespace fp8scope::collector {

class Collector;
struct Session;

// The functions CUPTI is given each time it is attached; the API callback's user data is `collector`, which the
// buffer callbacks (no user data) find through Collector::get().
CuptiCallbacks session_cupti_callbacks(Collector& collector);

// Subscribes the session to CUPTI's callbacks; false (the process is then not traced, with its one warning) when
// another tool holds CUPTI or subscribing fails. FP8SCOPE_SUBSCRIBE=0 leaves the session without a subscriber.
bool subscribe(Session& s);

// Enables the session's CUPTI settings, activity kinds and traced API calls, and notes them in s.cupti_settings for
// the capture windows. False (not traced, one warning) when the kernels' kind cannot be enabled.
bool enable_activities(Session& s);

// Writes the records lost so far (FP8SCOPE_DROPPED), on the writer thread, at the session time `now_ns`.
void write_dropped(Session& s, TraceDb& db, int64_t now_ns);

} // namespace fp8scope::collector
