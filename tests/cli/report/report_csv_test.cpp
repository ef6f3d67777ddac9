// `fp8scope report --format csv --table steps|kernels|api` (issue 28 item 6): the output read back by an RFC 4180
// parser of the test's own, and each table checked against the JSON report of the same trace (every step, every
// kernel name with its commas, counts and totals), on the committed real traces; quoting of quotes and line breaks
// on a scenario; -o FILE; the usage errors.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>

using namespace fp8scope::cli_test;

namespace {

const std::string kTraces = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
const std::string kNsys = kTraces + "nsys/h100-sample-syncs.nsys.sqlite";
const std::string kFp8 = kTraces + "h100-train-fp8.sqlite"; // PyTorch kernels: template names full of commas

using Record = std::vector<std::string>;

// RFC 4180 §2: records end in CRLF; a field is quoted when it holds a comma, a quote, CR or LF, and a quote in it
// is doubled. REQUIREs the text to be well formed and every record to have as many fields as the header.
std::vector<Record> parse_csv(const std::string& text)
{
    std::vector<Record> records;
    Record record;
    std::string field;
    size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '"') {
            for (++i;; ++i) {
                REQUIRE(i < text.size()); // an unterminated quoted field
                if (text[i] == '"') {
                    if (i + 1 < text.size() && text[i + 1] == '"') {
                        field += '"';
                        ++i;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += text[i];
            }
        } else {
            while (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n') {
                REQUIRE(text[i] != '"'); // a quote in an unquoted field
                field += text[i++];
            }
        }
        REQUIRE(i < text.size()); // the last record ends in CRLF too
        if (text[i] == ',') {
            record.push_back(std::move(field));
            field.clear();
            ++i;
            continue;
        }
        REQUIRE(text.compare(i, 2, "\r\n") == 0);
        i += 2;
        record.push_back(std::move(field));
        field.clear();
        if (!records.empty())
            REQUIRE(record.size() == records.front().size());
        records.push_back(std::move(record));
        record.clear();
    }
    REQUIRE(!records.empty());
    return records;
}

// The records as maps from the header's column names to the fields.
std::vector<std::map<std::string, std::string>> rows_of(const std::vector<Record>& records)
{
    std::vector<std::map<std::string, std::string>> rows;
    for (size_t r = 1; r < records.size(); ++r) {
        std::map<std::string, std::string> row;
        for (size_t c = 0; c < records.front().size(); ++c)
            row[records.front()[c]] = records[r][c];
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<std::map<std::string, std::string>> csv_rows(const std::string& trace, std::vector<std::string> extra)
{
    std::vector<std::string> args { "report", trace, "--format", "csv", "--no-progress" };
    args.insert(args.end(), extra.begin(), extra.end());
    return rows_of(parse_csv(run_fp8scope_ok(args)));
}

nlohmann::json json_report(const std::string& trace, std::vector<std::string> extra = {})
{
    std::vector<std::string> args { "report", trace, "--format", "json", "--no-progress" };
    args.insert(args.end(), extra.begin(), extra.end());
    return nlohmann::json::parse(run_fp8scope_ok(args));
}

int64_t integer(const std::string& field)
{
    size_t used = 0;
    const long long value = std::stoll(field, &used);
    REQUIRE(used == field.size());
    return value;
}

double real(const std::string& field)
{
    size_t used = 0;
    const double value = std::stod(field, &used);
    REQUIRE(used == field.size());
    return value;
}

// A kernels or api table against the JSON's rows of the same table: same order, names and figures.
void check_against_json(
    const std::vector<std::map<std::string, std::string>>& rows, const nlohmann::json& table, const char* kind_key)
{
    REQUIRE(rows.size() == table["rows"].size());
    int64_t total_ns = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i];
        const auto& expected = table["rows"][i];
        INFO("row " << i << ": " << expected["name"].get<std::string>());
        CHECK(row.at("name") == expected["name"].get<std::string>());
        CHECK(row.at("short_name") == expected["display_name"].get<std::string>());
        if (std::string(kind_key) == "class")
            CHECK(row.at("class") == expected["class"].get<std::string>());
        else
            CHECK(row.at("layer") == (expected["driver"].get<bool>() ? "driver" : "runtime"));
        CHECK(integer(row.at("count")) == expected["count"].get<int64_t>());
        CHECK(integer(row.at("total_ns")) == expected["total_ns"].get<int64_t>());
        CHECK(integer(row.at("min_ns")) == expected["min_ns"].get<int64_t>());
        CHECK(integer(row.at("max_ns")) == expected["max_ns"].get<int64_t>());
        CHECK(real(row.at("mean_ns")) == expected["mean_ns"].get<double>());
        CHECK(real(row.at("stddev_ns")) == expected["stddev_ns"].get<double>());
        CHECK(real(row.at("share")) == expected["share"].get<double>());
        total_ns += integer(row.at("total_ns"));
    }
    if (rows.size() == table["names"].get<size_t>())
        CHECK(total_ns == table["total_ns"].get<int64_t>());
}

} // namespace

TEST_CASE(
    "csv kernels and api tables equal the JSON top tables on the real Nsight Systems export", "[cli][report][csv]")
{
    const auto json = json_report(kNsys, { "--top", "1000" });
    const auto kernels = csv_rows(kNsys, { "--table", "kernels", "--top", "1000" });
    REQUIRE(kernels.size() == 1); // fp8scope_spin, 100 launches (report_tables_test.cpp checks it against SQL)
    check_against_json(kernels, json["top_kernels"], "class");
    const auto api = csv_rows(kNsys, { "--table", "api", "--top", "1000" });
    REQUIRE(api.size() > 5);
    check_against_json(api, json["top_api_calls"], "layer");
}

