// Formatting of numbers for people: durations, byte sizes, UTC times, and untrusted text made printable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8scope::present {

// "850 ns", "12.500 us", "3.250 ms", "1.500 s" (the largest unit that keeps the integer part >= 1).
std::string format_duration_ns(int64_t ns);
// A duration as a person writes it: a number and its unit, "850ns", "200us" (or "µs"), "5ms", "1.5s" (a space
// before the unit allowed). The unit is required: a bare "5" could mean 5 s or 5 ms, and a budget read the wrong way
// passes silently. nullopt for anything else, a negative value, or more than 10^6 s.
std::optional<int64_t> parse_duration_ns(std::string_view text);
// "512 B", "1.5 KiB", "80.0 GiB" (binary units, as nvidia-smi reports memory in MiB).
std::string format_bytes(int64_t bytes);
// ns since the Unix epoch as ISO 8601 UTC with ns, "2026-11-21T00:00:00.000000000Z"; nullopt when out of the
// range gmtime can represent.
std::optional<std::string> format_utc_iso(int64_t utc_epoch_ns);
// Trace text is untrusted: control characters (a newline in a host name would break the one-item-per-line
// layout, an escape sequence would reach the terminal) are shown as \xNN.
std::string printable(std::string_view text);
// `text` cut to at most `max_bytes` bytes at a UTF-8 character boundary, with "…" added when cut (a cell or a line
// with a long kernel name or site label; the full text goes where there is room, e.g. an HTML title attribute).
std::string shortened(std::string_view text, size_t max_bytes);

// "850 ns", "12.5 µs", "3.25 ms", "1.5 s": three significant digits, for chart axes and tooltips.
std::string compact_duration(double ns);

} // namespace fp8scope::present
