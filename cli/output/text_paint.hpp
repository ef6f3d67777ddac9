// ANSI colour for the text outputs of `report` and `compare` (docs/cli.md "Colour"): only when the caller asks for it
// (a terminal, or --color always). With colour off every piece is the plain text, byte for byte, which keeps piped
// output identical to an uncoloured report.
#pragma once

#include "fp8scope/present/figures.hpp"
#include "output/present_names.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace fp8scope::cli {

// ANSI SGR codes (1 bold, 31 red, 33 yellow, 32 green, 36 cyan), each piece reset after itself.
class Paint {
public:
    explicit Paint(bool on)
        : on_(on)
    {
    }
    std::string heading(std::string_view text) const { return wrap("1", text); }
    std::string ratio(std::string_view text, double ratio) const
    {
        switch (bubble_ratio_severity(ratio)) {
        case Severity::Bad:
            return wrap("1;31", text);
        case Severity::Warn:
            return wrap("33", text);
        case Severity::Ok:
            break;
        }
        return good(text);
    }
    std::string highlight(std::string_view text) const { return wrap("1;36", text); }
    std::string warning(std::string_view text) const { return wrap("1;31", text); }
    std::string good(std::string_view text) const { return wrap("32", text); }

private:
    std::string wrap(const char* sgr, std::string_view text) const
    {
        return on_ ? fmt::format("\x1b[{}m{}\x1b[0m", sgr, text) : std::string(text);
    }
    bool on_;
};

// A blank line, then `text` as a heading line. Appended piece by piece: `"\n" + paint.heading(...)` makes GCC 12's
// -Wrestrict misfire at -O3 (GCC bug 105329), a screen of warnings in the Release build of scripts/demo.sh.
inline void heading_line(std::string& out, const Paint& paint, std::string_view text)
{
    out += '\n';
    out += paint.heading(text);
    out += '\n';
}

} // namespace fp8scope::cli
