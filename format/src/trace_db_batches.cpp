// Batched inserts for the tables written once per launch (FP8SCOPE_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME), and
// the INSERT text generated from the schema's column lists.
#include "trace_db_impl.hpp"

namespace fp8scope {

using writer_detail::IntegerRowBatch;

namespace {

// Meta keys and capture windows are written again as they change (a window when it opens, then when it closes).
bool replaces(const schema::Table& table)
{
    return table.name == schema::table::kMeta || table.name == schema::table::kCaptureWindow;
}

} // namespace

std::string writer_detail::insert_failure(const schema::Table& table)
{
    const bool written = replaces(table) || table.name == schema::table::kSessionStart;
    return (written ? "cannot write " : "cannot insert into ") + std::string(table.name);
}

std::string writer_detail::insert_sql(const schema::Table& table, int rows)
{
    std::string sql = replaces(table) ? "INSERT OR REPLACE INTO \"" : "INSERT INTO \"";
    sql += table.name;
    sql += "\" (";
    std::string values = "(";
    for (size_t i = 0; i < table.columns.size(); ++i) {
        sql += i == 0 ? "\"" : ", \"";
        sql += table.columns[i].name;
        sql += '"';
        values += i == 0 ? "?" : ", ?";
    }
    values += ')';
    sql += ") VALUES ";
    for (int row = 0; row < rows; ++row) {
        if (row > 0)
            sql += ", ";
        sql += values;
    }
    return sql;
}

Expected<void> TraceDb::Impl::prepare_batch(IntegerRowBatch& batch, size_t which, bool kernels)
{
    const schema::Table& table = schema::kTables[which];
    batch.which = which;
    batch.kernels = kernels;
    batch.columns = static_cast<int>(table.columns.size());
    batch.rows = 0;
    const std::string sql = writer_detail::insert_sql(table, IntegerRowBatch::kRowsPerStatement);
    if (sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &batch.multi, nullptr) != SQLITE_OK)
        return std::unexpected(sqlite_error("cannot prepare a batched insert into " + std::string(table.name)));
    return {};
}

Expected<void> TraceDb::Impl::push_batched(IntegerRowBatch& batch)
{
    if (rows_refused()) {
        note_lost(1, *stopped);
        return std::unexpected(*stopped);
    }
    ++batch.rows;
    count_pending_row();
    if (batch.kernels)
        ++pending_kernels;
    if (batch.rows == IntegerRowBatch::kRowsPerStatement)
        return flush_batch(batch);
    return {};
}

Expected<void> TraceDb::Impl::flush_batch(IntegerRowBatch& batch)
{
    if (batch.rows == 0)
        return {};
    const int rows = batch.rows;
    batch.rows = 0;
    // A full batch goes through the multi-row statement; what is left at a commit goes row by row.
    const bool full = rows == IntegerRowBatch::kRowsPerStatement;
    sqlite3_stmt* stmt = full ? batch.multi : inserts[batch.which];
    const int rows_per_step = full ? rows : 1;
    int rows_done = 0;
    while (rows_done < rows) {
        const int64_t* values
            = batch.values.data() + static_cast<size_t>(rows_done) * static_cast<size_t>(batch.columns);
        const int parameters = rows_per_step * batch.columns;
        for (int i = 0; i < parameters; ++i)
            sqlite3_bind_int64(stmt, i + 1, values[i]);
        if (full && batch.kernels) {
            // FP8SCOPE_KERNEL.id is the rowid. The first row of a batch carries its id, every later row NULL:
            // SQLite then gives it max(rowid) + 1, which is the same sequential id, but appends without seeking
            // from the root for each row (about 17% of an insert, callgrind). The explicit first id keeps the
            // numbering ours even after a lost batch or a rolled-back transaction (a gap, never a shift).
            for (int row = 1; row < rows; ++row)
                sqlite3_bind_null(stmt, row * batch.columns + 1);
        }
        const int rc = sqlite3_step(stmt);
        sqlite3_reset(stmt);
        if (rc != SQLITE_DONE) {
            // The statement rolled back by itself; this and the remaining rows of the batch are lost.
            const int lost = rows - rows_done;
            counters.rows_written -= lost;
            pending_rows -= lost;
            if (batch.kernels)
                pending_kernels -= lost;
            Error error = sqlite_error(writer_detail::insert_failure(schema::kTables[batch.which]));
            note_lost(lost, error);
            return std::unexpected(std::move(error));
        }
        rows_done += rows_per_step;
    }
    return {};
}

Expected<void> TraceDb::Impl::flush_batches()
{
    auto kernels = flush_batch(kernel_batch);
    auto api = flush_batch(api_batch);
    return kernels ? api : kernels;
}

} // namespace fp8scope
