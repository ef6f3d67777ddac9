// The NVTX range path of each thread ("train_step/layers.3/mlp/fc2"), kept by the collector itself so that a GEMM
// or a probe can name its site at the moment it is called (docs/collector.md "Tensor statistics": a GEMM site's
// identity includes the NVTX range path). CUPTI records the ranges for the trace; it offers no way to ask for the
// current path, so the collector wraps NVTX's push/pop entry points and forwards to CUPTI's implementation.
#pragma once

#include <cstdint>
#include <string_view>

namespace fp8scope::collector {

// Installs the wrappers into the NVTX module that called InitializeInjectionNvtx2, after CUPTI has filled its
// table. `get_export_table` is NVTX's NvtxGetExportTableFunc. Returns false (and changes nothing) if the table
// is not what this code expects.
bool wrap_nvtx_ranges(void* get_export_table);

// The calling thread's open push/pop ranges joined with '/', outermost first; empty when none. Names are cut
// to keep the path within a fixed buffer (no allocation on the application's threads).
std::string_view current_nvtx_path();

// Step boundaries seen through NVTX: the number of ranges pushed so far whose name is one of the analyzer's
// default step names ("ProfilerStep#N", "step", "train_step", "iteration"), on any thread.
int64_t nvtx_steps_seen();

// Called on the pushing thread for every step range, with its step (ranges seen so far minus one), before the range
// reaches CUPTI: capture windows open and close on it (capture.cpp). Null (the default): nothing is called.
using StepRangeListener = void (*)(int64_t step);
void set_step_range_listener(StepRangeListener listener);

// Whether the wrapped push/pop calls go on to CUPTI's NVTX implementation (the default). Off while CUPTI is detached
// between capture windows (cupti_attachment.hpp): a call into CUPTI then would attach it again. The path is kept
// either way; a wrapper not forwarding returns the range depth, as NVTX does.
void set_nvtx_forwarding(bool on);

// Exposed for unit tests: the same bookkeeping the wrappers do, without NVTX.
void nvtx_path_push(std::string_view name);
void nvtx_path_pop();
bool is_step_range_name(std::string_view name);

} // namespace fp8scope::collector
