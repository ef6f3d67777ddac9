// Formatting of durations, sizes, UTC times and untrusted text in `fp8scope info`.
#include "fp8scope/present/units.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

using namespace fp8scope::present;

TEST_CASE("durations use the largest unit that keeps the value below 1000", "[cli][units]")
{
    CHECK(format_duration_ns(0) == "0 ns");
    CHECK(format_duration_ns(999) == "999 ns");
    CHECK(format_duration_ns(1'000) == "1.000 us");
    CHECK(format_duration_ns(70'000) == "70.000 us");
    CHECK(format_duration_ns(999'999) == "999.999 us");
    CHECK(format_duration_ns(1'000'000) == "1.000 ms");
    CHECK(format_duration_ns(4'875'500) == "4.875 ms"); // fmt rounds half to even on the exact binary value
    CHECK(format_duration_ns(999'999'600) == "1.000 s"); // would round to "1000.000 ms"
    CHECK(format_duration_ns(90'500'000'000) == "90.500 s");
    CHECK(format_duration_ns(-2'500) == "-2.500 us");
    CHECK(format_duration_ns(std::numeric_limits<int64_t>::min()) == "-9223372036.855 s");
}

TEST_CASE("byte sizes use binary units with one decimal", "[cli][units]")
{
    CHECK(format_bytes(0) == "0 B");
    CHECK(format_bytes(1023) == "1023 B");
    CHECK(format_bytes(1024) == "1.0 KiB");
    CHECK(format_bytes(1536) == "1.5 KiB");
    CHECK(format_bytes(1024 * 1024 - 1) == "1.0 MiB"); // not "1024.0 KiB"
    CHECK(format_bytes(85'520'809'984) == "79.6 GiB");
    CHECK(format_bytes(std::numeric_limits<int64_t>::max()) == "8.0 EiB");
    CHECK(format_bytes(-5) == "-5 B");
}

TEST_CASE("UTC times are ISO 8601 with ns, also before 1970, and absent when out of range", "[cli][units]")
{
    CHECK(format_utc_iso(0) == "1970-01-01T00:00:00.000000000Z");
    CHECK(format_utc_iso(1'795'219'200'000'000'000) == "2026-11-21T00:00:00.000000000Z");
    CHECK(format_utc_iso(1'795'219'200'123'456'789) == "2026-11-21T00:00:00.123456789Z");
    CHECK(format_utc_iso(-1) == "1969-12-31T23:59:59.999999999Z");
    // int64 ns spans years 1677 to 2262: all representable.
    CHECK(format_utc_iso(std::numeric_limits<int64_t>::max()).has_value());
    CHECK(format_utc_iso(std::numeric_limits<int64_t>::min()).has_value());
}

TEST_CASE("untrusted text is shown with control characters escaped", "[cli][units]")
{
    CHECK(printable("node-1") == "node-1");
    CHECK(printable("evil\nhost") == "evil\\x0ahost");
    CHECK(printable("\x1b[31mred") == "\\x1b[31mred");
    CHECK(printable("del\x7f") == "del\\x7f");
    CHECK(printable("H100 \xc3\xa9") == "H100 \xc3\xa9"); // UTF-8 passes through
}