TEST_CASE("csv kernels: full template names with commas round-trip, and --top N gives N rows", "[cli][report][csv]")
{
    const auto json = json_report(kFp8, { "--top", "1000" });
    const auto kernels = csv_rows(kFp8, { "--table", "kernels", "--top", "1000" });
    check_against_json(kernels, json["top_kernels"], "class");
    size_t with_comma = 0;
    for (const auto& row : kernels)
        with_comma += row.at("name").find(',') != std::string::npos;
    CHECK(with_comma >= 10);
    CHECK(csv_rows(kFp8, { "--table", "kernels", "--top", "3" }).size() == 3);
    CHECK(csv_rows(kFp8, { "--table", "api", "--top", "2" }).size() == 2);
    CHECK(csv_rows(kFp8, { "--table", "kernels", "--top", "0" }).empty()); // the header alone
}

TEST_CASE("csv steps: every step of the device, not collapsed, equal to the JSON's steps and per-step totals",
    "[cli][report][csv]")
{
    for (const std::string& trace : { kFp8, kNsys }) {
        INFO(trace);
        const auto json = json_report(trace);
        const auto rows = csv_rows(trace, {}); // --table steps is the default
        const auto& per_step = json["per_device_step"];
        REQUIRE(per_step.size() > 10); // more than the text report lists without --all-steps
        REQUIRE(rows.size() == per_step.size());
        std::map<int64_t, std::pair<int64_t, int64_t>> step_times;
        for (const auto& s : json["steps"]["steps"])
            step_times[s["index"].get<int64_t>()] = { s["start_ns"].get<int64_t>(), s["end_ns"].get<int64_t>() };
        for (size_t i = 0; i < rows.size(); ++i) {
            const auto& row = rows[i];
            const auto& expected = per_step[i];
            const auto& totals = expected["totals"];
            INFO("row " << i);
            CHECK(integer(row.at("device")) == expected["device"].get<int64_t>());
            const int64_t step = integer(row.at("step"));
            CHECK(step == expected["step"].get<int64_t>());
            CHECK(integer(row.at("start_ns")) == step_times.at(step).first);
            CHECK(integer(row.at("end_ns")) == step_times.at(step).second);
            CHECK(integer(row.at("step_ns")) == totals["step_ns"].get<int64_t>());
            CHECK(integer(row.at("busy_ns")) == totals["busy_ns"].get<int64_t>());
            CHECK(integer(row.at("idle_ns")) == totals["idle_ns"].get<int64_t>());
            CHECK(real(row.at("bubble_ratio")) == totals["bubble_ratio"].get<double>());
            CHECK(integer(row.at("bubbles")) == totals["bubbles"].get<int64_t>());
            int64_t top_ns = 0;
            for (const auto& [cause, ns] : totals["idle_by_cause_ns"].items()) {
                CHECK(integer(row.at(cause + "_ns")) == ns.get<int64_t>());
                top_ns = std::max(top_ns, ns.get<int64_t>());
            }
            if (totals["idle_ns"].get<int64_t>() > 0)
                CHECK(totals["idle_by_cause_ns"][row.at("top_cause")].get<int64_t>() == top_ns);
        }
    }
}

TEST_CASE("csv quotes a name with a quote, a comma and a line break, and reads back the same", "[cli][report][csv]")
{
    const std::string dir = scratch_dir("report-csv-quotes");
    const std::string trace = dir + "/quotes.sqlite";
    auto s = small_scenario();
    const std::string odd = "kernel<\"a, b\">\r\nline two";
    const auto host = s.thread(s.session().pid, s.session().pid + 1, "worker");
    s.launch(
        host, { .api_start_ns = 80'000, .api_end_ns = 81'000 }, { .start_ns = 82'000, .end_ns = 90'000, .name = odd });
    const auto written = s.write_fp8scope(trace);
    REQUIRE(written);
    const std::string out = run_fp8scope_ok({ "report", trace, "--format", "csv", "--table", "kernels" });
    CHECK(out.find("\"kernel<\"\"a, b\"\">\r\nline two\"") != std::string::npos);
    bool found = false;
    for (const auto& row : rows_of(parse_csv(out)))
        found = found || row.at("name") == odd;
    CHECK(found);
}

TEST_CASE("csv to -o FILE is the same bytes as to stdout", "[cli][report][csv]")
{
    const std::string path = scratch_dir("report-csv-output") + "/kernels.csv";
    const std::vector<std::string> args { "report", kFp8, "--format", "csv", "--table", "kernels", "--no-progress" };
    const std::string out = run_fp8scope_ok(args);
    auto to_file = args;
    to_file.insert(to_file.end(), { "-o", path });
    CHECK(run_fp8scope_ok(to_file).empty());
    CHECK(read_text_file(path) == out);
}

TEST_CASE("csv usage errors: --table without csv, csv of several ranks, an unknown table", "[cli][report][csv]")
{
    const auto check_usage = [](const std::vector<std::string>& args, const std::string& says) {
        const auto result = run_fp8scope(args);
        INFO(result.err);
        CHECK(result.exit_code == 2);
        CHECK(result.out.empty());
        CHECK(lines_of(result.err).front().find(says) != std::string::npos);
    };
    check_usage({ "report", kFp8, "--table", "kernels" }, "--table selects the table of --format csv");
    check_usage({ "report", kFp8, "--format", "json", "--table", "steps" }, "--format json prints every table");
    check_usage({ "report", kTraces + "ranks/fp8-clean", "--format", "csv" }, "--format csv reads one trace only");
    check_usage({ "report", kNsys, kNsys, "--format", "csv", "--table", "api" }, "--format csv reads one trace only");
    check_usage({ "report", kFp8, "--format", "csv", "--table", "gpu" }, "--table");
}
