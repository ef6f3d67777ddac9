// The job's steps as the collector follows them (docs/collector.md "Tensor statistics", Steps): one source per
// process, the one the analyzer would take. The job's markers (fp8scope_step) win; else NVTX step ranges, when one
// came before the first optimizer step end; else the optimizer's step ends (fp8scope_step_end: step n+1 begins there).
// Sampling (stats/) and capture windows (capture.hpp) read the same object. Atomics only: no lock, no CUDA call.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fp8scope::collector {

class Steps {
public:
    // fp8scope_step(step): the job marks its steps from now on.
    void mark(int64_t step) { marked_.store(step, std::memory_order_relaxed); }
    // An optimizer step ended and `step` begins, unless the job marks steps or NVTX step ranges came before the first
    // optimizer step end (those keep the count). Returns whether it did: whether optimizer step ends drive the steps.
    bool begin_optimizer_step(int64_t step);
    // An NVTX step range was pushed: the number of such ranges seen before it, which is its step.
    int64_t count_nvtx_range() { return nvtx_ranges_.fetch_add(1, std::memory_order_relaxed); }

    // The step now: the last marked one, else the one the last optimizer step end began, else the NVTX step ranges
    // seen minus one; nullopt without any.
    std::optional<int64_t> current() const;
    // NVTX ranges named like the analyzer's default step ranges, on any thread, so far.
    int64_t nvtx_ranges_seen() const { return nvtx_ranges_.load(std::memory_order_relaxed); }
    bool marked() const { return marked_.load(std::memory_order_relaxed) >= 0; }
    bool optimizer_driven() const { return optimizer_.load(std::memory_order_relaxed) >= 0; }
    // Whether the optimizer's step ends (`optimizer`), else the job's markers, begin the steps now.
    bool begun_by(bool optimizer) const { return optimizer ? !marked() && optimizer_driven() : marked(); }

private:
    std::atomic<int64_t> marked_ { -1 };
    std::atomic<int64_t> optimizer_ { -1 };
    std::atomic<int64_t> nvtx_ranges_ { 0 };
};

// The analyzer's default step range names: "ProfilerStep#N", "step", "train_step", "iteration".
bool is_step_range_name(std::string_view name);

} // namespace fp8scope::collector
