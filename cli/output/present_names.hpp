// The CLI words its output with the presentation library (present/, docs/architecture.md), which the viewer links
// too. Every CLI file that uses its figures and sentences includes this, so that they read as the CLI's own names.
#pragma once

namespace fp8scope::present {
}

namespace fp8scope::cli {
using namespace fp8scope::present;
} // namespace fp8scope::cli
