"""tlc.interpret on NumPy arrays (no GPU), and what compile and launch say where there is no GPU."""
import os
import tempfile
import unittest

import numpy as np

import tlc
from kernels import (FRAGMENT_HALVES, fragment_halves_expected, FRAGMENT_PER_THREAD, FRAGMENT_OFFSETS, fragment_offsets_expected, THREAD_RANGES, thread_ranges_expected,
                     sums_in_range_expected, THREAD_RANGES_SHARED, thread_ranges_shared_expected, EXAMPLES, FRAGMENT_RESHAPE, GEMV_KERNELS, INT8, LOOP_EXIT, SYNC_GRID, loop_exit_inputs,
                     nested_exits_expected, A_REGS_WIDE, B_REGS, FP8, OUT_OF_BOUNDS, PACKED, ROOT, SCALE, SHARED_INDEX, THREAD_BARRIERS,
                     THREAD_BINDING, UNSIGNED, UNSIGNED_BOUND, WARP_SHUFFLE, REDUCER, gemv_inputs, packed_expected,
                     packed_inputs, reinterpret_expected, shared_index_expected, shift_expected, unsigned_expected,
                     unsigned_inputs, warp_shuffle_expected, grouped_sums_expected)


# A warpgroup hands values to another through shared memory, waiting on an mbarrier (a kernel that runs its
# ranges at the same time: T.wait_wgmma makes it one, docs/language.md 11.9).
HANDOFF = """import tilelang
import tilelang.language as T


@tilelang.jit
def handoff(A):
    A: T.Tensor((128,), T.float32)
    B = T.empty((128,), T.float32)
    with T.Kernel(1, threads=256) as bx:
        s = T.alloc_shared((128,), T.float32)
        ready = T.alloc_barrier(arrive_count=128)
        tx = T.get_thread_binding()
        if tx < 128:
            T.barrier_wait(ready, 0)
            B[tx] = s[tx]
        else:
            s[tx - 128] = A[tx - 128] * 2
            T.barrier_arrive(ready)
            T.wait_wgmma(0)
    return B
"""


# A wgmma left in flight, its accumulator read once T.wait_wgmma has retired it.
IN_FLIGHT = """import tilelang
import tilelang.language as T


@tilelang.jit
def in_flight(A, B):
    A: T.Tensor((64, 64), T.float16)
    B: T.Tensor((64, 64), T.float16)
    C = T.empty((64, 64), T.float32)
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), T.float16)
        B_s = T.alloc_shared((64, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.clear(acc)
        T.wgmma_gemm(A_s, B_s, acc)
        T.wait_wgmma(0)
        T.copy(acc, C)
    return C
"""


# Two warpgroups meet at a named barrier (256 of the block's 384 threads) to hand values over; the third waits
# for the first on an mbarrier.
NAMED = """import tilelang
import tilelang.language as T


@tilelang.jit
def named(A):
    A: T.Tensor((128,), T.float32)
    B = T.empty((128,), T.float32)
    with T.Kernel(1, threads=384) as bx:
        s = T.alloc_shared((128,), T.float32)
        done = T.alloc_barrier(arrive_count=128)
        tx = T.get_thread_binding()
        if tx < 128:
            T.sync_threads(1, 256)
            B[tx] = s[tx]
            T.barrier_arrive(done)
        elif tx < 256:
            s[tx - 128] = A[tx - 128] * 2
            T.sync_threads(1, 256)
        else:
            T.barrier_wait(done, 0)
            T.wait_wgmma(0)
    return B
"""


