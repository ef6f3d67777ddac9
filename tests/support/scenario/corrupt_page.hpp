// Damage to a written trace that SQLite itself does not notice while reading, for the loader's corruption tests.
#pragma once

#include "fp8scope/common/error.hpp"

#include <string>

namespace fp8scope::testing {

// Tells the root page of `table`, which must be a single table-leaf page (type 0x0D), that it holds `keep` cells,
// as a torn write or a flipped bit in its header would (sqlite.org/fileformat2.html, "B-tree Page Header Format":
// the cell count is bytes 3-4, big-endian). A plain SELECT then returns `keep` rows and no error. Returns the cell
// count the page had.
Expected<int> hide_cells_of_leaf_table(const std::string& path, const std::string& table, int keep);

} // namespace fp8scope::testing
