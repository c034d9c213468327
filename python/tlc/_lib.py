"""libtlc through ctypes: finding the library and the C declarations the
package uses (include/tlc/tlc.h, runtime.h, interp.h)."""
import ctypes
import ctypes.util
import os
import threading

P = ctypes.POINTER


class JitOptions(ctypes.Structure):  # tlc_jit_options
    _fields_ = [("cache_dir", ctypes.c_char_p), ("arch", ctypes.c_char_p),
                ("ctx", ctypes.c_void_p), ("disable_cache", ctypes.c_bool), ("opt_level", ctypes.c_int),
                ("backend", ctypes.c_char_p), ("num_sms", ctypes.c_int)]


class DeviceProps(ctypes.Structure):  # tlrt_device_props
    _fields_ = [("name", ctypes.c_char * 256), ("sm", ctypes.c_int), ("sm_count", ctypes.c_int),
                ("max_threads_per_block", ctypes.c_int), ("max_smem_per_block_optin", ctypes.c_int),
                ("max_smem_per_sm", ctypes.c_int), ("l2_bytes", ctypes.c_int), ("total_mem", ctypes.c_size_t),
                ("clock_khz", ctypes.c_int), ("mem_clock_khz", ctypes.c_int), ("mem_bus_bits", ctypes.c_int),
                ("driver_version", ctypes.c_int)]


class JitDefine(ctypes.Structure):  # tlc_jit_define
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class Arg(ctypes.Structure):  # tlrt_arg
    _fields_ = [("kind", ctypes.c_int), ("dtype", ctypes.c_int), ("ptr", ctypes.c_uint64),
                ("rank", ctypes.c_int), ("shape", P(ctypes.c_int64)), ("strides", P(ctypes.c_int64)),
                ("f", ctypes.c_double), ("i", ctypes.c_int64)]


class InterpTensor(ctypes.Structure):  # tlc_interp_tensor_arg
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int), ("shape", P(ctypes.c_int64))]


class InterpScalar(ctypes.Structure):  # tlc_interp_scalar_arg
    _fields_ = [("name", ctypes.c_char_p), ("is_float", ctypes.c_bool), ("f", ctypes.c_double),
                ("i", ctypes.c_int64)]


class InterpretOptions(ctypes.Structure):  # tlc_interpret_options
    _fields_ = [("reverse", ctypes.c_bool)]


ARG_TENSOR, ARG_SCALAR = 0, 1
# tlrt_dtype (include/tlc/metadata.h), by the names the metadata uses.
DTYPES = {"float16": 0, "bfloat16": 1, "float32": 2, "float8_e4m3": 3, "int8": 4, "int32": 5, "int64": 6,
          "bool": 7, "int16": 8, "uint8": 9, "uint16": 10, "uint32": 11, "float8_e5m2": 12}
TLC_ERROR_COMPILE, TLC_ERROR_RUNTIME = 3, 6
TLRT_ERROR_NO_DRIVER, TLRT_ERROR_NO_DEVICE = 1, 2

_SIGNATURES = {
    "tlc_version": (ctypes.c_char_p, []),
    "tlc_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "tlc_free": (None, [ctypes.c_void_p]),
    "tlc_jit_create": (ctypes.c_int, [P(JitOptions), P(ctypes.c_void_p), P(ctypes.c_void_p)]),
    "tlc_jit_destroy": (None, [ctypes.c_void_p]),
    "tlc_jit_arch": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tlc_jit_backend": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tlc_jit_compile": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                       P(JitDefine), ctypes.c_int, ctypes.c_char_p, P(ctypes.c_void_p),
                                       P(ctypes.c_void_p)]),
    "tlc_interpret": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, P(JitDefine),
                                     ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, P(InterpTensor),
                                     ctypes.c_int, P(InterpScalar), ctypes.c_int, P(ctypes.c_void_p)]),
    "tlc_interpret_ex": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, P(JitDefine),
                                        ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, P(InterpTensor),
                                        ctypes.c_int, P(InterpScalar), ctypes.c_int, P(InterpretOptions),
                                        P(ctypes.c_void_p)]),
    "tlrt_init": (ctypes.c_int, [P(ctypes.c_void_p), ctypes.c_int]),
    "tlrt_destroy": (None, [ctypes.c_void_p]),
    "tlrt_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tlrt_device_arch": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    "tlrt_device_properties": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(DeviceProps)]),
    "tlrt_module_load_ptx": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                            P(ctypes.c_void_p)]),
    "tlrt_module_unload": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "tlrt_kernel_get": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, P(ctypes.c_void_p)]),
    "tlrt_launch": (ctypes.c_int, [ctypes.c_void_p, P(Arg), ctypes.c_int, ctypes.c_void_p]),
    "tlrt_function_get": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, P(ctypes.c_void_p)]),
    "tlrt_launch_function": (ctypes.c_int, [ctypes.c_void_p, P(Arg), ctypes.c_int, ctypes.c_void_p]),
    "tlrt_stream_from_handle": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, P(ctypes.c_void_p)]),
    "tlrt_event_create": (ctypes.c_int, [ctypes.c_void_p, P(ctypes.c_void_p)]),
    "tlrt_event_destroy": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "tlrt_event_record": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
    "tlrt_event_synchronize": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "tlrt_event_elapsed_ms": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                             P(ctypes.c_float)]),
}

_lock = threading.Lock()
_lib = None


def _candidates():
    env = os.environ.get("TLC_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    names = [os.path.join(here, "libtlc.so.0"), "libtlc.so.0"]
    found = ctypes.util.find_library("tlc")
    if found:
        names.append(found)
    return names


def load_library(path=None):
    """Loads libtlc (path; else $TLC_LIBRARY; else libtlc.so.0 beside the package or where the
    dynamic loader finds it, e.g. an installed prefix on LD_LIBRARY_PATH). Returns the CDLL."""
    global _lib
    with _lock:
        if _lib is not None and path is None:
            return _lib
        errors = []
        for name in ([path] if path else _candidates()):
            try:
                lib = ctypes.CDLL(name)
            except OSError as e:
                errors.append(f"{name}: {e}")
                continue
            for fn, (restype, argtypes) in _SIGNATURES.items():
                f = getattr(lib, fn)
                f.restype, f.argtypes = restype, argtypes
            _lib = lib
            return lib
        raise OSError("libtlc not found (set TLC_LIBRARY to the path of libtlc.so, or call "
                      "tlc.load_library(path)); tried " + "; ".join(errors))


def take_string(lib, ptr):
    """The text of a malloc'd char* from libtlc, freed."""
    if not ptr.value:
        return ""
    s = ctypes.string_at(ptr.value).decode(errors="replace")
    lib.tlc_free(ptr)
    return s
