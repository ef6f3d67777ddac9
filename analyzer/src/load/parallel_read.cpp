// The two largest tables of a trace, kernels and API calls, read at the same time on two connections: SQLite's
// row decoding is most of the load time and the target machine has two cores (the goal, docs/benchmarks.md
// "Analyzer: `fp8scope report` on 10 M kernels and 10 M API calls": 10 M kernels + 10 M API calls loaded and analysed
// in 10 s on 2 cores).
#include "load/readers.hpp"

#include <exception>
#include <thread>

namespace fp8scope::analyzer::detail {

namespace {

// The worker's part: kernels read on a connection of its own (one SQLite connection must not be used by two threads
// at once) into `kernel_part`, then sorted there, which overlaps the other table's read, the longer one
// (docs/benchmarks.md).
Expected<void> read_and_sort_kernels(const ReadContext& context, TableReader read_kernels, TraceModel& kernel_part)
{
    auto file = TraceFile::open(context.file.path());
    if (!file)
        return std::unexpected(file.error());
    file->set_monitor(context.file.monitor());
    if (auto ok = file->load_catalog(); !ok)
        return ok;
    // StringIdMap::find is const and the map is complete: sharing it is safe.
    ReadContext worker_context { *file, kernel_part, context.strings, context.dialect, context.recorded };
    auto read = read_kernels(worker_context);
    if (read)
        sort_kernels_by_time(kernel_part);
    return read;
}

} // namespace

Expected<void> read_kernels_alongside(ReadContext& context, TableReader read_kernels, TableReader read_here)
{
    TraceModel kernel_part;
    Expected<void> kernel_result;
    // An exception in the worker (std::bad_alloc on a huge trace) is rethrown here, as it would be without the thread.
    std::exception_ptr kernel_failure;
    Expected<void> here_result;
    {
        std::jthread worker([&] {
            try {
                kernel_result = read_and_sort_kernels(context, read_kernels, kernel_part);
            } catch (...) {
                kernel_failure = std::current_exception();
            }
        });
        here_result = read_here(context);
    }
    if (kernel_failure)
        std::rethrow_exception(kernel_failure);
    // Kernels come first in a sequential read, so their error wins when both fail.
    if (!kernel_result)
        return kernel_result;
    if (!here_result)
        return here_result;
    context.model.kernels = std::move(kernel_part.kernels);
    context.model.clipped_kernels = kernel_part.clipped_kernels;
    context.model.row_counts.merge(kernel_part.row_counts);
    return {};
}

} // namespace fp8scope::analyzer::detail
