/* The slice of the CUDA Driver API that libtlrt uses, declared here so the
 * runtime builds without the CUDA toolkit. Values are checked against the
 * toolkit's cuda.h by cuda_api_check.c when that header is available. The
 * functions are looked up in libcuda.so.1 at run time (driver_load.c). */
#ifndef TLRT_CUDA_API_H
#define TLRT_CUDA_API_H
#include <stddef.h>
#include <stdint.h>

/* Constants, as X(name, value); cuda_api_check.c compares them with cuda.h. */
#define TLRT_CUDA_CONSTANTS(X)                                      \
    X(CUDA_SUCCESS, 0)                                              \
    X(CUDA_ERROR_INVALID_VALUE, 1)                                  \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2)                                  \
    X(CUDA_ERROR_NO_DEVICE, 100)                                    \
    X(CUDA_ERROR_INVALID_DEVICE, 101)                               \
    X(CUDA_ERROR_INVALID_PTX, 218)                                  \
    X(CUDA_ERROR_NOT_FOUND, 500)                                    \
    X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)                 \
    X(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 13)                           \
    X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)                 \
    X(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 36)                    \
    X(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 37)              \
    X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38)                        \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)             \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)             \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 81) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97)    \
    X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)           \
    X(CU_JIT_INFO_LOG_BUFFER, 3)                                    \
    X(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4)                         \
    X(CU_JIT_ERROR_LOG_BUFFER, 5)                                   \
    X(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)                        \
    X(CU_JIT_LOG_VERBOSE, 12)                                       \
    X(CU_JIT_INPUT_PTX, 1)                                          \
    X(CU_STREAM_NON_BLOCKING, 1)                                    \
    X(CU_LAUNCH_ATTRIBUTE_COOPERATIVE, 2)                           \
    X(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, 4)                     \
    X(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, 6)     \
    X(CU_EVENT_DEFAULT, 0)                                          \
    X(CU_TENSOR_MAP_DATA_TYPE_UINT8, 0)                             \
    X(CU_TENSOR_MAP_DATA_TYPE_UINT16, 1)                            \
    X(CU_TENSOR_MAP_DATA_TYPE_UINT32, 2)                            \
    X(CU_TENSOR_MAP_DATA_TYPE_INT32, 3)                             \
    X(CU_TENSOR_MAP_DATA_TYPE_INT64, 5)                             \
    X(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 6)                           \
    X(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 7)                           \
    X(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 9)                          \
    X(CU_TENSOR_MAP_INTERLEAVE_NONE, 0)                             \
    X(CU_TENSOR_MAP_SWIZZLE_NONE, 0)                                \
    X(CU_TENSOR_MAP_SWIZZLE_32B, 1)                                 \
    X(CU_TENSOR_MAP_SWIZZLE_64B, 2)                                 \
    X(CU_TENSOR_MAP_SWIZZLE_128B, 3)                                \
    X(CU_TENSOR_MAP_L2_PROMOTION_NONE, 0)                           \
    X(CU_TENSOR_MAP_L2_PROMOTION_L2_64B, 1)                         \
    X(CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 2)                        \
    X(CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 3)                        \
    X(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, 0)                         \
    X(CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, 1)

#ifndef TLRT_CUDA_CONSTANTS_ONLY
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlinkState_st *CUlinkState;
typedef struct { _Alignas(64) uint64_t opaque[16]; } tlrt_cu_tensor_map; /* CUtensorMap: 128 bytes */
/* CUlaunchAttribute (an id, padding to 8 bytes, a 64-byte value union) and
 * CUlaunchConfig, for cuLaunchKernelEx */
typedef struct {
    int id;
    char pad[4];
    union { int value; char bytes[64]; } value;
} tlrt_cu_launch_attribute;
typedef struct {
    unsigned grid[3], block[3], smem_bytes;
    CUstream stream;
    tlrt_cu_launch_attribute *attrs;
    unsigned nattrs;
} tlrt_cu_launch_config;
_Static_assert(sizeof(tlrt_cu_launch_attribute) == 72 && sizeof(tlrt_cu_launch_config) == 56,
               "launch structures do not match the driver's (cuda_api_check.c)");

#define TLRT_CUDA_ENUMERATOR(name, value) name = value,
enum { TLRT_CUDA_CONSTANTS(TLRT_CUDA_ENUMERATOR) };
#undef TLRT_CUDA_ENUMERATOR

/* The function table: one member per driver entry point, with the exported
 * symbol name each is loaded from (versioned names where cuda.h maps the
 * plain name to one). Optional entries may be NULL on old drivers. */
