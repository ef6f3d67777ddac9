// A small flag parser for the samples: "--name value" or "--name=value", integers only, each flag with a default
// and a range. The samples take no other dependency than the CUDA toolkit, so that they build on a bare GPU
// machine with nvcc and CMake alone.
#pragma once

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.cuh"

namespace fp8scope::samples {

class Args {
public:
    // summary: one line saying what the sample does, printed by --help.
    Args(int argc, char** argv, const char* sample, const char* summary)
        : sample_(sample)
        , summary_(summary)
    {
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            if (arg == "--help" || arg == "-h") {
                help_ = true;
                continue;
            }
            if (arg.rfind("--", 0) != 0) {
                usage_error("unexpected argument '" + arg + "'");
            }
            const std::size_t equals = arg.find('=');
            if (equals != std::string::npos) {
                flags_.push_back({ arg.substr(2, equals - 2), arg.substr(equals + 1), false });
            } else if (i + 1 < argc) {
                flags_.push_back({ arg.substr(2), argv[++i], false });
            } else {
                usage_error("flag '" + arg + "' needs a value");
            }
        }
    }

    // Returns the flag's value, or default_value when it is absent. Values outside [min_value, max_value] are
    // usage errors.
    std::int64_t integer(const char* name, std::int64_t default_value, std::int64_t min_value, std::int64_t max_value,
        const char* meaning)
    {
        char line[512];
        std::snprintf(line, sizeof line, "  --%-16s %s (default %" PRId64 ", range %" PRId64 "..%" PRId64 ")\n", name,
            meaning, default_value, min_value, max_value);
        help_text_ += line;
        std::int64_t value = default_value;
        for (Flag& flag : flags_) {
            if (flag.name != name) {
                continue;
            }
            flag.used = true;
            errno = 0;
            char* end = nullptr;
            const long long parsed = std::strtoll(flag.value.c_str(), &end, 10);
            if (errno != 0 || end == flag.value.c_str() || *end != '\0') {
                usage_error("--" + flag.name + " expects an integer, got '" + flag.value + "'");
            }
            value = parsed;
        }
        if (value < min_value || value > max_value) {
            usage_error("--" + std::string(name) + " must be in " + std::to_string(min_value) + ".."
                + std::to_string(max_value));
        }
        return value;
    }

    // Call after the last integer(): handles --help and rejects unknown flags.
    void finish()
    {
        if (help_) {
            std::printf("%s: %s\n\nFlags:\n%s\nExit codes: 0 ok, 1 CUDA error or failed self-check, 2 usage error, "
                        "77 no CUDA device.\n",
                sample_, summary_, help_text_.c_str());
            std::exit(kExitOk);
        }
        for (const Flag& flag : flags_) {
            if (!flag.used) {
                usage_error("unknown flag '--" + flag.name + "'");
            }
        }
    }

private:
    struct Flag {
        std::string name;
        std::string value;
        bool used = false;
    };

    [[noreturn]] void usage_error(const std::string& message) const
    {
        std::fprintf(stderr, "%s: %s (see --help)\n", sample_, message.c_str());
        std::exit(kExitUsage);
    }

    const char* sample_;
    const char* summary_;
    std::vector<Flag> flags_;
    std::string help_text_;
    bool help_ = false;
};

} // namespace fp8scope::samples
