"""tlc.tilelang, TileLang's Python API over tlc: what runs without a GPU (imports, dtypes, the -D
values a call gives, the kernels' parameters and outputs), and on a GPU a whole TileLang-style
script (tilelang_script.py) run by `python -m tlc.tilelang`."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

import tlc.tilelang as tl

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "tilelang_script.py")

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    HAVE_GPU = False


class FakeTensor:
    """What the API reads of a tensor when it only compiles: its shape."""

    def __init__(self, *shape):
        self.shape = shape

    def data_ptr(self):
        return 0


def load_script():
    tl.install()
    spec = importlib.util.spec_from_file_location("tilelang_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TileLangApiTest(unittest.TestCase):
    def setUp(self):
        self.env = {k: os.environ.get(k) for k in ("TLC_TILELANG_ARCH", "TLC_CACHE_DIR")}
        self.cache = tempfile.TemporaryDirectory()
        os.environ["TLC_TILELANG_ARCH"] = "sm_90a"
        os.environ["TLC_CACHE_DIR"] = self.cache.name

    def tearDown(self):
        for k, v in self.env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.cache.cleanup()

    def test_imports_and_language(self):
        tl.install()
        import tilelang
        import tilelang.language as T
        from tilelang.autotuner import autotune
        from tilelang.language.fp8 import determine_fp8_type
        from tilelang.some.module.tlc.does.not_write import helper  # a placeholder
        self.assertIs(tilelang, tl)
        self.assertTrue(callable(autotune))
        self.assertEqual(T.float16, "float16")
        self.assertEqual(T.float16.bits, 16)
        self.assertEqual(T.dtype("torch.bfloat16"), "bfloat16")
        self.assertEqual(determine_fp8_type(), "float8_e4m3fn")
        self.assertEqual(T.ceildiv(7, 2), 4)
        self.assertEqual(tilelang.cdiv(9, 4), 3)
        self.assertEqual(tilelang.math.next_power_of_2(33), 64)
        self.assertEqual(tilelang.PassConfigKey.TL_ENABLE_FAST_MATH, "TL_ENABLE_FAST_MATH")

        def f():
            return 1
        self.assertIs(helper(f), f)            # a placeholder decorator gives the function back
        self.assertIs(T.some_decorator(f), f)
        with tilelang.some_context():          # and is a context manager
            pass
        self.assertIn("tilelang", f"{T.anything:.3f}")

    def test_defines(self):
        self.assertEqual(tl._define(True), "True")
        self.assertEqual(tl._define((64, 128)), "(64,128)")
        self.assertEqual(tl._define([8]), "(8,)")
        self.assertEqual(tl._define(tl.language.float32), "float32")
        with self.assertRaises(TypeError):
            tl._define(tl.language.Placeholder("T.x"))
        self.assertEqual(tl._defines({"a": 1, "b": None, "c": FakeTensor(2)}), {"a": "1"})

    def test_metadata_expressions(self):
        self.assertEqual(tl._grid_expr("(// (+ N 127) 128)", {"N": 300}), 3)
        self.assertEqual(tl._grid_expr("(ceildiv M 64)", {"M": 65}), 2)
        self.assertIsNone(tl._grid_expr("(+ N 1)", {}))
        self.assertEqual(tl._dim("Y_dim1", {"N": 512}, ["20:5 (== Y_dim1 (ceildiv N 128))"]), 4)
        with self.assertRaises(TypeError):
            tl._dim("Z", {}, [])

    def test_factory_out_idx(self):
        script = load_script()
        k = script.matmul(256, 192, 128, 64, 64, 32)
        self.assertIsInstance(k, tl.JITKernel)
        self.assertEqual([p["name"] for p in k.params], ["A", "B", "C"])
        self.assertEqual(k.out_idx, [2])
        self.assertEqual(k.params[2]["shape"], [256, 192])
        self.assertIn(".entry", k.get_kernel_source())
        self.assertIs(script.matmul(256, 192, 128, 64, 64, 32), k)  # one compile per set of values
        with self.assertRaisesRegex(TypeError, "takes 2 inputs"):
            k(FakeTensor(256, 128))

    def test_autotune_first_config(self):
        script = load_script()
        k = script.tuned_matmul(256, 192, 128)
        self.assertEqual(k.config, {"block_M": 64, "block_N": 64, "block_K": 32})
        self.assertIs(k.kernel, script.matmul(256, 192, 128, 64, 64, 32).kernel)
        self.assertIs(script.tuned_matmul.compile(256, 192, 128).kernel, k.kernel)

    def test_eager_sizes_and_outputs(self):
        script = load_script()
        self.assertEqual(tl._const_sizes(script.column_heads.fn, {"X": FakeTensor(64, 512)}), {"M": 64, "N": 512})
        k = script.column_heads.compile(M=64, N=512, block=128)
        self.assertEqual([p["name"] for p in k.params], ["X", "Y"])
        self.assertEqual(k.out_idx, [1])              # the T.empty output
        self.assertEqual(k.params[1]["shape"], [64, 4])

    def test_module_value_given_as_define(self):
        # OFFSET comes from the environment, which tlc does not read: the call gives the script's value
        # (3.0f, 0f40400000, added in the PTX; 5.0f with another value)
        script = load_script()
        k = script.column_heads.compile(M=8, N=256, block=128)
        self.assertIn("0f40400000", k.kernel.ptx)
        script.OFFSET = 5
        k = script.column_heads.compile(M=8, N=256, block=64)
        self.assertIn("0f40A00000", k.kernel.ptx)

    def test_undecorated_factory(self):
        script = load_script()
        prim = script.add_one(1024)
        self.assertEqual((prim.name, prim.defines), ("add_one", {"N": 1024, "dtype": "float32"}))
        k = tl.compile(prim, out_idx=[1])
        self.assertEqual([p["shape"] for p in k.params], [[1024], [1024]])
        self.assertEqual(k.out_idx, [1])

    def test_runner_arguments(self):
        from tlc.tilelang.__main__ import main
        self.assertEqual(main([]), 2)                        # usage
        self.assertEqual(main([os.path.join(HERE, "no_such_script.py")]), 2)

    def test_compile_error_is_tlc_error(self):
        script = load_script()
        import tlc
        with self.assertRaises(tlc.CompileError):
            script.matmul(256, 192, 128, 64, 64, 32, dtype="float64")

    @unittest.skipUnless(HAVE_GPU, "needs torch with a CUDA device")
    def test_script_runs_unchanged(self):
        env = dict(os.environ)
        env.pop("TLC_TILELANG_ARCH", None)
        r = subprocess.run([sys.executable, "-m", "tlc.tilelang", SCRIPT, "--m", "320"], capture_output=True,
                           text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("tilelang script: ok", r.stdout)


if __name__ == "__main__":
    unittest.main()
