#include "fp8scope/analyzer/model/parallel_each.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace fp8scope::analyzer {

void parallel_each(size_t count, const std::function<void(size_t)>& work)
{
    std::vector<std::exception_ptr> failures(count);
    std::atomic<size_t> next { 0 };
    const auto worker = [&] {
        for (size_t i = next++; i < count; i = next++) {
            try {
                work(i);
            } catch (...) {
                failures[i] = std::current_exception();
            }
        }
    };
    // More workers than cores only add memory: each item holds a whole trace or parsed file.
    const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, std::max<size_t>(count, 1));
    {
        std::vector<std::jthread> threads;
        for (size_t w = 1; w < workers; ++w)
            threads.emplace_back(worker);
        worker();
    }
    for (const std::exception_ptr& failure : failures)
        if (failure)
            std::rethrow_exception(failure);
}

} // namespace fp8scope::analyzer