class InterpretTest(unittest.TestCase):
    def setUp(self):
        self.cache = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.cache.cleanup()

    def test_scale(self):
        x = np.arange(64, dtype=np.float32) - 10
        y = np.zeros(64, dtype=np.float32)
        out = tlc.interpret(SCALE, {"X": x, "Y": y, "s": 2.5}, defines={"N": 64})
        self.assertIs(out["Y"], y)
        np.testing.assert_array_equal(y, x * np.float32(2.5))

    def test_int8_gemm_sums_exactly(self):
        # past 2^24, where a float32 sum would round
        rng = np.random.default_rng(1)
        a = rng.integers(-128, 128, (128, 1040)).astype(np.int8)
        b = rng.integers(-128, 128, (128, 1040)).astype(np.int8)
        c = np.zeros((128, 128), np.int32)
        tlc.interpret(INT8, {"A": a, "B": b, "C": c}, kernel="int8_gemm", defines={"M": 128, "N": 128, "K": 1040})
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64).T)

    def test_fragment_reshape(self):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((64, 128)).astype(np.float32)
        w = rng.standard_normal((2, 64)).astype(np.float32)
        out = np.full((64, 2), np.nan, np.float32)
        tlc.interpret(FRAGMENT_RESHAPE, {"X": x, "W": w, "Out": out})
        np.testing.assert_allclose(out, grouped_sums_expected(x, w), rtol=1e-5, atol=1e-5)

    def test_unrolled_slices_and_clear_condition(self):
        # tests/golden/tilelang/unroll_slices.py: four k-steps of an unrolled loop (written out in sema, the
        # first clearing), then a serial loop whose gemm clears at k == 0 only: C = 2 * A[:, :64] @ B[:64, :]
        rng = np.random.default_rng(3)
        a = rng.standard_normal((64, 256)).astype(np.float16)
        b = rng.standard_normal((256, 64)).astype(np.float16)
        c = np.full((64, 64), np.nan, dtype=np.float32)
        tlc.interpret(os.path.join(ROOT, "tests", "golden", "tilelang", "unroll_slices.py"), {"A": a, "B": b, "C": c})
        want = 2 * (a[:, :64].astype(np.float64) @ b[:64].astype(np.float64))
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3)

    def test_cumsum(self):
        rng = np.random.default_rng(3)
        a = rng.standard_normal((4, 64)).astype(np.float32)
        b, c, d = np.zeros_like(a), np.zeros_like(a), np.zeros(64, np.float16)
        tlc.interpret(os.path.join(ROOT, "tests", "golden", "tilelang", "cumsum.py"), {"A": a, "B": b, "C": c, "D": d})
        np.testing.assert_allclose(b, np.cumsum(a, axis=1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c, np.cumsum(a[::-1], axis=0)[::-1], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(d, np.cumsum(a[0].astype(np.float16).astype(np.float64)), rtol=2e-3, atol=2e-2)

    def test_unsigned_and_16_bit_integers(self):
        inp = unsigned_inputs()
        want = unsigned_expected(inp)
        out = {k: np.zeros_like(v) for k, v in want.items()}
        tlc.interpret(UNSIGNED, {**inp, "bound": UNSIGNED_BOUND, **out}, kernel="unsigned_ops")
        for k, v in want.items():
            np.testing.assert_array_equal(out[k], v, err_msg=k)

    def test_thread_indexed_code(self):
        a, b, want = gemv_inputs()
        for name in GEMV_KERNELS:
            with self.subTest(kernel=name):
                c = np.full(want.shape, np.nan, np.float16)
                tlc.interpret(THREAD_BINDING, {"A": a, "B": b, "C": c}, kernel=name)
                np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-2, atol=5e-2)
        x = np.arange(128, dtype=np.float32)
        y = np.zeros(128, np.float32)
        tlc.interpret(THREAD_BARRIERS, {"A": x, "B": y}, kernel="shift")
        np.testing.assert_array_equal(y, shift_expected(x))
        a = np.random.default_rng(23).standard_normal((128, 256)).astype(np.float32)
        b = np.full(128, np.nan, np.float32)
        tlc.interpret(THREAD_BARRIERS, {"A": a, "B": b}, kernel="staged")
        np.testing.assert_allclose(b, a[::-1].sum(axis=1), rtol=1e-4, atol=1e-4)
        w, y = np.full(128, np.nan, np.float32), np.full(128, np.nan, np.float32)
        tlc.interpret(THREAD_BARRIERS, {"A": x, "W": w, "B": y}, kernel="exchange")
        np.testing.assert_array_equal(y, 2 * x[::-1])
        a = np.random.default_rng(19).standard_normal((4, 32)).astype(np.float32)
        s, g = np.full_like(a, np.nan), np.full_like(a, np.nan)
        tlc.interpret(WARP_SHUFFLE, {"A": a, "S": s, "G": g})
        want_s, want_g = warp_shuffle_expected(a)
        np.testing.assert_allclose(s, want_s, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(g, want_g, rtol=1e-5, atol=1e-5)

    def test_loops_that_end_early(self):
        a, first, sums, n, steps, c, kept = loop_exit_inputs()
        out = np.full(64, -7, np.int32)
        tlc.interpret(LOOP_EXIT, {"A": a, "limit": 2.5, "Out": out}, kernel="first_over")
        np.testing.assert_array_equal(out, first)
        self.assertTrue((first >= 0).any() and (first < 0).any())
        s = np.full(64, np.nan, np.float32)
        tlc.interpret(LOOP_EXIT, {"A": a, "Out": s}, kernel="positive_sums")
        np.testing.assert_allclose(s, sums, rtol=1e-5)
        got = np.full(1024, -1, np.int32)
        tlc.interpret(LOOP_EXIT, {"N": n, "Steps": got}, kernel="collatz_steps")
        np.testing.assert_array_equal(got, steps)
        nested = np.full(64, np.nan, np.float32)
        tlc.interpret(LOOP_EXIT, {"A": a[:, :16].copy(), "Out": nested}, kernel="nested_exits")
        np.testing.assert_allclose(nested, nested_exits_expected(a[:, :16]), rtol=1e-6, atol=1e-6)
        x, w = a[:, :64].astype(np.float16), a[:64, 64:128].astype(np.float16)
        x = np.tile(x, (16, 1))
        blocks = np.full((1024, 64), np.nan, np.float32)
        tlc.interpret(LOOP_EXIT, {"A": x, "B": w, "C": blocks, "n": 10}, kernel="row_blocks")
        np.testing.assert_allclose(blocks[:640], x[:640].astype(np.float64) @ w.astype(np.float64), rtol=1e-3, atol=1e-3)
        self.assertTrue(np.isnan(blocks[640:]).all())
        o, count = np.full((16, 128), np.nan, np.float32), np.full(16, -1, np.int32)
        tlc.interpret(LOOP_EXIT, {"A": c, "Out": o, "Count": count}, kernel="compact")
        np.testing.assert_array_equal(count, [len(k) for k in kept])
        for r in range(16):
            np.testing.assert_array_equal(np.sort(o[r, :count[r]]), kept[r])

    def test_wide_register_operands(self):
        rng = np.random.default_rng(41)
        a = rng.standard_normal((128, 64)).astype(np.float32)
        b = rng.standard_normal((128, 64)).astype(np.float32)
        c = np.full((128, 128), np.nan, np.float32)
        tlc.interpret(A_REGS_WIDE, {"A": a, "B": b, "C": c})
        np.testing.assert_allclose(c, np.maximum(a, 0).astype(np.float64) @ b.T.astype(np.float64), rtol=1e-4,
                                   atol=1e-4)
        ai, bi = rng.integers(-128, 128, (128, 64)).astype(np.int8), rng.integers(-128, 128, (128, 64)).astype(np.int8)
        ci = np.zeros((128, 128), np.int32)
        tlc.interpret(A_REGS_WIDE, {"A": ai, "B": bi, "C": ci}, defines={"dtype": "int8", "accum": "int32"})
        np.testing.assert_array_equal(ci, np.maximum(ai, 0).astype(np.int64) @ bi.T.astype(np.int64))

    def test_b_register_operands(self):
        # B in registers, with A in shared memory (both layouts of B) and in registers
        rng = np.random.default_rng(43)
        a = rng.standard_normal((64, 32)).astype(np.float16)
        b = rng.standard_normal((32, 64)).astype(np.float16)
        want = a.astype(np.float64) @ np.maximum(b, 0).astype(np.float64)
        for trans_b in (False, True):
            c = np.full((64, 64), np.nan, np.float32)
            tlc.interpret(B_REGS, {"A": a, "B": b.T.copy() if trans_b else b, "C": c}, kernel="b_regs",
                          defines={"trans_B": trans_b})
            np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)
        c = np.full((64, 64), np.nan, np.float32)
        tlc.interpret(B_REGS, {"A": a, "B": b, "C": c}, kernel="both_regs")
        np.testing.assert_allclose(c, 2 * want, rtol=1e-3, atol=1e-3)

    def test_sync_grid(self):
        # the body runs in parts between its sync_grid()s, each in every block, each block keeping its state
        x = np.random.default_rng(37).random((64, 256)).astype(np.float32)
        out, part = np.full_like(x, np.nan), np.full(64, np.nan, np.float32)
        for reverse in (False, True):
            tlc.interpret(SYNC_GRID, {"X": x, "Out": out, "Part": part}, kernel="scale_by_total", reverse=reverse)
            np.testing.assert_allclose(part, x.sum(axis=1), rtol=1e-5)
            np.testing.assert_allclose(out, x / x.astype(np.float64).sum(), rtol=1e-4)
        count, seen = np.zeros(1, np.int32), np.zeros(64, np.int32)
        tlc.interpret(SYNC_GRID, {"Count": count, "Seen": seen}, kernel="count_blocks")
        np.testing.assert_array_equal(seen, np.full(64, 64))

    def test_thread_ranges(self):
        # branches on the thread index holding tile work: each range's ops over its threads, nested ranges
        rng = np.random.default_rng(41)
        a, b = rng.standard_normal((192, 64)).astype(np.float16), rng.standard_normal((64, 128)).astype(np.float16)
        c, rs, mx = (np.full(s, np.nan, np.float32) for s in ((192, 128), 192, 192))
        cs = np.full((3, 128), np.nan, np.float32)
        tlc.interpret(THREAD_RANGES, {"A": a, "B": b, "C": c, "RS": rs, "MX": mx, "CS": cs}, kernel="split_roles")
        ec, ers, emx, ecs = thread_ranges_expected(a, b)
        np.testing.assert_allclose(c, ec, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(rs, ers, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(mx, emx, rtol=1e-6)
        np.testing.assert_allclose(cs, np.tile(ecs, (3, 1)), rtol=1e-4, atol=1e-3)
        # ranges shared by several branches (a fragment cleared in one, accumulated in another), inside a
        # Pipelined loop; ranges of 96 threads
        a, b = rng.standard_normal((1024, 64)).astype(np.float16), rng.standard_normal((64, 64)).astype(np.float16)
        x = rng.standard_normal((96, 64)).astype(np.float32)
        c, r, xo = np.full((64, 64), np.nan, np.float32), np.full(64, np.nan, np.float32), np.full((96, 64), np.nan, np.float32)
        tlc.interpret(THREAD_RANGES_SHARED, {"A": a, "B": b, "C": c, "R": r}, kernel="in_pipeline")
        tlc.interpret(THREAD_RANGES_SHARED, {"A": x, "B": xo}, kernel="odd_threads")
        ec, er, ex = thread_ranges_shared_expected(a, b, x)
        np.testing.assert_allclose(c, ec, rtol=1e-3, atol=1e-2)
        np.testing.assert_allclose(r, er, rtol=1e-4, atol=1e-2)
        np.testing.assert_array_equal(xo, ex)
        # a loop around a Pipelined loop in the upper half's range
        x = rng.standard_normal((100, 384)).astype(np.float32)
        y = np.full((100, 2), np.nan, np.float32)
        tlc.interpret(THREAD_RANGES, {"X": x, "Y": y}, kernel="sums_in_range")
        np.testing.assert_allclose(y, sums_in_range_expected(x), rtol=1e-4, atol=1e-3)

    def test_hand_pipelined_ranges(self):
        # tests/golden/tilelang/hand_pipeline.py: a consumer and a producer warpgroup that wait for each other
        # on mbarriers (cp.async copies, or T.tma_copy), run as strands switching at waits; partial tiles
        path = os.path.join(ROOT, "tests", "golden", "tilelang", "hand_pipeline.py")
        rng = np.random.default_rng(43)
        a, b = rng.standard_normal((100, 200)).astype(np.float16), rng.standard_normal((200, 72)).astype(np.float16)
        for kernel in ("hand_gemm", "hand_gemm_tma"):
            with self.subTest(kernel):
                c = np.full((100, 72), np.nan, np.float16)
                tlc.interpret(path, {"A": a, "B": b, "C": c}, kernel=kernel)
                np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                                           rtol=1e-2, atol=2e-2)
                c2 = np.full((100, 72), np.nan, np.float16)  # the producer first: the same bytes
                tlc.interpret(path, {"A": a, "B": b, "C": c2}, kernel=kernel, reverse=True)
                np.testing.assert_array_equal(c, c2)
        with open(path) as f:
            source = f.read()
        args = {"A": a, "B": b, "C": np.zeros((100, 72), np.float16)}
        # the producer waiting for the first phase of `empty` instead of the one before it: both ranges wait
        hang = source.replace("T.barrier_wait(empty[k % 2], ((k // 2) % 2) ^ 1)", "T.barrier_wait(empty[k % 2], (k // 2) % 2)")
        with self.assertRaisesRegex(tlc.InterpreterError, r"(?s)every thread range of the block waits on a barrier.*"
                                    r"threads 0-127 wait here for 'full'\[0\] \(phase parity 0; 0 phases completed, 128 "
                                    r"arrivals missing.*threads 128-255 wait here for 'empty'\[0\]"):
            tlc.interpret(hang, args, kernel="hand_gemm")
        # an index outside the barrier's group
        with self.assertRaisesRegex(tlc.InterpreterError, "barrier index 2 is outside 'empty', which has 2 barriers"):
            tlc.interpret(source.replace("T.barrier_arrive(empty[k % 2])", "T.barrier_arrive(empty[k % 3])"), args,
                          kernel="hand_gemm")
        # the consumer's first gemm without its wait for `full`: it reads stage 0 before the producer fills it, and
        # the producer's copies land while that gemm may still run
        early = source.replace("                T.barrier_wait(full[k % 2], (k // 2) % 2)\n",
                               "                if k > 0:\n                    T.barrier_wait(full[k % 2], (k // 2) % 2)\n", 1)
        self.assertNotEqual(early, source)
        with self.assertRaisesRegex(tlc.InterpreterError, r"<source>:53:49: error: 'A_s' is written here where a "
                                    r"T.wgmma_gemm \(line 40\) that reads it may still be running"):
            tlc.interpret(early, args, kernel="hand_gemm")
        # the stage released before the wgmma reading it has retired (the arrive before the T.wait_wgmma)
        late = source.replace("                T.wait_wgmma(0)\n                T.barrier_arrive(empty[k % 2])\n",
                              "                T.barrier_arrive(empty[k % 2])\n                T.wait_wgmma(0)\n", 1)
        self.assertNotEqual(late, source)
        with self.assertRaisesRegex(tlc.InterpreterError, r"'A_s' is written here where a T.wgmma_gemm \(line 39\) "
                                    r"that reads it may still be running"):
            tlc.interpret(late, args, kernel="hand_gemm")
        # one range hands values to another through shared memory: with its wait, the same in both orders; without,
        # the reverse order (each round of ranges, and the two sides of a condition, last first) differs
        x = rng.standard_normal(128).astype(np.float32)
        for wait in (True, False):
            handoff = HANDOFF if wait else HANDOFF.replace("T.barrier_wait(ready, 0)", "pass")
            outs = []
            for reverse in (False, True):
                y = np.zeros(128, np.float32)
                tlc.interpret(handoff, {"A": x, "B": y}, reverse=reverse)
                outs.append(y)
            if wait:
                np.testing.assert_array_equal(outs[0], 2 * x)
                np.testing.assert_array_equal(outs[1], 2 * x)
            else:
                self.assertTrue(np.isnan(outs[0]).all())
                np.testing.assert_array_equal(outs[1], 2 * x)
        # no T.wait_wgmma: the consumer frees a stage while the wgmma reading it may still run, and the producer
        # refills it
        unwaited = source.replace("                T.wait_wgmma(0)\n", "", 1)
        self.assertNotEqual(unwaited, source)
        with self.assertRaisesRegex(tlc.InterpreterError, r"<source>:51:49: error: 'A_s' is written here where a "
                                    r"T.wgmma_gemm \(line 39\) that reads it may still be running"):
            tlc.interpret(unwaited, args, kernel="hand_gemm")
        # an accumulator read before the T.wait_wgmma that retires its gemm
        ab = {"A": a[:64, :64].copy(), "B": b[:64, :64].copy()}
        c = np.full((64, 64), np.nan, np.float32)
        tlc.interpret(IN_FLIGHT, dict(ab, C=c))
        np.testing.assert_allclose(c, ab["A"].astype(np.float32) @ ab["B"].astype(np.float32), rtol=1e-3, atol=1e-3)
        with self.assertRaisesRegex(tlc.InterpreterError, r"<source>:18:16: error: 'acc' is used here while a "
                                    r"T.wgmma_gemm into it \(line 17\) is still in flight"):
            tlc.interpret(IN_FLIGHT.replace("        T.wait_wgmma(0)\n", ""), dict(ab, C=c))
        # ranges that meet at a named barrier (its count of threads from both): the hand-off in both orders; without
        # the producer's side, a hang naming the barrier and its arrivals
        for reverse in (False, True):
            y = np.zeros(128, np.float32)
            tlc.interpret(NAMED, {"A": x, "B": y}, reverse=reverse)
            np.testing.assert_array_equal(y, 2 * x)
        alone = NAMED.replace("            s[tx - 128] = A[tx - 128] * 2\n            T.sync_threads(1, 256)\n",
                              "            s[tx - 128] = A[tx - 128] * 2\n", 1)
        self.assertNotEqual(alone, NAMED)
        with self.assertRaisesRegex(tlc.InterpreterError, r"<source>:14:13: error: every thread range of the block "
                                    r"waits on a barrier: the kernel would hang here; threads 0-127 wait here at named "
                                    r"barrier 1 \(128 of its 256 threads have arrived\)"):
            tlc.interpret(alone, {"A": x, "B": np.zeros(128, np.float32)})
        with self.assertRaisesRegex(tlc.InterpreterError, r"<source>:19:13: error: named barrier 1 is for 160 threads, "
                                    r"but 256 have arrived at it"):
            tlc.interpret(NAMED.replace("T.sync_threads(1, 256)", "T.sync_threads(1, 160)"),
                          {"A": x, "B": np.zeros(128, np.float32)})

    def test_fragment_offsets(self):
        # a fragment read and written in a Parallel loop at a loop variable plus a serial loop's offset
        rng = np.random.default_rng(43)
        x, w = rng.standard_normal((64, 256)).astype(np.float16), rng.standard_normal((32, 256)).astype(np.float16)
        y, s, z = np.full((64, 32), np.nan, np.float32), np.full((64, 8), np.nan, np.float32), np.full((64, 256), np.nan, np.float32)
        tlc.interpret(FRAGMENT_OFFSETS, {"X": x, "W": w, "Y": y, "S": s, "Z": z})
        ey, es, ez = fragment_offsets_expected(x, w)
        np.testing.assert_allclose(y, ey, rtol=1e-3, atol=1e-2)
        np.testing.assert_allclose(s, es, rtol=1e-4, atol=1e-3)
        np.testing.assert_array_equal(z, ez)

    def test_fragment_halves(self):
        # an accumulator stored half its rows at a time by a guarded loop over all of them; a loop shorter
        # than the fragment it reads
        rng = np.random.default_rng(44)
        a, b = rng.standard_normal((128, 32)).astype(np.float16), rng.standard_normal((128, 512)).astype(np.float16)
        c, m = np.full((32, 512), np.nan, np.float32), np.full(16, np.nan, np.float32)
        tlc.interpret(FRAGMENT_HALVES, {"A": a, "B": b, "C": c, "M": m})
        ec, em = fragment_halves_expected(a, b)
        np.testing.assert_allclose(c, ec, rtol=1e-3, atol=1e-2)
        np.testing.assert_allclose(m[:8], em, rtol=1e-3, atol=1e-2)
        self.assertTrue(np.isnan(m[8:]).all())

    def test_fragment_per_thread(self):
        a = np.random.default_rng(45).standard_normal((128, 4)).astype(np.float32)
        b = np.full(128, np.nan, np.float32)
        tlc.interpret(FRAGMENT_PER_THREAD, {"A": a, "B": b}, kernel="weighted_rows")
        np.testing.assert_allclose(b, a @ np.arange(1, 5, dtype=np.float32), rtol=1e-6, atol=1e-6)
        tlc.interpret(FRAGMENT_PER_THREAD, {"A": a, "B": b}, kernel="chained")  # a fragment stored from one
        np.testing.assert_allclose(b, a[:, 0] + a[:, 3], rtol=1e-6, atol=1e-6)

    def test_reducers(self):
        rng = np.random.default_rng(29)
        a, x = rng.standard_normal((256, 512)).astype(np.float16), rng.standard_normal(512).astype(np.float16)
        o = np.full(256, np.nan, np.float16)
        tlc.interpret(REDUCER, {"a": a, "x": x, "o": o}, kernel="gemv_alloc_reducer")
        np.testing.assert_allclose(o.astype(np.float32), a.astype(np.float32) @ x.astype(np.float32), rtol=2e-2,
                                   atol=5e-2)
        m = rng.standard_normal((64, 256)).astype(np.float32)
        mo = np.full(64, np.nan, np.float32)
        tlc.interpret(REDUCER, {"A": m, "O": mo}, kernel="row_max")
        np.testing.assert_array_equal(mo, m.max(axis=1))

    def test_packed_fragment_reads(self):
        inp = packed_inputs()
        want = packed_expected(inp)
        out = {k: np.zeros_like(v) for k, v in want.items()}
        tlc.interpret(PACKED, {**inp, **out}, kernel="packed")
        for k, v in want.items():
            np.testing.assert_array_equal(out[k], v, err_msg=k)
        c = np.zeros_like(want["C"])
        tlc.interpret(PACKED, {"B": inp["B"], "C": c}, kernel="from_global")
        np.testing.assert_array_equal(c, want["C"])

    def test_indices_shared_by_a_parallel_loop(self):
        rng = np.random.default_rng(13)
        g1, g2 = rng.standard_normal((8, 128)).astype(np.float32), rng.standard_normal((8, 64)).astype(np.float32)
        want1, want2 = shared_index_expected(g1, g2)
        o1, o2 = np.zeros(128, np.float32), np.zeros(64, np.float32)
        tlc.interpret(SHARED_INDEX, {"G": g1, "O": o1}, kernel="combine")
        tlc.interpret(SHARED_INDEX, {"G": g2, "O": o2}, kernel="row_copy")
        np.testing.assert_allclose(o1, want1, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(o2, want2, rtol=1e-5, atol=1e-5)

    def test_reinterpret_and_typed_constants(self):
        b = np.random.default_rng(3).integers(0, 256, (64, 32)).astype(np.uint8)
        want = reinterpret_expected(b)
        out = {k: np.zeros_like(v) for k, v in want.items()}
        tlc.interpret(UNSIGNED, {"B": b, **out}, kernel="reinterpret_bits")
        for k, v in want.items():
            np.testing.assert_array_equal(out[k].view(np.uint8), v.view(np.uint8), err_msg=k)

    def test_gemm_operand_slices(self):
        rng = np.random.default_rng(5)
        a, b = (rng.standard_normal((128, 128)).astype(np.float16) for _ in range(2))
        c = np.full((4, 64, 64), np.nan, np.float32)
        tlc.interpret(os.path.join(ROOT, "tests", "golden", "plan", "gemm_operand_slices.tl"), {"A": a, "B": b, "C": c},
                      kernel="operand_slices")
        a, b = a.astype(np.float64), b.astype(np.float64)
        want = [a[64:, 64:] @ b[64:, :64], a[:64, 64:].T @ b[:64, 64:], a[:64, :64] @ b[64:, 64:].T,
                a[:64, 8:72].T @ b[:64, :64]]
        for i in range(4):
            np.testing.assert_allclose(c[i], want[i], rtol=1e-3, atol=1e-3)
        a, b, bt = (rng.standard_normal(shape).astype(np.float16) for shape in ((4, 64, 64), (4, 64, 128), (4, 128, 64)))
        c = np.full((2, 64, 128), np.nan, np.float32)
        tlc.interpret(os.path.join(ROOT, "tests", "golden", "plan", "gemm_operand_slices.tl"),
                      {"A": a, "B": b, "Bt": bt, "C": c}, kernel="stage_slices")
        a, b, bt = a.astype(np.float64), b.astype(np.float64), bt.astype(np.float64)
        np.testing.assert_allclose(c[0], sum(a[k] @ b[k] for k in range(4)), rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(c[1], sum(a[k] @ bt[k].T for k in range(4)), rtol=1e-3, atol=1e-3)

    def test_rmsnorm_against_numpy(self):
        rng = np.random.default_rng(0)
        rows, cols = 37, 256  # 37 rows: the last block of 4 is a masked tail
        x = rng.standard_normal((rows, cols)).astype(np.float16)
        w = rng.standard_normal(cols).astype(np.float16)
        y = np.full((rows, cols), np.nan, dtype=np.float16)
        tlc.interpret(os.path.join(EXAMPLES, "rmsnorm.tl"), {"X": x, "W": w, "Y": y}, kernel="rmsnorm",
                      defines={"C": cols})
        xf = x.astype(np.float64)
        ref = xf / np.sqrt((xf * xf).mean(axis=1, keepdims=True) + 1e-5) * w.astype(np.float64)
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=2e-2, atol=2e-2)

    def test_reverse_shows_a_race(self):
        # every Parallel iteration writes one shared element: the last writer's value stays, so the
        # reverse order gives another result; a race-free kernel gives the same bytes either way
        racy = ("def racy(X: Tensor[(8,), float32], Y: Tensor[(1,), float32]):\n"
                "    with Kernel(1, threads=32) as bx:\n"
                "        s = alloc_shared((1,), float32)\n"
                "        for i in Parallel(8):\n"
                "            s[0] = X[i]\n"
                "        copy(s, Y)\n")
        x = np.arange(8, dtype=np.float32)
        y0, y1 = np.zeros(1, dtype=np.float32), np.zeros(1, dtype=np.float32)
        tlc.interpret(racy, {"X": x, "Y": y0}, name="racy.tl")
        tlc.interpret(racy, {"X": x, "Y": y1}, name="racy.tl", reverse=True)
        self.assertEqual((y0[0], y1[0]), (7.0, 0.0))
        a = np.arange(64, dtype=np.float32) - 10
        z0, z1 = np.zeros(64, dtype=np.float32), np.zeros(64, dtype=np.float32)
        tlc.interpret(SCALE, {"X": a, "Y": z0, "s": 2.5}, defines={"N": 64})
        tlc.interpret(SCALE, {"X": a, "Y": z1, "s": 2.5}, defines={"N": 64}, reverse=True)
        np.testing.assert_array_equal(z0, z1)

    def test_out_of_bounds_is_an_interpreter_error(self):
        x = np.ones(64, dtype=np.float32)
        y = np.zeros(64, dtype=np.float32)
        tlc.interpret(OUT_OF_BOUNDS, {"X": x, "Y": y, "k": 3}, name="oob.tl")
        self.assertEqual(y[0], 1.0)
        with self.assertRaises(tlc.InterpreterError) as cm:
            tlc.interpret(OUT_OF_BOUNDS, {"X": x, "Y": y, "k": 4}, name="oob.tl")
        self.assertEqual(cm.exception.status, "TLC_ERROR_RUNTIME")
        self.assertRegex(str(cm.exception), r"oob\.tl:7:\d+: error: .*out of bounds")

    def test_missing_and_mismatched_arguments(self):
        x = np.ones(64, dtype=np.float32)
        with self.assertRaisesRegex(tlc.InterpreterError, "'Y'"):
            tlc.interpret(SCALE, {"X": x, "s": 1.0}, defines={"N": 64})
        with self.assertRaisesRegex(tlc.InterpreterError, "X"):
            tlc.interpret(SCALE, {"X": x.astype(np.float16), "Y": x.copy(), "s": 1.0}, defines={"N": 64})

    def test_float8_e5m2_conversions(self):
        # to the nearest float8_e5m2 (ties to even; beyond +-57344, inf included, saturated) and back: its values are
        # the float16 ones of the byte shifted up
        rng = np.random.default_rng(12)
        x = (rng.standard_normal((256, 64)) * 2.0 ** rng.integers(-18, 18, (256, 64))).astype(np.float32)
        x[0, :6] = [1e6, -np.inf, 57344.0, 1.125, 1.375, 2.0 ** -17]
        values = (np.arange(256, dtype=np.uint16) << 8).view(np.float16).astype(np.float64)
        finite = np.flatnonzero(np.isfinite(values))
        d = np.abs(x.astype(np.float64)[..., None] - values[finite])
        best = d.min(axis=-1, keepdims=True)
        ties = d == best
        # the even code among the nearest (the one with a 0 in the lowest mantissa bit)
        pick = np.where(ties & ((finite % 2) == 0), 1, 0) + ties
        code = finite[np.argmax(pick, axis=-1)]
        code = np.where(values[code] == 0, np.where(np.signbit(x), 0x80, 0), code)  # a zero keeps x's sign
        code = np.where(np.abs(x) >= 57344.0, np.where(x > 0, 0x7b, 0xfb), code).astype(np.uint8)
        q, y = np.zeros((256, 64), np.uint8), np.full((256, 64), np.nan, np.float32)
        tlc.interpret(FP8, {"X": x, "Q": tlc.Bits(q, "float8_e5m2"), "Y": y}, kernel="fp8_e5m2_convert")
        np.testing.assert_array_equal(q, code)
        np.testing.assert_array_equal(y, (values[code] * 2 + 1).astype(np.float32))

    def test_bits_for_dtypes_numpy_lacks(self):
        # tlc.Bits passes bfloat16 / float8 tensors as unsigned arrays of their bit patterns; anything else is refused
        with self.assertRaisesRegex(TypeError, "bfloat16 elements need an unsigned integer array of 2-byte"):
            tlc.Bits(np.zeros(4, np.float16), "bfloat16")
        with self.assertRaisesRegex(TypeError, "float8_e4m3 elements need an unsigned integer array of 1-byte"):
            tlc.Bits(np.zeros(4, np.uint16), "float8_e4m3")
        with self.assertRaisesRegex(TypeError, "is not one of bfloat16, float8_e4m3"):
            tlc.Bits(np.zeros(4, np.uint16), "float16")

    def test_compile_error_and_bad_arrays(self):
        x = np.ones(64, dtype=np.float32)
        with self.assertRaisesRegex(tlc.CompileError, r"<source>:\d+:\d+: error: "):
            tlc.interpret(SCALE.replace("float32)", "float33)", 1), {"X": x})
        with self.assertRaisesRegex(TypeError, "C-contiguous"):
            tlc.interpret(SCALE, {"X": np.ones(128, dtype=np.float32)[::2], "Y": x, "s": 1.0},
                          defines={"N": 64})
        with self.assertRaisesRegex(TypeError, "complex128"):
            tlc.interpret(SCALE, {"X": np.ones(64, dtype=np.complex128)})

    def test_function_of_two_kernels(self):
        rng = np.random.default_rng(5)
        x = (rng.standard_normal((37, 1000)) * 8).astype(np.float32)
        lse = np.zeros(37, dtype=np.float32)
        tlc.interpret(os.path.join(EXAMPLES, "split_logsumexp.tl"), {"X": x, "LSE": lse})  # no workspace arguments
        m = x.astype(np.float64).max(axis=1)
        ref = m + np.log(np.exp(x - m[:, None]).sum(axis=1))
        np.testing.assert_allclose(lse, ref, rtol=1e-6)

    def test_without_a_gpu(self):
        try:
            tlc.compile(SCALE, cache_dir=self.cache.name)  # the arch of the GPU
        except tlc.LaunchError as e:
            self.assertRegex(str(e), "no CUDA driver|no CUDA-capable device|no GPU")
        else:
            self.skipTest("there is a GPU here")

        class FakeDeviceArray:  # __cuda_array_interface__ is enough to be taken for a device tensor
            __cuda_array_interface__ = {"shape": (64,), "typestr": "<f4", "data": (1 << 20, False),
                                        "strides": None, "version": 3}
        k = tlc.compile(SCALE, defines={"N": 64}, arch="sm_90a", cache_dir=self.cache.name)
        with self.assertRaisesRegex(tlc.LaunchError, "no CUDA driver|no CUDA-capable device|no GPU"):
            k(FakeDeviceArray(), FakeDeviceArray(), 1.0)
        f = tlc.compile(os.path.join(EXAMPLES, "split_logsumexp.tl"), arch="sm_90a", cache_dir=self.cache.name)
        with self.assertRaisesRegex(tlc.LaunchError, "no CUDA driver|no CUDA-capable device|no GPU"):
            f(FakeDeviceArray(), FakeDeviceArray())


if __name__ == "__main__":
    unittest.main()
