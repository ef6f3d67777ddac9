#include "format_test_support.hpp"

#include <filesystem>
#include <system_error>

namespace fp8scope::format_test {

std::string scratch_path(std::string_view name)
{
    const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "format";
    std::error_code ignored;
    std::filesystem::create_directories(dir, ignored);
    const std::string path = (dir / name).string();
    for (const char* suffix : { "", "-wal", "-shm", "-journal" })
        std::filesystem::remove(path + suffix, ignored);
    return path;
}

SessionInfo test_session()
{
    SessionInfo s;
    s.utc_epoch_ns = 1'795'219'200'123'456'789; // 2026-11-21T00:00:00.123456789Z
    s.producer = "fp8scope 0.1.0 (writer test)";
    s.command_line = "python train.py --fp8";
    s.host = "node07";
    s.pid = 4242;
    s.rank = 3;
    s.world_size = 8;
    s.cuda_runtime_version = 13000;
    s.cuda_driver_version = 13010;
    s.cupti_version = 26;
    return s;
}

bool file_exists(const std::string& path)
{
    std::error_code ignored;
    return std::filesystem::exists(std::filesystem::symlink_status(path, ignored));
}

SqliteFile::SqliteFile(const std::string& path, int flags)
{
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
        open_error_ = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
    }
}

SqliteFile::~SqliteFile()
{
    sqlite3_close(db_);
}

std::vector<std::vector<std::string>> SqliteFile::rows(const std::string& sql) const
{
    if (!db_)
        return { { "error: not open: " + open_error_ } };
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
        return { { std::string("error: ") + sqlite3_errmsg(db_) } };
    std::vector<std::vector<std::string>> result;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        Row row;
        for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
            switch (sqlite3_column_type(stmt, i)) {
            case SQLITE_NULL:
                row.emplace_back("NULL");
                break;
            case SQLITE_BLOB:
                row.push_back("blob:" + std::to_string(sqlite3_column_bytes(stmt, i)));
                break;
            default:
                row.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, i)));
                break;
            }
        }
        result.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE)
        result = { { std::string("error: ") + sqlite3_errmsg(db_) } };
    sqlite3_finalize(stmt);
    return result;
}

std::string SqliteFile::value(const std::string& sql) const
{
    const auto result = rows(sql);
    return result.empty() || result.front().empty() ? std::string("no rows") : result.front().front();
}

int64_t SqliteFile::integer(const std::string& sql) const
{
    const std::string text = value(sql);
    try {
        return std::stoll(text);
    } catch (...) {
        return INT64_MIN; // makes the comparison in the test fail, showing the query's result
    }
}

} // namespace fp8scope::format_test
