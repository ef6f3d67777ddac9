// Escaping of untrusted text (kernel names, NVTX paths, API names and paths from a trace) for XML and HTML, shared
// by every renderer that writes markup (check's and report's JUnit XML, report's HTML), so there is one rule.
#pragma once

#include <string>
#include <string_view>

namespace fp8scope::cli {

// `text` made safe as XML 1.0 / HTML character data or a quoted attribute value: control characters as \xNN (as
// printable() shows them; XML 1.0 cannot carry most of them at all), &, <, >, " and ' as character references, and
// bytes that are not valid UTF-8 as U+FFFD, so that a strict XML parser never rejects the file.
std::string xml_escaped(std::string_view text);

} // namespace fp8scope::cli
