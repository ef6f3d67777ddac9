// The fuzz targets' invariant checks must be able to fail: each case breaks one promise of trace_model.hpp in an
// otherwise good model and expects check_model() to abort (in a child process, as it would under libFuzzer).
#include "fuzz_support.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using fp8scope::analyzer::StringRef;
using fp8scope::analyzer::TraceModel;

// Two kernels on one stream, one after the other, and their names.
TraceModel good_model()
{
    TraceModel m;
    m.strings.values = { "gemm", "gemm_short" };
    auto& k = m.kernels;
    k.start_ns = { 100, 300 };
    k.end_ns = { 200, 400 };
    k.device_id = { 0, 0 };
    k.stream_id = { 7, 7 };
    k.correlation_id = { 1, 2 };
    k.name = { StringRef { 0 }, StringRef { 0 } };
    k.short_name = { StringRef { 1 }, StringRef { 1 } };
    k.graph_id = { 0, 0 };
    return m;
}

// True when check_model() aborted on the model `damage` leaves.
bool aborts(const std::function<void(TraceModel&)>& damage)
{
    TraceModel m = good_model();
    damage(m);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(STDERR_FILENO); // the message is for fuzzing runs, not for the test log
        fp8scope::fuzz::check_model(m);
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

} // namespace

TEST_CASE("fuzz invariants: a good model passes")
{
    CHECK_FALSE(aborts([](TraceModel&) {}));
}

TEST_CASE("fuzz invariants: each broken promise aborts")
{
    CHECK(aborts([](TraceModel& m) { m.kernels.end_ns[0] = 50; })); // ends before it starts
    CHECK(aborts([](TraceModel& m) { m.kernels.start_ns[1] = 90, m.kernels.end_ns[1] = 95; })); // not sorted
    CHECK(aborts([](TraceModel& m) { m.kernels.start_ns[1] = 150, m.kernels.end_ns[1] = 250; })); // overlap
    CHECK(aborts([](TraceModel& m) { m.kernels.name[1] = StringRef { 2 }; })); // dangling string
    CHECK(aborts([](TraceModel& m) { m.strings.values[0] = "\xC0\xAF"; })); // overlong UTF-8
    CHECK(aborts([](TraceModel& m) { m.kernels.end_ns[1] = (int64_t { 1 } << 53) + 1; })); // out of range
    CHECK(aborts([](TraceModel& m) { m.kernels.graph_id.pop_back(); })); // a short column
}

TEST_CASE("fuzz invariants: kernels of a CUDA graph may overlap")
{
    CHECK_FALSE(aborts([](TraceModel& m) {
        m.kernels.start_ns[1] = 150, m.kernels.end_ns[1] = 250;
        m.kernels.graph_id = { 3, 3 };
    }));
}
