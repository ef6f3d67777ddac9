// Placeholder: being written (issue 4).
#include "fp8scope/analyzer/analysis_types.hpp"
