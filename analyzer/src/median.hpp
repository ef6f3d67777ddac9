// The median the analyses use (ε, step lengths, idle before an anchor): the upper median, an element of the input,
// 0 for no values. Takes the values by value and reorders its copy; move a vector in when it is not needed after.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fp8scope::analyzer::detail {

inline int64_t median_of(std::vector<int64_t> values)
{
    if (values.empty())
        return 0;
    auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

} // namespace fp8scope::analyzer::detail
