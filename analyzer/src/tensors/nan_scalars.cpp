// Scalars that went NaN: counted per name over TraceModel::scalars, which the loader keeps in time order, NaN rows of
// FP8SCOPE_SCALAR_NAN merged in (trace format 1.4).
#include "fp8scope/analyzer/tensors/nan_scalars.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace fp8scope::analyzer {

std::vector<NanScalar> find_nan_scalars(const TraceModel& model)
{
    std::map<uint32_t, NanScalar> by_name; // by StringRef index: one entry per name
    for (const Scalar& scalar : model.scalars) {
        NanScalar& entry = by_name[scalar.name.index];
        ++entry.values;
        if (!std::isnan(scalar.value))
            continue;
        if (entry.nan_values++ == 0) {
            entry.first_step = scalar.step;
            entry.first_ns = scalar.timestamp_ns;
        }
    }
    std::vector<NanScalar> found;
    for (auto& [name, entry] : by_name) {
        if (entry.nan_values == 0)
            continue;
        entry.name = name < model.strings.size() ? std::string(model.strings[StringRef { name }]) : std::string();
        found.push_back(std::move(entry));
    }
    std::ranges::sort(found, {}, [](const NanScalar& s) { return std::tie(s.first_ns, s.name); });
    return found;
}

} // namespace fp8scope::analyzer
