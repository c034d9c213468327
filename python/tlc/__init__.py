"""tlc from Python: a thin layer over libtlc (ctypes, no compiled extension).

    import tlc, torch
    k = tlc.compile("dsl-examples/rmsnorm.tl", kernel="rmsnorm", defines={"C": 4096, "BLOCK_M": 1})
    x = torch.randn(8, 4096, dtype=torch.float16, device="cuda")
    w = torch.ones(4096, dtype=torch.float16, device="cuda")
    y = torch.empty_like(x)
    k(x, w, y)                 # on torch's current stream
    k.ptx, k.metadata          # the PTX and what the runtime knows of the kernel

    tlc.interpret("dsl-examples/rmsnorm.tl", {"X": xs, "W": ws, "Y": ys}, kernel="rmsnorm")  # NumPy, no GPU

    f = tlc.compile("dsl-examples/split_logsumexp.tl")   # a function with two `with Kernel` blocks
    f(x, lse)                  # both kernels, in order; the runtime allocates the workspaces

libtlc is found through $TLC_LIBRARY, tlc.load_library(path), or the
dynamic loader (libtlc.so.0 of an installed tlc)."""
import ctypes
import os
import sys
import threading

from . import metadata as _metadata
from ._lib import (ARG_SCALAR, ARG_TENSOR, DTYPES, TLC_ERROR_COMPILE, TLC_ERROR_RUNTIME, Arg, InterpScalar,
                   DeviceProps, InterpretOptions, InterpTensor, JitDefine, JitOptions, load_library, take_string)
from .errors import CompileError, InterpreterError, LaunchError, TlcError
from .tensors import device_tensor, dtype_name

__all__ = ["compile", "interpret", "Bits", "Kernel", "Function", "load_library", "version", "device_arch", "device_num_sms",
           "dtype_name", "ptx_generator", "autotune", "Autotuned", "TlcError",
           "CompileError", "InterpreterError", "LaunchError"]

_lock = threading.Lock()
_contexts = {}  # device index -> tlrt_context (kept for the process: torch shares its primary context)
_jits = {}      # (arch, cache_dir, opt_level, backend) -> tlc_jit
_streams = {}   # (device, CUstream handle) -> tlrt_stream wrapper


def version():
    """libtlc's version ("0.1.0")."""
    return load_library().tlc_version().decode()


def _check_backend(backend):
    if backend not in (None, "direct", "llvm"):
        raise ValueError(f"backend must be 'direct' or 'llvm', got {backend!r}")


def _new_jit(lib, cache_dir, arch, disable_cache, opt_level, backend, num_sms=0):
    """A tlc_jit (opt_level as tlc_opt_level: 0 the default, O0 .. O3 from 1; num_sms 0: the target's)."""
    jit, err = ctypes.c_void_p(), ctypes.c_void_p()
    opt = JitOptions(cache_dir.encode() if cache_dir else None, arch.encode(), None, disable_cache, opt_level,
                     backend.encode() if backend else None, num_sms)
    st = lib.tlc_jit_create(ctypes.byref(opt), ctypes.byref(jit), ctypes.byref(err))
    if st != 0:
        text = take_string(lib, err)
        raise TlcError(text, _status_name(lib, st), text)
    return jit


def ptx_generator(backend=None):
    """Who writes the PTX of tlc.compile(..., backend=backend): "direct" (tlc's own generator) or
    "llvm", as libtlc decides it (backend, else $TLC_BACKEND, else its default). Needs no GPU."""
    _check_backend(backend)
    lib = load_library()
    jit = _new_jit(lib, None, "sm_90a", True, 0, backend)  # no cache: nothing to find
    try:
        return lib.tlc_jit_backend(jit).decode()
    finally:
        lib.tlc_jit_destroy(jit)


def _status_name(lib, st):
    return lib.tlc_status_string(st).decode()


def _context(device):
    with _lock:
        if device in _contexts:
            return _contexts[device]
        lib = load_library()
        ctx = ctypes.c_void_p()
        if "torch" in sys.modules and sys.modules["torch"].cuda.is_available():
            sys.modules["torch"].cuda.init()  # the primary context torch and tlrt share
        if lib.tlrt_init(ctypes.byref(ctx), device) != 0:
            msg = lib.tlrt_last_error(ctx).decode()
            lib.tlrt_destroy(ctx)
            raise LaunchError(f"device {device}: {msg}", "tlrt_init", msg)
        _contexts[device] = ctx
        return ctx


