// A caller's hook into long analyzer work (loading a trace, analysing it, building the timeline index): how far it
// has come, and a way to stop it. The GUI loads in the background with a progress bar and a Cancel button; the CLI
// can draw its progress bar from the same hook.
#pragma once

#include <functional>

namespace fp8scope::analyzer {

// Called with the fraction of the work done, in [0, 1], never decreasing over one call of the function it was given
// to; 1 is reported once, when the work is complete. Return false to cancel: the work stops soon after (within a few
// thousand rows or one analysis stage) and returns ErrorCode::Cancelled, never a partial result.
//
// The hook may be called from a thread other than the caller's (the loader reads the two largest tables on two
// threads), but never from two threads at once. It should return quickly: it is called a few hundred times per
// second at most, and the work waits while it runs.
using ProgressHook = std::function<bool(double fraction)>;

// Relative cost of each stage, for a caller that lays several stages end to end on one progress bar (the GUI's
// loading job, the CLI's bar on stderr). From the analyzer's figures on the 10 M-kernel trace on an idle machine
// (docs/benchmarks.md, "The analyzer's load and analysis, faster"): reading about 3 s, analysing 1.3 s (the GUI's
// kernel table and tensor series 0.2 s more), the timeline index 1.7 s; comparing two runs is quick.
struct StageWeight {
    static constexpr double kLoad = 3.0, kAnalyse = 1.5, kCompare = 0.3, kTimeline = 1.7;
};

} // namespace fp8scope::analyzer
