#include "python_test_support.hpp"

#include "subprocess.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace fp8scope::testing {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);)
        lines.push_back(line);
    return lines;
}

} // namespace

ScenarioRun run_scenario(const std::string& scenario, const std::vector<std::string>& env_extra)
{
    // One folder per run: ctest -j runs test cases of one scenario side by side, in separate processes.
    static int runs = 0;
    const fs::path dir = fs::path(FP8SCOPE_TEST_TMP) / "python"
        / (scenario + "-" + std::to_string(getpid()) + "-" + std::to_string(++runs));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path log = dir / "calls.log";
    const char* path = std::getenv("PATH");
    std::vector<std::string> argv { "/usr/bin/env", "-i", std::string("PATH=") + (path ? path : "/usr/bin:/bin"),
        "PYTHONPATH=" FP8SCOPE_PYTHON_PACKAGE_DIR, "PYTHONDONTWRITEBYTECODE=1", "FAKE_FP8SCOPE_LIB=" + kFakeCollector,
        "FAKE_FP8SCOPE_LOG=" + log.string() };
    argv.insert(argv.end(), env_extra.begin(), env_extra.end());
    argv.insert(argv.end(), { FP8SCOPE_PYTHON3, FP8SCOPE_PACKAGE_SCENARIOS, scenario });

    const auto result = run_process(argv);
    INFO("stdout:\n" << result.out << "stderr:\n" << result.err);
    REQUIRE(result.exit_code == 0);
    REQUIRE(result.err.empty()); // the scenario prints the warnings it catches on stdout: stderr stays empty

    ScenarioRun run;
    for (const auto& line : lines_of(result.out)) {
        if (line.starts_with("warning: ")) {
            run.warnings.push_back(line.substr(9));
        } else if (const auto eq = line.find('='); eq != std::string::npos) {
            run.values[line.substr(0, eq)] = line.substr(eq + 1);
        }
    }
    REQUIRE(run.values.count("warnings") == 1);
    REQUIRE(run.values.at("warnings") == std::to_string(run.warnings.size()));
    CHECK(run.values.at("torch_after_import") == "False");
    if (std::ifstream file(log); file) {
        run.log_written = true;
        std::ostringstream text;
        text << file.rdbuf();
        run.calls = lines_of(text.str());
    }
    fs::remove_all(dir); // kept only when a REQUIRE above failed
    return run;
}

size_t warnings_containing(const ScenarioRun& run, const std::string& needle)
{
    size_t n = 0;
    for (const auto& warning : run.warnings)
        n += warning.find(needle) != std::string::npos;
    return n;
}

std::string probe_line(const std::string& fields)
{
    return "probe " + fields + " struct_size=ok";
}

} // namespace fp8scope::testing