def _current_device():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.current_device()
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        return cupy.cuda.Device().id
    return 0


def device_arch(device=None):
    """The arch tlc compiles for on a GPU ("sm_90a" on an H100); device: an index (None: torch's or
    CuPy's current device, else 0)."""
    if device is None:
        device = _current_device()
    lib = load_library()
    ctx = _context(device)
    buf = ctypes.create_string_buffer(16)
    if lib.tlrt_device_arch(ctx, buf, len(buf)) != 0:
        raise LaunchError(lib.tlrt_last_error(ctx).decode())
    return buf.value.decode()


def device_num_sms(device=None):
    """The SM count of a GPU (132 on an H100 SXM); device as for device_arch."""
    if device is None:
        device = _current_device()
    lib = load_library()
    ctx = _context(device)
    props = DeviceProps()
    if lib.tlrt_device_properties(ctx, ctypes.byref(props)) != 0:
        raise LaunchError(lib.tlrt_last_error(ctx).decode())
    return props.sm_count


def _jit(arch, cache_dir, opt_level, backend, num_sms=0):
    key = (arch, cache_dir, opt_level, backend, num_sms)
    with _lock:
        if key not in _jits:
            _jits[key] = _new_jit(load_library(), cache_dir, arch, False, 1 + opt_level, backend, num_sms)
        return _jits[key]


