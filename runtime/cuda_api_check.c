/* Built only where the CUDA toolkit's cuda.h is present: checks that the
 * values cuda_api.h declares by hand agree with NVIDIA's header, and that a
 * CUtensorMap is the 128 bytes the PTX ABI reserves for it. */
#include <cuda.h>
#define TLRT_CUDA_CONSTANTS_ONLY
#include "cuda_api.h"

#define TLRT_CHECK(name, value) _Static_assert((long long)(name) == (value), #name " differs from cuda.h");
TLRT_CUDA_CONSTANTS(TLRT_CHECK)
_Static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is not 128 bytes");
/* the layouts cuda_api.h's tlrt_cu_launch_attribute / tlrt_cu_launch_config
 * copy (asserted there too) */
#include <stddef.h>
_Static_assert(sizeof(CUlaunchAttribute) == 72 && offsetof(CUlaunchAttribute, value) == 8,
               "CUlaunchAttribute is not an id, padding and a 64-byte value");
_Static_assert(sizeof(CUlaunchConfig) == 56 && offsetof(CUlaunchConfig, hStream) == 32 &&
                   offsetof(CUlaunchConfig, attrs) == 40 && offsetof(CUlaunchConfig, numAttrs) == 48,
               "CUlaunchConfig's layout differs from tlrt_cu_launch_config");
