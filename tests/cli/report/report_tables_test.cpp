// `fp8scope report`'s top-kernels and CUDA API tables (issue 28 item 4) against the same aggregates computed by SQL
// from the trace file itself, grouped as nsys stats' cuda_gpu_kern_sum (by demangled name) and cuda_api_sum (by
// nameId, the "_vNNNN" version suffix left off the shown name) group them: on the committed real Nsight Systems
// export and on the real FP8 trace. Counts and totals must be equal, min and max too.
#include "cli_test_support.hpp"
#include "report/report_render.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <map>
#include <set>
#include <tuple>

using namespace fp8scope::cli_test;

namespace {

const std::string kTraces = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
const std::string kNsys = kTraces + "nsys/h100-sample-syncs.nsys.sqlite";

// name -> (count, total, min, max) by one SQL statement on the file.
using Sums = std::map<std::string, std::tuple<int64_t, int64_t, int64_t, int64_t>>;

Sums sql_sums(const std::string& path, const std::string& sql)
{
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    INFO(sqlite3_errmsg(db));
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
    Sums sums;
    while (sqlite3_step(statement) == SQLITE_ROW)
        sums[reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))]
            = { sqlite3_column_int64(statement, 1), sqlite3_column_int64(statement, 2),
                  sqlite3_column_int64(statement, 3), sqlite3_column_int64(statement, 4) };
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return sums;
}

nlohmann::json report(const std::string& trace, const std::vector<std::string>& extra)
{
    std::vector<std::string> args { "report", trace, "--format", "json" };
    args.insert(args.end(), extra.begin(), extra.end());
    const auto result = run_fp8scope(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return nlohmann::json::parse(result.out);
}

Sums rows_of(const nlohmann::json& table)
{
    Sums sums;
    for (const auto& row : table["rows"])
        sums[row["name"].get<std::string>()] = { row["count"].get<int64_t>(), row["total_ns"].get<int64_t>(),
            row["min_ns"].get<int64_t>(), row["max_ns"].get<int64_t>() };
    return sums;
}

const std::string kKernelSql = "SELECT s.value, COUNT(*), SUM(k.end - k.start), MIN(k.end - k.start), "
                               "MAX(k.end - k.start) FROM {} AS k JOIN StringIds AS s ON s.id = k.demangledName "
                               "GROUP BY k.demangledName";
const std::string kApiSql = "SELECT s.value, COUNT(*), SUM(r.end - r.start), MIN(r.end - r.start), "
                            "MAX(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s "
                            "ON s.id = r.nameId GROUP BY r.nameId";

std::string with_table(std::string sql, const std::string& table)
{
    sql.replace(sql.find("{}"), 2, table);
    return sql;
}

} // namespace

TEST_CASE("report's top tables equal nsys stats' grouping on the real Nsight Systems export", "[cli][report][top]")
{
    const auto doc = report(kNsys, { "--top", "1000" });
    const Sums kernels = sql_sums(kNsys, with_table(kKernelSql, "CUPTI_ACTIVITY_KIND_KERNEL"));
    const Sums api = sql_sums(kNsys, kApiSql);
    REQUIRE(kernels.size() == 1); // fp8scope_spin, 100 launches
    REQUIRE(api.size() == 18);
    CHECK(rows_of(doc["top_kernels"]) == kernels);
    CHECK(rows_of(doc["top_api_calls"]) == api);
    CHECK(doc["top_kernels"]["kernels"] == 100);
    CHECK(doc["top_api_calls"]["names"] == 18);
    // Most time first; shares of the listed total, as nsys stats' Time (%); the shown name without "_v3020".
    const auto& first = doc["top_api_calls"]["rows"][0];
    CHECK(first["name"] == "cudaMemcpy_v3020");
    CHECK(first["display_name"] == "cudaMemcpy");
    double shares = 0;
    int64_t previous = INT64_MAX;
    for (const auto& row : doc["top_api_calls"]["rows"]) {
        shares += row["share"].get<double>();
        CHECK(row["total_ns"].get<int64_t>() <= previous);
        previous = row["total_ns"].get<int64_t>();
    }
    CHECK(shares == Approx(1.0));
}

