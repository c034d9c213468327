"""Autotuning: one kernel compiled under several configurations (-D values), the fastest on the
arguments of a call chosen by timing them all on the GPU, once per key of the arguments.

    tuned = tlc.autotune("dsl-examples/flash_attention.tl", kernel="flash_attention",
                         defines={"dim": 64, "causal": True},
                         configs=[{}, {"block_M": 192, "block_N": 112, "threads": 384, "num_stages": 2}])
    tuned(q, k, v, out, lse, scale)     # the first call with these shapes times both, then runs the faster
    tuned.config_for(q, k, v, out, lse, scale)   # {} or the 192 x 112 tile
"""
import ctypes
import statistics
import threading

from .errors import CompileError, LaunchError, TlcError
from .tensors import device_tensor


def default_key(args):
    """What a choice is kept for: each tensor's shape and dtype, each integer's value (floats such as
    a scale do not change which configuration is faster)."""
    key = []
    for a in args:
        t = device_tensor(a)
        if t is not None:
            key.append((tuple(t.shape), t.dtype))
        elif isinstance(a, (bool, int)):
            key.append(a)
        else:
            key.append(None)
    return tuple(key)


class _Events:
    """Two libtlrt events on one device, for timing launches on one stream."""

    def __init__(self, lib, ctx):
        self.lib, self.ctx = lib, ctx
        self.e = [ctypes.c_void_p(), ctypes.c_void_p()]
        for e in self.e:
            if lib.tlrt_event_create(ctx, ctypes.byref(e)) != 0:
                self.close()
                raise LaunchError(lib.tlrt_last_error(ctx).decode())

    def _check(self, status):
        if status != 0:
            raise LaunchError(self.lib.tlrt_last_error(self.ctx).decode())

    def time_ms(self, fn, stream, n):
        """Milliseconds per call of fn() over n calls on stream."""
        self._check(self.lib.tlrt_event_record(self.ctx, self.e[0], stream))
        for _ in range(n):
            fn()
        self._check(self.lib.tlrt_event_record(self.ctx, self.e[1], stream))
        self._check(self.lib.tlrt_event_synchronize(self.ctx, self.e[1]))
        ms = ctypes.c_float()
        self._check(self.lib.tlrt_event_elapsed_ms(self.ctx, self.e[0], self.e[1], ctypes.byref(ms)))
        return ms.value / n

    def close(self):
        for e in self.e:
            if e:
                self.lib.tlrt_event_destroy(self.ctx, e)
        self.e = []


