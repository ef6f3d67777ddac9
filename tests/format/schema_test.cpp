// The file's tables, views, columns, version and enum tables are exactly those of schema.hpp, and the scenario
// builder's Nsight export's those of nsys_schema.hpp.
#include "format_test_support.hpp"

#include "fp8scope/format/nsys_schema.hpp"
#include "fp8scope/format/trace_db.hpp"
#include "scenario.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

std::string created_trace(std::string_view name)
{
    const std::string path = scratch_path(name);
    auto db = TraceDb::create(path, test_session());
    REQUIRE(db.has_value());
    REQUIRE((*db)->finish({}).has_value());
    return path;
}

} // namespace

TEST_CASE("every table and view of kTables exists with exactly the schema's columns")
{
    const std::string path = created_trace("schema_tables.sqlite");
    SqliteFile file(path);
    REQUIRE(file.is_open());
    for (const schema::Table& table : schema::kTables) {
        INFO("table " << table.name);
        const std::string type = table.kind == schema::TableKind::View ? "view" : "table";
        CHECK(file.value("SELECT type FROM sqlite_master WHERE name = '" + std::string(table.name) + "'") == type);
        // table_info: cid, name, type, notnull, dflt_value, pk
        const auto columns = file.rows("PRAGMA table_info(\"" + std::string(table.name) + "\")");
        REQUIRE(columns.size() == table.columns.size());
        for (size_t i = 0; i < columns.size(); ++i) {
            const schema::Column& column = table.columns[i];
            INFO("column " << column.name);
            CHECK(columns[i][1] == column.name);
            if (table.kind == schema::TableKind::Table) {
                CHECK(columns[i][2] == schema::declared_type(column));
                CHECK(columns[i][3] == (column.nullable ? "0" : "1"));
            }
        }
    }
}

TEST_CASE("the only tables in a new trace are kTables and the ENUM_* tables")
{
    const std::string path = created_trace("schema_only_tables.sqlite");
    SqliteFile file(path);
    std::set<std::string> expected;
    for (const schema::Table& table : schema::kTables)
        expected.insert(std::string(table.name));
    for (const schema::Enum& e : schema::enums())
        expected.insert(std::string(e.table));
    std::set<std::string> actual;
    for (const auto& row : file.rows("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"))
        actual.insert(row[0]);
    CHECK(actual == expected);
}

TEST_CASE("ids are rowid aliases so FP8SCOPE_KERNEL stores no separate key")
{
    const std::string path = created_trace("schema_rowid.sqlite");
    SqliteFile file(path);
    // A rowid table with INTEGER PRIMARY KEY has no automatic index (sqlite_autoindex_*).
    CHECK(
        file.integer("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'FP8SCOPE_KERNEL'") == 0);
}

TEST_CASE("user_version and meta schema_version carry the schema version")
{
    const std::string path = created_trace("schema_version.sqlite");
    SqliteFile file(path);
    CHECK(file.integer("PRAGMA user_version")
        == schema::encode_user_version(schema::kMajorVersion, schema::kMinorVersion));
    CHECK(schema::decode_major(static_cast<int32_t>(file.integer("PRAGMA user_version"))) == 1);
    CHECK(file.rows("SELECT value, typeof(value) FROM FP8SCOPE_META WHERE key = 'schema_version'")
        == std::vector<Row> { { "1.7", "text" } });
}

TEST_CASE("ENUM tables hold every value of schema::enums() with nsys-style names")
{
    const std::string path = created_trace("schema_enums.sqlite");
    SqliteFile file(path);
    REQUIRE(schema::enums().size() == 15);
    for (const schema::Enum& e : schema::enums()) {
        INFO("enum " << e.table);
        CHECK(file.rows("PRAGMA table_info(\"" + std::string(e.table) + "\")").size() == 3);
        std::vector<Row> expected;
        for (const schema::EnumValue& v : e.values)
            expected.push_back({ std::to_string(v.id), std::string(v.name), std::string(v.label) });
        CHECK(file.rows("SELECT id, name, label FROM \"" + std::string(e.table) + "\" ORDER BY rowid") == expected);
    }
    CHECK(file.rows("SELECT name, label FROM ENUM_CUPTI_SYNC_TYPE WHERE id = 4")
        == std::vector<Row> { { "CONTEXT_SYNCHRONIZE", "Context synchronize" } });
    // nsys' memory kind, not CUPTI's shifted one (shared/reference/nsys_cupti.md §1.5).
    CHECK(file.value("SELECT name FROM ENUM_CUDA_MEM_KIND WHERE id = 0") == "PAGEABLE");
    CHECK(file.value("SELECT name FROM ENUM_CUDA_MEM_KIND WHERE id = 7") == "UNKNOWN");
}

