// What PRAGMA quick_check costs the loader (docs/benchmarks.md, "quick_check on load"): the check alone, on the
// SQLite that fp8scope links, opened as the loader opens a closed trace (read-only, immutable). Not a test: it
// prints the median time per file.
//
//   fp8scope_quick_check_bench [--runs N (5)] TRACE...
#include <CLI/CLI.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

// Seconds for one quick_check on a fresh connection (so that no page is cached by SQLite; the OS cache is warm after
// the first run, as it is for a loader that reads the file right after the check), or a negative value on failure.
double quick_check_seconds(const std::string& path, std::string& result)
{
    sqlite3* db = nullptr;
    const std::string uri = "file:" + path + "?immutable=1";
    if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
        result = sqlite3_errmsg(db);
        sqlite3_close(db);
        return -1;
    }
    sqlite3_stmt* stmt = nullptr;
    const auto start = std::chrono::steady_clock::now();
    double seconds = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &stmt, nullptr) == SQLITE_OK
        && sqlite3_step(stmt) == SQLITE_ROW) {
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    } else {
        result = sqlite3_errmsg(db);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return seconds;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Times PRAGMA quick_check(1) on traces, as fp8scope's loader runs it" };
    int runs = 5;
    std::vector<std::string> traces;
    app.add_option("--runs", runs, "Runs per file; the median is printed")->check(CLI::PositiveNumber);
    app.add_option("TRACE", traces, "Trace files")->required()->check(CLI::ExistingFile);
    CLI11_PARSE(app, argc, argv);
    for (const std::string& trace : traces) {
        std::vector<double> seconds;
        std::string result;
        for (int i = 0; i < runs; ++i) {
            const double s = quick_check_seconds(trace, result);
            if (s < 0) {
                std::fprintf(stderr, "%s: %s\n", trace.c_str(), result.c_str());
                return 1;
            }
            seconds.push_back(s);
        }
        std::ranges::sort(seconds);
        std::printf("%-60s %8.1f MB  quick_check %s: median %.3f s (min %.3f, max %.3f, %d runs)\n", trace.c_str(),
            static_cast<double>(std::filesystem::file_size(trace)) / 1e6, result.c_str(), seconds[seconds.size() / 2],
            seconds.front(), seconds.back(), runs);
    }
    return 0;
}
