"""TileLang's Python API over tlc: a TileLang script runs unchanged, its kernels compiled by tlc.

    python -m tlc.tilelang example_gemm.py [its arguments]

runs the script as `__main__` with this package standing in for `tilelang` (and
`tilelang.language` for T). What the script's Python does with its kernels works as in TileLang:

- `@tilelang.jit` factories: `kernel = matmul(1024, 1024, 1024, 128, 128, 32)` (or
  `matmul.compile(...)`) compiles the factory's kernel with tlc, its arguments as -D values;
  `kernel(a, b)` launches it on torch tensors, allocating the parameters `out_idx` names and
  returning them; an eager `@tilelang.jit` function called with tensors runs at once and returns its
  `T.empty` outputs.
- `tilelang.compile(prim_func, out_idx=...)` on the kernel an undecorated factory returned.
- `kernel.get_profiler(tensor_supply_type)`: `assert_allclose(ref, rtol=, atol=)` on generated
  inputs, `do_bench(fn=None, warmup=, rep=)` in milliseconds (CUDA events);
  `kernel.get_kernel_source()` is the PTX.
- `@autotune(configs=...)`: the first configuration that gives the missing arguments (no search:
  tlc.autotune searches); `tilelang.testing`'s decorators run the test as is.
- Values TileLang reads when it traces a kernel are given to tlc as -D: an eager function's T.const
  sizes from the tensors it is called with, and module-level values the file computes with torch.

The kernels are compiled for the current GPU ($TLC_TILELANG_ARCH names another target, for
compiling without one).

Kernel bodies are never run as Python (tlc reads them from the file), so whatever a body uses is
tlc's to accept (docs/language.md 13); names of TileLang's API that only the Python around kernels
passes along resolve to placeholders."""
import ast
import enum
import functools
import importlib.abc
import importlib.machinery
import inspect
import os
import re
import sys
import textwrap
import types

import tlc as _tlc
from . import language
from .language import Placeholder, PrimFunc

__all__ = ["jit", "compile", "autotune", "cdiv", "JITKernel", "Profiler", "PassConfigKey", "TensorSupplyType",
           "do_bench", "install"]