def _read_source(source, name):
    """(text, name) of source: a path (str ending in .tl, or .py for a TileLang file, or os.PathLike)
    or DSL text."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and source.endswith((".tl", ".py"))
                                           and "\n" not in source):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            return f.read(), name or path
    if not isinstance(source, str):
        raise TypeError("source: DSL text or the path of a .tl or TileLang .py file")
    return source, name or "<source>"


def _defines(defines):
    items = list((defines or {}).items())
    arr = (JitDefine * max(len(items), 1))()
    for i, (k, v) in enumerate(items):
        if isinstance(v, bool):
            v = "True" if v else "False"
        arr[i] = JitDefine(str(k).encode(), str(v).encode())
    return arr, len(items)


_int64_arrays = {}


def _int64_array(values):
    """A ctypes int64 array of values (at least one element), shared by every launch with the same
    values: launches only read them, and building one costs more than the launch itself."""
    key = tuple(values)
    a = _int64_arrays.get(key)
    if a is None:
        if len(_int64_arrays) >= 4096:
            _int64_arrays.clear()
        a = _int64_arrays[key] = (ctypes.c_int64 * max(len(key), 1))(*key)
    return a


class Kernel:
    """One compiled kernel. Call it on device tensors and Python scalars, in the order of the kernel's
    parameters: k(x, w, y, 1e-5). It runs on the caller's current stream (torch's or CuPy's, from the
    tensors' library), or on stream= (a torch/CuPy stream or a CUstream handle as an int)."""

    _get, _launch = "tlrt_kernel_get", "tlrt_launch"  # libtlrt's lookup and launch

    def __init__(self, name, ptx, arch, meta):
        self.name, self.ptx, self.arch = name, ptx, arch
        self.metadata = meta  # {"name", "params", "syms", "grid", "threads", "smem", ...}
        self._loaded = {}     # device -> (tlrt_module, tlrt_kernel)
        self._packed = {}     # (thread, each argument's dtype, shape, strides, device) -> _pack's

    def __repr__(self):
        params = ", ".join(p["name"] for p in self.metadata["params"])
        return f"<tlc.Kernel {self.name}({params}) for {self.arch}>"

    def load(self, device=None):
        """Loads the module onto device (an index; None: the current one) now rather than at the first
        launch, so that the driver's refusals surface here. Returns self."""
        self._kernel(_current_device() if device is None else device)
        return self

    def _kernel(self, device):
        if device not in self._loaded:
            lib = load_library()
            ctx = _context(device)
            mod, k = ctypes.c_void_p(), ctypes.c_void_p()
            data = self.ptx.encode()
            if lib.tlrt_module_load_ptx(ctx, data, len(data), ctypes.byref(mod)) != 0:
                raise LaunchError(f"{self.name}: " + lib.tlrt_last_error(ctx).decode())
            if getattr(lib, self._get)(mod, self.name.encode(), ctypes.byref(k)) != 0:
                msg = lib.tlrt_last_error(ctx).decode()
                lib.tlrt_module_unload(ctx, mod)
                raise LaunchError(f"{self.name}: {msg}")
            self._loaded[device] = (mod, k)
        return self._loaded[device][1]

    def __call__(self, *args, stream=None):
        tensors = [device_tensor(a) for a in args]
        # the arguments packed for an earlier call of this thread with tensors of the same dtypes,
        # shapes, strides and devices: only their addresses and the scalars' values change
        key = (threading.get_ident(),) + tuple(None if t is None else (t.dtype, t.shape, t.strides, t.device)
                                               for t in tensors)
        packed = self._packed.get(key)
        if packed is None:
            packed = self._pack(args, tensors)
            if len(self._packed) >= 64:
                self._packed.clear()
            self._packed[key] = packed
        else:
            items = packed[0]
            for i, t in enumerate(tensors):
                if t is not None:
                    items[i].ptr = t.ptr
                elif packed[2][i]:
                    items[i].i = int(args[i])
                else:
                    items[i].f = float(args[i])
        self._launcher(packed[0], tensors, stream, args)()

    def bind(self, *args, stream=None):
        """A no-argument callable that launches the kernel on args, packed once (for timing loops and
        CUDA graph capture): on stream, else on the tensors' library's current stream now."""
        tensors = [device_tensor(a) for a in args]
        items, keep, _ = self._pack(args, tensors)
        return self._launcher(items, tensors, stream, (keep, [t.keep for t in tensors if t is not None], args))

    def _pack(self, args, tensors):
        """(the launch's argument array, the shape and stride arrays it points into, per argument
        whether it is an integer scalar), the arguments checked against the kernel's parameters."""
        params = self.metadata["params"]
        if len(args) != len(params):
            raise TypeError(f"{self.name} takes {len(params)} arguments "
                            f"({', '.join(p['name'] for p in params)}), got {len(args)}")
        items, keep, ints = (Arg * max(len(args), 1))(), [], [False] * len(args)
        for i, (a, t, p) in enumerate(zip(args, tensors, params)):
            if t is not None:
                if t.dtype not in DTYPES:
                    raise TypeError(f"{self.name}: argument {p['name']}: dtype {t.dtype}")
                shape = _int64_array(t.shape)
                strides = _int64_array(t.strides) if t.strides else None
                keep.append((shape, strides))
                items[i] = Arg(ARG_TENSOR, DTYPES[t.dtype], t.ptr, len(t.shape), shape, strides, 0.0, 0)
            else:
                if p["kind"] != "scalar":
                    raise TypeError(f"{self.name}: argument {p['name']} is a tensor, got {type(a).__name__}")
                dt = DTYPES[p["dtype"]]
                ints[i] = p["dtype"].startswith(("int", "uint")) or p["dtype"] == "bool"
                if ints[i]:
                    items[i] = Arg(ARG_SCALAR, dt, 0, 0, None, None, 0.0, int(a))
                else:
                    items[i] = Arg(ARG_SCALAR, dt, 0, 0, None, None, float(a), 0)
        return items, keep, ints

    def _launcher(self, items, tensors, stream, keep):
        """A no-argument callable launching the kernel on the packed items, on stream (else the
        tensors' library's current stream now); keep: what the items point into."""
        lib = load_library()
        device, handle = _launch_place(tensors, stream)
        k = self._kernel(device)
        ctx = _contexts[device]
        s, n, name, what = _stream(device, handle), len(tensors), self.name, self._launch
        launch = getattr(lib, what)

        def launch_once():
            if launch(k, items, n, s) != 0:
                msg = lib.tlrt_last_error(ctx).decode()
                raise LaunchError(f"{name}: {msg}", what, msg)
        launch_once.keep = (items, keep)  # what the packed arguments point into lives as long
        return launch_once


class Function(Kernel):
    """A source function with several `with Kernel` blocks: one call, f(x, lse), launches its kernels
    (f.kernels) in order on one stream, with the function's parameters. Its workspaces (alloc_global
    before the blocks, f.metadata["workspaces"]) are allocated by the runtime, uninitialized, in memory
    it keeps per stream and reuses, so repeated calls and CUDA graph capture after a first call of the
    same or larger sizes allocate nothing."""

    _get, _launch = "tlrt_function_get", "tlrt_launch_function"

    @property
    def kernels(self):
        return list(self.metadata["launches"])

    def __repr__(self):
        params = ", ".join(p["name"] for p in self.metadata["params"])
        return f"<tlc.Function {self.name}({params}) = {', '.join(self.kernels)} for {self.arch}>"


