// Helpers for the writer tests: scratch paths and a raw, read-only SQLite connection to look at what the writer
// put in the file. The analyzer's loader is deliberately not used: these tests check the file itself.
#pragma once

#include "fp8scope/format/rows.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::format_test {

// FP8SCOPE_TEST_TMP/format/<name>, with any file left by an earlier run (and its -wal/-shm) removed.
std::string scratch_path(std::string_view name);

// A session with a value in every field, so that meta checks can tell fields apart.
SessionInfo test_session();

bool file_exists(const std::string& path);

class SqliteFile {
public:
    explicit SqliteFile(const std::string& path, int flags = SQLITE_OPEN_READONLY);
    ~SqliteFile();
    SqliteFile(const SqliteFile&) = delete;
    SqliteFile& operator=(const SqliteFile&) = delete;

    bool is_open() const { return db_ != nullptr; }
    const std::string& open_error() const { return open_error_; }

    // Every row of a query, each value as text: integers in decimal, reals as SQLite prints them, NULL as
    // "NULL", blobs as "blob:<bytes>". A failing query yields one row {"error: <message>"}.
    std::vector<std::vector<std::string>> rows(const std::string& sql) const;
    // The first column of the first row.
    std::string value(const std::string& sql) const;
    int64_t integer(const std::string& sql) const;

private:
    sqlite3* db_ = nullptr;
    std::string open_error_;
};

using Row = std::vector<std::string>;

} // namespace fp8scope::format_test