class _Names(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return name


class PassConfigKey(metaclass=_Names):
    """TileLang's pass-configuration keys, by name (tlc reads the ones it honours from the file)."""


class TensorSupplyType(enum.Enum):
    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def cdiv(a, b):
    return -(-a // b)


def next_power_of_2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _is_tensor(x):
    return hasattr(x, "data_ptr") or hasattr(x, "__cuda_array_interface__")


def _define(value):
    """A Python value as tlc's -D text."""
    if isinstance(value, Placeholder):
        raise TypeError(f"{value!r} is a TileLang object tlc cannot take as a compile-time value")
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(_define(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return _tlc.dtype_name(value)
    return str(value)


def _defines(values):
    return {k: _define(v) for k, v in values.items() if v is not None and not _is_tensor(v)}


_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "//": lambda a, b: a // b,
        "%": lambda a, b: a % b, "ceildiv": lambda a, b: -(-a // b), "min": min, "max": max,
        "==": lambda a, b: int(a == b)}


def _grid_expr(text, sizes):
    """A metadata expression ("(// (+ N 127) 128)", include/tlc/metadata.h) over known sizes; None where
    it reads one not known."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    pos = 0

    def parse():
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            op = tokens[pos]
            pos += 1
            args = []
            while tokens[pos] != ")":
                args.append(parse())
            pos += 1
            if op not in _OPS or None in args or len(args) != 2:
                return None
            return _OPS[op](*args)
        if tok.lstrip("-").isdigit():
            return int(tok)
        return sizes.get(tok)

    try:
        return parse()
    except (IndexError, ZeroDivisionError):
        return None


def _dim(d, sizes, checks):
    if isinstance(d, int):
        return d
    if d in sizes:
        return sizes[d]
    for check in checks:  # "LINE:COL (== SYM EXPR)": an output's dim the kernel derives from others
        expr = check.split(None, 1)[-1]
        head = f"(== {d} "
        if expr.startswith(head):
            v = _grid_expr(expr[len(head):-1], sizes)
            if v is not None:
                return v
    raise TypeError(f"cannot size an output: its dim {d!r} is not bound by the inputs")


def _bind_sizes(params, args, sizes):
    for p, a in zip(params, args):
        if p["kind"] == "tensor" and a is not None and _is_tensor(a):
            for d, n in zip(p["shape"], a.shape):
                if isinstance(d, str) and d.isidentifier():
                    sizes.setdefault(d, int(n))


class JITKernel:
    """A compiled TileLang kernel: call it with the inputs (the out_idx parameters are allocated and
    returned), or with every parameter."""

    def __init__(self, kernel, out_idx=None, name=None):
        self.kernel = kernel
        self.name = name or kernel.name
        params = kernel.metadata["params"]
        n = len(params)
        if out_idx is None:
            out_idx = []
        elif isinstance(out_idx, int):
            out_idx = [out_idx]
        for i in out_idx:
            if not -n <= i < n:
                raise IndexError(f"out_idx {i} of {self.name}, which has {n} parameters")
        self.out_idx = sorted(i % n for i in out_idx)
        self.params = params

    def __repr__(self):
        return f"<tilelang JITKernel {self.name} (tlc, {self.kernel.arch})>"

    def _full_args(self, args):
        n, outs = len(self.params), self.out_idx
        if len(args) == n:
            return list(args), []
        if len(args) != n - len(outs):
            names = [p["name"] for i, p in enumerate(self.params) if i not in outs]
            raise TypeError(f"{self.name} takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
        import torch
        full, it = [None] * n, iter(args)
        for i in range(n):
            if i not in outs:
                full[i] = next(it)
        sizes = {}
        _bind_sizes(self.params, full, sizes)
        device = next((a.device for a in full if isinstance(a, torch.Tensor)), torch.device("cuda"))
        made = []
        for i in outs:
            p = self.params[i]
            if p["kind"] != "tensor":
                raise TypeError(f"out_idx {i} of {self.name} is the scalar {p['name']}")
            checks = self.kernel.metadata.get("checks", [])
            shape = [_dim(d, sizes, checks) for d in p["shape"]]
            t = torch.empty(shape, dtype=language.torch_dtype(p["dtype"]), device=device)
            full[i] = t
            made.append(t)
        return full, made

    def __call__(self, *args, stream=None):
        full, made = self._full_args(args)
        self.kernel(*full, stream=stream)
        if not made:
            return None
        return made[0] if len(made) == 1 else made

    def get_kernel_source(self, *_, **__):
        return self.kernel.ptx

    def get_profiler(self, tensor_supply_type=TensorSupplyType.Auto):
        return Profiler(self, tensor_supply_type)

    @property
    def config(self):
        return getattr(self, "_config", None)


def _supply(shape, dtype_name, kind):
    """An input as TileLang's profiler makes it for a supply type: Auto draws floats from U(-1, 1) and
    integers from -2..2 (unsigned 0..2, float8 as the bytes -128..127), Integer those integers for
    every dtype, Uniform U(-1, 1), Normal N(-1, 1) (ones for int8 in both), Randn N(0, 1)."""
    import torch
    dtype = language.torch_dtype(dtype_name)
    cuda = {"device": "cuda"}
    if kind == TensorSupplyType.Zero:
        return torch.zeros(shape, dtype=dtype, **cuda)
    if kind == TensorSupplyType.One:
        return torch.ones(shape, dtype=dtype, **cuda)
    if kind == TensorSupplyType.Randn:
        return torch.randn(shape, **cuda).to(dtype)
    if kind in (TensorSupplyType.Uniform, TensorSupplyType.Normal):
        if dtype == torch.int8:
            return torch.ones(shape, dtype=dtype, **cuda)
        t = torch.empty(shape, dtype=torch.float32, **cuda)
        return (t.uniform_(-1.0, 1.0) if kind == TensorSupplyType.Uniform else t.normal_(-1.0, 1.0)).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, **cuda).bool()
    if dtype_name.startswith("uint"):
        return torch.randint(0, 3, shape, **cuda).to(dtype)
    if dtype_name.startswith("float8"):
        return torch.randint(-128, 128, shape, dtype=torch.int8, **cuda).to(dtype)
    if kind == TensorSupplyType.Auto and dtype_name in ("float16", "bfloat16", "float32"):
        return torch.empty(shape, dtype=dtype, **cuda).uniform_(-1.0, 1.0)
    return torch.randint(-2, 3, shape, **cuda).to(dtype)


def _listed(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


class Profiler:
    """TileLang's profiler over a tlc kernel: generated inputs, a check against a reference, timing."""

    def __init__(self, jit_kernel, supply=TensorSupplyType.Auto):
        self.kernel, self.supply = jit_kernel, supply
        self.func = jit_kernel

    def _get_inputs(self):
        k = self.kernel
        ins = []
        for i, p in enumerate(k.params):
            if i in k.out_idx:
                continue
            if p["kind"] != "tensor":
                raise TypeError(f"{k.name}: give input_tensors: the scalar {p['name']} has no generated value")
            if not all(isinstance(d, int) for d in p["shape"]):
                raise TypeError(f"{k.name}: give input_tensors: {p['name']}'s shape {p['shape']} is not constant")
            ins.append(_supply(p["shape"], p["dtype"], self.supply))
        return ins

    def assert_allclose(self, reference_program, input_tensors=None, atol=1e-2, rtol=1e-2,
                        max_mismatched_ratio=0.01, **_):
        import torch
        ins = self._get_inputs() if input_tensors is None else list(input_tensors)
        ref = _listed(reference_program(*ins))
        out = _listed(self.kernel(*ins))
        if not self.kernel.out_idx:  # written in place: compare the reference with what the kernel wrote
            out = []
        if len(out) != len(ref):
            raise AssertionError(f"{self.kernel.name}: {len(out)} outputs, the reference gave {len(ref)}")
        for i, (a, b) in enumerate(zip(out, ref)):
            a, b = a.double(), b.to(a.device).double()
            if a.shape != b.shape:
                raise AssertionError(f"{self.kernel.name}: output {i} has shape {tuple(a.shape)}, "
                                     f"the reference {tuple(b.shape)}")
            bad = ~torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
            ratio = bad.float().mean().item() if bad.numel() else 0.0
            if ratio > max_mismatched_ratio:
                worst = (a - b).abs().max().item()
                raise AssertionError(f"{self.kernel.name}: output {i}: {ratio:.2%} of the elements differ from the "
                                     f"reference beyond rtol={rtol}, atol={atol} (at most {max_mismatched_ratio:.2%} "
                                     f"allowed); largest difference {worst}")

    def run_once(self, func=None):
        ins = self._get_inputs()
        return (func or self.kernel)(*ins)

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=1, n_repeat=1, input_tensors=None, **_):
        ins = self._get_inputs() if input_tensors is None else list(input_tensors)
        fn = func or self.kernel
        if fn is self.kernel:
            full, _made = self.kernel._full_args(ins)
            launch = self.kernel.kernel.bind(*full)
        else:
            def launch():
                fn(*ins)
        return do_bench(launch, warmup=warmup, rep=rep)


def do_bench(fn, warmup=25, rep=100, return_mode="mean", **_):
    """Milliseconds a call of fn takes on the GPU: warmup calls, then rep timed between CUDA events
    ($TLC_TILELANG_QUICK_BENCH=1: one and three, for runs that check rather than time)."""
    import torch
    if os.environ.get("TLC_TILELANG_QUICK_BENCH") == "1":
        warmup, rep = 1, 3
    for _i in range(max(1, int(warmup))):
        fn()
    torch.cuda.synchronize()
    n = max(1, int(rep))
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _i in range(n):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / n


def _source_of(fn):
    return inspect.getsourcefile(fn) or fn.__code__.co_filename


def _is_factory(fn):
    """A factory returns a @T.prim_func; an eager function is the kernel itself."""
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        return True
    return "prim_func" in text


class _Jit:
    """A `@tilelang.jit` function: a factory (called with its arguments: a JITKernel) or an eager
    kernel (called with tensors: runs it)."""

    def __init__(self, fn, out_idx=None, **options):
        functools.update_wrapper(self, fn)
        self.fn, self.out_idx = fn, out_idx
        self.eager = not _is_factory(fn)
        self.signature = inspect.signature(fn)
        self._kernels = {}

    def _arguments(self, args, kwargs):
        """The call's values by name; an eager function's compile() may also name its T.const sizes."""
        params = self.signature.parameters
        extra = {k: v for k, v in kwargs.items() if k not in params}
        if extra and not self.eager:
            raise TypeError(f"{self.fn.__name__}() got unexpected arguments {', '.join(extra)}")
        bound = self.signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
        return {**bound.arguments, **extra}

    def _kernel(self, values):
        defines = _defines(values)
        key = tuple(sorted(defines.items()))
        if key not in self._kernels:
            k = _compile_with_globals(self.fn.__globals__, _source_of(self.fn), self.fn.__name__, defines)
            out_idx = self.out_idx
            if self.eager:  # its T.empty outputs: the parameters that are not the function's
                out_idx = [i for i, p in enumerate(k.metadata["params"]) if p["name"] not in self.signature.parameters]
            self._kernels[key] = JITKernel(k, out_idx, self.fn.__name__)
        return self._kernels[key]

    def compile(self, *args, **kwargs):
        return self._kernel(self._arguments(args, kwargs))

    def get_kernel_source(self, *args, **kwargs):
        return self.compile(*args, **kwargs).get_kernel_source()

    def __call__(self, *args, **kwargs):
        values = self._arguments(args, kwargs)
        if not self.eager:
            return self._kernel(values)
        tensors = [v for v in values.values() if _is_tensor(v)]
        for name, size in _const_sizes(self.fn, values).items():
            values.setdefault(name, size)
        return self._kernel(values)(*tensors)


def _is_t_attr(node, names):
    return isinstance(node, ast.Attribute) and node.attr in names


def _const_sizes(fn, values):
    """An eager function's T.const sizes read off the tensors it is called with, where a tensor's
    annotation in the body names them as dims (`X: T.Tensor((M, N), dtype)`, or through a list
    assigned before): TileLang specializes the kernel on them, and so does the -D this gives."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else []
    consts, lists, sizes = set(), {}, {}
    for st in body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and _is_t_attr(st.value.func, ("const",)):
            if st.value.args and isinstance(st.value.args[0], ast.Constant) and isinstance(st.value.args[0].value, str):
                consts.update(n for n in st.value.args[0].value.replace(",", " ").split())
        elif (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
              and isinstance(st.value, (ast.List, ast.Tuple))):
            lists[st.targets[0].id] = st.value.elts
    for st in body:
        if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
            continue
        ann, t = st.annotation, values.get(st.target.id)
        if t is None or not _is_tensor(t):
            continue
        if isinstance(ann, ast.Call) and _is_t_attr(ann.func, ("Tensor", "Buffer")) and ann.args:
            shape = ann.args[0]
        elif isinstance(ann, ast.Subscript) and _is_t_attr(ann.value, ("Tensor", "Buffer")):
            sl = ann.slice
            shape = sl.elts[0] if isinstance(sl, ast.Tuple) and sl.elts else sl
        else:
            continue
        dims = lists.get(shape.id) if isinstance(shape, ast.Name) else getattr(shape, "elts", None)
        for i, d in enumerate(dims or []):
            if isinstance(d, ast.Name) and d.id in consts and i < len(t.shape):
                sizes.setdefault(d.id, int(t.shape[i]))
    return sizes


def jit(fn=None, *, out_idx=None, **options):
    if fn is None:
        return lambda f: _Jit(f, out_idx, **options)
    if isinstance(fn, PrimFunc):
        return compile(fn, out_idx=out_idx)
    return _Jit(fn, out_idx, **options)


def compile(func, out_idx=None, **_options):  # noqa: A001  (TileLang's name)
    """tilelang.compile(prim_func, out_idx=...): the kernel a factory returned, with the arguments the
    factory had."""
    if isinstance(func, _Jit):
        return func.compile()
    if not isinstance(func, PrimFunc):
        raise TypeError(f"tilelang.compile takes a @T.prim_func, got {type(func).__name__}")
    k = _compile_with_globals(func.fn.__globals__, func.source, func.name, _defines(func.defines))
    return JITKernel(k, out_idx, func.name)


_ASKED = re.compile(r"-D ([A-Za-z_]\w*)=VALUE")


def _compile_with_globals(module_globals, source, name, defines):
    """tlc.compile, giving the script's module-level values a kernel reads where tlc cannot compute
    them from the file (a value computed with torch at import): TileLang reads them when it traces
    the kernel, so they are the script's values at this call."""
    defines = dict(defines)
    while True:
        try:
            return _tlc.compile(source, kernel=name, defines=defines, arch=os.environ.get("TLC_TILELANG_ARCH") or None)
        except _tlc.CompileError as e:
            asked = [n for n in dict.fromkeys(_ASKED.findall(str(e)))
                     if n not in defines and n in module_globals and _plain(module_globals[n])]
            if not asked:
                raise
            for n in asked:
                defines[n] = _define(module_globals[n])


def _plain(v):
    return isinstance(v, (bool, int, float, str)) or (isinstance(v, (list, tuple)) and all(_plain(x) for x in v))


class _Autotune:
    """`@autotune(configs=...)` over a jit factory: the arguments a call leaves out come from the first
    configuration that gives them all (tlc does not search here; tlc.autotune does)."""

    def __init__(self, fn, configs):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.configs = configs() if callable(configs) else list(configs or [])

    def compile(self, *args, **kwargs):
        return self._run(True, args, kwargs)

    def __call__(self, *args, **kwargs):
        return self._run(False, args, kwargs)

    def _run(self, compile_only, args, kwargs):
        target = self.fn.fn if isinstance(self.fn, _Jit) else self.fn
        sig = inspect.signature(target)
        params = sig.parameters
        bound = sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
        tuned = {k for c in self.configs for k in c}
        missing = [n for n, p in params.items()
                   if n not in bound.arguments and p.default is inspect.Parameter.empty and n in tuned]
        bound = bound.arguments
        chosen = {}
        if missing:
            chosen = next((c for c in self.configs if all(m in c for m in missing)), None)
            if chosen is None:
                raise TypeError(f"{target.__name__}: no configuration gives {', '.join(missing)}")
            chosen = {k: v for k, v in chosen.items() if k not in bound}
        call = self.fn.compile if compile_only and isinstance(self.fn, _Jit) else self.fn
        result = call(*args, **kwargs, **chosen)
        if isinstance(result, JITKernel):
            result._config = chosen
        return result


def autotune(fn=None, *, configs=None, **_options):
    if fn is None:
        return lambda f: _Autotune(f, configs)
    return _Autotune(fn, configs)


def _compute_version(target=None):
    """The current GPU's compute capability as "9.0"."""
    import torch
    major, minor = torch.cuda.get_device_capability()
    return f"{major}.{minor}"


def _num_sms():
    return _tlc.device_num_sms()


class _StubModule(types.ModuleType):
    """A tilelang submodule this package does not write out: its names are placeholders."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"{self.__name__}.{name}")


def _identity_decorator(*args, **kwargs):
    if len(args) == 1 and not kwargs and callable(args[0]):
        return args[0]
    return lambda f: f


def _set_random_seed(seed=42):
    import random
    random.seed(seed)
    try:
        import torch
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
    except ImportError:
        pass


def _testing_main():
    main = sys.modules["__main__"]
    for name in sorted(dir(main)):
        if name.startswith("test_") and callable(getattr(main, name)):
            getattr(main, name)()
            print(f"{name}: passed")


def _submodules():
    """The tilelang submodules written out here, by name."""
    mods = {}

    def mod(name, **attrs):
        m = _StubModule("tilelang." + name)
        m.__dict__.update(attrs)
        mods[name] = m
        return m

    mod("math", next_power_of_2=next_power_of_2, cdiv=cdiv)
    mod("profiler", do_bench=do_bench, Profiler=Profiler)
    mod("autotuner", autotune=autotune)
    mod("testing", set_random_seed=_set_random_seed, main=_testing_main, requires_cuda=_identity_decorator,
        requires_cuda_compute_version=_identity_decorator, requires_cuda_compute_version_ge=_identity_decorator,
        requires_cuda_compute_version_eq=_identity_decorator, requires_cuda_compute_version_lt=_identity_decorator,
        requires_cuda_compute_version_le=_identity_decorator, requires_package=_identity_decorator)
    driver = types.SimpleNamespace(get_num_sms=_num_sms)
    mod("carver", arch=types.SimpleNamespace(driver=driver))
    mod("carver.arch", driver=driver)
    mod("utils", tensor=None)
    mod("utils.tensor", TensorSupplyType=TensorSupplyType)
    mods["utils"].tensor = mods["utils.tensor"]
    mod("layout", make_swizzled_layout=Placeholder("make_swizzled_layout"))
    fp8 = _StubModule("tilelang.language.fp8")
    fp8.determine_fp8_type = language.determine_fp8_type
    mods["language.fp8"] = fp8
    mod("contrib")
    mod("contrib.nvcc", get_target_compute_version=_compute_version)
    mods["contrib"].nvcc = mods["contrib.nvcc"]
    return mods


_SUBMODULES = None


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `tilelang.*` modules: those written out here, else a placeholder module."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "tilelang" or fullname.startswith("tilelang."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        if spec.name == "tilelang":
            return sys.modules[__name__]
        if spec.name == "tilelang.language":
            return language
        sub = spec.name[len("tilelang."):]
        return _SUBMODULES.get(sub) or _StubModule(spec.name)

    def exec_module(self, module):
        if not hasattr(module, "__path__"):
            module.__path__ = []


def install():
    """Makes `import tilelang` (and its submodules) this package, for a TileLang script run in this
    process. Idempotent."""
    global _SUBMODULES
    if _SUBMODULES is None:
        _SUBMODULES = _submodules()
        for name, m in _SUBMODULES.items():
            parent, _, leaf = name.rpartition(".")
            owner = language if parent == "language" else _SUBMODULES[parent] if parent else sys.modules[__name__]
            setattr(owner, leaf, m)
    for m in _SUBMODULES.values():
        if not hasattr(m, "__path__"):
            m.__path__ = []
    if not hasattr(language, "__path__"):
        language.__path__ = []  # so that tilelang.language.fp8 and the like resolve (as placeholders)
    sys.modules.setdefault("tilelang", sys.modules[__name__])
    sys.modules.setdefault("tilelang.language", language)
    for name, m in _SUBMODULES.items():
        sys.modules.setdefault("tilelang." + name, m)
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Placeholder("tilelang." + name)
