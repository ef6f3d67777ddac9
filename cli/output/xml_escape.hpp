// Escaping of untrusted text (kernel names, NVTX paths, tensor site labels, API names and paths from a trace) for
// XML, HTML and Markdown, shared by every renderer that writes markup (check's and report's JUnit XML and
// Markdown, report's HTML), so there is one rule per language.
#pragma once

#include <string>
#include <string_view>

namespace fp8scope::cli {

// `text` made safe as XML 1.0 / HTML character data or a quoted attribute value: control characters as \xNN (as
// printable() shows them; XML 1.0 cannot carry most of them at all), &, <, >, " and ' as character references, and
// bytes that are not valid UTF-8 as U+FFFD, so that a strict XML parser never rejects the file.
std::string xml_escaped(std::string_view text);

// `text` as GitHub-flavoured Markdown inline text, also inside a table cell: control characters as \xNN, bad
// UTF-8 as U+FFFD, and each character Markdown could read as markup or as a cell boundary backslash-escaped
// (\ ` * _ [ ] < > & | ~ !; CommonMark allows a backslash before any ASCII punctuation). A kernel named
// "<b>**x**</b>" is then shown as written, and a "|" does not split a table row.
std::string markdown_escaped(std::string_view text);

// Where a Markdown code span goes: GFM splits table rows at "|" before it reads code spans, so in a table cell a
// "|" needs its backslash (which the cell then drops), and elsewhere it must not have one.
enum class MarkdownPlace { Text, TableCell };
// `text` as a Markdown code span (empty for empty text): control characters as \xNN, bad UTF-8 as U+FFFD, fenced
// by one backtick more than the longest run of backticks inside, padded with a space when it starts or ends with
// a backtick or a space (CommonMark strips one from each side).
std::string markdown_code(std::string_view text, MarkdownPlace place);

} // namespace fp8scope::cli
