// Kernel names as nsys shows them: the demangled signature and a short name, the bare function name without
// scope, template arguments or parameters ("void at::native::foo<float>(int, float*)" -> "foo").
//
// Names come from CUPTI records, so they are only semi-trusted: the short-name scanner is a single forward pass
// with clamped nesting counters that never reads out of bounds and always returns a piece of its input.
#include "fp8scope/format/trace_db.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace fp8scope {

namespace {

// libstdc++'s demangler recurses per nesting level; CUTLASS names reach a few KiB, so anything much longer
// is not a real kernel name and is kept as is.
constexpr size_t kMaxDemangleInput = 64 * 1024;

constexpr bool is_identifier_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// Operator symbols, longest first so that "<<=" wins over "<<" and "<".
constexpr std::array<std::string_view, 41> kOperatorSymbols = {
    "<=>",
    "<<=",
    ">>=",
    "->*",
    "()",
    "[]",
    "->",
    "<<",
    ">>",
    "<=",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "++",
    "--",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "&",
    "|",
    "~",
    "!",
    "=",
    ",",
    "\"\"",
    "co_await",
};

// Length of the operator name starting at `pos`, which points just past the keyword "operator"; 0 if it is
// not followed by an operator (then "operator" is an ordinary identifier part).
size_t operator_length(std::string_view text, size_t pos)
{
    const std::string_view rest = text.substr(pos);
    for (const auto symbol : kOperatorSymbols) {
        if (rest.starts_with(symbol))
            return symbol.size();
    }
    if (rest.starts_with(' ')) {
        // "operator new", "operator delete[]", or a conversion "operator unsigned int": up to the parameter
        // list or the template arguments.
        size_t n = 1;
        while (n < rest.size() && rest[n] != '(' && rest[n] != '<')
            ++n;
        return n;
    }
    return 0;
}

} // namespace

std::string demangle_kernel_name(std::string_view mangled)
{
    // Itanium C++ ABI names start with "_Z"; anything else (extern "C" kernels such as cuBLAS' sm90_xmma_*)
    // is already its own demangled form.
    if (!mangled.starts_with("_Z") || mangled.size() > kMaxDemangleInput)
        return std::string(mangled);
    const std::string input(mangled); // __cxa_demangle needs a NUL-terminated string
    int status = 0;
    const std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status), &std::free);
    if (status != 0 || !demangled)
        return input;
    return std::string(demangled.get());
}

std::string kernel_short_name(std::string_view demangled)
{
    // One pass at nesting depth 0 (over <>, (), [] and {}): "::" starts a new scope component, a space ends a
    // return type, the first '(' that is neither "(anonymous namespace)" nor part of an operator name opens
    // the parameter list. The short name is the last component up to its template arguments.
    int angle = 0;
    int paren = 0;
    int other = 0; // [] and {}
    size_t component_start = 0;
    size_t name_end = std::string_view::npos; // where the current component's template arguments begin
    size_t i = 0;
    const size_t n = demangled.size();
    while (i < n) {
        const char c = demangled[i];
        const bool top = angle == 0 && paren == 0 && other == 0;
        if (top) {
            const bool at_word_start = i == component_start || !is_identifier_char(demangled[i - 1]);
            if (c == 'o' && at_word_start && demangled.substr(i).starts_with("operator")
                && (i + 8 == n || !is_identifier_char(demangled[i + 8]))) {
                const size_t length = operator_length(demangled, i + 8);
                i += 8 + length;
                continue;
            }
            if (c == '(' && demangled.substr(i).starts_with("(anonymous namespace)")) {
                i += std::string_view("(anonymous namespace)").size();
                continue;
            }
            if (c == '(')
                break; // the parameter list
            if (c == ':' && i + 1 < n && demangled[i + 1] == ':') {
                component_start = i + 2;
                name_end = std::string_view::npos;
                i += 2;
                continue;
            }
            if (c == ' ' && name_end == std::string_view::npos) {
                component_start = i + 1; // what came before was the return type
                ++i;
                continue;
            }
            if (c == '<' && name_end == std::string_view::npos)
                name_end = i;
        }
        switch (c) {
        case '<':
            ++angle;
            break;
        case '>':
            // "->" inside template arguments is not a closing bracket.
            if (angle > 0 && !(i > 0 && demangled[i - 1] == '-'))
                --angle;
            break;
        case '(':
            ++paren;
            break;
        case ')':
            if (paren > 0)
                --paren;
            break;
        case '[':
        case '{':
            ++other;
            break;
        case ']':
        case '}':
            if (other > 0)
                --other;
            break;
        default:
            break;
        }
        ++i;
    }
    const size_t end = std::min(i, name_end);
    if (component_start >= end)
        return std::string(demangled);
    return std::string(demangled.substr(component_start, end - component_start));
}

} // namespace fp8scope
