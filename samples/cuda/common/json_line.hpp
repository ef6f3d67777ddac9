// Builds the one-line JSON object that each sample prints after "FP8SCOPE_GROUND_TRUTH ". Hand-written so that the
// samples need nothing beyond the CUDA toolkit; it only has to write objects, arrays, integers and plain strings.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::samples {

class JsonLine {
public:
    JsonLine() { open('{'); }

    JsonLine& key(std::string_view name)
    {
        separate();
        write_string(name);
        text_ += ':';
        after_key_ = true;
        return *this;
    }

    JsonLine& value(std::int64_t number)
    {
        separate();
        text_ += std::to_string(number);
        return *this;
    }
    JsonLine& value(std::uint64_t number)
    {
        separate();
        text_ += std::to_string(number);
        return *this;
    }
    JsonLine& value(int number) { return value(static_cast<std::int64_t>(number)); }
    JsonLine& value(bool flag)
    {
        separate();
        text_ += flag ? "true" : "false";
        return *this;
    }
    JsonLine& value(std::string_view text)
    {
        separate();
        write_string(text);
        return *this;
    }
    JsonLine& value(const char* text) { return value(std::string_view(text)); }

    template <typename T> JsonLine& field(std::string_view name, T v) { return key(name).value(v); }

    JsonLine& begin_object()
    {
        separate();
        open('{');
        return *this;
    }
    JsonLine& end_object() { return close('}'); }
    JsonLine& begin_array()
    {
        separate();
        open('[');
        return *this;
    }
    JsonLine& end_array() { return close(']'); }

    // Closes the outer object and prints "FP8SCOPE_GROUND_TRUTH {...}" as the last line of stdout.
    void print_ground_truth()
    {
        close('}');
        std::printf("FP8SCOPE_GROUND_TRUTH %s\n", text_.c_str());
        std::fflush(stdout);
    }

private:
    void open(char bracket)
    {
        text_ += bracket;
        first_in_scope_.push_back(true);
    }
    JsonLine& close(char bracket)
    {
        text_ += bracket;
        first_in_scope_.pop_back();
        return *this;
    }
    // Writes the comma between members, except for the value that follows its key.
    void separate()
    {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!first_in_scope_.back()) {
            text_ += ',';
        }
        first_in_scope_.back() = false;
    }
    void write_string(std::string_view s)
    {
        text_ += '"';
        for (const char c : s) {
            if (c == '"' || c == '\\') {
                text_ += '\\';
                text_ += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
                text_ += escaped;
            } else {
                text_ += c;
            }
        }
        text_ += '"';
    }

    std::string text_;
    std::vector<bool> first_in_scope_;
    bool after_key_ = false;
};

} // namespace fp8scope::samples
