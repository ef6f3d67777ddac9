// The CUPTI types the collector's CUPTI table and state machines use (cupti_api.hpp, cupti_settings.hpp,
// cupti_attachment.hpp). With the CUDA toolkit they are CUPTI's own, from <cupti.h>; without it (a machine that builds
// only the analyzer and the tests) they are ours (cupti_own_types.hpp), so that those state machines and their
// fake-CUPTI tests build and run anywhere. libfp8scope.so always builds with the toolkit's headers.
#pragma once

#ifdef FP8SCOPE_CUPTI_OWN_TYPES
#include "cupti/cupti_own_types.hpp"
#else
#include <cupti.h>
#endif