class Autotuned:
    """A kernel under several configurations. Called like a tlc.Kernel (tuned(*args, stream=None),
    tuned.bind(*args, stream=None)); the first call with a new key (key(args), default_key by default)
    compiles every configuration that is not compiled yet, times each that compiles and loads on these
    arguments (warmup launches, then `rounds` rounds of `rep` launches each, the configurations in
    alternating order; the median), and keeps the fastest for that key. A configuration the compiler
    or the driver refuses is left out (its error is in `results`); if every one is refused, TlcError
    says why for each. The timing launches write the
    outputs: the tuned call itself launches the chosen kernel after them. Tuning waits for the GPU,
    so a first call with a new key cannot be captured in a CUDA graph (call it once before capturing)."""

    def __init__(self, source, kernel, configs, defines, key, warmup, rep, rounds, compile_options):
        self.source, self.kernel_name = source, kernel
        self.configs = [dict(c) for c in configs]
        self.defines = dict(defines or {})
        self.key = key or default_key
        self.warmup, self.rep, self.rounds = warmup, rep, rounds
        self._compile_options = compile_options
        self._compiled = {}   # config index -> tlc.Kernel, or the error it raised
        self._chosen = {}     # key -> config index
        self.results = {}     # key -> [(config, microseconds per launch, or the error's text)]
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<tlc.Autotuned {self.kernel_name or '?'}: {len(self.configs)} configurations>"

    def _kernel(self, i):
        if i not in self._compiled:
            from . import compile as _compile
            try:
                self._compiled[i] = _compile(self.source, kernel=self.kernel_name,
                                             defines={**self.defines, **self.configs[i]},
                                             **self._compile_options)
            except CompileError as e:
                self._compiled[i] = e
        return self._compiled[i]

    def _tune(self, args, stream, key):
        from . import _contexts, _launch_place, _stream, load_library
        device, handle = _launch_place([device_tensor(a) for a in args], stream)
        errors, fns = {}, {}   # config index -> the error's text, or its bound launch
        for i in range(len(self.configs)):
            k = self._kernel(i)
            try:
                if isinstance(k, Exception):
                    raise k
                fns[i] = k.bind(*args, stream=stream)
            except (CompileError, LaunchError) as e:
                errors[i] = str(e)
        times = {}
        if fns:
            s = _stream(device, handle)
            events = _Events(load_library(), _contexts[device])
            try:
                for i in list(fns):   # warmup; a launch the driver refuses leaves the configuration out
                    try:
                        events.time_ms(fns[i], s, max(self.warmup, 1))
                    except LaunchError as e:
                        errors[i] = str(e)
                        del fns[i]
                # Rounds alternate the order, so that no configuration always runs first (clocks and
                # caches change under a run).
                order, ms = list(fns), {i: [] for i in fns}
                for r in range(self.rounds):
                    for i in (order if r % 2 == 0 else order[::-1]):
                        ms[i].append(events.time_ms(fns[i], s, self.rep))
                times = {i: statistics.median(v) * 1e3 for i, v in ms.items()}
            finally:
                events.close()
        results = [(c, times[i] if i in times else errors[i]) for i, c in enumerate(self.configs)]
        self.results[key] = results
        if not times:
            raise TlcError("autotune: no configuration runs on these arguments:\n" +
                           "\n".join(f"  {c}: {r}" for c, r in results))
        self._chosen[key] = min(times, key=times.get)

    def kernel_for(self, *args, stream=None):
        """The tlc.Kernel chosen for these arguments (timing the configurations first if their key is new)."""
        key = self.key(args)
        with self._lock:
            if key not in self._chosen:
                self._tune(args, stream, key)
            return self._compiled[self._chosen[key]]

    def config_for(self, *args, stream=None):
        """The configuration (its -D values) chosen for these arguments."""
        self.kernel_for(*args, stream=stream)
        return dict(self.configs[self._chosen[self.key(args)]])

    def bind(self, *args, stream=None):
        return self.kernel_for(*args, stream=stream).bind(*args, stream=stream)

    def __call__(self, *args, stream=None):
        self.bind(*args, stream=stream)()


def autotune(source, configs, kernel=None, defines=None, key=None, warmup=3, rep=10, rounds=5, **compile_options):
    """An Autotuned kernel: `source` and `kernel` as for tlc.compile, `defines` given to every
    configuration, `configs` a list of {NAME: value} dicts added to them (an empty dict: the source's
    defaults), `key` a function of the call's arguments naming what a choice is kept for (default:
    tensors' shapes and dtypes, integers' values), `warmup` / `rep` / `rounds` the launches of a timing.
    compile_options: tlc.compile's arch, cache_dir, name, opt_level, backend."""
    configs = list(configs)
    if not configs:
        raise ValueError("autotune: configs is empty")
    if any(not isinstance(c, dict) for c in configs):
        raise TypeError("autotune: each configuration is a dict of -D values")
    if key is not None and not callable(key):
        raise TypeError("autotune: key must be a function of the arguments")
    for name, v in (("warmup", warmup), ("rep", rep), ("rounds", rounds)):
        if not isinstance(v, int) or isinstance(v, bool) or v < (0 if name == "warmup" else 1):
            raise ValueError(f"autotune: {name} must be an integer >= {0 if name == 'warmup' else 1}, got {v!r}")
    unknown = set(compile_options) - {"arch", "cache_dir", "name", "opt_level", "backend"}
    if unknown:
        raise TypeError(f"autotune: unexpected keyword argument(s) {', '.join(sorted(unknown))}")
    return Autotuned(source, kernel, configs, defines, key, warmup, rep, rounds, compile_options)
