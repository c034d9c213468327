/* Loads libcuda.so.1 with dlopen and fills the function table, so libtlrt
 * never links against the driver and works (by saying so) without one. */
#include <dlfcn.h>
#include <string.h>
#include "cuda_api.h"
#include "text_util.h"

_Bool tlrt_cuda_load(tlrt_cuda *cu, const char *path, char *err, size_t errlen) {
    memset(cu, 0, sizeof *cu);
    const char *lib = path ? path : "libcuda.so.1";
    cu->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib) {
        if (path) tlrt_errf(err, errlen, "no CUDA driver (%s could not be loaded: %s)", lib, dlerror());
        else tlrt_errf(err, errlen, "no CUDA driver (libcuda.so.1 not found)");
        return 0;
    }
    /* dlsym returns void *; going through memcpy keeps ISO C happy about
     * object-to-function pointer conversion. */
#define TLRT_CUDA_LOAD(req, name, sym, ret, args)                                                        \
    {                                                                                                    \
        void *p = dlsym(cu->lib, sym);                                                                   \
        if (!p && req) {                                                                                 \
            tlrt_errf(err, errlen, "no CUDA driver (%s lacks %s: driver too old?)", lib, sym);            \
            tlrt_cuda_unload(cu);                                                                        \
            return 0;                                                                                    \
        }                                                                                                \
        memcpy(&cu->name, &p, sizeof p);                                                                 \
    }
    TLRT_CUDA_FUNCTIONS(TLRT_CUDA_LOAD)
#undef TLRT_CUDA_LOAD
    return 1;
}

void tlrt_cuda_unload(tlrt_cuda *cu) {
    if (cu->lib) dlclose(cu->lib);
    memset(cu, 0, sizeof *cu);
}
