// fmt's non-inline part, compiled once into fp8scope_fmt (common/CMakeLists.txt).
//
// Debian 12 ships fmt 9 as a shared library and as headers, no static library. With FMT_HEADER_ONLY every source that
// includes <fmt/format.h> compiled format-inl.h again (about 4.5 s a source at -O2 on the CI machine's kind, ~150
// sources, twice a CI run: issue 46 item 8), and linking libfmt.so would carry it onto the GPU machines. So this one
// source defines fmt's out-of-line functions (format-inl.h without FMT_HEADER_ONLY declares them FMT_FUNC, not inline),
// and the templates that format.h declares `extern template` are instantiated here for char, the only character type
// fp8scope formats.
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template locale_ref::locale_ref(const std::locale& locale);
template auto locale_ref::get<std::locale>() const -> std::locale;

} // namespace detail
FMT_END_NAMESPACE
