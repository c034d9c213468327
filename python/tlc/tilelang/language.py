"""`tilelang.language` (T) as Python sees it when a TileLang script runs over tlc.

Kernel bodies are never run by Python: tlc reads them from the file. What Python does run is the
code around them: module constants, a factory's lines before its `@T.prim_func`, the annotations
of a kernel's signature (evaluated when its `def` runs) and the script's own driver code. There T
gives dtypes (strings, so that `dtype == T.float16` and `getattr(torch, dtype)` work), integer
helpers on Python numbers, `T.prim_func` (which records where the kernel came from), and for every
other name a placeholder that accepts any use."""
import builtins as _builtins
import math as _math
import sys as _sys

from ..tensors import dtype_name


class DType(str):
    """A TileLang dtype by name ("float16"), as TileLang's T.float16 compares and prints."""

    @property
    def bits(self):
        if self == "bool":
            return 8
        digits = "".join(c for c in self.split("_")[0] if c.isdigit())
        return int(digits) if digits else 32

    def as_torch(self):
        return torch_dtype(self)


# tlc's and TileLang's dtype names that torch spells otherwise
_TORCH = {"float8_e4m3": "float8_e4m3fn", "float8_e5m2fn": "float8_e5m2", "float": "float32", "half": "float16"}


def torch_dtype(name):
    """The torch dtype of a tlc or TileLang dtype name."""
    import torch
    return getattr(torch, _TORCH.get(str(name), str(name)))
_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
           "float32", "float64", "float8_e4m3", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fn", "float4_e2m1fn",
           "int4", "uint4")
for _name in _DTYPES:
    globals()[_name] = DType(_name)
float = DType("float32")  # noqa: A001  (TileLang's spelling)
half = DType("float16")


class Placeholder:
    """Anything TileLang offers that Python only passes around here (annotations, policies, layouts):
    calls, attributes, indexing and arithmetic all give another placeholder; used as a decorator on
    a function it gives the function back."""

    def __init__(self, name="T"):
        self._name = name

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], Placeholder):
            return args[0]
        return Placeholder(self._name + "(...)")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"{self._name}.{name}")

    def __getitem__(self, key):
        return Placeholder(self._name + "[...]")

    def __iter__(self):
        raise TypeError(f"{self._name} is a TileLang object Python does not iterate over here")

    def __repr__(self):
        return f"<tilelang {self._name}>"

    def __format__(self, spec):
        return repr(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def _op(self, *_):
        return Placeholder(self._name)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _op
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = _op


class PrimFunc:
    """A `@T.prim_func` kernel as a compile request: the file that holds it, the name tlc knows it by
    (the factory that returns it, or its own at module level) and the factory's arguments as they
    stood when it was defined (its -D values)."""

    def __init__(self, fn, source, name, defines):
        self.fn, self.source, self.name, self.defines = fn, source, name, defines
        self.__name__ = fn.__name__

    def __repr__(self):
        return f"<tilelang prim_func {self.name} of {self.source}>"


def prim_func(fn=None, **_options):
    if fn is None:
        return lambda f: prim_func(f)
    frame = _sys._getframe(1)
    if frame.f_code.co_name == "prim_func":  # prim_func(...)(fn)
        frame = frame.f_back
    code = frame.f_code
    if code.co_name == "<module>":
        return PrimFunc(fn, code.co_filename, fn.__name__, {})
    nargs = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[:nargs]
    local = frame.f_locals
    return PrimFunc(fn, code.co_filename, code.co_name, {n: local[n] for n in names if n in local})


def macro(fn=None, **_options):
    return fn if fn is not None else (lambda f: f)


def ceildiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return Placeholder("ceildiv(...)")



_builtin_float = _builtins.float


def _is_number(x):
    return isinstance(x, (int, _builtin_float)) and not isinstance(x, bool)


def _on_numbers(fn, name):
    def f(*args):
        return fn(*args) if all(_is_number(a) for a in args) else Placeholder(name + "(...)")
    f.__name__ = name
    return f


min = _on_numbers(_builtins.min, "min")  # noqa: A001
max = _on_numbers(_builtins.max, "max")  # noqa: A001
floordiv = _on_numbers(lambda a, b: a // b, "floordiv")
floormod = _on_numbers(lambda a, b: a % b, "floormod")
log2 = _on_numbers(_math.log2, "log2")
sqrt = _on_numbers(_math.sqrt, "sqrt")


def dtype(x):
    """T.dtype(torch.float16) or T.dtype("float16"): the dtype by name (tlc reads TileLang's aliases; one it
    lacks is refused where a kernel uses it)."""
    try:
        return DType(dtype_name(x))
    except TypeError:
        name = str(x).replace("torch.", "")
        return DType({"half": "float16", "float": "float32"}.get(name, name))


def dynamic(name, dtype="int32"):
    return Placeholder(f"dynamic({name!r})")


symbolic = dynamic


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Placeholder("T." + name)


def determine_fp8_type(fp8_format="e4m3"):
    """tilelang.language.fp8's choice for an NVIDIA GPU: the OCP float8 type."""
    return DType("float8_e5m2" if fp8_format == "e5m2" else "float8_e4m3fn")
