#include "fp8scope/present/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <utility>

namespace fp8scope::present {

std::string format_duration_ns(int64_t ns)
{
    // Work on the magnitude as a double: INT64_MIN has no positive int64 counterpart.
    const double magnitude = ns < 0 ? -static_cast<double>(ns) : static_cast<double>(ns);
    const char* sign = ns < 0 ? "-" : "";
    if (magnitude < 1e3)
        return fmt::format("{}{} ns", sign, static_cast<int64_t>(magnitude));
    // The largest unit whose value, rounded to 3 decimals, stays below 1000 (999.9996 ms prints as 1.000 s).
    constexpr struct {
        double ns_per_unit;
        const char* name;
    } kUnits[] = { { 1e3, "us" }, { 1e6, "ms" } };
    for (const auto& unit : kUnits) {
        const double value = magnitude / unit.ns_per_unit;
        if (value < 999.9995)
            return fmt::format("{}{:.3f} {}", sign, value, unit.name);
    }
    return fmt::format("{}{:.3f} s", sign, magnitude / 1e9);
}

std::optional<int64_t> parse_duration_ns(std::string_view text)
{
    constexpr struct {
        std::string_view suffix;
        double ns;
    } kUnits[] = { { "ns", 1 }, { "us", 1e3 }, { "µs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
    for (const auto& unit : kUnits) {
        if (!text.ends_with(unit.suffix))
            continue;
        std::string number(text.substr(0, text.size() - unit.suffix.size()));
        if (!number.empty() && number.back() == ' ')
            number.pop_back();
        char* end = nullptr;
        const double value = std::strtod(number.c_str(), &end);
        // strtod also takes "inf", "nan" and hex; only plain decimal numbers are durations.
        if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(value) || value < 0
            || number.find_first_not_of("0123456789.eE+-") != std::string::npos || value * unit.ns > 1e15)
            return std::nullopt;
        return static_cast<int64_t>(std::llround(value * unit.ns));
    }
    return std::nullopt;
}

std::string format_bytes(int64_t bytes)
{
    if (bytes < 0)
        return fmt::format("{} B", bytes);
    constexpr const char* kUnits[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (bytes < 1024)
        return fmt::format("{} B", bytes);
    double value = static_cast<double>(bytes) / 1024.0;
    size_t unit = 0;
    // 1023.95 and up would print as "1024.0": go to the next unit instead.
    while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
        value /= 1024.0;
        ++unit;
    }
    return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::optional<std::string> format_utc_iso(int64_t utc_epoch_ns)
{
    // Floor division, so that times before 1970 keep a fraction in [0, 1e9).
    int64_t seconds = utc_epoch_ns / 1'000'000'000;
    int64_t fraction_ns = utc_epoch_ns % 1'000'000'000;
    if (fraction_ns < 0) {
        fraction_ns += 1'000'000'000;
        --seconds;
    }
    const auto time = static_cast<std::time_t>(seconds);
    std::tm tm {};
    if (gmtime_r(&time, &tm) == nullptr)
        return std::nullopt;
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
        tm.tm_hour, tm.tm_min, tm.tm_sec, fraction_ns);
}

std::string printable(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f)
            out += fmt::format("\\x{:02x}", byte);
        else
            out += c;
    }
    return out;
}

std::string shortened(std::string_view text, size_t max_bytes)
{
    if (text.size() <= max_bytes)
        return std::string(text);
    size_t cut = max_bytes;
    // Back over UTF-8 continuation bytes (10xxxxxx), so that no character is split.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        --cut;
    return std::string(text.substr(0, cut)) + "…";
}

std::string compact_duration(double ns)
{
    if (ns == 0)
        return "0";
    constexpr std::array<std::pair<double, const char*>, 3> kUnits { { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "µs" } } };
    for (const auto& [scale, unit] : kUnits)
        if (std::abs(ns) >= scale)
            return fmt::format("{:.3g} {}", ns / scale, unit);
    return fmt::format("{:.3g} ns", ns);
}

} // namespace fp8scope::present
