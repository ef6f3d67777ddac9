// The page and the table cells that every HTML output shares (`report --format html`, `compare --format html`): one
// self-contained page (inline CSS, no script, nothing fetched), also well-formed XML, and cells whose text is
// always escaped (xml_escape.hpp), since it may come from an untrusted trace.
#pragma once

#include <string>
#include <string_view>

namespace fp8scope::cli {

// The doctype, the head with `title` (escaped) and the inline style sheet, and the opening <body> tag.
std::string html_page_start(std::string_view title);
inline constexpr std::string_view kHtmlPageEnd = "</body>\n</html>\n";

std::string html_cell(std::string_view text); // <td>text</td>
std::string html_num(std::string_view text); // a right-aligned numeric cell
// A tensor site label in a table cell. Labels start with the NVTX path from the step down, so a long one is cut at
// the front, at a "/", keeping the module and operand a reader looks for ("…/blocks.2.fc2 · input · A"); it may wrap
// after each "/" (and at the spaces of " · "), never inside a name; the cell's title holds the whole label. `note`
// (where a zero-code GEMM sits in the step) follows the code whole, in parentheses.
std::string html_site_cell(std::string_view label, std::string_view note = {});
// A row of a two-column table: a heading cell and `escaped_text`; `finding` marks the text as a problem.
std::string html_check_row(std::string_view name, const std::string& escaped_text, bool finding);

} // namespace fp8scope::cli
