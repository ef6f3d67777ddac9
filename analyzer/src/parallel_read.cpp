// The two largest tables of a trace, kernels and API calls, read at the same time on two connections: SQLite's
// row decoding is most of the load time and the target machine has two cores (spec "Performance goals":
// 10 M kernels + 10 M API calls loaded and analysed in 10 s on 2 cores).
#include "readers.hpp"

#include <thread>

namespace fp8scope::analyzer::detail {

Expected<void> read_kernels_alongside(ReadContext& context, TableReader read_kernels, TableReader read_here)
{
    TraceModel kernel_part;
    Expected<void> kernel_result;
    {
        std::jthread worker([&] {
            // A connection of its own: one SQLite connection must not be used by two threads at once.
            auto file = TraceFile::open(context.file.path());
            if (!file) {
                kernel_result = std::unexpected(file.error());
                return;
            }
            file->set_monitor(context.file.monitor());
            if (auto ok = file->load_catalog(); !ok) {
                kernel_result = ok;
                return;
            }
            // StringIdMap::find is const and the map is complete: sharing it is safe.
            ReadContext worker_context { *file, kernel_part, context.strings, context.dialect, context.recorded };
            kernel_result = read_kernels(worker_context);
            // Sorting here overlaps the other table's read, which takes longer (docs/benchmarks.md).
            if (kernel_result)
                sort_kernels_by_time(kernel_part);
        });
        if (auto ok = read_here(context); !ok) {
            worker.join();
            // Kernels come first in a sequential read, so their error wins when both fail.
            return kernel_result ? ok : kernel_result;
        }
    }
    if (!kernel_result)
        return kernel_result;
    context.model.kernels = std::move(kernel_part.kernels);
    context.model.clipped_kernels = kernel_part.clipped_kernels;
    context.model.row_counts.merge(kernel_part.row_counts);
    return {};
}

} // namespace fp8scope::analyzer::detail
