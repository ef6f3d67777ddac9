// docs/trace-format.md must describe the schema that the code writes and reads: every table and view of
// schema::kTables has a section, each with one row per column giving its SQL type, nullability and the unit of
// schema.hpp (and no row for a column that does not exist); every ENUM_* table lists its values; every meta key
// and index is named. The document then cannot drift from schema.hpp unnoticed.
#include "fp8scope/format/schema.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace fp8scope;

namespace {

struct Heading {
    size_t line = 0;
    int level = 0;
    std::vector<std::string> words; // identifiers in the heading text
};

struct Doc {
    std::vector<std::string> lines;
    std::vector<Heading> headings;
};

std::string trim(std::string_view text)
{
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos)
        return {};
    const auto last = text.find_last_not_of(" \t");
    return std::string(text.substr(first, last - first + 1));
}

std::string strip_backticks(std::string text)
{
    std::erase(text, '`');
    return text;
}

Doc read_doc()
{
    std::ifstream file(FP8SCOPE_TRACE_FORMAT_DOC);
    REQUIRE(file.good());
    Doc doc;
    bool in_code_block = false;
    for (std::string line; std::getline(file, line);) {
        if (line.starts_with("```"))
            in_code_block = !in_code_block;
        if (!in_code_block && line.starts_with("#")) {
            Heading heading { doc.lines.size(), 0, {} };
            while (heading.level < static_cast<int>(line.size()) && line[heading.level] == '#')
                ++heading.level;
            // Identifiers: runs of letters, digits and underscores.
            std::string word;
            for (const char c : line + ' ') {
                if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
                    word += c;
                } else if (!word.empty()) {
                    heading.words.push_back(std::move(word));
                    word.clear();
                }
            }
            doc.headings.push_back(std::move(heading));
        }
        doc.lines.push_back(std::move(line));
    }
    return doc;
}

// Lines of the first section whose heading contains `name` as a whole identifier, up to the next heading of the
// same or a higher level.
std::optional<std::vector<std::string>> section(const Doc& doc, std::string_view name)
{
    for (size_t i = 0; i < doc.headings.size(); ++i) {
        const auto& heading = doc.headings[i];
        if (std::ranges::find(heading.words, name) == heading.words.end())
            continue;
        size_t end = doc.lines.size();
        for (size_t j = i + 1; j < doc.headings.size(); ++j) {
            if (doc.headings[j].level <= heading.level) {
                end = doc.headings[j].line;
                break;
            }
        }
        return std::vector<std::string>(doc.lines.begin() + static_cast<std::ptrdiff_t>(heading.line) + 1,
            doc.lines.begin() + static_cast<std::ptrdiff_t>(end));
    }
    return std::nullopt;
}

struct Row {
    std::vector<std::string> cells;
    std::string text;
};

// Rows of the markdown tables in `lines` whose header's first cell is `first_header`, without header and
// separator rows.
std::vector<Row> table_rows(const std::vector<std::string>& lines, std::string_view first_header)
{
    std::vector<Row> rows;
    bool in_wanted_table = false;
    bool in_table = false;
    for (const auto& line : lines) {
        const auto trimmed = trim(line);
        if (!trimmed.starts_with('|')) {
            in_table = false;
            continue;
        }
        std::vector<std::string> cells;
        std::stringstream stream(trimmed.substr(1));
        for (std::string cell; std::getline(stream, cell, '|');)
            cells.push_back(trim(cell));
        if (!in_table) {
            in_table = true;
            in_wanted_table = !cells.empty() && cells[0] == first_header;
            continue; // the header row
        }
        if (!in_wanted_table || (!cells.empty() && cells[0].starts_with("---")))
            continue;
        if (!cells.empty())
            cells[0] = strip_backticks(cells[0]);
        rows.push_back(Row { std::move(cells), trimmed });
    }
    return rows;
}

} // namespace

TEST_CASE("docs/trace-format.md documents every table, view and column of schema.hpp with its unit", "[cli][doc]")
{
    const Doc doc = read_doc();
    for (const schema::Table& table : schema::kTables) {
        INFO("table " << table.name);
        const auto lines = section(doc, table.name);
        REQUIRE(lines.has_value());
        const auto rows = table_rows(*lines, "column");
        for (const schema::Column& column : table.columns) {
            INFO("column " << column.name << " (unit \"" << column.unit << "\")");
            const auto row = std::ranges::find_if(rows, [&](const Row& r) { return r.cells[0] == column.name; });
            REQUIRE(row != rows.end());
            REQUIRE(row->cells.size() >= 5);
            INFO("row: " << row->text);
            CHECK(strip_backticks(row->cells[1]) == column.sql_type);
            CHECK(row->cells[2] == (column.nullable ? "yes" : "no"));
            CHECK(row->cells[3].find(column.unit) != std::string::npos);
            CHECK(!row->cells[4].empty()); // a sentence of meaning
        }
        // No row for a column the schema does not have (a renamed or removed column).
        for (const Row& row : rows) {
            INFO("documented column " << row.cells[0]);
            CHECK(std::ranges::find(table.columns, row.cells[0], &schema::Column::name) != table.columns.end());
        }
        CHECK(rows.size() == table.columns.size());
    }
}

TEST_CASE("docs/trace-format.md lists every ENUM_* table with its values", "[cli][doc]")
{
    const Doc doc = read_doc();
    for (const schema::Enum& e : schema::enums()) {
        INFO("enum " << e.table);
        const auto lines = section(doc, e.table);
        REQUIRE(lines.has_value());
        const auto rows = table_rows(*lines, "id");
        CHECK(rows.size() == e.values.size());
        for (const schema::EnumValue& value : e.values) {
            INFO("value " << value.id << " " << value.name);
            const auto id = std::to_string(value.id);
            const auto row = std::ranges::find_if(rows, [&](const Row& r) { return r.cells[0] == id; });
            REQUIRE(row != rows.end());
            REQUIRE(row->cells.size() >= 3);
            CHECK(strip_backticks(row->cells[1]) == value.name);
            CHECK(row->cells[2] == value.label);
        }
    }
}

TEST_CASE("docs/trace-format.md names every FP8SCOPE_META key and every index", "[cli][doc]")
{
    const Doc doc = read_doc();
    const auto lines = section(doc, "FP8SCOPE_META");
    REQUIRE(lines.has_value());
    const auto rows = table_rows(*lines, "key");
    namespace meta = schema::meta;
    for (const std::string_view key :
        { meta::kSchemaVersion, meta::kProducer, meta::kToolVersion, meta::kCommandLine, meta::kHost, meta::kPid,
            meta::kGlobalPid, meta::kRank, meta::kWorldSize, meta::kCudaRuntimeVersion, meta::kCudaDriverVersion,
            meta::kCuptiVersion, meta::kSessionStartUtcNs, meta::kFinished, meta::kFinishReason, meta::kSessionEndNs,
            meta::kDroppedRecords, meta::kTensorStatsSkipped, meta::kCaptureMode, meta::kCaptureOptions,
            meta::kNvtxStepRanges, std::string_view("row_count.<TABLE>") }) {
        INFO("meta key " << key);
        CHECK(std::ranges::any_of(rows, [&](const Row& r) { return r.cells[0] == key; }));
    }

    std::string whole;
    for (const auto& line : doc.lines)
        whole += line + '\n';
    for (const schema::Index& index : schema::kIndexes) {
        INFO("index " << index.name);
        CHECK(whole.find(index.name) != std::string::npos);
    }
}