TEST_CASE("report's top tables on the real FP8 trace: every kernel counted, the collector's own left out",
    "[cli][report][top]")
{
    const std::string trace = kTraces + "h100-train-fp8.sqlite";
    const auto doc = report(trace, { "--top", "100000" });
    // The FP8 sample was recorded before the collector marked its own work: every kernel is the job's. An fp8scope
    // trace has nsys's CUPTI_ACTIVITY_KIND_KERNEL as a view over its own kernel table.
    const Sums kernels = sql_sums(trace, with_table(kKernelSql, "CUPTI_ACTIVITY_KIND_KERNEL"));
    CHECK(rows_of(doc["top_kernels"]) == kernels);
    CHECK(doc["top_kernels"]["kernels"] == 46'133);
    const Sums api = sql_sums(trace, kApiSql);
    CHECK(rows_of(doc["top_api_calls"]) == api);
    // The FP8 GEMMs are classed as such.
    bool fp8_gemm = false;
    for (const auto& row : doc["top_kernels"]["rows"])
        fp8_gemm = fp8_gemm || row["class"] == "fp8_gemm";
    CHECK(fp8_gemm);
}

TEST_CASE("report --top N: N rows in text, Markdown and JSON, the rest counted, 0 hides them", "[cli][report][top]")
{
    const std::string trace = kTraces + "h100-train-fp8.sqlite";
    const auto doc = report(trace, { "--top", "3" });
    CHECK(doc["top_kernels"]["rows"].size() == 3);
    CHECK(doc["top_api_calls"]["rows"].size() == 3);
    CHECK(doc["top_kernels"]["names"].get<size_t>() > 3);

    const auto text = run_fp8scope({ "report", trace, "--top", "3", "--color", "never" });
    REQUIRE(text.exit_code == 0);
    const size_t at = text.out.find("Top kernels (whole trace");
    REQUIRE(at != std::string::npos);
    CHECK(text.out.find("3 of ", at) != std::string::npos);
    CHECK(text.out.find("Top CUDA API calls (whole trace") != std::string::npos);
    // Shortened names: no argument lists, no "void ".
    const std::string block = text.out.substr(at, text.out.find("Top CUDA API calls") - at);
    CHECK(block.find("void ") == std::string::npos);
    CHECK(block.find("time%") != std::string::npos);

    const auto md = run_fp8scope({ "report", trace, "--top", "2", "--format", "md" });
    REQUIRE(md.exit_code == 0);
    CHECK(md.out.find("### Top kernels") != std::string::npos);
    CHECK(md.out.find("### Top CUDA API calls") != std::string::npos);

    const auto none = run_fp8scope({ "report", trace, "--top", "0", "--color", "never" });
    REQUIRE(none.exit_code == 0);
    CHECK(none.out.find("0 of ") != std::string::npos);
    CHECK(none.out.find("time%") == std::string::npos);

    const auto bad = run_fp8scope({ "report", trace, "--top", "-1" });
    CHECK(bad.exit_code == 2);
}

TEST_CASE("display_kernel_name drops void and the argument list, keeps templates", "[cli][report][top]")
{
    // Tested through the JSON's display_name on the FP8 trace: every demangled name that had an argument list.
    const auto doc = report(kTraces + "h100-train-fp8.sqlite", { "--top", "100000" });
    size_t with_arguments = 0;
    for (const auto& row : doc["top_kernels"]["rows"]) {
        const std::string name = row["name"], shown = row["display_name"];
        CHECK_FALSE(shown.starts_with("void "));
        CHECK(shown.size() <= 73); // 70 bytes and a 3-byte ellipsis at most
        if (name.ends_with(")") && name.find('(') != std::string::npos) {
            ++with_arguments;
            CHECK_FALSE(shown.ends_with(")"));
        }
    }
    CHECK(with_arguments > 0);
}

TEST_CASE("kernel names that would be cut to the same text are cut where they differ, and --wide shows them whole "
          "(issue 45)",
    "[cli][report][top]")
{
    // The BF16 sample's rows 8 and 9: two at::native::elementwise_kernel<128, 2, gpu_kernel_impl_nocast<...>> whose
    // first 70 bytes are the same (a where and an add).
    const std::string trace = kTraces + "h100-train-bf16.sqlite";
    const auto doc = report(trace, { "--top", "100000" });
    std::set<std::string> names, shown;
    for (const auto& row : doc["top_kernels"]["rows"]) {
        names.insert(row["name"].get<std::string>());
        shown.insert(row["display_name"].get<std::string>());
        CHECK(row["display_name"].get<std::string>().size() <= 73);
    }
    CHECK(shown.size() == names.size());
    const std::string text = run_fp8scope_ok({ "report", trace });
    CHECK(text.find("at::native::elementwise…at::native::(anonymous namespace)::where_ker…") != std::string::npos);
    CHECK(text.find("at::native::elementwise…at::native::CUDAFunctor_add<float> >(at::Ten…") != std::string::npos);
    // --wide: whole names (without the argument list); COLUMNS narrows the column, never below 30 bytes.
    const std::string wide = run_fp8scope_ok({ "report", trace, "--wide" });
    CHECK(wide.find("at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
                    "CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::"
                    "{lambda(int)#1}>")
        != std::string::npos);
    CHECK(fp8scope::cli::kernel_name_bytes_for(nullptr) == 70);
    CHECK(fp8scope::cli::kernel_name_bytes_for("200") == 119);
    CHECK(fp8scope::cli::kernel_name_bytes_for("100") == 30);
    CHECK(fp8scope::cli::kernel_name_bytes_for("wide") == 70);
}

TEST_CASE("report --format html has both tables, well-formed, the full name in each title", "[cli][report][top]")
{
    const std::string html
        = run_fp8scope_ok({ "report", kTraces + "h100-train-fp8.sqlite", "--format", "html", "--top", "3" });
    const auto doc = parse_xml(html);
    REQUIRE(doc.ok);
    CHECK(html.find("<h2>Top kernels</h2>") != std::string::npos);
    CHECK(html.find("<h2>Top CUDA API calls</h2>") != std::string::npos);
    CHECK(html.find("(3 of 90 names;") != std::string::npos);
    // The first kernel row's title holds the whole demangled name, its cell the shortened one.
    CHECK(html.find("<td title=\"void at::native::elementwise_kernel&lt;128, 4,") != std::string::npos);
    CHECK(html.find("<code>cudaLaunchKernel</code>") != std::string::npos);
}