#define TLRT_CUDA_FUNCTIONS(X)                                                                              \
    X(1, cuInit, "cuInit", CUresult, (unsigned flags))                                                     \
    X(1, cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int *v))                                     \
    X(1, cuGetErrorName, "cuGetErrorName", CUresult, (CUresult e, const char **s))                         \
    X(1, cuGetErrorString, "cuGetErrorString", CUresult, (CUresult e, const char **s))                     \
    X(1, cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *n))                                         \
    X(1, cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice * d, int ordinal))                                \
    X(1, cuDeviceGetName, "cuDeviceGetName", CUresult, (char *name, int len, CUdevice d))                  \
    X(1, cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *v, int attr, CUdevice d))           \
    X(1, cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t *bytes, CUdevice d))                   \
    X(1, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext * c, CUdevice d))      \
    X(1, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice d))                \
    X(1, cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext c))                                      \
    X(1, cuCtxSynchronize, "cuCtxSynchronize", CUresult, (void))                                           \
    X(1, cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr * p, size_t bytes))                           \
    X(1, cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr p))                                             \
    X(1, cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr dst, const void *src, size_t n))          \
    X(1, cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *dst, CUdeviceptr src, size_t n))                \
    X(1, cuMemcpyDtoD, "cuMemcpyDtoD_v2", CUresult, (CUdeviceptr dst, CUdeviceptr src, size_t n))          \
    X(1, cuMemsetD8, "cuMemsetD8_v2", CUresult, (CUdeviceptr dst, unsigned char v, size_t n))              \
    X(1, cuStreamCreate, "cuStreamCreate", CUresult, (CUstream * s, unsigned flags))                       \
    X(1, cuStreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream s))                                    \
    X(1, cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream s))                               \
    X(0, cuStreamGetCtx, "cuStreamGetCtx", CUresult, (CUstream s, CUcontext * c))                          \
    X(1, cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                                               \
      (CUmodule * m, const void *image, unsigned n, int *options, void **values))                          \
    X(1, cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule m))                                         \
    X(0, cuLinkCreate, "cuLinkCreate_v2", CUresult, (unsigned n, int *options, void **values, CUlinkState * s)) \
    X(0, cuLinkAddData, "cuLinkAddData_v2", CUresult,                                                      \
      (CUlinkState s, int type, void *data, size_t size, const char *name, unsigned n, int *options,       \
       void **values))                                                                                     \
    X(0, cuLinkComplete, "cuLinkComplete", CUresult, (CUlinkState s, void **image, size_t *size))           \
    X(0, cuLinkDestroy, "cuLinkDestroy", CUresult, (CUlinkState s))                                        \
    X(1, cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction * f, CUmodule m, const char *n)) \
    X(1, cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction f, int attr, int value))          \
    X(0, cuFuncGetAttribute, "cuFuncGetAttribute", CUresult, (int *value, int attr, CUfunction f))          \
    X(0, cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", CUresult, \
      (int *blocks, CUfunction f, int block_size, size_t dyn_smem))                                        \
    X(1, cuLaunchKernel, "cuLaunchKernel", CUresult,                                                       \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,         \
       unsigned smem, CUstream s, void **params, void **extra))                                            \
    X(0, cuLaunchKernelEx, "cuLaunchKernelEx", CUresult,                                                   \
      (const tlrt_cu_launch_config *config, CUfunction f, void **params, void **extra))                   \
    X(1, cuEventCreate, "cuEventCreate", CUresult, (CUevent * e, unsigned flags))                          \
    X(1, cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent e))                                       \
    X(1, cuEventRecord, "cuEventRecord", CUresult, (CUevent e, CUstream s))                                \
    X(1, cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent e))                                  \
    X(1, cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float *ms, CUevent a, CUevent b))            \
    X(0, cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", CUresult,                                       \
      (tlrt_cu_tensor_map * map, int dtype, unsigned rank, void *addr, const uint64_t *dims,               \
       const uint64_t *strides, const unsigned *box, const unsigned *estrides, int interleave, int swizzle,  \
       int l2, int oob))                                                                                   \
    X(0, cuTensorMapEncodeIm2col, "cuTensorMapEncodeIm2col", CUresult,                                     \
      (tlrt_cu_tensor_map * map, int dtype, unsigned rank, void *addr, const uint64_t *dims,               \
       const uint64_t *strides, const int *lower, const int *upper, unsigned channels, unsigned pixels,     \
       const unsigned *estrides, int interleave, int swizzle, int l2, int oob))

typedef struct tlrt_cuda {
    void *lib; /* dlopen handle */
#define TLRT_CUDA_MEMBER(req, name, sym, ret, args) ret (*name) args;
    TLRT_CUDA_FUNCTIONS(TLRT_CUDA_MEMBER)
#undef TLRT_CUDA_MEMBER
} tlrt_cuda;

/* Opens the driver library and fills the table. On failure returns false
 * with a message in err (the library is closed again). */
_Bool tlrt_cuda_load(tlrt_cuda *cu, const char *path, char *err, size_t errlen);
void tlrt_cuda_unload(tlrt_cuda *cu);
#endif /* TLRT_CUDA_CONSTANTS_ONLY */
#endif