TEST_CASE("every value of the C++ enums has an entry in its ENUM table")
{
    const auto has = [](std::string_view table, auto value) {
        return !schema::enum_name(table, static_cast<int32_t>(value)).empty();
    };
    for (int v = 0; v <= 1; ++v)
        CHECK(has("ENUM_NSYS_EVENT_CLASS", v));
    for (int v = 0; v <= 10; ++v)
        CHECK(has("ENUM_CUDA_MEMCPY_OPER", v));
    for (int v = 0; v <= 7; ++v)
        CHECK(has("ENUM_CUDA_MEM_KIND", v));
    for (int v = 0; v <= 4; ++v)
        CHECK(has("ENUM_CUPTI_SYNC_TYPE", v));
    for (auto v :
        { schema::NvtxEventType::Mark, schema::NvtxEventType::PushPopRange, schema::NvtxEventType::StartEndRange })
        CHECK(has("ENUM_NSYS_EVENT_TYPE", v));
    for (int v = 0; v <= 2; ++v)
        CHECK(has("ENUM_CUPTI_KERNEL_LAUNCH_TYPE", v));
    for (int v = 0; v <= 4; ++v)
        CHECK(has("ENUM_FP8SCOPE_DTYPE", v));
    for (int v = 0; v <= 2; ++v)
        CHECK(has("ENUM_FP8SCOPE_FP8_FORMAT", v));
    for (int v = 0; v <= 7; ++v)
        CHECK(has("ENUM_FP8SCOPE_TENSOR_ROLE", v));
    for (int v = 0; v <= 2; ++v)
        CHECK(has("ENUM_FP8SCOPE_STATS_SOURCE", v));
    for (int v = 0; v <= 7; ++v)
        CHECK(has("ENUM_FP8SCOPE_OVERHEAD_KIND", v));
    for (int v = 0; v <= 4; ++v)
        CHECK(has("ENUM_FP8SCOPE_DROP_SOURCE", v));
    for (auto v : { schema::StepMarkerSource::Job, schema::StepMarkerSource::Optimizer,
             schema::StepMarkerSource::OptimizerSkipped })
        CHECK(has("ENUM_FP8SCOPE_STEP_MARKER_SOURCE", v));
    CHECK(schema::enum_name("ENUM_CUPTI_SYNC_TYPE", 4) == "CONTEXT_SYNCHRONIZE");
    CHECK(schema::enum_name("ENUM_CUPTI_SYNC_TYPE", 99).empty());
    CHECK(schema::enum_name("ENUM_NO_SUCH_TABLE", 0).empty());
}

TEST_CASE("find_table finds tables and views by name and nothing else")
{
    REQUIRE(schema::find_table("FP8SCOPE_KERNEL") != nullptr);
    CHECK(schema::find_table("FP8SCOPE_KERNEL")->columns.size() == 10);
    REQUIRE(schema::find_table("CUPTI_ACTIVITY_KIND_KERNEL") != nullptr);
    CHECK(schema::find_table("CUPTI_ACTIVITY_KIND_KERNEL")->kind == schema::TableKind::View);
    CHECK(schema::find_table("ENUM_CUPTI_SYNC_TYPE") == nullptr);
    CHECK(schema::find_table("") == nullptr);
}

TEST_CASE("create_sql quotes names and declares ANY columns without a type")
{
    const std::string sql = schema::create_sql(*schema::find_table("FP8SCOPE_META"));
    CHECK(sql == "CREATE TABLE \"FP8SCOPE_META\" (\"key\" TEXT NOT NULL, \"value\" NOT NULL, PRIMARY KEY (key))");
}

TEST_CASE("the scenario builder's Nsight export has exactly the columns the export's declarations give")
{
    // nsys_schema.hpp makes the export's shared tables from ours: a column added to one of ours reaches this file.
    testing::Scenario s;
    const auto host = s.thread(4242, 4243, "main");
    s.launch(host, { .api_start_ns = 100, .api_end_ns = 105 }, { .start_ns = 110, .end_ns = 150 });
    s.memcpy(host, { .api_start_ns = 160, .api_end_ns = 170 }, { .start_ns = 165, .end_ns = 180, .bytes = 64 });
    s.memset(host, { .api_start_ns = 190, .api_end_ns = 195 }, { .start_ns = 196, .end_ns = 199, .bytes = 64 });
    s.sync(host, 200, 300, schema::SyncType::StreamSynchronize, 7);
    s.nvtx_range(host, 90, 310, "step");
    const std::string path = scratch_path("schema_nsight.sqlite");
    REQUIRE(s.write_nsight(path));
    SqliteFile file(path);
    REQUIRE(file.is_open());
    namespace nsys = schema::nsys::tables;
    for (const schema::Table* table : { &nsys::kMetaDataExport, &nsys::kSystemEnv, &nsys::kStringIds,
             &nsys::kThreadNames, &nsys::kSessionStart, &nsys::kTargetInfoGpu, &nsys::kKernel, &nsys::kMemcpy,
             &nsys::kMemset, &nsys::kSynchronization, &nsys::kRuntime, &nsys::kNvtxEvents }) {
        INFO("table " << table->name);
        CHECK(file.integer("SELECT count(*) FROM \"" + std::string(table->name) + "\"") > 0);
        // table_info: cid, name, type, notnull, dflt_value, pk
        const auto columns = file.rows("PRAGMA table_info(\"" + std::string(table->name) + "\")");
        REQUIRE(columns.size() == table->columns.size());
        for (size_t i = 0; i < columns.size(); ++i) {
            const schema::Column& column = table->columns[i];
            INFO("column " << column.name);
            CHECK(columns[i][1] == column.name);
            CHECK(columns[i][2] == column.sql_type);
            CHECK(columns[i][3] == (column.nullable ? "0" : "1"));
        }
    }
}
