/* Element types as the metadata and the launch API name them. */
#include <string.h>
#include "tlc/metadata.h"

static const struct { const char *name; int bytes; bool is_int; } dtypes[TLRT_DTYPE_COUNT] = {
    [TLRT_F16] = {"float16", 2, false},     [TLRT_BF16] = {"bfloat16", 2, false},
    [TLRT_F32] = {"float32", 4, false},     [TLRT_F8E4M3] = {"float8_e4m3", 1, false},
    [TLRT_I8] = {"int8", 1, true},          [TLRT_I32] = {"int32", 4, true},
    [TLRT_I64] = {"int64", 8, true},        [TLRT_BOOL] = {"bool", 1, true},
    [TLRT_I16] = {"int16", 2, true},        [TLRT_U8] = {"uint8", 1, true},
    [TLRT_U16] = {"uint16", 2, true},       [TLRT_U32] = {"uint32", 4, true},
    [TLRT_F8E5M2] = {"float8_e5m2", 1, false},
};

static bool valid(tlrt_dtype t) { return (int)t >= 0 && (int)t < TLRT_DTYPE_COUNT; }

const char *tlrt_dtype_name(tlrt_dtype t) { return valid(t) ? dtypes[t].name : "?"; }
int tlrt_dtype_bytes(tlrt_dtype t) { return valid(t) ? dtypes[t].bytes : 0; }
bool tlrt_dtype_is_int(tlrt_dtype t) { return valid(t) && dtypes[t].is_int; }

bool tlrt_dtype_parse(const char *s, tlrt_dtype *out) {
    for (int i = 0; i < TLRT_DTYPE_COUNT; i++)
        if (strcmp(s, dtypes[i].name) == 0) {
            *out = (tlrt_dtype)i;
            return true;
        }
    return false;
}

const char *tlrt_swizzle_name(tlrt_swizzle s) {
    switch (s) {
    case TLRT_SWIZZLE_NONE: return "none";
    case TLRT_SWIZZLE_32B: return "32B";
    case TLRT_SWIZZLE_64B: return "64B";
    case TLRT_SWIZZLE_128B: return "128B";
    }
    return "?";
}

int tlrt_swizzle_bytes(tlrt_swizzle s) {
    switch (s) {
    case TLRT_SWIZZLE_NONE: return 0;
    case TLRT_SWIZZLE_32B: return 32;
    case TLRT_SWIZZLE_64B: return 64;
    case TLRT_SWIZZLE_128B: return 128;
    }
    return 0;
}
