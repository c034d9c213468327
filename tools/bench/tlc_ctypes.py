"""libtlc through ctypes, for the benchmarks in tools/bench: the JIT
(tlc_jit_*) compiles DSL source, libtlrt launches the kernels on torch's
tensors in torch's context and on torch's streams."""
import ctypes

import torch


class JitOptions(ctypes.Structure):  # tlc_jit_options (include/tlc/jit.h)
    _fields_ = [("cache_dir", ctypes.c_char_p), ("arch", ctypes.c_char_p),
                ("ctx", ctypes.c_void_p), ("disable_cache", ctypes.c_bool)]


class JitDefine(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class Arg(ctypes.Structure):  # tlrt_arg (include/tlc/runtime.h)
    _fields_ = [("kind", ctypes.c_int), ("dtype", ctypes.c_int), ("ptr", ctypes.c_uint64),
                ("rank", ctypes.c_int), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("f", ctypes.c_double), ("i", ctypes.c_int64)]


ARG_TENSOR, ARG_SCALAR = 0, 1
# tlrt_dtype (include/tlc/metadata.h)
TLRT_DTYPE = {torch.float16: 0, torch.bfloat16: 1, torch.float32: 2, torch.int32: 5}
DTYPE_NAME = {torch.float16: "float16", torch.bfloat16: "bfloat16"}


class Tlc:
    def __init__(self, path):
        self.lib = lib = ctypes.CDLL(path)
        P = ctypes.POINTER
        lib.tlrt_init.argtypes = [P(ctypes.c_void_p), ctypes.c_int]
        lib.tlrt_last_error.restype = ctypes.c_char_p
        lib.tlrt_last_error.argtypes = [ctypes.c_void_p]
        lib.tlc_jit_create.argtypes = [P(JitOptions), P(ctypes.c_void_p), P(ctypes.c_void_p)]
        lib.tlc_jit_load_kernel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                            ctypes.c_char_p, P(JitDefine), ctypes.c_int, ctypes.c_char_p,
                                            P(ctypes.c_void_p), P(ctypes.c_void_p), P(ctypes.c_void_p)]
        lib.tlc_jit_arch.restype = ctypes.c_char_p
        lib.tlc_jit_arch.argtypes = [ctypes.c_void_p]
        lib.tlc_free.argtypes = [ctypes.c_void_p]
        lib.tlrt_launch.argtypes = [ctypes.c_void_p, P(Arg), ctypes.c_int, ctypes.c_void_p]
        lib.tlrt_stream_from_handle.argtypes = [ctypes.c_void_p, ctypes.c_void_p, P(ctypes.c_void_p)]
        self.ctx = ctypes.c_void_p()
        torch.cuda.init()  # torch and tlrt share the device's primary context
        if lib.tlrt_init(ctypes.byref(self.ctx), torch.cuda.current_device()) != 0:
            raise RuntimeError("tlrt_init: " + self.error())
        self.jits = {}  # arch (None: the device's) -> tlc_jit
        self.arch = lib.tlc_jit_arch(self.jit(None)).decode()
        self.keep = []  # modules stay loaded for the process
        self.streams = {}  # CUstream handle -> tlrt_stream wrapper (not owned; kept for the process)

    def error(self):
        return self.lib.tlrt_last_error(self.ctx).decode()

    def _take(self, err):
        s = ctypes.string_at(err.value).decode() if err.value else ""
        self.lib.tlc_free(err)
        return s

    def jit(self, arch):
        """The JIT for arch (None: the device's own)."""
        if arch not in self.jits:
            j, err = ctypes.c_void_p(), ctypes.c_void_p()
            opt = JitOptions(None, arch.encode() if arch else None, self.ctx, False)
            if self.lib.tlc_jit_create(ctypes.byref(opt), ctypes.byref(j), ctypes.byref(err)) != 0:
                raise RuntimeError("tlc_jit_create: " + self._take(err))
            self.jits[arch] = j
        return self.jits[arch]

    def stream(self, torch_stream=None):
        """tlrt's wrapper of a torch stream (default: the current one)."""
        handle = (torch.cuda.current_stream() if torch_stream is None else torch_stream).cuda_stream
        if handle not in self.streams:
            w = ctypes.c_void_p()
            if self.lib.tlrt_stream_from_handle(self.ctx, ctypes.c_void_p(handle), ctypes.byref(w)) != 0:
                raise RuntimeError("tlrt_stream_from_handle: " + self.error())
            self.streams[handle] = w
        return self.streams[handle]

    def kernel(self, src, name, defines, arch=None, file="kernel.tl"):
        """Kernel `name` of DSL source src with -D defines, compiled for arch (None: the device's)."""
        defs = (JitDefine * len(defines))(*[JitDefine(k.encode(), str(v).encode()) for k, v in defines.items()])
        mod, k, err = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        data = src.encode()
        st = self.lib.tlc_jit_load_kernel(self.jit(arch), self.ctx, data, len(data), file.encode(), defs,
                                          len(defines), name.encode(), ctypes.byref(mod), ctypes.byref(k),
                                          ctypes.byref(err))
        if st != 0:
            raise RuntimeError(f"{name} {arch or self.arch} {defines}: " + self._take(err))
        self.keep.append(mod)
        return k

    def launcher(self, k, args, torch_stream=None):
        """A no-argument callable that launches k on args on torch_stream (default: torch's current
        stream when the launcher is made), packed once. args: contiguous torch tensors, Python
        floats (float32 scalars) and ints (int32 scalars)."""
        shapes, items = [], []
        for a in args:
            if isinstance(a, torch.Tensor):
                assert a.is_contiguous()
                s = (ctypes.c_int64 * a.dim())(*a.shape)
                shapes.append(s)
                items.append(Arg(ARG_TENSOR, TLRT_DTYPE[a.dtype], a.data_ptr(), a.dim(), s, None, 0.0, 0))
            elif isinstance(a, int):
                items.append(Arg(ARG_SCALAR, TLRT_DTYPE[torch.int32], 0, 0, None, None, 0.0, a))
            else:
                items.append(Arg(ARG_SCALAR, TLRT_DTYPE[torch.float32], 0, 0, None, None, float(a), 0))
        arr = (Arg * len(items))(*items)
        launch, lib, ctx, n, stream = self.lib.tlrt_launch, self.lib, self.ctx, len(items), self.stream(torch_stream)

        def run():
            if launch(k, arr, n, stream) != 0:
                raise RuntimeError("tlrt_launch: " + lib.tlrt_last_error(ctx).decode())
        run.keep = (shapes, arr, args)  # the tensors live as long as the launcher
        return run