def _launch_place(tensors, stream):
    """(device index, CUstream handle or None) where a launch on these tensors (device_tensor views)
    runs: the tensors' device (else the current one), stream= or the tensors' library's current stream."""
    device = next((t.device for t in tensors if t is not None and t.device is not None), None)
    if device is None:
        device = _current_device()
    return device, _stream_handle(stream, tensors)


def _stream_handle(stream, tensors):
    if stream is None:
        for t in tensors:
            s = t.stream if t is not None else None
            if s is not None:
                return s
        return None
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError("stream: a torch or CuPy stream, or a CUstream handle (int)")


def _stream(device, handle):
    if not handle:
        return None  # the legacy default stream
    key = (device, handle)
    with _lock:
        if key not in _streams:
            lib = load_library()
            w = ctypes.c_void_p()
            if lib.tlrt_stream_from_handle(_contexts[device], ctypes.c_void_p(handle), ctypes.byref(w)) != 0:
                raise LaunchError(lib.tlrt_last_error(_contexts[device]).decode())
            _streams[key] = w
        return _streams[key]


def compile(source, kernel=None, defines=None, arch=None, cache_dir=None, name=None, opt_level=3,
            backend=None, num_sms=None):
    """Compiles DSL source (text, or the path of a .tl file or a TileLang .py file) to PTX through the JIT's cache.
    kernel: the kernel to compile (may be left out when the source has one), or a function with several
    `with Kernel` blocks, which gives a Function launching all of them. defines: {NAME: value}
    as -D NAME=VALUE. arch: "sm_80" .. "sm_90a" (None: the current GPU's). cache_dir: None for
    $TLC_CACHE_DIR or ~/.cache/tlc. backend: who writes the PTX, "direct" (tlc's own generator)
    or "llvm" (LLVM's NVPTX backend); None: $TLC_BACKEND if set, else "direct". opt_level: LLVM's
    optimization level, 0 .. 3 (tlc -O0 .. -O3; backend "llvm" only). num_sms: the SM count a kernel
    asking for it (TileLang's driver.get_num_sms()) is compiled with (None: the current GPU's when arch
    is None too, else the target's data-center part). Raises CompileError with the diagnostics."""
    if opt_level not in (0, 1, 2, 3) or isinstance(opt_level, bool):
        raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
    _check_backend(backend)
    lib = load_library()
    text, name = _read_source(source, name)
    if num_sms is not None and (not isinstance(num_sms, int) or isinstance(num_sms, bool) or num_sms < 1):
        raise ValueError(f"num_sms must be a positive int, got {num_sms!r}")
    if arch is None:
        arch = device_arch()
        if num_sms is None:
            num_sms = device_num_sms()
    jit = _jit(arch, os.fspath(cache_dir) if cache_dir else None, opt_level, backend, num_sms or 0)
    defs, ndefs = _defines(defines)
    data = text.encode()
    ptx, err = ctypes.c_void_p(), ctypes.c_void_p()
    st = lib.tlc_jit_compile(jit, data, len(data), name.encode(), defs, ndefs,
                             kernel.encode() if kernel else None, ctypes.byref(ptx), ctypes.byref(err))
    if st != 0:
        diag = take_string(lib, err)
        cls = CompileError if st == TLC_ERROR_COMPILE else TlcError
        raise cls(diag.rstrip("\n"), _status_name(lib, st), diag)
    return from_ptx(take_string(lib, ptx), kernel, arch, name)


def from_ptx(ptx_text, kernel=None, arch=None, name="<ptx>"):
    """The Kernel (or Function) `kernel` of PTX text that tlc wrote (`tlc --emit=ptx`, or any tlc
    build's JIT): its tlc.meta lines say the parameters and launch shape. Nothing is compiled."""
    meta = _metadata.parse(ptx_text)
    kernels, functions = meta["kernels"], meta["functions"]
    parts = {k for f in functions.values() for k in f["launches"]}
    entries = list(functions) + [k for k in kernels if k not in parts]
    if not entries:
        raise TlcError(f"{name}: no tlc.meta kernel in this PTX (not written by tlc?)")
    if kernel is None:
        if len(entries) != 1:
            raise TlcError(f"{name} has kernels {', '.join(entries)}: choose one with kernel=")
        kernel = entries[0]
    if kernel in functions:
        return Function(kernel, ptx_text, meta.get("arch", arch), functions[kernel])
    if kernel not in kernels:
        raise TlcError(f"{name} has no kernel {kernel} (it has {', '.join(entries)})")
    return Kernel(kernel, ptx_text, meta.get("arch", arch), kernels[kernel])


