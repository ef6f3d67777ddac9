// One-line messages on stderr. The collector never throws and never exits: it warns once and degrades.
// Written with write(2), so a message is one atomic line even when the job's threads print at the same time.
#pragma once

#include <string_view>

namespace fp8scope::collector {

// "fp8scope: warning: <text>\n"
void warn(std::string_view text);
// warn(text) the first time `key` is seen in this process; later calls with the same key print nothing.
void warn_once(std::string_view key, std::string_view text);
// "fp8scope: <text>\n" only with FP8SCOPE_VERBOSE=1: a traced job's output stays its own.
void inform(std::string_view text);

} // namespace fp8scope::collector
