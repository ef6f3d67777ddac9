#include "output/html_page.hpp"

#include "output/xml_escape.hpp"

#include <fmt/format.h>

namespace fp8scope::cli {

namespace {

constexpr size_t kMaxSiteCellBytes = 72; // the site column of a table; the cell's title has the whole label

constexpr std::string_view kStyle
    = R"(body{font:14px/1.45 system-ui,sans-serif;max-width:980px;margin:1.5em auto;padding:0 1em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em}h2{border-bottom:1px solid #ddd;margin-top:1.6em}h3{font-size:1em;margin:.8em 0 .2em}
table{border-collapse:collapse;margin:.4em 0 1em}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n,table.n td{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code{font-size:12px;word-break:break-all}.note{color:#555;font-size:12px;margin-top:0}
td.site{min-width:16em;max-width:28em}td.site code{word-break:normal;overflow-wrap:anywhere}
.ok{color:#1a7f37}.warn{color:#9a6700;font-weight:bold}.bad{color:#c62828;font-weight:bold}
)";

} // namespace

std::string html_page_start(std::string_view title)
{
    return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                       "<title>{}</title>\n<style>\n{}</style>\n</head>\n<body>\n",
        xml_escaped(title), kStyle);
}

std::string html_cell(std::string_view text)
{
    return "<td>" + xml_escaped(text) + "</td>";
}

std::string html_num(std::string_view text)
{
    return "<td class=\"n\">" + xml_escaped(text) + "</td>";
}

std::string html_site_cell(std::string_view label, std::string_view note)
{
    std::string shown(label);
    if (label.size() > kMaxSiteCellBytes) {
        size_t from = label.size() - kMaxSiteCellBytes;
        const size_t slash = label.find('/', from);
        const bool at_slash = slash != std::string_view::npos && slash + 1 < label.size();
        if (at_slash)
            from = slash + 1;
        while (from < label.size() && (static_cast<unsigned char>(label[from]) & 0xC0) == 0x80)
            ++from; // not inside a UTF-8 character
        shown = (at_slash ? "…/" : "…") + std::string(label.substr(from));
    }
    std::string cell;
    for (const char c : xml_escaped(shown)) {
        cell += c;
        if (c == '/')
            cell += "<wbr/>";
    }
    if (note.empty())
        return fmt::format("<td class=\"site\" title=\"{}\"><code>{}</code></td>", xml_escaped(label), cell);
    return fmt::format("<td class=\"site\" title=\"{} ({})\"><code>{}</code> ({})</td>", xml_escaped(label),
        xml_escaped(note), cell, xml_escaped(note));
}

std::string html_check_row(std::string_view name, const std::string& escaped_text, bool finding)
{
    return fmt::format(
        "<tr><th>{}</th><td{}>{}</td></tr>\n", xml_escaped(name), finding ? " class=\"bad\"" : "", escaped_text);
}

} // namespace fp8scope::cli
