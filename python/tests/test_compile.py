"""tlc.compile without a GPU: PTX, metadata, defines, paths, errors."""
import os
import tempfile
import unittest

import tlc
from kernels import EXAMPLES, SCALE


class CompileTest(unittest.TestCase):
    def setUp(self):
        self.cache = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.cache.cleanup()

    def test_ptx_and_metadata(self):
        k = tlc.compile(SCALE, defines={"N": 64}, arch="sm_90a", cache_dir=self.cache.name)
        self.assertEqual(k.name, "scale")
        self.assertEqual(k.arch, "sm_90a")
        self.assertIn(".entry scale", k.ptx)
        self.assertIn(".target sm_90a", k.ptx)
        params = [(p["name"], p["kind"], p["dtype"], p.get("shape")) for p in k.metadata["params"]]
        self.assertEqual(params, [("X", "tensor", "float32", [64]), ("Y", "tensor", "float32", [64]),
                                  ("s", "scalar", "float32", None)])
        self.assertEqual(k.metadata["threads"], (128, 1, 1))

    def test_wgmma_waits_deferred(self):
        # gemm_operand_slices.tl: three wgmma gemms into their own accumulators, then an mma.sync one,
        # then a copy of each: each wgmma gemm stays in flight until its copy, so the waits leave the
        # two, one, zero newer groups in flight (gemm_retire.c), both PTX generators
        import re
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden", "plan",
                            "gemm_operand_slices.tl")
        for backend in ("direct", "llvm"):
            with self.subTest(backend=backend):
                k = tlc.compile(path, kernel="operand_slices", arch="sm_90a", backend=backend,
                                cache_dir=self.cache.name)
                waits = [int(n) for n in re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d+)", k.ptx)]
                self.assertEqual(waits, [2, 1, 0])
                self.assertEqual(k.ptx.count("wgmma.commit_group"), 3)

    def test_wgmma_wait_before_an_operand_is_rewritten(self):
        # the gemm stays in flight past the X_s copy and its read, whose barrier clears the pending shared
        # reads; its wait, before A_s is written again, is followed by a barrier all the same (every
        # warpgroup's wgmma done reading A_s before any thread writes it), and X_s takes bytes of its own
        src = ("@jit(dtype=float16)\n"
               "def reuse(A: Tensor[(64, 64), dtype], B: Tensor[(64, 64), dtype], X: Tensor[(64, 64), float32],\n"
               "          A2: Tensor[(64, 64), dtype], C: Tensor[(64, 64), float32], Y: Tensor[(64, 64), float32]):\n"
               "    with Kernel(1, threads=128) as bx:\n"
               "        A_s = alloc_shared((64, 64), dtype)\n"
               "        B_s = alloc_shared((64, 64), dtype)\n"
               "        X_s = alloc_shared((64, 64), float32)\n"
               "        acc = alloc_fragment((64, 64), float32)\n"
               "        y = alloc_fragment((64, 64), float32)\n"
               "        copy(A, A_s)\n"
               "        copy(B, B_s)\n"
               "        gemm(A_s, B_s, acc, clear_accum=True)\n"
               "        copy(X, X_s)\n"
               "        copy(X_s, y)\n"
               "        copy(A2, A_s)\n"
               "        copy(y, Y)\n"
               "        copy(acc, C)\n")
        k = tlc.compile(src, arch="sm_90a", cache_dir=self.cache.name)
        lines = [line.strip() for line in k.ptx.splitlines()]
        commit = next(i for i, line in enumerate(lines) if line.startswith("wgmma.commit_group"))
        wait = next(i for i, line in enumerate(lines) if line.startswith("wgmma.wait_group"))
        self.assertEqual(lines[wait], "wgmma.wait_group.sync.aligned 0;")
        between = lines[commit:wait]
        self.assertTrue(any(x.startswith("bar.sync") for x in between))  # X_s's barrier, under the gemm
        after = lines[wait + 1:]
        first_store = next(i for i, x in enumerate(after) if x.startswith("st.shared"))
        self.assertTrue(any(x.startswith("bar.sync") for x in after[:first_store]))

    def test_launch_checks(self):
        src = ("def k(A: Tensor[(M, N), float32], n: int32):\n"
               "    assert N % 4 == 0 and n > 0\n"
               "    with Kernel(ceildiv(M, 4), threads=128) as bx:\n"
               "        A[bx, 0] = 1.0\n")
        k = tlc.compile(src, arch="sm_90a", cache_dir=self.cache.name)
        self.assertEqual(k.metadata["checks"], ["2:5 (and (== (% N 4) 0) (> n 0))"])

    def test_path_kernel_and_symbolic_dims(self):
        k = tlc.compile(os.path.join(EXAMPLES, "rmsnorm.tl"), kernel="rmsnorm_silu",
                        defines={"C": 512, "dtype": "bfloat16"}, arch="sm_80", cache_dir=self.cache.name)
        self.assertEqual(k.name, "rmsnorm_silu")
        self.assertIn(".target sm_80", k.ptx)
        self.assertEqual(k.metadata["syms"], ["M"])
        self.assertEqual(k.metadata["params"][0]["shape"], ["M", 512])
        self.assertEqual(k.metadata["params"][0]["dtype"], "bfloat16")

    def test_function_of_two_kernels(self):
        f = tlc.compile(os.path.join(EXAMPLES, "split_logsumexp.tl"), arch="sm_90a", cache_dir=self.cache.name)
        self.assertIsInstance(f, tlc.Function)
        self.assertEqual(f.name, "split_logsumexp")
        self.assertEqual(f.kernels, ["split_logsumexp_k0", "split_logsumexp_k1"])
        self.assertEqual([p["name"] for p in f.metadata["params"]], ["X", "LSE"])
        self.assertEqual(f.metadata["workspaces"], [{"name": "part_max", "dtype": "float32", "shape": [4, "M"]},
                                                    {"name": "part_sum", "dtype": "float32", "shape": [4, "M"]}])
        self.assertIn(".entry split_logsumexp_k1", f.ptx)
        self.assertIn("split_logsumexp_k0", repr(f))
        # one of its kernels alone, by name
        k = tlc.compile(os.path.join(EXAMPLES, "split_logsumexp.tl"), kernel="split_logsumexp_k1", arch="sm_90a",
                        cache_dir=self.cache.name)
        self.assertNotIsInstance(k, tlc.Function)
        self.assertEqual([p["name"] for p in k.metadata["params"]], ["LSE", "part_max", "part_sum"])

    def test_from_ptx(self):
        k = tlc.compile(os.path.join(EXAMPLES, "rmsnorm.tl"), kernel="rmsnorm", defines={"C": 512},
                        arch="sm_90a", cache_dir=self.cache.name)
        again = tlc.from_ptx(k.ptx)
        self.assertEqual((again.name, again.arch, again.metadata), (k.name, k.arch, k.metadata))
        self.assertEqual(again.ptx, k.ptx)
        f = tlc.compile(os.path.join(EXAMPLES, "split_logsumexp.tl"), arch="sm_90a", cache_dir=self.cache.name)
        self.assertIsInstance(tlc.from_ptx(f.ptx), tlc.Function)
        self.assertEqual(tlc.from_ptx(f.ptx, kernel="split_logsumexp_k1").name, "split_logsumexp_k1")
        with self.assertRaisesRegex(tlc.TlcError, "no kernel nope .it has split_logsumexp."):
            tlc.from_ptx(f.ptx, kernel="nope")
        with self.assertRaisesRegex(tlc.TlcError, "no tlc.meta kernel"):
            tlc.from_ptx(".version 8.0\n.target sm_90a\n")

    def test_tensor_map_lines(self):
        # the convolution's maps: the image's in im2col mode with its corners, the filters' over a view
        port = os.path.join(os.path.dirname(EXAMPLES), "tests", "ports", "example_convolution.py")
        k = tlc.compile(port, arch="sm_90a", cache_dir=self.cache.name,
                        defines={"S": 1, "D": 1, "P": 1, "block_M": 64, "block_N": 128, "block_K": 32,
                                 "num_stages": 3, "threads": 256})
        image, filters = k.metadata["tmap_lines"]
        self.assertEqual((image["tensor"], image["mode"], image["box"]), ("data", "im2col", "[1,1,64,32]"))
        self.assertEqual(image["im2col"], "(- 0 1) (- 1 (* 1 (- K 1))) (* 1 (- K 1))")
        self.assertEqual((filters["tensor"], filters["view"]), ("kernel", "(* (* K K) C) F"))
        self.assertNotIn("mode", filters)

    def test_several_kernels_need_a_choice(self):
        with self.assertRaisesRegex(tlc.TlcError, "rmsnorm, rmsnorm_silu: choose one with kernel="):
            tlc.compile(os.path.join(EXAMPLES, "rmsnorm.tl"), arch="sm_90a", cache_dir=self.cache.name)

    def test_compile_error_carries_the_diagnostics(self):
        with self.assertRaises(tlc.CompileError) as cm:
            tlc.compile(SCALE.replace("x[i] * s", "x[i] * t"), arch="sm_90a", name="scale.tl",
                        cache_dir=self.cache.name)
        e = cm.exception
        self.assertEqual(e.status, "TLC_ERROR_COMPILE")
        self.assertRegex(str(e), r"^scale\.tl:7:\d+: error: ")
        self.assertIn("'t'", e.diagnostics)

    def test_unknown_kernel_and_arch(self):
        with self.assertRaisesRegex(tlc.CompileError, "nope"):
            tlc.compile(SCALE, kernel="nope", arch="sm_90a", cache_dir=self.cache.name)
        with self.assertRaisesRegex(tlc.TlcError, "unknown arch 'sm_70'") as cm:
            tlc.compile(SCALE, arch="sm_70", cache_dir=self.cache.name)
        self.assertEqual(cm.exception.status, "TLC_ERROR_INVALID_ARGUMENT")

    def test_opt_level(self):
        def llvm(**kw):
            return tlc.compile(SCALE, arch="sm_90a", cache_dir=self.cache.name, backend="llvm", **kw)
        o0, o3 = llvm(opt_level=0), llvm(opt_level=3)
        self.assertIn(".entry scale", o0.ptx)
        self.assertNotEqual(o0.ptx, o3.ptx)  # separate cache entries, different code
        self.assertEqual(o3.ptx, llvm().ptx)
        with self.assertRaisesRegex(ValueError, "opt_level must be 0, 1, 2 or 3, got 4"):
            llvm(opt_level=4)

    def test_backend(self):
        direct = tlc.compile(SCALE, arch="sm_90a", cache_dir=self.cache.name, backend="direct")
        llvm = tlc.compile(SCALE, arch="sm_90a", cache_dir=self.cache.name, backend="llvm")
        self.assertIn(".entry scale", direct.ptx)
        self.assertNotEqual(direct.ptx, llvm.ptx)
        # tlc's own generator has no levels: one entry serves them all
        self.assertEqual(direct.ptx, tlc.compile(SCALE, arch="sm_90a", cache_dir=self.cache.name,
                                                 backend="direct", opt_level=0).ptx)
        if os.environ.get("TLC_BACKEND") in (None, "", "direct"):  # the default
            self.assertEqual(direct.ptx, tlc.compile(SCALE, arch="sm_90a", cache_dir=self.cache.name).ptx)
        with self.assertRaisesRegex(ValueError, "backend must be 'direct' or 'llvm', got 'nvcc'"):
            tlc.compile(SCALE, arch="sm_90a", cache_dir=self.cache.name, backend="nvcc")
        self.assertEqual(tlc.ptx_generator("llvm"), "llvm")
        self.assertEqual(tlc.ptx_generator("direct"), "direct")
        self.assertEqual(tlc.ptx_generator(), os.environ.get("TLC_BACKEND") or "direct")

    def test_cache_dir_is_used(self):
        tlc.compile(SCALE, arch="sm_86", cache_dir=self.cache.name)
        entries = [f for _, _, files in os.walk(self.cache.name) for f in files]
        self.assertTrue(entries, "no cache entry written")

    def test_call_checks_the_argument_count(self):
        k = tlc.compile(SCALE, arch="sm_90a", cache_dir=self.cache.name)
        with self.assertRaisesRegex(TypeError, r"scale takes 3 arguments \(X, Y, s\), got 1"):
            k(1.0)

    def test_version(self):
        self.assertRegex(tlc.version(), r"^\d+\.\d+\.\d+$")

    def test_autotune_arguments(self):
        with self.assertRaises(ValueError):
            tlc.autotune(SCALE, configs=[])
        with self.assertRaises(TypeError):
            tlc.autotune(SCALE, configs=[{"N": 64}, ("threads", 64)])
        with self.assertRaises(TypeError):
            tlc.autotune(SCALE, configs=[{}], key="N")
        with self.assertRaises(ValueError):
            tlc.autotune(SCALE, configs=[{}], rep=0)
        with self.assertRaises(TypeError):
            tlc.autotune(SCALE, configs=[{}], cache="yes")
        with self.assertRaises(TypeError):
            tlc.autotune(SCALE, configs=[{}], stream=1)

    def test_autotune_default_key(self):
        from tlc.autotune import default_key
        self.assertEqual(default_key((3, 2.5, True)), (3, None, True))

    def test_autotune_compiles_each_configuration_once(self):
        t = tlc.autotune(SCALE, configs=[{"threads": 64}, {"threads": 5}, {"threads": 128}], defines={"N": 256},
                         arch="sm_90a", cache_dir=self.cache.name)
        k0 = t._kernel(0)
        self.assertIs(t._kernel(0), k0)
        self.assertEqual(k0.metadata["threads"], (64, 1, 1))
        self.assertIsInstance(t._kernel(1), tlc.CompileError)   # 5 threads: not whole warps
        self.assertEqual(t._kernel(2).metadata["threads"], (128, 1, 1))


if __name__ == "__main__":
    unittest.main()
