"""Autotuning: one kernel compiled under several configurations (-D values), the fastest on the
arguments of a call chosen by timing them all on the GPU, once per key of the arguments.

    tuned = tlc.autotune("dsl-examples/flash_attention.tl", kernel="flash_attention",
                         defines={"dim": 64, "causal": True},
                         configs=[{}, {"block_M": 192, "block_N": 112, "threads": 384, "num_stages": 2}])
    tuned(q, k, v, out, lse, scale)     # the first call with these shapes times both, then runs the faster
    tuned.config_for(q, k, v, out, lse, scale)   # {} or the 192 x 112 tile

Choices are kept on disk too (cache=True, the default): in the JIT's cache directory ($TLC_CACHE_DIR,
else ~/.cache/tlc), under autotune/, one file per source, kernel, defines, configurations, libtlc
version and GPU (name and arch), so another process takes the same key's choice without timing.
"""
import ctypes
import hashlib
import json
import os
import statistics
import tempfile
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

    def __init__(self, source, kernel, configs, defines, key, warmup, rep, rounds, compile_options, cache=True):
        self.source, self.kernel_name = source, kernel
        self.cache = cache
        self._choice_files = {}  # device -> the file of its choices (None: none)
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

    def _choice_file(self, device):
        """The file keeping this tuning's choices on this GPU (None: cache=False, or no directory), named
        once per device."""
        if device not in self._choice_files:
            self._choice_files[device] = self._choice_file_name(device) if self.cache else None
        return self._choice_files[device]

    def _choice_file_name(self, device):
        from . import _context, _read_source, device_arch, load_library, version
        from ._lib import DeviceProps
        # the JIT cache's directory (compiler/api/jit_cache.c): cache_dir, $TLC_CACHE_DIR, $HOME/.cache/tlc
        home = os.environ.get("HOME")
        root = self._compile_options.get("cache_dir") or os.environ.get("TLC_CACHE_DIR") or (
            os.path.join(home, ".cache", "tlc") if home else None)
        if not root:
            return None
        props = DeviceProps()
        name = ""
        if load_library().tlrt_device_properties(_context(device), ctypes.byref(props)) == 0:
            name = props.name.decode(errors="replace")
        text, _ = _read_source(self.source, self._compile_options.get("name"))
        what = json.dumps([version(), name, device_arch(device), text, self.kernel_name, sorted(self.defines.items()),
                           [sorted(c.items()) for c in self.configs],
                           sorted((k, v) for k, v in self._compile_options.items() if k != "cache_dir")],
                          default=repr)
        return os.path.join(os.fspath(root), "autotune", hashlib.sha256(what.encode()).hexdigest() + ".json")

    def _load_choices(self, path):
        try:
            with open(path) as f:
                data = json.load(f)
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_choice(self, path, key, chosen, results):
        """Adds this key's choice to the file (written whole and renamed into place, so a reader never
        sees half of it); a failure to write keeps the choice in memory only."""
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            data = self._load_choices(path)
            data[repr(key)] = {"chosen": chosen, "times": [t if isinstance(t, float) else str(t) for _, t in results]}
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(data, f)
            os.replace(tmp, path)
        except OSError:
            pass

    def _cached(self, path, key, args, stream):
        """The choice a file keeps for this key, when that configuration still compiles and binds."""
        entry = self._load_choices(path).get(repr(key)) if path else None
        if not isinstance(entry, dict):
            return False
        i, times = entry.get("chosen"), entry.get("times")
        if not isinstance(i, int) or not 0 <= i < len(self.configs) or not isinstance(times, list) or \
                len(times) != len(self.configs):
            return False
        k = self._kernel(i)
        try:
            if isinstance(k, Exception):
                return False
            k.bind(*args, stream=stream)
        except (CompileError, LaunchError):
            return False
        self.results[key] = list(zip(self.configs, times))
        self._chosen[key] = i
        return True

    def _tune(self, args, stream, key):
        from . import _contexts, _launch_place, _stream, load_library
        device, handle = _launch_place([device_tensor(a) for a in args], stream)
        path = self._choice_file(device)
        if self._cached(path, key, args, stream):
            return
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
        if path:
            self._save_choice(path, key, self._chosen[key], results)

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
        self.kernel_for(*args, stream=stream)(*args, stream=stream)


def autotune(source, configs, kernel=None, defines=None, key=None, warmup=3, rep=10, rounds=5, cache=True,
             **compile_options):
    """An Autotuned kernel: `source` and `kernel` as for tlc.compile, `defines` given to every
    configuration, `configs` a list of {NAME: value} dicts added to them (an empty dict: the source's
    defaults), `key` a function of the call's arguments naming what a choice is kept for (default:
    tensors' shapes and dtypes, integers' values; its repr names the choice on disk), `warmup` / `rep` /
    `rounds` the launches of a timing, `cache` whether choices are kept on disk for other processes.
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
    if not isinstance(cache, bool):
        raise TypeError(f"autotune: cache must be True or False, got {cache!r}")
    return Autotuned(source, kernel, configs, defines, key, warmup, rep, rounds, compile_options, cache)
