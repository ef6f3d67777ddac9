// The median the analyses use (ε, step lengths, idle before an anchor): the upper median, an element of the input,
// 0 for no values. Takes the values by value and reorders its copy; move a vector in when it is not needed after.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace fp8scope::analyzer::detail {

// The upper median of any values (a double's too), reordering them in place; Value{} for no values.
template <typename Value> Value upper_median_value(std::vector<Value>& values)
{
    if (values.empty())
        return Value {};
    auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

template <typename Value> int64_t upper_median(std::vector<Value>& values)
{
    return int64_t { upper_median_value(values) };
}

inline int64_t median_of(std::vector<int64_t> values)
{
    return upper_median(values);
}

// Many values (one per kernel or API call) kept for a median or percentiles: 4 bytes each while every value fits
// int32, 8 bytes from the first one that does not. Launch latencies, launch delays and the silences between API
// calls are ns, nearly always far under int32's 2.1 s: on a 10 M-kernel trace 40 MB instead of 80
// (docs/benchmarks.md "The analyzer at the speed of its storage"). The order statistics are the same either way.
class SampleValues {
public:
    void reserve(size_t count)
    {
        reserved_ = count;
        narrow_.reserve(count);
    }

    void push_back(int64_t value)
    {
        if (!wide_mode_ && value >= std::numeric_limits<int32_t>::min()
            && value <= std::numeric_limits<int32_t>::max()) {
            narrow_.push_back(static_cast<int32_t>(value));
            return;
        }
        if (!wide_mode_)
            widen();
        wide_.push_back(value);
    }

    size_t size() const { return wide_mode_ ? wide_.size() : narrow_.size(); }

    // Calls `use` with the vector that holds the values (std::vector<int32_t> or std::vector<int64_t>).
    template <typename Use> decltype(auto) visit(Use&& use) { return wide_mode_ ? use(wide_) : use(narrow_); }

    int64_t median()
    {
        return visit([](auto& values) { return upper_median(values); });
    }

    // Keeps the values whose flag in `selected` (one per value, in push order) is true, in order, in place: a
    // subset's median without a second copy of the values.
    void keep(const std::vector<bool>& selected)
    {
        visit([&](auto& values) {
            size_t kept = 0;
            for (size_t i = 0; i < values.size(); ++i)
                if (selected[i])
                    values[kept++] = values[i];
            values.resize(kept);
        });
    }

    void release()
    {
        std::vector<int32_t>().swap(narrow_);
        std::vector<int64_t>().swap(wide_);
    }

private:
    void widen()
    {
        wide_mode_ = true;
        wide_.reserve(std::max(reserved_, narrow_.size() + 1));
        wide_.assign(narrow_.begin(), narrow_.end());
        std::vector<int32_t>().swap(narrow_);
    }

    bool wide_mode_ = false;
    size_t reserved_ = 0;
    std::vector<int32_t> narrow_;
    std::vector<int64_t> wide_;
};

} // namespace fp8scope::analyzer::detail
