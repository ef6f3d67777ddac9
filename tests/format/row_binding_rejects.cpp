// Compiled by CTest only (tests/format/CMakeLists.txt), once per CASE: each case but 0 is a mistake that one table's
// declaration (schema.hpp, the kernel view's in schema_view.hpp, the nsys export's in nsys_schema.hpp) must stop when
// the code is compiled, not when a trace is written or read. Case 0 is the same code without the mistake, so that the
// others fail for their own reason.
#include "fp8scope/format/nsys_schema.hpp"
#include "row_binding.hpp"

#include <cstdint>
#include <optional>

using namespace fp8scope;

namespace views {
using namespace schema::detail;
constexpr schema::Column kEnd[] = { { "end", "INTEGER", false, "ns", 0 } };
constexpr schema::Column kLost[] = { { "ending", "INTEGER", false, "ns", 0 } };
constexpr schema::view::Computed kEndComputed[] = { { "end", "k.start + k.duration" } };
constexpr schema::view::Computed kMisnamedComputed[] = { { "end", "k.start + k.durationNs" } };
} // namespace views
constexpr schema::view::Definition kGoodView { views::kEnd, schema::detail::kKernelViewSources, views::kEndComputed };
constexpr schema::view::Definition kLostView { views::kLost, schema::detail::kKernelViewSources, views::kEndComputed };
constexpr schema::view::Definition kMisnamedView { views::kEnd, schema::detail::kKernelViewSources,
    views::kMisnamedComputed };

constexpr schema::nsys::AddedColumn kPlaced[] = { { "greenContextId", "contextId" } };
constexpr schema::nsys::AddedColumn kMisplaced[] = { { "greenContextId", "contextID" } };
constexpr schema::nsys::Extension kPlacedColumn { schema::tables::kMemset, kPlaced, {} };
constexpr schema::nsys::Extension kMisplacedColumn { schema::tables::kMemset, kMisplaced, {} };

void bind_dropped(sqlite3_stmt* stmt)
{
    constexpr const schema::Table& kDropped = schema::tables::kDropped; // timestamp, source, count, deviceId (nullable)
#if CASE == 1 // a value left out: a column added to the declaration that a writer does not bind
    writer_detail::bind_row<kDropped>(stmt, int64_t { 1 }, schema::DropSource::WriterError, int64_t { 2 });
#elif CASE == 2 // an optional bound to a NOT NULL column
    writer_detail::bind_row<kDropped>(
        stmt, int64_t { 1 }, schema::DropSource::WriterError, std::optional<int64_t> {}, std::nullopt);
#elif CASE == 3 // a REAL value bound to an INTEGER column
    writer_detail::bind_row<kDropped>(stmt, int64_t { 1 }, 2.0, int64_t { 2 }, std::nullopt);
#elif CASE == 4 // a column the table does not declare, named by a reader
    [[maybe_unused]] constexpr schema::ColumnOf<kDropped> column("deviceID");
#elif CASE == 5 // a column of the kernel view that neither table it reads declares
    [[maybe_unused]] constexpr auto select = schema::view::SelectText<kLostView>::kText;
#elif CASE == 6 // a computed column of the kernel view naming a column its table does not declare
    [[maybe_unused]] constexpr auto select = schema::view::SelectText<kMisnamedView>::kText;
#elif CASE == 7 // a column of the nsys export placed after one the table lacks
    [[maybe_unused]] constexpr auto columns = schema::nsys::detail::kColumns<kMisplacedColumn>;
#else
    writer_detail::bind_row<kDropped>(
        stmt, int64_t { 1 }, schema::DropSource::WriterError, int64_t { 2 }, std::nullopt);
    [[maybe_unused]] constexpr schema::ColumnOf<kDropped> column("deviceId");
    [[maybe_unused]] constexpr auto select = schema::view::SelectText<kGoodView>::kText;
    [[maybe_unused]] constexpr auto columns = schema::nsys::detail::kColumns<kPlacedColumn>;
#endif
}
