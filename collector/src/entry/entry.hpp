// The library's entry points (injection.cpp, c_api.cpp, nvtx_injection.cpp, and the GEMM hooks' in stats/) share the
// collector's one object, made here on first need.
#pragma once

namespace fp8scope::collector {

class Collector;

// The process's collector, made (and published: Collector::get()) by the first entry point that needs it, with the
// library's platform: CUPTI loaded with dlopen, the lifecycle's threads and handlers, the statistics kernels, the CUDA
// driver. Never destroyed. Thread-safe (std::call_once); it makes no CUDA or CUPTI call itself.
Collector& the_collector();

// Installs the NVTX range wrappers into the NVTX module that called InitializeInjectionNvtx2, after CUPTI has filled
// its table (nvtx_injection.cpp). `get_export_table` is NVTX's NvtxGetExportTableFunc. Returns false (and changes
// nothing) if the table is not what this code expects.
bool wrap_nvtx_ranges(Collector& collector, void* get_export_table);

} // namespace fp8scope::collector
