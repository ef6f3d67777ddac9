#include "corrupt_page.hpp"

#include <sqlite3.h>

#include <fstream>

namespace fp8scope::testing {

namespace {

// One integer from `sql`, or -1.
int64_t query_integer(sqlite3* db, const std::string& sql)
{
    sqlite3_stmt* stmt = nullptr;
    int64_t value = -1;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
        value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
}

} // namespace

Expected<int> hide_cells_of_leaf_table(const std::string& path, const std::string& table, int keep)
{
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(db);
        return make_error(ErrorCode::Io, "cannot open " + path);
    }
    const int64_t page_size = query_integer(db, "PRAGMA page_size");
    const int64_t root = query_integer(db, "SELECT rootpage FROM sqlite_schema WHERE name = '" + table + "'");
    sqlite3_close(db);
    if (page_size <= 0 || root <= 1)
        return make_error(ErrorCode::Usage, "no table " + table + " on a page of its own in " + path);

    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    const std::streamoff header = (root - 1) * page_size;
    unsigned char bytes[5] = {};
    file.seekg(header);
    file.read(reinterpret_cast<char*>(bytes), sizeof bytes);
    if (!file || bytes[0] != 0x0D)
        return make_error(ErrorCode::Usage, table + " is not a single table-leaf page");
    const int cells = (bytes[3] << 8) | bytes[4];
    if (keep < 0 || keep >= cells)
        return make_error(ErrorCode::Usage, "keep must be below the page's " + std::to_string(cells) + " cells");
    const char count[2] = { static_cast<char>(keep >> 8), static_cast<char>(keep & 0xFF) };
    file.seekp(header + 3);
    file.write(count, sizeof count);
    if (!file.flush())
        return make_error(ErrorCode::Io, "cannot write " + path);
    return cells;
}

} // namespace fp8scope::testing
