// One item per thread at a time, on up to one thread per core: the rank set's traces (ranks_set.cpp) and the CLI's
// per-rank JSON reports (`report --merge`), each loaded on its own.
#pragma once

#include <cstddef>
#include <functional>

namespace fp8scope::analyzer {

// Runs work(i) for every i in [0, count) on up to std::thread::hardware_concurrency() threads (this one included,
// never more than `count`), and returns when all are done. An exception from work() is rethrown here after every
// thread has ended, the one of the lowest i, as it would be without the threads.
void parallel_each(size_t count, const std::function<void(size_t)>& work);

} // namespace fp8scope::analyzer
