// The GEMM table file (gemm_table_json.hpp): reading it for the shipped tables and `report --gemm-table`, writing it
// for `calibrate`.
#include "fp8scope/analyzer/whatif/gemm_table_json.hpp"

#include <fmt/format.h>

#include <fstream>

namespace fp8scope::analyzer {

std::optional<GemmTable> parse_gemm_table(const std::string& text, std::string& error)
{
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        error = "not a JSON object";
        return std::nullopt;
    }
    // A field of the wrong type reads as absent (json::value() would throw on it).
    const auto text_of = [&](const char* key) {
        const auto v = j.find(key);
        return v != j.end() && v->is_string() ? v->get<std::string>() : std::string();
    };
    if (text_of("format") != kGemmTableFormat) {
        error = "not an fp8scope.gemm_table/1 document (its \"format\")";
        return std::nullopt;
    }
    const auto rows = j.find("rows");
    if (rows == j.end() || !rows->is_array() || rows->empty()) {
        error = "no \"rows\" array, or an empty one";
        return std::nullopt;
    }
    GemmTable table;
    table.gpu = text_of("gpu");
    table.date = text_of("date");
    table.method = text_of("method");
    auto positive = [](const nlohmann::json& row, const char* key) -> std::optional<int64_t> {
        const auto v = row.find(key);
        if (v == row.end() || !v->is_number_integer() || v->get<int64_t>() <= 0)
            return std::nullopt;
        return v->get<int64_t>();
    };
    for (size_t i = 0; i < rows->size(); ++i) {
        const nlohmann::json& row = (*rows)[i];
        GemmTimeRow r;
        const auto m = row.is_object() ? positive(row, "m") : std::nullopt;
        const auto n = row.is_object() ? positive(row, "n") : std::nullopt;
        const auto k = row.is_object() ? positive(row, "k") : std::nullopt;
        const auto bf16 = row.is_object() ? positive(row, "bf16_ns") : std::nullopt;
        const auto fp8 = row.is_object() ? positive(row, "fp8_tensorwise_ns") : std::nullopt;
        if (!m || !n || !k || !bf16 || !fp8) {
            error = fmt::format("row {}: needs positive integers m, n, k, bf16_ns and fp8_tensorwise_ns", i);
            return std::nullopt;
        }
        r.m = *m;
        r.n = *n;
        r.k = *k;
        r.bf16_ns = *bf16;
        r.fp8_tensorwise_ns = *fp8;
        r.fp8_rowwise_ns = positive(row, "fp8_rowwise_ns");
        table.rows.push_back(r);
    }
    return table;
}

std::optional<GemmTable> read_gemm_table_file(const std::string& path, std::string& error)
{
    constexpr size_t kMaxBytes = 16u << 20; // a table of every shape a job could have is far smaller
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot be read";
        return std::nullopt;
    }
    std::string text;
    for (char buffer[1 << 16]; in.read(buffer, sizeof buffer) || in.gcount() > 0;) {
        text.append(buffer, static_cast<size_t>(in.gcount()));
        if (text.size() > kMaxBytes) {
            error = fmt::format("larger than {} MiB", kMaxBytes >> 20);
            return std::nullopt;
        }
    }
    if (in.bad()) {
        error = "cannot be read";
        return std::nullopt;
    }
    return parse_gemm_table(text, error);
}
nlohmann::ordered_json gemm_table_json(const GemmTable& table, const nlohmann::ordered_json& extra)
{
    nlohmann::ordered_json j;
    j["format"] = kGemmTableFormat;
    j["gpu"] = table.gpu;
    j["date"] = table.date;
    j["method"] = table.method;
    for (const auto& [key, value] : extra.items())
        j[key] = value;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const GemmTimeRow& r : table.rows) {
        nlohmann::ordered_json row;
        row["m"] = r.m;
        row["n"] = r.n;
        row["k"] = r.k;
        row["bf16_ns"] = r.bf16_ns;
        row["fp8_tensorwise_ns"] = r.fp8_tensorwise_ns;
        row["fp8_rowwise_ns"] = r.fp8_rowwise_ns ? nlohmann::ordered_json(*r.fp8_rowwise_ns) : nullptr;
        rows.push_back(std::move(row));
    }
    j["rows"] = std::move(rows);
    return j;
}

} // namespace fp8scope::analyzer
