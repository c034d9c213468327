"""Launches on a GPU, on torch tensors (and through __cuda_array_interface__ and DLPack), compared
with torch. Skipped where torch or a CUDA device is missing."""
import os
import unittest

import tlc
from kernels import (FRAGMENT_HALVES, fragment_halves_expected, FRAGMENT_PER_THREAD, FRAGMENT_OFFSETS, fragment_offsets_expected, THREAD_RANGES, thread_ranges_expected,
                     sums_in_range_expected, THREAD_RANGES_SHARED, thread_ranges_shared_expected, LOOP_EXIT, SYNC_GRID, loop_exit_inputs, nested_exits_expected, A_REGS_WIDE, B_REGS, A_REGS_TRANSPOSED, ATOMIC_VECTOR, CONVERTED_READ, EXAMPLES, INT8, FP8, FRAGMENT_RESHAPE, GEMV_KERNELS, TF32, grouped_sums_expected, PACKED, ROOT, SCALE, SHARED_INDEX, THREAD_BARRIERS, THREAD_BINDING,
                     UNSIGNED, UNSIGNED_BOUND, WARP_SHUFFLE, REDUCER, gemv_inputs, packed_expected, packed_inputs,
                     reinterpret_expected, shared_index_expected, shift_expected, unsigned_expected, unsigned_inputs,
                     warp_shuffle_expected)

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    HAVE_GPU = False


class CudaArrayInterfaceOnly:
    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


class DlpackOnly:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__()

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


