// Placeholder: being written (issue 4).
#include "fp8scope/analyzer/host_blocking.hpp"
