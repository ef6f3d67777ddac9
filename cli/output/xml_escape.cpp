#include "output/xml_escape.hpp"

#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"

#include <algorithm>

namespace fp8scope::cli {

namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD"; // U+FFFD in UTF-8

// Length of the well-formed UTF-8 sequence at the start of `text` (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), or 0 when it is not one.
size_t utf8_sequence_length(std::string_view text)
{
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF; // the allowed range of the second byte
    if (lead < 0x80)
        return 1;
    if (lead >= 0xC2 && lead <= 0xDF)
        length = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        low = lead == 0xE0 ? 0xA0 : 0x80;
        high = lead == 0xED ? 0x9F : 0xBF;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        low = lead == 0xF0 ? 0x90 : 0x80;
        high = lead == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (text.size() < length || byte(1) < low || byte(1) > high)
        return 0;
    for (size_t i = 2; i < length; ++i)
        if (byte(i) < 0x80 || byte(i) > 0xBF)
            return 0;
    return length;
}

// printable(), with bytes that are not valid UTF-8 replaced by U+FFFD; `ascii` writes each ASCII character.
template <class Ascii> std::string valid_printable(std::string_view text, Ascii ascii)
{
    const std::string shown = printable(text);
    std::string out;
    out.reserve(shown.size());
    std::string_view rest = shown;
    while (!rest.empty()) {
        const size_t length = utf8_sequence_length(rest);
        if (length == 0) {
            out += kReplacementCharacter;
            rest.remove_prefix(1);
        } else if (length > 1) {
            out += rest.substr(0, length);
            rest.remove_prefix(length);
        } else {
            ascii(out, rest.front());
            rest.remove_prefix(1);
        }
    }
    return out;
}

} // namespace

std::string xml_escaped(std::string_view text)
{
    return valid_printable(text, [](std::string& out, char c) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    });
}

std::string markdown_escaped(std::string_view text)
{
    constexpr std::string_view kMarkup = "\\`*_[]<>&|~!";
    return valid_printable(text, [&](std::string& out, char c) {
        if (kMarkup.find(c) != std::string_view::npos)
            out += '\\';
        out += c;
    });
}

std::string markdown_code(std::string_view text, MarkdownPlace place)
{
    std::string content = valid_printable(text, [&](std::string& out, char c) {
        if (c == '|' && place == MarkdownPlace::TableCell)
            out += '\\';
        out += c;
    });
    if (content.empty())
        return content;
    size_t longest_run = 0, run = 0;
    for (const char c : content) {
        run = c == '`' ? run + 1 : 0;
        longest_run = std::max(longest_run, run);
    }
    const std::string fence(longest_run + 1, '`');
    const auto needs_padding = [](char c) { return c == '`' || c == ' '; };
    const std::string pad = needs_padding(content.front()) || needs_padding(content.back()) ? " " : "";
    return fence + pad + content + pad + fence;
}

} // namespace fp8scope::cli