@unittest.skipUnless(HAVE_GPU, "needs torch with a CUDA device")
class GpuTest(unittest.TestCase):
    def test_scale_on_torch_tensors(self):
        k = tlc.compile(SCALE, defines={"N": 256})
        x = torch.randn(256, device="cuda")
        y = torch.zeros_like(x)
        k(x, y, 3.0)
        torch.testing.assert_close(y, x * 3.0)

    def test_repeated_calls_take_their_own_arguments(self):
        # a second call of the same shapes reuses the first call's packing with the new addresses and
        # scalars; another count of arguments or a tensor for a scalar packs anew and is refused
        k = tlc.compile(SCALE, defines={"N": 256})
        x, x2 = torch.randn(256, device="cuda"), torch.randn(256, device="cuda")
        y, y2 = torch.zeros_like(x), torch.zeros(256, device="cuda")
        k(x, y, 3.0)
        k(x2, y2, -2)
        torch.testing.assert_close(y, x * 3.0)
        torch.testing.assert_close(y2, x2 * -2.0)
        k(x, y2, 0.5)
        torch.testing.assert_close(y2, x * 0.5)
        with self.assertRaises(TypeError):
            k(x, y)
        with self.assertRaises(tlc.LaunchError):  # the runtime's check: a tensor for the scalar s
            k(x, y, x)

    def test_scale_through_cuda_array_interface_and_dlpack(self):
        k = tlc.compile(SCALE, defines={"N": 256})
        x = torch.randn(256, device="cuda")
        for wrap in (CudaArrayInterfaceOnly, DlpackOnly):
            y = torch.zeros_like(x)
            k(wrap(x), wrap(y), -0.5)
            torch.cuda.synchronize()
            torch.testing.assert_close(y, x * -0.5, msg=wrap.__name__)

    def test_autotune_times_the_configurations_and_runs_the_fastest(self):
        t = tlc.autotune(SCALE, configs=[{"threads": 64}, {"threads": 5}, {"threads": 128}], defines={"N": 256})
        x = torch.randn(256, device="cuda")
        y = torch.zeros_like(x)
        t(x, y, 3.0)
        torch.testing.assert_close(y, x * 3.0)
        key = (((256,), "float32"), ((256,), "float32"), None)
        results = t.results[key]
        self.assertEqual([c for c, _ in results], t.configs)
        self.assertIsInstance(results[1][1], str)   # refused by the compiler, left out
        self.assertTrue(all(isinstance(r, float) and r > 0 for i, (_, r) in enumerate(results) if i != 1))
        self.assertIn(t.config_for(x, y, 3.0), ({"threads": 64}, {"threads": 128}))
        y.zero_()
        t.bind(x, y, -1.0)()   # the same key: no second tuning
        torch.testing.assert_close(y, -x)
        self.assertEqual(len(t.results), 1)

    def test_autotune_keeps_its_choice_on_disk(self):
        # a second Autotuned of the same source, configurations and GPU takes the first one's choice and
        # timings from the cache directory instead of timing again; cache=False keeps nothing
        import glob
        import tempfile
        configs = [{"threads": 64}, {"threads": 5}, {"threads": 128}]
        x = torch.randn(256, device="cuda")
        y = torch.zeros_like(x)
        key = (((256,), "float32"), ((256,), "float32"), None)
        with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as none:
            first = tlc.autotune(SCALE, configs=configs, defines={"N": 256}, cache_dir=d)
            first(x, y, 3.0)
            self.assertEqual(len(glob.glob(os.path.join(d, "autotune", "*.json"))), 1)
            second = tlc.autotune(SCALE, configs=configs, defines={"N": 256}, cache_dir=d)
            y.zero_()
            second(x, y, 2.0)
            torch.testing.assert_close(y, x * 2.0)
            self.assertEqual(second.results[key], first.results[key])  # the same numbers: not timed again
            self.assertEqual(second.config_for(x, y, 2.0), first.config_for(x, y, 3.0))
            other = tlc.autotune(SCALE, configs=configs[::-1], defines={"N": 256}, cache_dir=d)
            other(x, y, 1.0)  # other configurations: timed, a file of their own
            self.assertEqual(len(glob.glob(os.path.join(d, "autotune", "*.json"))), 2)
            tlc.autotune(SCALE, configs=configs, defines={"N": 256}, cache_dir=none, cache=False)(x, y, 1.0)
            self.assertEqual(glob.glob(os.path.join(none, "autotune", "*")), [])

    def test_autotune_with_no_configuration_that_compiles(self):
        t = tlc.autotune(SCALE, configs=[{"threads": 5}, {"threads": 7}], defines={"N": 256})
        x = torch.randn(256, device="cuda")
        with self.assertRaises(tlc.TlcError) as cm:
            t(x, torch.zeros_like(x), 1.0)
        self.assertIn("no configuration runs", str(cm.exception))

    def test_rmsnorm_on_a_side_stream(self):
        k = tlc.compile(os.path.join(EXAMPLES, "rmsnorm.tl"), kernel="rmsnorm",
                        defines={"C": 4096, "BLOCK_M": 1, "threads": 256})
        x = torch.randn(1000, 4096, dtype=torch.float16, device="cuda")
        w = torch.randn(4096, dtype=torch.float16, device="cuda")
        y = torch.empty_like(x)
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            k(x, w, y)  # on s, torch's current stream here
        s.synchronize()
        ref = torch.nn.functional.rms_norm(x.float(), (4096,), w.float(), eps=1e-5).half()
        torch.testing.assert_close(y, ref, rtol=1e-2, atol=1e-2)

    def test_atomic_add_from_shared(self):
        # every block adds its (masked) 64-row tile of A, staged in shared memory, into Out
        src = (
            "@jit(bm=64)\n"
            "def k(A: Tensor[(M, 96), float32], Out: Tensor[(64, 96), float32]):\n"
            "    with Kernel(ceildiv(M, bm), threads=128) as bx:\n"
            "        S = alloc_shared((bm, 96), float32)\n"
            "        for i, j in Parallel(bm, 96):\n"
            "            S[i, j] = if_then_else(bx * bm + i < M, A[bx * bm + i, j], 0.0)\n"
            "        atomic_add(Out, S)\n")
        k = tlc.compile(src)
        a = torch.randn(1000, 96, device="cuda")
        out = torch.ones(64, 96, device="cuda")
        k(a, out)
        ref = 1.0 + torch.nn.functional.pad(a, (0, 0, 0, 24)).view(16, 64, 96).sum(0)
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-4)

    def test_atomic_add_return_prev_last_block(self):
        # tests/golden/tir/atomic_last_block.tl: every block sums its part of X and counts itself;
        # the block that counts last adds the parts the others wrote and resets the counter
        src = os.path.join(ROOT, "tests", "golden", "tir", "atomic_last_block.tl")
        k = tlc.compile(src)
        nb = 2000
        count = torch.zeros(1, dtype=torch.int32, device="cuda")
        for rep in range(10):
            x = torch.randn(nb * 64 - 37, device="cuda")
            total = torch.zeros(1, device="cuda")
            parts = torch.zeros(nb, device="cuda")
            order = torch.full((nb,), -1, dtype=torch.int32, device="cuda")
            k(x, count, total, parts, order)
            torch.cuda.synchronize()
            self.assertEqual(int(count.item()), 0)
            self.assertTrue(torch.equal(order.sort().values, torch.arange(nb, dtype=torch.int32, device="cuda")))
            # the parts the last block read are the ones every block wrote
            torch.testing.assert_close(total, parts.double().sum().float().view(1), rtol=1e-5, atol=1e-3)
            torch.testing.assert_close(total, x.double().sum().float().view(1), rtol=1e-4, atol=1e-2)

    def test_copies_of_part_of_a_fragment(self):
        with open(os.path.join(ROOT, "tests", "golden", "tir", "fragment_parts.tl")) as f:
            src = f.read()
        k = tlc.compile(src)
        a = torch.randn(64, 128, device="cuda")
        out = torch.full((20, 96), float("nan"), device="cuda")
        back = torch.full((64, 128), float("nan"), device="cuda")
        rows = torch.full((16, 128), float("nan"), device="cuda", dtype=torch.float16)
        k(a, out, back, rows)
        torch.testing.assert_close(out[:16], 2 * a[8:24, 4:100])
        self.assertTrue(torch.isnan(out[16:]).all())
        want = torch.zeros_like(back)
        want[16:32] = a[:16]
        torch.testing.assert_close(back, want)
        torch.testing.assert_close(rows, (2 * a[40:56]).half())

    def test_gathered_rows(self):
        # tests/golden/tilelang/gather_rows.py: rows picked at run time, loaded by a Parallel loop that a
        # Pipelined loop issues as cp.async chunks with its stages (zero rows where the index is -1; a row
        # length not a multiple of 8 elements takes the loop version of ordinary loads)
        path = os.path.join(ROOT, "tests", "golden", "tilelang", "gather_rows.py")
        torch.manual_seed(0)
        for arch in ("sm_80", "sm_90a"):
            gemm = tlc.compile(path, kernel="gather_gemm", arch=arch)
            for (m, n, k, t) in ((200, 128, 256, 300), (64, 64, 200, 50), (96, 64, 202, 80)):
                with self.subTest(arch=arch, kernel="gather_gemm", m=m, n=n, k=k):
                    a = torch.randn(t, k, device="cuda", dtype=torch.float16)
                    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
                    rows = torch.randint(-1, t, (m,), device="cuda", dtype=torch.int32)
                    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
                    gemm(a, b, rows, c)
                    want = (a.double()[rows.clamp(min=0).long()] * (rows >= 0).double()[:, None]) @ b.double()
                    torch.testing.assert_close(c.double(), want, rtol=1e-2, atol=5e-2)
            sums = tlc.compile(path, kernel="gather_sum", arch=arch)
            for (bn, nk, d, t) in ((3, 5, 192, 100), (2, 4, 100, 40)):
                with self.subTest(arch=arch, kernel="gather_sum", d=d):
                    x = torch.randn(t, d, device="cuda", dtype=torch.float16)
                    idx = torch.randint(-1, t, (bn, nk, 32), device="cuda", dtype=torch.int32)
                    out = torch.full((bn, 32, d), float("nan"), device="cuda", dtype=torch.float32)
                    sums(x, idx, out)
                    want = (x.double()[idx.clamp(min=0).long()] * (idx >= 0).double()[..., None]).sum(1)
                    torch.testing.assert_close(out.double(), want, rtol=1e-3, atol=1e-3)

    def test_hand_pipeline(self):
        # tests/golden/tilelang/hand_pipeline.py: a producer warpgroup's per-thread cp.async copies into
        # two stages, arriving on mbarriers the consumer's wgmma waits for (the branches run as written);
        # partial tiles read as zeros; rows whose length is not a multiple of 8 refused at launch
        path = os.path.join(ROOT, "tests", "golden", "tilelang", "hand_pipeline.py")
        gemm = tlc.compile(path, kernel="hand_gemm", arch="sm_90a")
        torch.manual_seed(0)
        # and hand_gemm_tma: the producer's loads by T.tma_copy (TMA, expect_tx on the program's barrier)
        for kernel in (gemm, tlc.compile(path, kernel="hand_gemm_tma", arch="sm_90a")):
            for (m, n, k) in ((256, 320, 512), (100, 72, 200), (64, 64, 8)):
                with self.subTest(kernel=kernel.name, m=m, n=n, k=k):
                    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
                    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
                    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
                    kernel(a, b, c)
                    torch.testing.assert_close(c.double(), a.double() @ b.double(), rtol=1e-2, atol=5e-2)
        a = torch.randn(64, 60, device="cuda", dtype=torch.float16)
        b = torch.randn(60, 64, device="cuda", dtype=torch.float16)
        with self.assertRaisesRegex(tlc.LaunchError, "K = 60"):
            gemm(a, b, torch.empty(64, 64, device="cuda", dtype=torch.float16))

    def test_unrolled_slices_and_clear_condition(self):
        # tests/golden/tilelang/unroll_slices.py: C = 2 * A[:, :64] @ B[:64, :] (the k == 0 clear a select
        # of the registers, the unrolled loop's first gemm clearing), through wgmma and mma.sync
        path = os.path.join(ROOT, "tests", "golden", "tilelang", "unroll_slices.py")
        torch.manual_seed(0)
        a = torch.randn(64, 256, device="cuda", dtype=torch.float16)
        b = torch.randn(256, 64, device="cuda", dtype=torch.float16)
        for arch in ("sm_80", "sm_90a"):
            with self.subTest(arch=arch):
                c = torch.full((64, 64), float("nan"), device="cuda", dtype=torch.float32)
                tlc.compile(path, arch=arch)(a, b, c)
                torch.testing.assert_close(c.double(), 2 * (a[:, :64].double() @ b[:64].double()), rtol=1e-3,
                                           atol=1e-2)

    def test_gemm_operand_slices(self):
        # slices of shared buffers as gemm operands (K- and MN-major), through wgmma and mma.sync
        path = os.path.join(ROOT, "tests", "golden", "plan", "gemm_operand_slices.tl")
        a, b = (torch.randn(128, 128, device="cuda", dtype=torch.float16) for _ in range(2))
        ad, bd = a.double(), b.double()
        want = torch.stack([ad[64:, 64:] @ bd[64:, :64], ad[:64, 64:].t() @ bd[:64, 64:],
                            ad[:64, :64] @ bd[64:, 64:].t(), ad[:64, 8:72].t() @ bd[:64, :64]])
        for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
            with self.subTest(arch=arch):
                c = torch.full((4, 64, 64), float("nan"), device="cuda")
                tlc.compile(path, kernel="operand_slices", arch=arch)(a, b, c)
                torch.testing.assert_close(c.double(), want, rtol=1e-3, atol=1e-2)
        # stages of 3-d buffers chosen at run time
        a3, b3, bt3 = (torch.randn(*shape, device="cuda", dtype=torch.float16)
                       for shape in ((4, 64, 64), (4, 64, 128), (4, 128, 64)))
        want = torch.stack([(a3.double() @ b3.double()).sum(0), (a3.double() @ bt3.double().transpose(1, 2)).sum(0)])
        for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
            with self.subTest(arch=arch, kernel="stage_slices"):
                c = torch.full((2, 64, 128), float("nan"), device="cuda")
                tlc.compile(path, kernel="stage_slices", arch=arch)(a3, b3, bt3, c)
                torch.testing.assert_close(c.double(), want, rtol=1e-3, atol=2e-2)

    def test_transposed_register_operand_and_bf16_atomics(self):
        p = torch.randn(64, 64, device="cuda", dtype=torch.float16)
        k = torch.randn(64, 128, device="cuda", dtype=torch.float16)
        want = p.double().clamp(min=0).t() @ k.double()
        # small integers: every partial column sum is exact in bfloat16, whatever the order of the adds
        x = torch.randint(-2, 3, (64, 256), device="cuda").to(torch.bfloat16)
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch, kernel="pt_k"):
                    c = torch.full((64, 128), float("nan"), device="cuda")
                    tlc.compile(A_REGS_TRANSPOSED, kernel="pt_k", arch=arch, backend=backend)(p, k, c)
                    torch.testing.assert_close(c.double(), want, rtol=1e-3, atol=1e-2)
                with self.subTest(backend=backend, arch=arch, kernel="column_sums_bf16"):
                    s = torch.zeros(256, device="cuda", dtype=torch.bfloat16)
                    tlc.compile(A_REGS_TRANSPOSED, kernel="column_sums_bf16", arch=arch, backend=backend)(x, s)
                    torch.testing.assert_close(s.float(), x.float().sum(0), rtol=0, atol=0)

    def test_fragment_reshape(self):
        x = torch.randn(64, 128, device="cuda")
        w = torch.randn(2, 64, device="cuda")
        want = torch.from_numpy(grouped_sums_expected(x.cpu().numpy(), w.cpu().numpy())).cuda()
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    out = torch.full((64, 2), float("nan"), device="cuda")
                    tlc.compile(FRAGMENT_RESHAPE, arch=arch, backend=backend)(x, w, out)
                    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)

    def test_fragment_read_in_another_placement(self):
        # a row statistic read by column in a 2-d loop: the loop reads a converted copy
        a = torch.randn(64, 64, device="cuda")
        want = a.sum(1)[None, :].expand(64, 64)
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    b = torch.full((64, 64), float("nan"), device="cuda")
                    tlc.compile(CONVERTED_READ, arch=arch, backend=backend)(a, b)
                    torch.testing.assert_close(b, want, rtol=1e-5, atol=1e-4)

    def test_loops_that_end_early(self):
        # break, while with continue, a while loop each thread leaves at its own time, and a compaction through
        # a shared counter in one warpgroup that meets at a named barrier while the other meets at another
        a, first, sums, n, steps, c, kept = (torch.from_numpy(x).cuda() if hasattr(x, "shape") else x
                                             for x in loop_exit_inputs())
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    out = torch.full((64,), -7, device="cuda", dtype=torch.int32)
                    tlc.compile(LOOP_EXIT, kernel="first_over", arch=arch, backend=backend)(a, 2.5, out)
                    torch.testing.assert_close(out, first, rtol=0, atol=0)
                    s = torch.full((64,), float("nan"), device="cuda")
                    tlc.compile(LOOP_EXIT, kernel="positive_sums", arch=arch, backend=backend)(a, s)
                    torch.testing.assert_close(s.double(), sums, rtol=1e-5, atol=1e-5)
                    nested = torch.full((64,), float("nan"), device="cuda")
                    tlc.compile(LOOP_EXIT, kernel="nested_exits", arch=arch, backend=backend)(a[:, :16].contiguous(),
                                                                                               nested)
                    want = torch.from_numpy(nested_exits_expected(a[:, :16].cpu().numpy())).cuda()
                    torch.testing.assert_close(nested, want, rtol=1e-6, atol=1e-6)
                    x, w = a[:, :64].half().repeat(16, 1), a[:64, 64:128].half().contiguous()
                    blocks = torch.full((1024, 64), float("nan"), device="cuda")
                    tlc.compile(LOOP_EXIT, kernel="row_blocks", arch=arch, backend=backend)(x, w, blocks, 10)
                    torch.testing.assert_close(blocks[:640].double(), x[:640].double() @ w.double(), rtol=1e-3,
                                               atol=1e-3)
                    self.assertTrue(bool(blocks[640:].isnan().all()))
                    got = torch.full((1024,), -1, device="cuda", dtype=torch.int32)
                    tlc.compile(LOOP_EXIT, kernel="collatz_steps", arch=arch, backend=backend)(n, got)
                    torch.testing.assert_close(got, steps, rtol=0, atol=0)
                    for threads in (256, 384):
                        o = torch.full((16, 128), float("nan"), device="cuda")
                        count = torch.full((16,), -1, device="cuda", dtype=torch.int32)
                        tlc.compile(LOOP_EXIT, kernel="compact", arch=arch, backend=backend,
                                    defines={"threads": threads})(c, o, count)
                        self.assertEqual(count.tolist(), [len(k) for k in kept])
                        for r in range(16):
                            torch.testing.assert_close(o[r, :count[r]].sort().values.cpu(),
                                                       torch.from_numpy(kept[r]), rtol=0, atol=0)

    def test_wide_register_operands(self):
        # A in registers for tf32 (B K-major and MN-major), int8 and float8: wgmma on sm_90a, mma.sync on sm_80/89
        a, b = torch.randn(128, 64, device="cuda"), torch.randn(128, 64, device="cuda")
        ref = a.clamp(min=0).double() @ b.double().T
        ai = torch.randint(-128, 128, (128, 64), device="cuda", dtype=torch.int8)
        bi = torch.randint(-128, 128, (128, 64), device="cuda", dtype=torch.int8)
        a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        ref8 = a8.double().clamp(min=0) @ b8.double().T
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_89", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    for trans_b in (True, False):
                        c = torch.full((128, 128), float("nan"), device="cuda")
                        tlc.compile(A_REGS_WIDE, arch=arch, backend=backend, defines={"trans_B": trans_b})(
                            a, b if trans_b else b.T.contiguous(), c)
                        err = (c.double() - ref).abs()
                        self.assertLessEqual(err.max().item(), 5e-3 * ref.abs().max().item(), trans_b)
                    ci = torch.full((128, 128), -1, device="cuda", dtype=torch.int32)
                    tlc.compile(A_REGS_WIDE, arch=arch, backend=backend,
                                defines={"dtype": "int8", "accum": "int32"})(ai, bi, ci)
                    torch.testing.assert_close(ci, (ai.clamp(min=0).double() @ bi.double().T).int(), rtol=0, atol=0)
                    if arch == "sm_80":
                        continue
                    c8 = torch.full((128, 128), float("nan"), device="cuda")
                    tlc.compile(A_REGS_WIDE, arch=arch, backend=backend, defines={"dtype": "float8_e4m3"})(a8, b8, c8)
                    torch.testing.assert_close(c8.double(), ref8, rtol=1e-3, atol=1e-3 * ref8.abs().max().item())

    def test_b_register_operands(self):
        # B in registers (mma.sync's B layout, on sm_90a too): 16-bit, tf32 and int8 operands, B stored [K, N] and
        # [N, K], B shared by two and by four warps along M; A in registers as well (both_regs)
        cases = [dict(M=64, N=64, K=32, threads=128), dict(M=128, N=64, K=64, threads=256)]
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                for dtype in ("float16", "bfloat16", "float32", "int8"):
                    tdt = getattr(torch, dtype)
                    accum = "int32" if dtype == "int8" else "float32"
                    for sizes in cases:
                        m, n, k = sizes["M"], sizes["N"], sizes["K"]
                        if dtype == "int8":
                            a = torch.randint(-128, 128, (m, k), device="cuda", dtype=tdt)
                            b = torch.randint(-128, 128, (k, n), device="cuda", dtype=tdt)
                        else:
                            a, b = torch.randn(m, k, device="cuda").to(tdt), torch.randn(k, n, device="cuda").to(tdt)
                        want = a.double() @ b.double().clamp(min=0)
                        for kernel, trans_b in (("b_regs", False), ("b_regs", True), ("both_regs", False)):
                            with self.subTest(backend=backend, arch=arch, dtype=dtype, kernel=kernel, trans_b=trans_b,
                                              **sizes):
                                defines = dict(sizes, dtype=dtype, accum=accum)
                                if kernel == "b_regs":
                                    defines["trans_B"] = trans_b
                                c = torch.full((m, n), -1, device="cuda", dtype=getattr(torch, accum))
                                tlc.compile(B_REGS, kernel=kernel, arch=arch, backend=backend, defines=defines)(
                                    a, b.T.contiguous() if trans_b else b, c)
                                ref = 2 * want if kernel == "both_regs" else want
                                if dtype == "int8":
                                    torch.testing.assert_close(c, ref.int(), rtol=0, atol=0)
                                else:
                                    err = (c.double() - ref).abs().max().item()
                                    self.assertLessEqual(err, 5e-3 * ref.abs().max().item())

    def test_fragment_halves(self):
        # a FullCol accumulator stored half its rows at a time by a guarded loop; a loop shorter than the
        # fragment it reads runs its own iterations only
        a, b = torch.randn(128, 32, device="cuda").half(), torch.randn(128, 512, device="cuda").half()
        ec, em = (torch.from_numpy(t) for t in fragment_halves_expected(a.cpu().numpy(), b.cpu().numpy()))
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    c, m = torch.full((32, 512), float("nan"), device="cuda"), torch.full((16,), float("nan"), device="cuda")
                    tlc.compile(FRAGMENT_HALVES, arch=arch, backend=backend)(a, b, c, m)
                    torch.testing.assert_close(c.double().cpu(), ec, rtol=1e-3, atol=1e-2)
                    torch.testing.assert_close(m[:8].double().cpu(), em, rtol=1e-3, atol=1e-2)
                    self.assertTrue(torch.isnan(m[8:]).all())  # nothing past the loop's 8 rows

    def test_fragment_per_thread(self):
        # a fragment holding each thread's own values in thread-indexed code
        a = torch.randn(128, 4, device="cuda")
        for backend in ("direct", "llvm"):
            with self.subTest(backend=backend):
                b = torch.full((128,), float("nan"), device="cuda")
                tlc.compile(FRAGMENT_PER_THREAD, kernel="weighted_rows", backend=backend)(a, b)
                torch.testing.assert_close(b, a @ torch.arange(1.0, 5.0, device="cuda"), rtol=1e-5, atol=1e-5)
                tlc.compile(FRAGMENT_PER_THREAD, kernel="chained", backend=backend)(a, b)
                torch.testing.assert_close(b, a[:, 0] + a[:, 3], rtol=1e-5, atol=1e-5)

    def test_fragment_offsets(self):
        # a fragment at a loop variable plus a serial loop's offset, laid out as the gemm's register operand
        x, w = torch.randn(64, 256, device="cuda").half(), torch.randn(32, 256, device="cuda").half()
        ey, es, ez = (torch.from_numpy(t) for t in fragment_offsets_expected(x.cpu().numpy(), w.cpu().numpy()))
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    y, s = torch.full((64, 32), float("nan"), device="cuda"), torch.full((64, 8), float("nan"), device="cuda")
                    z = torch.full((64, 256), float("nan"), device="cuda")
                    tlc.compile(FRAGMENT_OFFSETS, arch=arch, backend=backend)(x, w, y, s, z)
                    torch.testing.assert_close(y.double().cpu(), ey, rtol=1e-3, atol=1e-2)
                    torch.testing.assert_close(s.double().cpu(), es, rtol=1e-4, atol=1e-3)
                    torch.testing.assert_close(z.double().cpu(), ez, rtol=0, atol=0)

    def test_thread_ranges(self):
        # branches on the thread index holding tile work: a warpgroup's gemm (wgmma on sm_90a), nested ranges of
        # two warps each reducing, each range's named barrier; both generators, sm_90a and sm_80
        a = torch.randn(1000, 64, device="cuda").half()
        b = torch.randn(64, 320, device="cuda").half()
        ec, ers, emx, ecs = thread_ranges_expected(a.cpu().numpy(), b.cpu().numpy())
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    c = torch.full((1000, 320), float("nan"), device="cuda")
                    rs, mx = torch.full((1000,), float("nan"), device="cuda"), torch.full((1000,), float("nan"), device="cuda")
                    cs = torch.full((16, 320), float("nan"), device="cuda")
                    tlc.compile(THREAD_RANGES, kernel="split_roles", arch=arch, backend=backend)(a, b, c, rs, mx, cs)
                    torch.testing.assert_close(c.double().cpu(), torch.from_numpy(ec), rtol=1e-3, atol=1e-3)
                    torch.testing.assert_close(rs.double().cpu(), torch.from_numpy(ers), rtol=1e-4, atol=1e-3)
                    torch.testing.assert_close(mx.double().cpu(), torch.from_numpy(emx), rtol=1e-6, atol=0)
                    torch.testing.assert_close(cs.double().cpu(), torch.from_numpy(ecs).expand(16, -1), rtol=1e-4,
                                               atol=1e-3)
                    # ranges shared by several branches, inside a Pipelined loop; ranges of 96 threads
                    a2, b2 = torch.randn(1024, 64, device="cuda").half(), torch.randn(64, 64, device="cuda").half()
                    x2 = torch.randn(96, 64, device="cuda")
                    c2, r2 = torch.full((64, 64), float("nan"), device="cuda"), torch.full((64,), float("nan"), device="cuda")
                    xo = torch.full((96, 64), float("nan"), device="cuda")
                    tlc.compile(THREAD_RANGES_SHARED, kernel="in_pipeline", arch=arch, backend=backend)(a2, b2, c2, r2)
                    tlc.compile(THREAD_RANGES_SHARED, kernel="odd_threads", arch=arch, backend=backend)(x2, xo)
                    e = [torch.from_numpy(t) for t in thread_ranges_shared_expected(a2.cpu().numpy(), b2.cpu().numpy(),
                                                                                    x2.cpu().numpy())]
                    torch.testing.assert_close(c2.double().cpu(), e[0], rtol=1e-3, atol=1e-2)
                    torch.testing.assert_close(r2.double().cpu(), e[1], rtol=1e-4, atol=1e-2)
                    torch.testing.assert_close(xo.double().cpu(), e[2], rtol=0, atol=0)
                    # a loop around a Pipelined loop (TMA on sm_90a) in the upper half's range
                    x = torch.randn(1000, 1024, device="cuda")
                    y = torch.full((1000, 2), float("nan"), device="cuda")
                    tlc.compile(THREAD_RANGES, kernel="sums_in_range", arch=arch, backend=backend)(x, y)
                    torch.testing.assert_close(y.double().cpu(), torch.from_numpy(sums_in_range_expected(x.cpu().numpy())),
                                               rtol=1e-4, atol=1e-3)

    def test_sync_grid(self):
        # a cooperative launch: every block's writes before the barrier seen by every block after it
        x = torch.rand(64, 256, device="cuda")
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    out, part = torch.full_like(x, float("nan")), torch.full((64,), float("nan"), device="cuda")
                    tlc.compile(SYNC_GRID, kernel="scale_by_total", arch=arch, backend=backend)(x, out, part)
                    torch.testing.assert_close(part, x.sum(1), rtol=1e-5, atol=1e-4)
                    torch.testing.assert_close(out.double(), x.double() / x.double().sum(), rtol=1e-4, atol=1e-9)
                    # the counter is left as it was: a second launch of the same kernel meets again
                    blocks = torch.cuda.get_device_properties(0).multi_processor_count
                    k = tlc.compile(SYNC_GRID, kernel="count_blocks", arch=arch, backend=backend,
                                    defines={"blocks": blocks})
                    count = torch.zeros(1, device="cuda", dtype=torch.int32)
                    for launch in (1, 2):
                        seen = torch.zeros(blocks, device="cuda", dtype=torch.int32)
                        k(count, seen)
                        self.assertEqual(seen.tolist(), [launch * blocks] * blocks)
                    # more blocks than the GPU holds at once (two of 1024 threads an SM at most) would wait
                    # forever: refused
                    big = tlc.compile(SYNC_GRID, kernel="count_blocks", arch=arch, backend=backend,
                                      defines={"blocks": 2 * blocks + 1})
                    with self.assertRaisesRegex(tlc.TlcError, "must be resident at once"):
                        big(count, torch.zeros(2 * blocks + 1, device="cuda", dtype=torch.int32))

    def test_vector_atomic_adds(self):
        x = torch.randint(-4, 5, (64, 128), device="cuda").float()
        want = 2 * x.view(4, 16, 128).sum(0)
        for backend in ("direct", "llvm"):
            with self.subTest(backend=backend):
                y = torch.zeros(16, 128, device="cuda")
                tlc.compile(ATOMIC_VECTOR, backend=backend)(x, y)
                torch.testing.assert_close(y, want, rtol=0, atol=0)

    def test_int8_gemm(self):
        # int8 x int8 -> int32, exact: wgmma k32 on sm_90a, mma.sync m16n8k32 on sm_80 (K with a tail)
        m, n, k = 256, 384, 1040
        a = torch.randint(-128, 128, (m, k), device="cuda", dtype=torch.int8)
        b = torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8)
        want = (a.double() @ b.double().T).to(torch.int32)
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    c = torch.full((m, n), -1, device="cuda", dtype=torch.int32)
                    tlc.compile(INT8, kernel="int8_gemm", arch=arch, backend=backend)(a, b, c)
                    torch.testing.assert_close(c, want, rtol=0, atol=0)

    def test_tf32_gemm(self):
        # float32 operands read as tf32 (10 mantissa bits): wgmma k8 on sm_90a, mma.sync m16n8k8 on sm_80
        m, n, k = 256, 384, 320
        a, b = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
        ref = a.double() @ b.double().T
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    c = torch.full((m, n), float("nan"), device="cuda")
                    tlc.compile(TF32, kernel="tf32_gemm", arch=arch, backend=backend)(a, b, c)
                    err = (c.double() - ref).abs()
                    self.assertLessEqual(err.max().item(), 5e-3 * ref.abs().max().item())
                    self.assertLess((err.norm() / ref.norm()).item(), 1e-3)
                with self.subTest(backend=backend, arch=arch, kernel="tf32_mn_major"):
                    a2, b2 = torch.randn(64, 64, device="cuda"), torch.randn(64, 128, device="cuda")
                    c2, d2 = (torch.full((64, 128), float("nan"), device="cuda") for _ in range(2))
                    tlc.compile(TF32, kernel="tf32_mn_major", arch=arch, backend=backend)(a2, b2, c2, d2)
                    for got, want in ((c2, a2.double() @ b2.double()), (d2, a2.double().t() @ b2.double())):
                        err = (got.double() - want).abs()
                        self.assertLessEqual(err.max().item(), 5e-3 * want.abs().max().item())

    def test_float8_conversions(self):
        if not _sm90():
            self.skipTest("float8 conversions need sm_90")
        # in range: round to nearest even, as torch; beyond +-448 saturated (cvt.satfinite; torch gives NaN)
        x = torch.randn(256, 64, device="cuda") * 64
        x[0, :4] = torch.tensor([1000.0, -1000.0, 448.0, 1e-9])
        want = x.clamp(-448, 448).to(torch.float8_e4m3fn)
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_90", "sm_89"):
                with self.subTest(backend=backend, arch=arch):
                    q = torch.zeros(256, 64, dtype=torch.float8_e4m3fn, device="cuda")
                    y = torch.full((256, 64), float("nan"), device="cuda")
                    tlc.compile(FP8, kernel="fp8_convert", arch=arch, backend=backend)(x, q, y)
                    torch.testing.assert_close(q.view(torch.uint8), want.view(torch.uint8), rtol=0, atol=0)
                    torch.testing.assert_close(y, want.float() * 2 + 1, rtol=0, atol=0)

    def test_float8_e5m2(self):
        if not _sm90():
            self.skipTest("float8 conversions and gemms need sm_90")
        # conversions: round to nearest even, as torch; beyond +-57344 (inf too) saturated (cvt.satfinite)
        x = torch.randn(256, 64, device="cuda") * 2.0 ** torch.randint(-18, 18, (256, 64), device="cuda")
        x[0, :4] = torch.tensor([1e6, -float("inf"), 57344.0, 1e-9])
        want = x.clamp(-57344, 57344).to(torch.float8_e5m2)
        g = torch.Generator(device="cuda").manual_seed(9)
        a = torch.randn(384, 1152, device="cuda", generator=g).to(torch.float8_e5m2)
        b = torch.randn(512, 1152, device="cuda", generator=g).to(torch.float8_e5m2)
        ref = a.float() @ b.float().T
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_90", "sm_89"):
                with self.subTest(backend=backend, arch=arch, kernel="fp8_e5m2_convert"):
                    q = torch.zeros(256, 64, dtype=torch.float8_e5m2, device="cuda")
                    y = torch.full((256, 64), float("nan"), device="cuda")
                    tlc.compile(FP8, kernel="fp8_e5m2_convert", arch=arch, backend=backend)(x, q, y)
                    torch.testing.assert_close(q.view(torch.uint8), want.view(torch.uint8), rtol=0, atol=0)
                    torch.testing.assert_close(y, want.float() * 2 + 1, rtol=0, atol=0)
                # wgmma .e5m2 on sm_90a (one and two consumer warpgroups), mma.sync m16n8k32 .e5m2 on sm_90 / sm_89
                for threads in ((128, 256) if arch == "sm_90a" else (128,)):
                    with self.subTest(backend=backend, arch=arch, kernel="fp8_gemm", threads=threads):
                        c = torch.full((384, 512), float("nan"), device="cuda")
                        tlc.compile(FP8, kernel="fp8_gemm", backend=backend, arch=arch,
                                    defines={"threads": threads, "dtype": "float8_e5m2"})(a, b, c)
                        err = (c - ref).abs()
                        self.assertLessEqual(err.max().item(), 8e-3 * ref.abs().max().item())
                        self.assertLess((err.norm() / ref.norm()).item(), 2e-3)

    def test_float8_gemm(self):
        if not _sm90():
            self.skipTest("float8 gemms need sm_90a")
        M, N, K = 384, 512, 1152
        g = torch.Generator(device="cuda").manual_seed(8)
        a = torch.randn(M, K, device="cuda", generator=g).to(torch.float8_e4m3fn)
        b = torch.randn(N, K, device="cuda", generator=g).to(torch.float8_e4m3fn)
        ref = a.float() @ b.float().T
        # wgmma sums float8 products with fewer mantissa bits than float32
        # (what cuBLAS calls fast accumulation): a few 1e-3 of the largest
        # value off at worst, where a wrong layout is off by whole products
        tol = 8e-3 * ref.abs().max().item()

        def close(c, want):
            err = (c.float() - want).abs()
            self.assertLessEqual(err.max().item(), tol)
            self.assertLess((err.norm() / want.norm()).item(), 2e-3)
        for backend in ("direct", "llvm"):
            # wgmma on sm_90a; mma.sync m16n8k32 on sm_90 and sm_89 (the driver compiles their PTX)
            for arch, threads, bm in (("sm_90a", 128, 128), ("sm_90a", 256, 128), ("sm_90a", 384, 192),
                                      ("sm_90", 128, 128), ("sm_89", 256, 64), ("sm_90a", 128, 32)):
                with self.subTest(backend=backend, kernel="fp8_gemm", arch=arch, threads=threads, block_M=bm):
                    c = torch.full((M, N), float("nan"), device="cuda")
                    tlc.compile(FP8, kernel="fp8_gemm", backend=backend, arch=arch,
                                defines={"threads": threads, "block_M": bm})(a, b, c)
                    close(c, ref)
            with self.subTest(backend=backend, kernel="fp8_gemm_out"):
                c8 = torch.zeros(M, N, dtype=torch.float8_e4m3fn, device="cuda")
                tlc.compile(FP8, kernel="fp8_gemm_out", backend=backend)(a, b, c8)
                # one float8 rounding (2^-4 relative, 2^-9 near zero) of a sum off by at most tol
                err = (c8.float() - ref.clamp(-448, 448)).abs()
                self.assertTrue(bool((err <= 2 ** -4 * ref.abs() + 2 ** -9 + tol).all()), err.max().item())
            # dsl-examples/gemm_fp8.tl: the scales, a bfloat16 result, edge tiles in M, N and K
            with self.subTest(backend=backend, kernel="gemm_fp8.tl"):
                m, n, k = 300, 200, 1008  # K: 16-byte rows for TMA
                c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                tlc.compile(os.path.join(EXAMPLES, "gemm_fp8.tl"), kernel="matmul_fp8", backend=backend)(
                    a[:m, :k].contiguous(), b[:n, :k].contiguous(), c, 0.5, 0.25)
                want = (a[:m, :k].float() @ b[:n, :k].float().T) * 0.125
                close(c, want)

    def test_unsigned_and_16_bit_integers(self):
        inp = unsigned_inputs()
        want = unsigned_expected(inp)
        args = {k: torch.from_numpy(v).cuda() for k, v in inp.items()}
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    out = {k: torch.from_numpy(v).cuda().fill_(0x5a) for k, v in want.items()}
                    k = tlc.compile(UNSIGNED, kernel="unsigned_ops", arch=arch, backend=backend)
                    k(args["M"], args["W"], args["H"], args["S"], UNSIGNED_BOUND, out["F"], out["U"], out["B"],
                      out["C"], out["R"])
                    for name, v in want.items():
                        self.assertTrue((out[name].cpu().numpy() == v).all(), name)
        import numpy as np
        b = np.random.default_rng(3).integers(0, 256, (64, 32)).astype(np.uint8)
        want = reinterpret_expected(b)
        for backend in ("direct", "llvm"):
            with self.subTest(backend=backend, kernel="reinterpret_bits"):
                out = {k: torch.from_numpy(np.zeros_like(v)).cuda() for k, v in want.items()}
                tlc.compile(UNSIGNED, kernel="reinterpret_bits", backend=backend)(torch.from_numpy(b).cuda(), out["C"],
                                                                                  out["D"], out["E"])
                for name, v in want.items():
                    self.assertTrue((out[name].cpu().numpy().view(np.uint8) == v.view(np.uint8)).all(), name)

    def test_thread_indexed_code(self):
        a, b, want = gemv_inputs(1024, 2048)
        ga, gb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                for name in GEMV_KERNELS:
                    with self.subTest(backend=backend, arch=arch, kernel=name):
                        c = torch.full(want.shape, float("nan"), device="cuda", dtype=torch.float16)
                        tlc.compile(THREAD_BINDING, kernel=name, arch=arch, backend=backend)(ga, gb, c)
                        torch.testing.assert_close(c.float().cpu(), torch.from_numpy(want), rtol=2e-2, atol=1e-1)
                with self.subTest(backend=backend, arch=arch, kernel="shift"):
                    x = torch.arange(128, device="cuda", dtype=torch.float32)
                    y = torch.full((128,), float("nan"), device="cuda")
                    tlc.compile(THREAD_BARRIERS, kernel="shift", arch=arch, backend=backend)(x, y)
                    self.assertTrue((y.cpu().numpy() == shift_expected(x.cpu().numpy())).all())
                with self.subTest(backend=backend, arch=arch, kernel="staged"):
                    a = torch.randn(128, 256, device="cuda")
                    b = torch.full((128,), float("nan"), device="cuda")
                    tlc.compile(THREAD_BARRIERS, kernel="staged", arch=arch, backend=backend)(a, b)
                    torch.testing.assert_close(b, a.flip(0).sum(dim=1), rtol=1e-4, atol=1e-4)
                with self.subTest(backend=backend, arch=arch, kernel="exchange"):
                    x = torch.randn(128, device="cuda")
                    w, y = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
                    tlc.compile(THREAD_BARRIERS, kernel="exchange", arch=arch, backend=backend)(x, w, y)
                    self.assertTrue(torch.equal(y, 2 * x.flip(0)))
                with self.subTest(backend=backend, arch=arch, kernel="row_sums"):
                    a = torch.randn(4, 32, device="cuda")
                    s, g = torch.full_like(a, float("nan")), torch.full_like(a, float("nan"))
                    tlc.compile(WARP_SHUFFLE, arch=arch, backend=backend)(a, s, g)
                    want_s, want_g = warp_shuffle_expected(a.cpu().numpy())
                    torch.testing.assert_close(s.cpu(), torch.from_numpy(want_s), rtol=1e-5, atol=1e-5)
                    torch.testing.assert_close(g.cpu(), torch.from_numpy(want_g), rtol=1e-5, atol=1e-5)

    def test_reducers(self):
        a, x = torch.randn(1024, 2048, device="cuda", dtype=torch.float16), torch.randn(2048, device="cuda",
                                                                                         dtype=torch.float16)
        m = torch.randn(64, 256, device="cuda")
        for backend in ("direct", "llvm"):
            for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
                with self.subTest(backend=backend, arch=arch):
                    o = torch.full((1024,), float("nan"), device="cuda", dtype=torch.float16)
                    tlc.compile(REDUCER, kernel="gemv_alloc_reducer", arch=arch, backend=backend)(a, x, o)
                    torch.testing.assert_close(o.float(), a.float() @ x.float(), rtol=2e-2, atol=1e-1)
                    mo = torch.full((64,), float("nan"), device="cuda")
                    tlc.compile(REDUCER, kernel="row_max", arch=arch, backend=backend)(m, mo)
                    self.assertTrue(torch.equal(mo, m.max(dim=1).values))

    def test_packed_fragment_reads(self):
        inp = packed_inputs()
        want = packed_expected(inp)
        args = {k: torch.from_numpy(v).cuda() for k, v in inp.items()}
        for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
            with self.subTest(arch=arch):
                c, d = (torch.full((64, 64), float("nan"), device="cuda", dtype=torch.float16) for _ in range(2))
                tlc.compile(PACKED, kernel="packed", arch=arch)(args["B"], args["W"], c, d)
                self.assertTrue((c.cpu().numpy() == want["C"]).all() and (d.cpu().numpy() == want["D"]).all())
                c.fill_(float("nan"))
                tlc.compile(PACKED, kernel="from_global", arch=arch)(args["B"], c)
                self.assertTrue((c.cpu().numpy() == want["C"]).all())

    def test_indices_shared_by_a_parallel_loop(self):
        g1, g2 = torch.randn(8, 128, device="cuda"), torch.randn(8, 64, device="cuda")
        want1, want2 = shared_index_expected(g1.cpu().numpy(), g2.cpu().numpy())
        for arch in ("sm_90a", "sm_80") if _sm90() else ("sm_80",):
            with self.subTest(arch=arch):
                o1, o2 = torch.full((128,), float("nan"), device="cuda"), torch.full((64,), float("nan"), device="cuda")
                tlc.compile(SHARED_INDEX, kernel="combine", arch=arch)(g1, o1)
                tlc.compile(SHARED_INDEX, kernel="row_copy", arch=arch)(g2, o2)
                torch.testing.assert_close(o1.double(), torch.from_numpy(want1).cuda(), rtol=1e-4, atol=1e-4)
                torch.testing.assert_close(o2.double(), torch.from_numpy(want2).cuda(), rtol=1e-5, atol=1e-5)

    def test_fragments_held_by_every_thread(self):
        # a (1,) scalar, a bool mask read in a serial loop, a reduce into (1,), a transposed read
        k = tlc.compile(os.path.join(ROOT, "tests", "golden", "tilelang", "per_thread_fragments.py"))
        x = torch.randn(64, 32, device="cuda")
        mask = torch.rand(4, 8, device="cuda") < 0.5
        s = torch.randn(4, device="cuda")
        y = torch.full((4, 32, 64), float("nan"), device="cuda")
        k(x, mask, s, y)
        want = x.t()[None] * s[:, None, None] + mask.sum(dim=1)[:, None, None] + x.sum()
        torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-3)

    def test_loop_over_a_row_fragment(self):
        # the loop's iterations where the row statistics it reads are (no fragment indexes it whole)
        k = tlc.compile(os.path.join(ROOT, "tests", "golden", "tilelang", "loop_over_row_fragment.py"))
        x = torch.randn(64, 64, device="cuda")
        y = torch.full((64, 24), float("nan"), device="cuda")
        k(x, y)
        want = x.amax(dim=1)[:, None] * torch.arange(24, device="cuda")[None, :] + x.sum(dim=1)[:, None]
        torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-3)

    def test_cumsum(self):
        # in shared memory, on a fragment (reverse, along the other dim), and in float16
        k = tlc.compile(os.path.join(ROOT, "tests", "golden", "tilelang", "cumsum.py"))
        a = torch.randn(4, 64, device="cuda")
        b, c = torch.full_like(a, float("nan")), torch.full_like(a, float("nan"))
        d = torch.full((64,), float("nan"), device="cuda", dtype=torch.float16)
        k(a, b, c, d)
        torch.testing.assert_close(b, a.cumsum(dim=1), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(c, a.flip(0).cumsum(dim=0).flip(0), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(d.double(), a[0].half().double().cumsum(dim=0), rtol=2e-3, atol=2e-2)

    def test_num_sms_is_the_device_s(self):
        # driver.get_num_sms(): the current GPU's count when tlc.compile finds the arch from it, else
        # what num_sms says
        path = os.path.join(ROOT, "tests", "golden", "tilelang", "num_sms.py")
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        self.assertEqual(tlc.device_num_sms(), sms)
        for given, want in ((None, sms), (7, 7)):
            with self.subTest(num_sms=given):
                k = tlc.compile(path, num_sms=given)
                x = torch.full((want,), -1, device="cuda", dtype=torch.int32)
                k(x)
                self.assertTrue(bool((x == want).all()))

    def test_warp_specialized_one_tile_per_block(self):
        # persistent tiles would not fit, so one tile per block, O_s reusing Q_s's bytes after the
        # warp-specialized loop
        with open(os.path.join(ROOT, "tests", "golden", "plan", "ws_one_tile.tl")) as f:
            src = f.read()
        k = tlc.compile(src, arch="sm_90a") if _sm90() else None
        if k is None:
            self.skipTest("needs an sm_90 GPU")
        b, pages = 6, 8
        q = torch.randn(b, 64, 512, device="cuda").half() * 0.05
        kv = torch.randn(pages, 64, 512, device="cuda").half() * 0.05
        lens = torch.tensor([64, 1, 512, 130, 0, 320], dtype=torch.int32, device="cuda")
        o = torch.full((b, 64, 512), float("nan"), device="cuda").half()
        k(q, kv, lens, o)
        for i in range(b):
            n = (int(lens[i]) + 63) // 64
            acc = torch.zeros(64, 512, device="cuda")
            for j in range(n):
                s = (q[i].float() @ kv[j].float().T).half().float()
                acc += s @ kv[j].float()
            torch.testing.assert_close(o[i].float(), acc, rtol=2e-2, atol=2e-2)

    def test_warp_specialized_without_setmaxnreg(self):
        # T.disable_warp_group_reg_alloc() / T.no_set_max_nreg(): every warpgroup keeps the launch's
        # registers (tests/golden/tilelang/keep_regs.py); the same GEMM as with the split
        if not _sm90():
            self.skipTest("needs an sm_90 GPU")
        path = os.path.join(ROOT, "tests", "golden", "tilelang", "keep_regs.py")
        a = torch.randn(384, 320, device="cuda").half()
        b = torch.randn(320, 640, device="cuda").half()
        ref = a.float() @ b.float()
        for kernel in ("matmul_keep", "matmul_alias", "matmul_split"):
            with self.subTest(kernel):
                k = tlc.compile(path, kernel=kernel, arch="sm_90a")
                c = torch.full((384, 640), float("nan"), device="cuda").half()
                k(a, b, c)
                torch.testing.assert_close(c.float(), ref, rtol=1e-2, atol=5e-2)

    def test_reduce_from_and_into_shared_memory(self):
        # a shared operand staged through a fragment (tests/golden/tilelang/reduce_shared.py, where the
        # interpreter gives the same)
        k = tlc.compile(os.path.join(ROOT, "tests", "golden", "tilelang", "reduce_shared.py"))
        b = torch.full((64,), float("nan"), device="cuda")
        c = torch.full((32,), float("nan"), device="cuda")
        d = torch.full((64,), float("nan"), device="cuda")
        k(b, c, d)
        self.assertTrue(torch.equal(b, torch.full_like(b, 497.0)))
        self.assertTrue(torch.equal(c, torch.arange(32, device="cuda", dtype=torch.float32)))
        self.assertTrue(torch.equal(d, torch.full_like(d, 31.0)))

    def test_multicast_in_clusters(self):
        # shared_panel runs in clusters of two column blocks that load the same tiles: the
        # producer shares them out, each sent to both blocks (TMA multicast)
        with open(os.path.join(ROOT, "tests", "golden", "plan", "multicast.tl")) as f:
            src = f.read()
        k = tlc.compile(src, kernel="shared_panel", arch="sm_90a") if _sm90() else None
        if k is None:
            self.skipTest("needs an sm_90 GPU")
        for m, n, kk in [(256, 512, 1024), (512, 256, 4096), (1000, 768, 200)]:
            a = torch.randn(m, kk, device="cuda").half()
            b = torch.randn(kk, 128, device="cuda").half()
            c = torch.full((m, n), float("nan"), device="cuda").half()
            k(a, b, c)
            ref = (a.float() @ b.float()).repeat(1, n // 128)
            torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=2e-1)
        # one column block: clusters of two do not divide the grid
        one = torch.empty(128, 128, device="cuda").half()
        with self.assertRaisesRegex(tlc.LaunchError, "cluster x = 2 .* does not divide"):
            k(torch.randn(128, 64, device="cuda").half(), torch.randn(64, 128, device="cuda").half(), one)

    def test_programmatic_dependent_launch(self):
        # The producer lets its dependent start at once (pdl_trigger first), then takes a while
        # to write Y; the consumer (pdl_sync) must still read every Y the producer wrote.
        producer = """
def produce(X: Tensor[(N,), float32], Y: Tensor[(N,), float32]):
    with Kernel(ceildiv(N, 128), threads=128) as bx:
        pdl_trigger()
        acc = alloc_fragment((128,), float32)
        for i in Parallel(128):
            acc[i] = X[bx * 128 + i]
        for r in range(200):
            for i in Parallel(128):
                acc[i] = acc[i] * 1.0001 + 0.5
        for i in Parallel(128):
            Y[bx * 128 + i] = acc[i]
"""
        consumer = """
def consume(Y: Tensor[(N,), float32], Z: Tensor[(N,), float32]):
    with Kernel(ceildiv(N, 128), threads=128) as bx:
        pdl_sync()
        for i in Parallel(128):
            Z[bx * 128 + i] = Y[bx * 128 + i] + 1.0
"""
        if not _sm90():
            self.skipTest("needs an sm_90 GPU")
        kp = tlc.compile(producer, arch="sm_90a")
        kc = tlc.compile(consumer, arch="sm_90a")
        self.assertIn("griddepcontrol.wait", kc.ptx)
        self.assertIn("griddepcontrol.launch_dependents", kp.ptx)
        n = 1 << 20
        x = torch.randn(n, device="cuda")
        ref = x.clone()
        for _ in range(200):
            ref = ref * 1.0001 + 0.5
        for _ in range(20):
            y = torch.full_like(x, float("nan"))
            z = torch.full_like(x, float("nan"))
            kp(x, y)
            kc(y, z)
            torch.testing.assert_close(z, ref + 1.0, rtol=1e-4, atol=1e-4)

    def test_fast_math_silu(self):
        # rmsnorm_silu (pass_configs fast math) at the width where it matters, against torch
        k = tlc.compile(os.path.join(EXAMPLES, "rmsnorm.tl"), kernel="rmsnorm_silu",
                        defines={"C": 32768, "BLOCK_M": 1, "threads": 512, "dtype": "bfloat16"})
        x = torch.randn(64, 32768, device="cuda").mul_(torch.logspace(-3, 3, 64, device="cuda")[:, None])
        x = x.bfloat16()
        w = torch.randn(32768, device="cuda").bfloat16()
        y = torch.empty_like(x)
        k(x, w, y)
        ref = torch.nn.functional.silu(torch.nn.functional.rms_norm(x.float(), (32768,), w.float(), eps=1e-5))
        torch.testing.assert_close(y.float(), ref, rtol=1.6e-2, atol=1e-2)

    def test_function_of_two_kernels(self):
        f = tlc.compile(os.path.join(EXAMPLES, "split_logsumexp.tl"))
        for rows, cols in ((37, 1000), (1, 1), (300, 5000)):
            x = torch.randn(rows, cols, device="cuda") * 8
            lse = torch.empty(rows, device="cuda")
            f(x, lse)
            torch.testing.assert_close(lse, torch.logsumexp(x, dim=1), rtol=1e-5, atol=1e-5)
        # packed once for the capture stream, run once there (the workspaces are made then), captured
        # and replayed into a poisoned output
        x = torch.randn(64, 700, device="cuda")
        lse = torch.empty(64, device="cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        run = f.bind(x, lse, stream=side)
        run()
        side.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=side):
            run()
        lse.fill_(float("nan"))
        torch.cuda.synchronize()
        g.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(lse, torch.logsumexp(x, dim=1), rtol=1e-5, atol=1e-5)

    def test_wrong_arguments_are_launch_errors(self):
        k = tlc.compile(SCALE, defines={"N": 256})
        x = torch.randn(128, device="cuda")
        with self.assertRaisesRegex(tlc.LaunchError, "X"):
            k(x, x, 1.0)
        with self.assertRaisesRegex(tlc.LaunchError, "float16|float32"):
            k(x.half(), x.half(), 1.0)


if __name__ == "__main__":
    unittest.main()


def _sm90():
    return HAVE_GPU and torch.cuda.get_device_capability(0) == (9, 0)


@unittest.skipUnless(_sm90(), "needs an sm_90 GPU (the attention kernels' defaults are TMA and wgmma)")
class AttentionAgainstSdpaTest(unittest.TestCase):
    """dsl-examples/flash_attention.tl against torch's scaled_dot_product_attention (GQA through
    repeated kv heads), and flash_attention_varlen against SDPA per packed sequence."""

    SRC = os.path.join(EXAMPLES, "flash_attention.tl")

    @staticmethod
    def sdpa(q, k, v, causal):  # [b, s, h, d] tensors; GQA by repeating the kv heads
        rep = q.shape[2] // k.shape[2]
        k, v = (t.repeat_interleave(rep, dim=2) for t in (k, v))
        # SDPA's causal mask is top-left aligned; tlc's (FlashAttention's) bottom-right: equal when
        # seq_q == seq_kv, which the cases keep
        o = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float(), is_causal=causal)
        return o.transpose(1, 2)

    def test_fixed_length(self):
        torch.manual_seed(0)
        for causal, dtype, dim in ((False, torch.bfloat16, 128), (True, torch.float16, 64)):
            b, s, h, hk = 2, 333, 8, 2
            q = torch.randn(b, s, h, dim, device="cuda", dtype=dtype)
            k, v = (torch.randn(b, s, hk, dim, device="cuda", dtype=dtype) for _ in range(2))
            o = torch.empty_like(q)
            lse = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
            kern = tlc.compile(self.SRC, kernel="flash_attention",
                               defines={"dim": dim, "causal": causal, "dtype": str(dtype).split(".")[1]})
            kern(q, k, v, o, lse, dim ** -0.5)
            torch.testing.assert_close(o.float(), self.sdpa(q, k, v, causal), atol=1e-2, rtol=2e-2,
                                       msg=f"causal={causal} {dtype} dim={dim}")

    def test_varlen(self):
        torch.manual_seed(1)
        lens = [300, 0, 17, 129]
        dim, h, hk = 128, 4, 2
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
        total = int(cu[-1])
        q = torch.randn(total, h, dim, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(total, hk, dim, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        o = torch.empty_like(q)
        lse = torch.empty(h, total, device="cuda", dtype=torch.float32)
        kern = tlc.compile(self.SRC, kernel="flash_attention_varlen", defines={"causal": True})
        kern(q, k, v, cu, cu, o, lse, max(lens), dim ** -0.5)
        for i, n in enumerate(lens):
            if n == 0:
                continue
            a, z = int(cu[i]), int(cu[i + 1])
            ref = self.sdpa(q[None, a:z], k[None, a:z], v[None, a:z], True)[0]
            torch.testing.assert_close(o[a:z].float(), ref, atol=1e-2, rtol=2e-2, msg=f"sequence {i}")
