"""Whole TileLang files (tests/golden/tilelang): tlc reads the kernels out of the Python around them, and
the interpreter's results match NumPy. The factory file's parameters without a default come as defines;
eager kernels take their T.empty outputs after their inputs."""
import os
import unittest

import numpy as np

import tlc
from kernels import ROOT

FILES = os.path.join(ROOT, "tests", "golden", "tilelang")
FACTORY = os.path.join(FILES, "factory_kernels.py")
EAGER = os.path.join(FILES, "eager_kernels.py")
SPLIT = os.path.join(FILES, "split_combine.py")


class FactoryFileTest(unittest.TestCase):
    def test_gemm_bias_relu(self):
        rng = np.random.default_rng(1)
        m, n, k = 128, 64, 96  # K = 3 tiles of 32; M = 2 row blocks
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        bias = rng.standard_normal(n).astype(np.float16)
        c = np.full((m, n), np.nan, dtype=np.float16)
        tlc.interpret(FACTORY, {"A": a, "B": b, "bias": bias, "C": c}, kernel="gemm_bias_relu",
                      defines={"block_M": 64, "block_N": 64, "block_K": 32})
        ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64), 0)
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-2, atol=2e-2)

    def test_rms_norm_with_a_masked_tail(self):
        rng = np.random.default_rng(2)
        rows, hidden = 10, 256  # 10 rows: the last block of 4 has 2
        x = rng.standard_normal((rows, hidden)).astype(np.float16)
        w = rng.standard_normal(hidden).astype(np.float16)
        y = np.full((rows, hidden), np.nan, dtype=np.float16)
        tlc.interpret(FACTORY, {"X": x, "W": w, "Y": y}, kernel="rms_norm", defines={"N_hidden": hidden})
        xf = x.astype(np.float64)
        ref = xf / np.sqrt((xf * xf).mean(axis=1, keepdims=True) + 1e-6) * w.astype(np.float64)
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=1e-2, atol=1e-2)

    def test_a_parameter_without_default_needs_a_define(self):
        x = np.zeros((4, 256), dtype=np.float16)
        with self.assertRaisesRegex(tlc.CompileError, r"'N_hidden' is a parameter of 'rms_norm' without a default: "
                                                      r"give its value with -D N_hidden=VALUE"):
            tlc.interpret(FACTORY, {"X": x, "W": x[0].copy(), "Y": x.copy()}, kernel="rms_norm")

    def test_a_skipped_function_is_not_a_kernel(self):
        with self.assertRaisesRegex(tlc.CompileError, r"no kernel named 'ref_rms_norm'.*\n.*read as Python"):
            tlc.interpret(FACTORY, {}, kernel="ref_rms_norm")


class EagerFileTest(unittest.TestCase):
    def test_add_scaled(self):
        rng = np.random.default_rng(3)
        m, n = 64, 192
        a = rng.standard_normal((m, n)).astype(np.float32)
        b = rng.standard_normal((m, n)).astype(np.float32)
        c = np.full((m, n), np.nan, dtype=np.float32)
        tlc.interpret(EAGER, {"A": a, "B": b, "alpha": 0.5, "C": c}, kernel="add_scaled")
        np.testing.assert_allclose(c, a + np.float32(0.5) * b, rtol=1e-6, atol=1e-6)

    def test_matmul_relu(self):
        rng = np.random.default_rng(4)
        m, n, k = 64, 128, 64
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = np.full((m, n), np.nan, dtype=np.float16)
        tlc.interpret(EAGER, {"A": a, "B": b, "C": c}, kernel="matmul_relu")
        ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0)
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-2, atol=2e-2)

    def test_softmax_rows_and_defines(self):
        rng = np.random.default_rng(5)
        rows, n = 6, 64
        x = (4 * rng.standard_normal((rows, n))).astype(np.float32)
        y = np.full((rows, n), np.nan, dtype=np.float32)
        tlc.interpret(EAGER, {"X": x, "Y": y}, kernel="softmax", defines={"N": n})
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)

    def test_outputs_follow_the_inputs(self):
        k = tlc.compile(EAGER, kernel="add_scaled", arch="sm_90a")
        self.assertEqual([p["name"] for p in k.metadata["params"]], ["A", "B", "alpha", "C"])


class SplitCombineFileTest(unittest.TestCase):
    """Functions with two T.Kernel blocks and T.alloc_global workspaces, which the interpreter allocates."""

    def test_row_sums(self):
        rng = np.random.default_rng(6)
        rows, cols = 37, 1000  # a partial last row block; splits of unequal column counts
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        out = np.full(rows, np.nan, dtype=np.float32)
        tlc.interpret(SPLIT, {"X": x, "Out": out}, kernel="row_sums", defines={"cols": cols})
        np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)

    def test_scale_then_shift(self):
        rng = np.random.default_rng(7)
        x = rng.standard_normal((5, 64)).astype(np.float32)
        y = np.full((5, 64), np.nan, dtype=np.float32)
        tlc.interpret(SPLIT, {"X": x, "Y": y}, kernel="scale_then_shift", defines={"cols": 1000})
        np.testing.assert_allclose(y, x * np.float32(2.0) + np.float32(1.0), rtol=1e-6)

    def test_compiles_to_a_function(self):
        f = tlc.compile(SPLIT, kernel="row_sums", defines={"cols": 1000}, arch="sm_80")
        self.assertIsInstance(f, tlc.Function)
        self.assertEqual(f.kernels, ["row_sums_k0", "row_sums_k1"])
        self.assertEqual(f.metadata["workspaces"], [{"name": "part", "dtype": "float32", "shape": [4, "rows"]}])


if __name__ == "__main__":
    unittest.main()
