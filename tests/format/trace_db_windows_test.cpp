// A bounded recording (TraceDb::mark_window_start, drop_oldest_windows; `record --max-size`): the oldest windows'
// rows go while the file is over its bound, the newest stay whole, and what every window shares is kept.
#include "format_test_support.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

constexpr int64_t kWindowNs = 1'000'000'000; // window w (1, 2, ...) spans [w, w + 0.5) s
constexpr int kKernelsPerWindow = 4000;

// Window `w`: its row, a step marker, kernels with their launch calls and a sync, then the window's end.
void record_window(TraceDb& db, int64_t w, StringId kernel_name, StringId launch_name, int64_t max_bytes)
{
    const int64_t start = w * kWindowNs, end = start + kWindowNs / 2;
    REQUIRE(db.mark_window_start(w).has_value());
    if (max_bytes > 0)
        REQUIRE(db.drop_oldest_windows(max_bytes).has_value());
    CaptureWindowRow window { .id = w,
        .start_ns = start,
        .end_ns = std::nullopt,
        .first_step = w,
        .last_step = w,
        .trigger = schema::CaptureTrigger::Periodic };
    REQUIRE(db.set_capture_window(window).has_value());
    StepMarkerRow marker;
    marker.timestamp_ns = start;
    marker.step = w;
    marker.global_tid = 1;
    REQUIRE(db.add_step_marker(marker).has_value());
    for (int i = 0; i < kKernelsPerWindow; ++i) {
        const int64_t t = start + 1000 + int64_t { i } * 100'000;
        const auto correlation = static_cast<uint32_t>(w * 100'000 + i);
        KernelRow k;
        k.start_ns = t + 5000;
        k.end_ns = t + 9000;
        k.correlation_id = correlation;
        k.config.mangled_name = kernel_name;
        REQUIRE(db.add_kernel(k).has_value());
        ApiRow api;
        api.start_ns = t;
        api.end_ns = t + 3000;
        api.global_tid = 1;
        api.correlation_id = correlation;
        api.name = launch_name;
        REQUIRE(db.add_api(api).has_value());
    }
    SyncRow sync;
    sync.start_ns = end - 10;
    sync.end_ns = end;
    REQUIRE(db.add_sync(sync).has_value());
    window.end_ns = end;
    REQUIRE(db.set_capture_window(window).has_value());
    REQUIRE(db.commit().has_value());
}

} // namespace

TEST_CASE("bounded recording: the oldest windows are dropped while the trace is over its bound")
{
    // Two traces of the same 8 windows: one unbounded gives the size of a window, the other is bounded to about
    // three of them.
    const std::string whole_path = scratch_path("windows_whole.sqlite");
    int64_t per_window = 0;
    {
        auto db = TraceDb::create(whole_path, test_session());
        REQUIRE(db.has_value());
        const StringId kernel = (*db)->intern("_Z4gemmv"), launch = (*db)->intern("cudaLaunchKernel_v7000");
        record_window(**db, 1, kernel, launch, 0);
        const int64_t one = *(*db)->used_bytes();
        record_window(**db, 2, kernel, launch, 0);
        per_window = *(*db)->used_bytes() - one;
        for (int64_t w = 3; w <= 8; ++w)
            record_window(**db, w, kernel, launch, 0);
        REQUIRE((*db)->finish({ .reason = "exit", .session_end_ns = 9 * kWindowNs }).has_value());
    }
    REQUIRE(per_window > 0);
    const SqliteFile whole(whole_path);
    CHECK(whole.integer("SELECT count(*) FROM FP8SCOPE_CAPTURE_WINDOW") == 8);
    CHECK(whole.rows("SELECT value FROM FP8SCOPE_META WHERE key = 'capture_windows_dropped'").empty());

    const std::string path = scratch_path("windows_bounded.sqlite");
    auto db = TraceDb::create(path, test_session());
    REQUIRE(db.has_value());
    const StringId kernel = (*db)->intern("_Z4gemmv"), launch = (*db)->intern("cudaLaunchKernel_v7000");
    const int64_t bound = 3 * per_window;
    for (int64_t w = 1; w <= 8; ++w) {
        record_window(**db, w, kernel, launch, bound);
        // After each window: over the bound by at most the window just written.
        CHECK(*(*db)->used_bytes() <= bound + per_window + per_window / 4);
    }
    REQUIRE((*db)->finish({ .reason = "exit", .session_end_ns = 9 * kWindowNs }).has_value());

    const SqliteFile file(path);
    const int64_t dropped = file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'capture_windows_dropped'");
    const int64_t first_kept = file.integer("SELECT min(id) FROM FP8SCOPE_CAPTURE_WINDOW");
    INFO("dropped " << dropped << ", first kept " << first_kept);
    CHECK(dropped >= 4);
    CHECK(dropped <= 6);
    // The kept windows are the newest, each whole: its row, step, kernels, launch calls and sync.
    CHECK(first_kept == dropped + 1);
    CHECK(file.integer("SELECT max(id) FROM FP8SCOPE_CAPTURE_WINDOW") == 8);
    const int64_t kept = 8 - dropped;
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_CAPTURE_WINDOW") == kept);
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == kept * kKernelsPerWindow);
    CHECK(file.integer("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME") == kept * kKernelsPerWindow);
    CHECK(file.integer("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") == kept);
    CHECK(file.integer("SELECT min(step) FROM FP8SCOPE_STEP_MARKER") == first_kept);
    CHECK(file.integer("SELECT min(start) FROM FP8SCOPE_KERNEL") > first_kept * kWindowNs);
    // Every kept kernel still has its launch call, its configuration and its name.
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                       "ON r.correlationId = k.correlationId")
        == kept * kKernelsPerWindow);
    CHECK(file.integer("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE shortName IS NULL") == 0);
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'trace_max_bytes'") == bound);
    // The closing row counts are those of the rows left.
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'row_count.FP8SCOPE_KERNEL'")
        == kept * kKernelsPerWindow);
    // The freed pages were reused: the file is far smaller than the unbounded one.
    CHECK(file.integer("PRAGMA page_count") * file.integer("PRAGMA page_size")
        < whole.integer("PRAGMA page_count") * whole.integer("PRAGMA page_size") * 3 / 4);
}

TEST_CASE("bounded recording: under its bound nothing is dropped, and the newest window is never dropped")
{
    const std::string path = scratch_path("windows_under.sqlite");
    auto db = TraceDb::create(path, test_session());
    REQUIRE(db.has_value());
    const StringId kernel = (*db)->intern("_Z4gemmv"), launch = (*db)->intern("cudaLaunchKernel_v7000");
    for (int64_t w = 1; w <= 3; ++w)
        record_window(**db, w, kernel, launch, int64_t { 1 } << 40);
    // A bound no trace can meet: every window but the newest goes, and the newest stays.
    REQUIRE((*db)->mark_window_start(4).has_value());
    const auto dropped = (*db)->drop_oldest_windows(1);
    REQUIRE(dropped.has_value());
    CHECK(*dropped == 3);
    CHECK((*db)->drop_oldest_windows(1).value_or(-1) == 0);
    REQUIRE((*db)->finish({ .reason = "exit", .session_end_ns = 5 * kWindowNs }).has_value());
    const SqliteFile file(path);
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_CAPTURE_WINDOW") == 0); // window 4 never wrote its row
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == 0);
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'capture_windows_dropped'") == 3);
    // What every window shares is kept: the kernel's name among the strings.
    CHECK(file.integer("SELECT count(*) FROM StringIds WHERE value = '_Z4gemmv'") == 1);
}
