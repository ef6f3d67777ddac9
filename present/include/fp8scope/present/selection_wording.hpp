// The sentence that refuses a selection leaving nothing to analyse (analyzer Selection::empty): it names the CLI's
// options (`--warmup`, `--steps`, `--device`) and what the trace holds, so the user can correct the command. The CLI
// prints it as a usage error; the viewer, whose options are the defaults, shows it the same way.
#pragma once

#include "fp8scope/analyzer/report/report.hpp"

#include <string>

namespace fp8scope::present {

// "--device 99: no device 99 with GPU activity in the analysed steps; devices: 0", "--steps 500:600 selects none of
// steps 2–4", "--warmup 5 leaves no step: the trace has 5 steps (nvtx); use --warmup 4 or less"; empty when the
// selection kept something.
std::string empty_selection_text(const analyzer::Selection& selection);

} // namespace fp8scope::present