class Bits:
    """A NumPy array whose bytes are elements of a dtype NumPy has no type for, for tlc.interpret:
    Bits(a, "bfloat16") with `a` a uint16 array of bfloat16 bit patterns (Bits(a, "float8_e4m3") and
    Bits(a, "float8_e5m2") with uint8). The interpreter reads and writes the array's bytes as that dtype."""
    _SIZES = {"bfloat16": 2, "float8_e4m3": 1, "float8_e5m2": 1}

    def __init__(self, array, dtype):
        if dtype not in self._SIZES:
            raise TypeError(f"Bits: dtype {dtype!r} is not one of {', '.join(self._SIZES)}")
        if getattr(array, "itemsize", None) != self._SIZES[dtype] or array.dtype.kind not in "ui":
            raise TypeError(f"Bits: {dtype} elements need an unsigned integer array of {self._SIZES[dtype]}-byte "
                            f"elements, got {getattr(array, 'dtype', type(array).__name__)}")
        self.array, self.dtype = array, dtype


def interpret(source, args, kernel=None, defines=None, arch=None, name=None, reverse=False):
    """Runs the source's kernels (or only kernel) in tlc's Tile IR interpreter on the CPU, on NumPy
    arrays, which it reads and writes in place. args: {parameter name: C-contiguous writable NumPy
    array (tlc.Bits for bfloat16 and float8), or a Python int / float}; kernels of one file share
    parameters by name. arch (default
    "sm_90a") sets limits such as shared memory. reverse=True runs the grid's blocks and every
    Parallel loop's iterations last to first (in thread-indexed code also the two sides of a condition
    the threads part ways at, and concurrent thread ranges): outputs that differ from a plain run's
    show a race.
    Returns args. Raises CompileError or InterpreterError with the diagnostics."""
    lib = load_library()
    text, name = _read_source(source, name)
    tensors, scalars, keep = [], [], []
    for pname, value in args.items():
        dtype = None
        if isinstance(value, Bits):
            value, dtype = value.array, value.dtype
        if hasattr(value, "__array_interface__") and hasattr(value, "dtype"):
            if not (value.flags["C_CONTIGUOUS"] and value.flags["WRITEABLE"]):
                raise TypeError(f"argument {pname}: the interpreter needs a C-contiguous writable array")
            shape = (ctypes.c_int64 * max(value.ndim, 1))(*value.shape)
            keep.append(shape)
            tensors.append(InterpTensor(pname.encode(), value.ctypes.data, DTYPES[dtype or dtype_name(value.dtype)],
                                        value.ndim, shape))
        elif isinstance(value, (bool, int)):
            scalars.append(InterpScalar(pname.encode(), False, 0.0, int(value)))
        elif isinstance(value, float):
            scalars.append(InterpScalar(pname.encode(), True, value, 0))
        else:
            raise TypeError(f"argument {pname}: a NumPy array or a Python number, got {type(value).__name__}")
    t_arr = (InterpTensor * max(len(tensors), 1))(*tensors)
    s_arr = (InterpScalar * max(len(scalars), 1))(*scalars)
    defs, ndefs = _defines(defines)
    data = text.encode()
    err = ctypes.c_void_p()
    opts = InterpretOptions(bool(reverse))
    st = lib.tlc_interpret_ex(data, len(data), name.encode(), defs, ndefs, kernel.encode() if kernel else None,
                              arch.encode() if arch else None, t_arr, len(tensors), s_arr, len(scalars),
                              ctypes.byref(opts), ctypes.byref(err))
    if st != 0:
        diag = take_string(lib, err)
        cls = {TLC_ERROR_COMPILE: CompileError, TLC_ERROR_RUNTIME: InterpreterError}.get(st, TlcError)
        raise cls(diag.rstrip("\n"), _status_name(lib, st), diag)
    return args


from .autotune import Autotuned, autotune  # noqa: E402 (it calls back into this module)
