"""The ports of TileLang's examples (tests/ports), each file as it is, run in tlc's interpreter against
NumPy at small sizes. Values a TileLang user passes to a kernel factory or eager function come as
defines; docs/language.md (13.2) lists the edits each port still needs."""
import os
import unittest

import numpy as np

import tlc
from kernels import ROOT, fp4_to_fp16, int4_to_int8, streamk_defines

PORTS = os.path.join(ROOT, "tests", "ports")
RNG = np.random.default_rng(7)


def port(name):
    return os.path.join(PORTS, name)


def randn(*shape, dtype=np.float16, scale=1.0):
    return (scale * RNG.standard_normal(shape)).astype(dtype)


def empty(*shape, dtype=np.float16):
    return np.full(shape, np.nan, dtype=dtype)


def f64(x):
    return x.astype(np.float64)


def attention(q, k, v, causal, past=0, sinks=None, window=None):
    """softmax(q k^T / sqrt(d)) v over (..., seq, dim) arrays; the queries are the last positions."""
    s = f64(q) @ np.swapaxes(f64(k), -1, -2) / np.sqrt(q.shape[-1])
    qi = np.arange(q.shape[-2])[:, None] + past
    ki = np.arange(k.shape[-2])[None, :]
    keep = np.ones_like(s, dtype=bool)
    if causal:
        keep &= qi >= ki
    if window is not None:
        keep &= qi < ki + window
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    if sinks is not None:
        m = np.maximum(m, sinks)
    e = np.exp(s - m)
    den = e.sum(axis=-1, keepdims=True) + (np.exp(sinks - m) if sinks is not None else 0)
    return e / den @ f64(v)


class GemmPortsTest(unittest.TestCase):
    def check_gemm(self, name, kernel, defines, relu=False):
        a, b = randn(128, 96), randn(96, 128)
        c = empty(128, 128)
        tlc.interpret(port(name), {"A": a, "B": b, "C": c}, kernel=kernel, defines=defines)
        ref = f64(a) @ f64(b)
        np.testing.assert_allclose(f64(c), np.maximum(ref, 0) if relu else ref, rtol=1e-2, atol=2e-2)

    def test_quickstart(self):
        self.check_gemm("quickstart.py", "matmul", {"block_M": 64, "block_N": 64, "block_K": 32}, relu=True)

    def test_example_gemm(self):
        self.check_gemm("example_gemm.py", "matmul", {"block_M": 64, "block_N": 64, "block_K": 32})

    def test_example_dynamic_transposed_b(self):
        a, b = randn(64, 96), randn(128, 96)
        c = empty(64, 128)
        defines = {"block_M": 64, "block_N": 64, "block_K": 32, "trans_A": False, "trans_B": True,
                   "in_dtype": "float16", "out_dtype": "float16", "accum_dtype": "float32", "num_stages": 2,
                   "threads": 128}
        tlc.interpret(port("example_dynamic.py"), {"A": a, "B": b, "C": c}, defines=defines)
        np.testing.assert_allclose(f64(c), f64(a) @ f64(b).T, rtol=1e-2, atol=2e-2)

    def test_split_k(self):
        for name in ("example_tilelang_gemm_splitk.py", "example_tilelang_gemm_splitk_vectorize_atomicadd.py"):
            with self.subTest(name):
                a, b = randn(128, 256), randn(256, 64)
                c = np.zeros((128, 64), dtype=np.float32)  # the kernel adds into C
                tlc.interpret(port(name), {"A": a, "B": b, "C": c},
                              defines={"block_M": 64, "block_N": 64, "block_K": 32, "split_k": 2})
                np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-3, atol=1e-3)

    def test_convolution(self):
        # T.im2col's gather (padding, stride, dilation, the last tile past the last pixel) and the views of the
        # filters and the output as matrices, against a direct NumPy convolution
        for (n, h, w, c, f, k, s, d, p, tiles) in ((2, 9, 7, 32, 64, 3, 1, 1, 1, (64, 64, 32)),
                                                   (1, 11, 10, 64, 32, 3, 2, 2, 2, (32, 32, 64))):
            with self.subTest(stride=s, dilation=d, pad=p):
                image, filters = randn(n, h, w, c), randn(k, k, c, f)
                oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
                out = empty(n, oh, ow, f)
                tlc.interpret(port("example_convolution.py"), {"data": image, "kernel": filters, "out": out},
                              defines={"S": s, "D": d, "P": p, "block_M": tiles[0], "block_N": tiles[1],
                                       "block_K": tiles[2], "num_stages": 2, "threads": 128})
                padded = np.zeros((n, h + 2 * p, w + 2 * p, c))
                padded[:, p:p + h, p:p + w, :] = image
                ref = np.zeros((n, oh, ow, f))
                for kh in range(k):
                    for kw in range(k):
                        win = padded[:, kh * d:kh * d + s * (oh - 1) + 1:s, kw * d:kw * d + s * (ow - 1) + 1:s, :]
                        ref += win @ f64(filters[kh, kw])
                np.testing.assert_allclose(f64(out), ref, rtol=1e-2, atol=5e-2)
        # channels the 32-column tile does not divide: the launch check at the T.im2col
        with self.assertRaisesRegex(tlc.InterpreterError, "C=48"):
            tlc.interpret(port("example_convolution.py"),
                          {"data": randn(1, 8, 8, 48), "kernel": randn(3, 3, 48, 64), "out": empty(1, 8, 8, 64)},
                          defines={"S": 1, "D": 1, "P": 1, "block_M": 64, "block_N": 64, "block_K": 32,
                                   "num_stages": 2, "threads": 128})

    def test_convolution_launch_values(self):
        # stride, dilation and pad as scalar parameters (known at launch, not compiled in), against the
        # same kernel with them compiled in; values out of range refused at launch
        with open(port("example_convolution.py")) as f:
            source = f.read().replace(
                "def convolution(data, kernel, S, D, P,", "def convolution(data, kernel, S: T.int32, D: T.int32, P: T.int32,")
        self.assertIn("S: T.int32", source)
        tiles = {"block_M": 32, "block_N": 32, "block_K": 64, "num_stages": 2, "threads": 128}
        n, h, w, c, f, k = 1, 11, 10, 64, 32, 3
        image, filters = randn(n, h, w, c), randn(k, k, c, f)
        for s, d, p in ((1, 1, 1), (2, 2, 2), (3, 1, 0)):
            with self.subTest(stride=s, dilation=d, pad=p):
                oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
                out, want = empty(n, oh, ow, f), empty(n, oh, ow, f)
                tlc.interpret(source, {"data": image, "kernel": filters, "out": out, "S": s, "D": d, "P": p},
                              defines=tiles)
                tlc.interpret(port("example_convolution.py"), {"data": image, "kernel": filters, "out": want},
                              defines=dict(tiles, S=s, D=d, P=p))
                np.testing.assert_array_equal(out, want)
        # a stride of 0 stops at the output's shape, which divides by it; a negative pad at T.im2col's check
        with self.assertRaisesRegex(tlc.InterpreterError, "division by zero"):
            tlc.interpret(source, {"data": image, "kernel": filters, "out": empty(n, 9, 8, f), "S": 0, "D": 1,
                                   "P": 0}, defines=tiles)
        with self.assertRaisesRegex(tlc.InterpreterError, "P=-1"):
            tlc.interpret(source, {"data": image, "kernel": filters, "out": empty(n, 7, 6, f), "S": 1, "D": 1,
                                   "P": -1}, defines=tiles)

    def test_mla_decode_ws(self):
        # TileLang's hand-pipelined MLA decodes: warpgroups that run at the same time, waiting for each other
        # on mbarriers (the interpreter runs each as a strand of threads, switching at waits): two consumers
        # and a cp.async producer at num_split 1 and 2 (the split kernel and its combine), and the FlashMLA
        # schedule (two warpgroups taking pages in pairs, T.tma_copy); against MLA in float64
        b, h, s, dim, pe = 2, 64, 256, 512, 64
        q, q_pe, kv, k_pe = randn(b, h, dim), randn(b, h, pe), randn(b, s, 1, dim), randn(b, s, 1, pe)
        scores = (np.einsum("bhd,bsd->bhs", f64(q), f64(kv[:, :, 0])) +
                  np.einsum("bhd,bsd->bhs", f64(q_pe), f64(k_pe[:, :, 0]))) / (dim + pe) ** 0.5
        p = np.exp(scores - scores.max(-1, keepdims=True))
        ref = p / p.sum(-1, keepdims=True) @ f64(kv[:, :, 0])
        sizes = {"heads": h, "kv_head_num": 1, "dim": dim, "pe_dim": pe, "block_N": 64, "block_H": 64}
        for name, num_split in (("example_mla_decode_ws.py", 1), ("example_mla_decode_ws.py", 2),
                                ("example_warp_specialize_flashmla.py", 1)):
            with self.subTest(name, num_split=num_split):
                defines = dict(sizes, num_split=num_split)
                if "ws" in name:
                    defines["softmax_scale"] = (dim + pe) ** -0.5
                outs = []
                for reverse in (False, True):  # the other interleaving of the warpgroups: the same bytes
                    args = {"Q": q, "Q_pe": q_pe, "KV": kv, "K_pe": k_pe, "glse": empty(b, h, num_split),
                            "Output_partial": empty(b, h, num_split, dim), "Output": empty(b, h, dim)}
                    tlc.interpret(port(name), args, defines=defines, reverse=reverse)
                    outs.append(args["Output"])
                np.testing.assert_allclose(f64(outs[0]), ref, rtol=1e-2, atol=2e-3)
                np.testing.assert_array_equal(outs[0], outs[1])

    def test_mla_decode_ws_hang(self):
        # a wait for a phase no range completes: on the GPU the kernel hangs; the interpreter names every wait
        with open(port("example_mla_decode_ws.py")) as f:
            source = f.read().replace("T.barrier_wait(bar_k_free[stage], ((i_i & 1) ^ 1))",
                                      "T.barrier_wait(bar_k_free[stage], (i_i & 1))")
        self.assertIn("(bar_k_free[stage], (i_i & 1))", source)
        b, h, s, dim, pe = 1, 64, 128, 512, 64
        args = {"Q": randn(b, h, dim), "Q_pe": randn(b, h, pe), "KV": randn(b, s, 1, dim), "K_pe": randn(b, s, 1, pe),
                "glse": empty(b, h, 1), "Output_partial": empty(b, h, 1, dim), "Output": empty(b, h, dim)}
        with self.assertRaisesRegex(tlc.InterpreterError, r"(?s)every thread range of the block waits.*"
                                    r"threads 0-127 wait here for 'bar_k_ready'\[0\].*threads 256-383 wait here for "
                                    r"'bar_k_free'\[0\]"):
            tlc.interpret(source, args, defines={"heads": h, "kv_head_num": 1, "dim": dim, "pe_dim": pe, "block_N": 64,
                                                 "block_H": 64, "num_split": 1, "softmax_scale": (dim + pe) ** -0.5})

    def test_gemm_persistent(self):
        # 256 tiles over the 132 blocks of driver.get_num_sms() on sm_90a: two waves, T.Persistent's
        # grouped order (and the same order written by hand); the plain kernel beside
        m, n, k = 1024, 2048, 32
        a, b = randn(m, k), randn(k, n)
        ref = f64(a) @ f64(b)
        tiles = {"block_M": 64, "block_N": 128, "block_K": 32, "threads": 128, "num_stages": 2}
        for kernel, extra in (("matmul_persistent", {}), ("matmul_persistent", {"use_persistent_primitive": False}),
                              ("matmul_non_persistent", {})):
            with self.subTest(kernel=kernel, **extra):
                c = empty(m, n)
                tlc.interpret(port("example_gemm_persistent.py"), {"A": a, "B": b, "C": c}, kernel=kernel,
                              defines={**tiles, **extra})
                np.testing.assert_allclose(f64(c), ref, rtol=1e-2, atol=5e-2)

    def test_w4a8(self):
        # int8 activations times int4 weights dequantized in registers to int8, the gemm's A operand from
        # registers (k32); C^T exact in int32
        m, n, k = 64, 64, 256
        a = RNG.integers(-128, 128, (m, k)).astype(np.int8)
        b = RNG.integers(0, 256, (n, k // 2)).astype(np.uint8)
        ct = np.full((n, m), -1, np.int32)
        tlc.interpret(port("example_dequant_gemm_w4a8.py"), {"A": a, "B": b, "Ct": ct}, kernel="matmul_int8xint4",
                      defines={"M": m, "N": n, "K": k, "in_dtype": "int8", "out_dtype": "int32", "accum_dtype": "int32"})
        np.testing.assert_array_equal(ct, (a.astype(np.int64) @ int4_to_int8(b).astype(np.int64).T).T)

    def test_streamk(self):
        # stream-K: 4 of the 16 tiles split over 12 programs by K iterations (a while loop per program, partial
        # tiles added by atomics), then the full tiles, one per program
        m, n, k = 64, 512, 256
        a, b = randn(m, k), randn(n, k)
        c = np.zeros((m, n), np.float32)  # the partial tiles add into C
        defines = streamk_defines(m, n, k, sms=12)
        self.assertGreater(defines["streamk_partial_tiles"], 0)
        tlc.interpret(port("example_tilelang_gemm_streamk.py"), {"A": a, "B": b, "C": c}, defines=defines)
        np.testing.assert_allclose(c, f64(a) @ f64(b).T, rtol=1e-3, atol=1e-3)

    def test_warp_specialize_gemms(self):
        # TileLang's manual warp specialization (T.ws scopes, mbarriers, tma_copy) in program order
        a, b = randn(256, 192), randn(192, 256)
        ref = f64(a) @ f64(b)
        tiles = {"block_M": 128, "block_N": 128, "block_K": 64}
        for name in ("copy_0_gemm_1", "copy_gemm_0_1", "softpipe_stage2", "barrierpipe_stage2"):
            with self.subTest(name=name):
                c = empty(256, 256)
                tlc.interpret(port(f"example_warp_specialize_gemm_{name}.py"), {"A": a, "B": b, "C": c},
                              defines=tiles)
                np.testing.assert_allclose(f64(c), ref, rtol=1e-2, atol=5e-2)

    def test_blocksparse_gemm(self):
        a, b = randn(128, 128), randn(128, 128)
        mask = RNG.random((2, 2, 4)) > 0.5
        c = empty(128, 128)
        defines = {"M": 128, "N": 128, "K": 128, "block_M": 64, "block_N": 64, "block_K": 32, "num_stages": 2,
                   "thread_num": 128, "enable_rasteration": True}
        tlc.interpret(port("example_blocksparse_gemm.py"), {"A": a, "B": b, "BlockMask": mask, "C": c},
                      defines=defines)
        ref = np.zeros((128, 128))
        for i, j, k in np.argwhere(mask):
            ref[64 * i:64 * i + 64, 64 * j:64 * j + 64] += \
                f64(a[64 * i:64 * i + 64, 32 * k:32 * k + 32]) @ f64(b[32 * k:32 * k + 32, 64 * j:64 * j + 64])
        np.testing.assert_allclose(f64(c), ref, rtol=1e-2, atol=2e-2)


    def test_dequant_gemm_fp4(self):
        # packed fp4 weights (two to a uint8) dequantized in a Parallel loop that reads B_local[i, j // 2],
        # then the gemm; and the conversion kernel alone
        m, n, k = 128, 128, 256
        a = randn(m, k)
        qb = RNG.integers(0, 256, (n, k // 2)).astype(np.uint8)
        defines = {"M": m, "N": n, "K": k, "in_dtype": "float16", "out_dtype": "float16", "accum_dtype": "float32",
                   "block_N": 128, "block_K": 128}
        ct = empty(n, m)
        tlc.interpret(port("example_dequant_gemm_fp4_hopper.py"), {"A": a, "B": qb, "Ct": ct}, kernel="matmul",
                      defines=defines)
        np.testing.assert_allclose(f64(ct), f64(fp4_to_fp16(qb)) @ f64(a).T, rtol=1e-2, atol=5e-2)
        c = empty(n, k)
        tlc.interpret(port("example_dequant_gemm_fp4_hopper.py"), {"B": qb, "C": c}, kernel="test_convert",
                      defines=defines)
        np.testing.assert_array_equal(c, fp4_to_fp16(qb))


class ElementwisePortsTest(unittest.TestCase):
    def test_elementwise_add(self):
        a, b = randn(64, 96, dtype=np.float32), randn(64, 96, dtype=np.float32)
        c = empty(64, 96, dtype=np.float32)
        defines = {"block_M": 32, "block_N": 32, "threads": 128, "in_dtype": "float32", "out_dtype": "float32"}
        tlc.interpret(port("example_elementwise_add.py"), {"A": a, "B": b, "C": c}, defines=defines)
        np.testing.assert_array_equal(c, a + b)

    def test_rms_norm_both_kernels(self):
        a = randn(5, 512, dtype=np.float32)
        ref = f64(a) / np.sqrt((f64(a) ** 2).mean(axis=1, keepdims=True) + 1e-12)
        for kernel, defines in (("rms_norm", {"blk_m": 1, "N": 512}),
                                ("rms_norm_splitk", {"blk_m": 1, "blk_k": 128, "N": 512})):
            with self.subTest(kernel):
                b = empty(5, 512, dtype=np.float32)
                tlc.interpret(port("rms_norm.py"), {"A": a, "B": b}, kernel=kernel, defines=defines)
                np.testing.assert_allclose(b, ref, rtol=1e-5, atol=1e-6)

    def test_layernorm_forward_and_backward(self):
        n, d, eps = 64, 256, 1e-5
        defines = {"N": n, "D": d, "in_dtype": "float16", "out_dtype": "float16"}
        x, g, b = randn(n, d, scale=2.0), randn(d), randn(d)
        mu = f64(x).mean(axis=1, keepdims=True)
        rs = 1.0 / np.sqrt(f64(x).var(axis=1, keepdims=True) + eps)
        xhat = (f64(x) - mu) * rs
        y, mean, rstd = empty(n, d), empty(n, dtype=np.float32), empty(n, dtype=np.float32)
        tlc.interpret(port("layernorm.py"), {"X": x, "gamma": g, "beta": b, "Y": y, "Mean": mean, "Rstd": rstd},
                      kernel="_layernorm_fwd", defines=defines)
        np.testing.assert_allclose(f64(y), xhat * f64(g) + f64(b), rtol=1e-2, atol=2e-2)
        np.testing.assert_allclose(mean, mu[:, 0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(rstd, rs[:, 0], rtol=1e-4)
        dy = randn(n, d)
        dx = empty(n, d)
        dgamma, dbeta = np.zeros(d, dtype=np.float32), np.zeros(d, dtype=np.float32)
        tlc.interpret(port("layernorm.py"), {"DY": dy, "X": x, "gamma": g, "Mean": mean, "Rstd": rstd, "DX": dx,
                                             "DGamma": dgamma, "DBeta": dbeta},
                      kernel="_layernorm_bwd", defines={"N": n, "D": d, "in_dtype": "float16"})
        dxhat = f64(dy) * f64(g)
        ref_dx = rs * (dxhat - dxhat.mean(axis=1, keepdims=True) - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))
        np.testing.assert_allclose(f64(dx), ref_dx, rtol=1e-2, atol=2e-2)
        np.testing.assert_allclose(dgamma, (f64(dy) * xhat).sum(axis=0), rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(dbeta, f64(dy).sum(axis=0), rtol=1e-3, atol=1e-3)

    def test_online_softmax(self):
        x = randn(4, 512, scale=3.0)
        y = empty(4, 512)
        tlc.interpret(port("online_softmax.py"), {"X": x, "Y": y}, defines={"M": 4, "N": 512, "BLOCK_N": 256})
        e = np.exp(f64(x) - f64(x).max(axis=1, keepdims=True))
        np.testing.assert_allclose(f64(y), e / e.sum(axis=1, keepdims=True), rtol=1e-2, atol=1e-4)


class AttentionPortsTest(unittest.TestCase):
    def test_nsa_selected_blocks(self):
        # DeepSeek's native sparse attention, the selected-blocks branch: the forward (each token its own
        # blocks, a block after the token skipped, causal inside) and the decode (one position, negative
        # indices skipped; one block a head, since the example's decode does not rescale its output
        # between blocks); 16 query heads a KV head, one warp's 16-row tiles
        b, t, h, g, d, bs, nsel = 1, 48, 2, 16, 32, 16, 2
        q, k, v = randn(b, t, h * g, d), randn(b, t, h, d), randn(b, t, h, d)
        rng = np.random.default_rng(3)
        idx = np.full((b, t, h, nsel), t, dtype=np.int32)  # t: a block past every token, skipped
        for ti in range(t):
            for hi in range(h):
                pick = rng.permutation(ti // bs + 1)[:nsel]
                idx[0, ti, hi, :len(pick)] = pick
        for causal in (True, False):
            with self.subTest(kernel="forward", causal=causal):
                out = empty(b, t, h * g, d)
                tlc.interpret(port("example_tilelang_nsa_fwd.py"), {"Q": q, "K": k, "V": v, "BlockIndices": idx,
                                                                    "Output": out},
                              defines={"dim": d, "is_causal": causal, "block_size": bs, "groups": g,
                                       "selected_blocks": nsel})
                for ti in range(t):
                    for hi in range(h):
                        keys = np.concatenate([np.arange(i * bs, i * bs + bs) for i in idx[0, ti, hi] if i * bs <= ti])
                        if causal:
                            keys = keys[keys <= ti]
                        sc = f64(q[0, ti, hi * g:(hi + 1) * g]) @ f64(k[0, keys, hi]).T / np.sqrt(d)
                        p = np.exp(sc - sc.max(-1, keepdims=True))
                        want = (p / p.sum(-1, keepdims=True)) @ f64(v[0, keys, hi])
                        np.testing.assert_allclose(f64(out[0, ti, hi * g:(hi + 1) * g]), want, rtol=2e-2, atol=2e-2)
        with self.subTest(kernel="decode"):
            b, d = 2, 16
            q, k, v = randn(b, 1, h * g, d), randn(b, t, h, d), randn(b, t, h, d)
            idx = np.array([[[[2, -1], [-1, 1]]], [[[-1, 0], [2, -1]]]], dtype=np.int32)
            out = empty(b, 1, h * g, d)
            tlc.interpret(port("example_tilelang_nsa_decode.py"), {"Q": q, "K": k, "V": v, "BlockIndices": idx,
                                                                   "Output": out},
                          defines={"dim": d, "block_size": bs, "groups": g, "selected_blocks": nsel})
            for bi in range(b):
                for hi in range(h):
                    keys = np.concatenate([np.arange(i * bs, i * bs + bs) for i in idx[bi, 0, hi] if i >= 0])
                    sc = f64(q[bi, 0, hi * g:(hi + 1) * g]) @ f64(k[bi, keys, hi]).T / np.sqrt(d)
                    p = np.exp(sc - sc.max(-1, keepdims=True))
                    want = (p / p.sum(-1, keepdims=True)) @ f64(v[bi, keys, hi])
                    np.testing.assert_allclose(f64(out[bi, 0, hi * g:(hi + 1) * g]), want, rtol=2e-2, atol=2e-2)

    def test_sparse_mla_fwd(self):
        # DeepSeek V3.2's sparse MLA forward: each query attends to the top-k KV rows an index tensor picks
        # (gathered into shared memory by Parallel loops the Pipelined loop stages), causal by position
        b, s, skv, h, dim, tail, topk = 1, 3, 160, 16, 64, 32, 128
        q, kv = randn(b, s, h, dim + tail), randn(b, skv, 1, dim + tail)
        rng = np.random.default_rng(11)
        picks = []
        for t in range(s):  # top-k distinct rows, the query's own position (a key it may see) among them
            perm = rng.permutation(skv)
            at = int(np.nonzero(perm == t)[0][0])
            perm[[0, at]] = perm[[at, 0]]
            picks.append(perm[:topk])
        idx = np.stack(picks).reshape(b, s, 1, topk).astype(np.int32)
        lse = empty(b, s, h, dtype=np.float32)
        bf16 = lambda x: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731
        qb, kvb = bf16(q), bf16(kv)
        outb = np.full((b, s, h, dim), 0x7fc0, dtype=np.uint16)
        tlc.interpret(port("sparse_mla_fwd.py"), {"Q": tlc.Bits(qb, "bfloat16"), "KV": tlc.Bits(kvb, "bfloat16"),
                                                  "Indices": idx, "Output": tlc.Bits(outb, "bfloat16"), "Lse": lse},
                      defines={"heads": h, "dim": dim, "tail_dim": tail, "topk": topk})
        qf = (qb.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        kvf = (kvb.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        got = (outb.astype(np.uint32) << 16).view(np.float32)
        scale = (dim + tail) ** -0.5
        for t in range(s):
            keep = idx[0, t, 0][idx[0, t, 0] <= t]
            sc = qf[0, t] @ kvf[0, keep, 0].T * scale
            p = np.exp(sc - sc.max(-1, keepdims=True))
            want = (p / p.sum(-1, keepdims=True)) @ kvf[0, keep, 0, :dim]
            np.testing.assert_allclose(got[0, t], want, rtol=2e-2, atol=2e-2)
            np.testing.assert_allclose(lse[0, t], np.log2(np.exp(sc - sc.max(-1, keepdims=True)).sum(-1)) +
                                       sc.max(-1) * np.log2(np.e), rtol=1e-3, atol=1e-3)

    def test_sparse_mla_fwd_pipelined(self):
        # TileLang's hand-pipelined form of the same kernel: a producer warpgroup gathering the rows by per-thread
        # cp.async into two stages, two consumer warpgroups, mbarriers between the three; every index a row the
        # query may see (repeats included)
        b, s, skv, h, dim, tail, topk = 1, 3, 40, 64, 512, 64, 128
        q, kv = randn(b, s, h, dim + tail), randn(b, skv, 1, dim + tail)
        rng = np.random.default_rng(5)
        idx = np.stack([rng.integers(0, t + 1, topk) for t in range(s)]).reshape(b, s, 1, topk).astype(np.int32)
        bf16 = lambda x: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731
        qb, kvb = bf16(q), bf16(kv)
        for file in ("sparse_mla_fwd_pipelined.py", "sparse_mla_fwd_seesaw.py"):  # (and its seesaw schedule)
            with self.subTest(file=file):
                self.check_sparse_mla_hand_pipelined(file, qb, kvb, idx, b, s, h, dim, tail, topk)

    def check_sparse_mla_hand_pipelined(self, file, qb, kvb, idx, b, s, h, dim, tail, topk):
        outs = []
        for reverse in (False, True):  # the other interleaving of the warpgroups: the same bytes
            outb = np.full((b, s, h, dim), 0x7fc0, dtype=np.uint16)
            lse = empty(b, s, h, dtype=np.float32)
            tlc.interpret(port(file),
                          {"Q": tlc.Bits(qb, "bfloat16"), "KV": tlc.Bits(kvb, "bfloat16"), "Indices": idx,
                           "q_start_index_s": np.zeros(1, dtype=np.int32), "Output": tlc.Bits(outb, "bfloat16"),
                           "Lse": lse},
                          defines={"heads": h, "dim": dim, "tail_dim": tail, "topk": topk, "kv_stride": 1},
                          reverse=reverse)
            outs.append(outb)
        np.testing.assert_array_equal(outs[0], outs[1])
        outb = outs[0]
        qf = (qb.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        kvf = (kvb.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        got = (outb.astype(np.uint32) << 16).view(np.float32)
        for t in range(s):
            rows = kvf[0, idx[0, t, 0], 0]
            sc = qf[0, t] @ rows.T * (dim + tail) ** -0.5
            p = np.exp(sc - sc.max(-1, keepdims=True))
            np.testing.assert_allclose(got[0, t], (p / p.sum(-1, keepdims=True)) @ rows[:, :dim], rtol=2e-2, atol=2e-2)

    def test_mha_fwd_bshd(self):
        b, s, h, d = 1, 128, 2, 64
        for causal in (False, True):
            with self.subTest(causal=causal):
                q, k, v = randn(b, s, h, d), randn(b, s, h, d), randn(b, s, h, d)
                o = empty(b, s, h, d)
                tlc.interpret(port("example_mha_fwd_bshd.py"), {"Q": q, "K": k, "V": v, "Output": o},
                              defines={"dim": d, "is_causal": causal})
                t = lambda x: np.swapaxes(x, 1, 2)  # noqa: E731  (b, h, s, d)
                ref = np.swapaxes(attention(t(q), t(k), t(v), causal), 1, 2)
                np.testing.assert_allclose(f64(o), ref, rtol=1e-2, atol=1e-2)

    def test_macros_expanded(self):
        # the same attention written with TileLang's @T.macro helpers, each call expanded where it
        # stands (tests/golden/tilelang/macros.py)
        b, s, h, d = 1, 128, 2, 64
        path = os.path.join(ROOT, "tests", "golden", "tilelang", "macros.py")
        for causal in (False, True):
            with self.subTest(causal=causal):
                q, k, v = randn(b, s, h, d), randn(b, s, h, d), randn(b, s, h, d)
                o = empty(b, s, h, d)
                tlc.interpret(path, {"Q": q, "K": k, "V": v, "Output": o}, defines={"dim": d, "is_causal": causal})
                t = lambda x: np.swapaxes(x, 1, 2)  # noqa: E731
                ref = np.swapaxes(attention(t(q), t(k), t(v), causal), 1, 2)
                np.testing.assert_allclose(f64(o), ref, rtol=1e-2, atol=1e-2)

    def test_mha_fwd_bhsd_with_a_longer_cache(self):
        b, h, sq, skv, d = 1, 2, 64, 128, 64
        q, k, v = randn(b, h, sq, d), randn(b, h, skv, d), randn(b, h, skv, d)
        o = empty(b, h, sq, d)
        tlc.interpret(port("example_mha_fwd_bhsd.py"), {"Q": q, "K": k, "V": v, "Output": o},
                      defines={"dim": d, "is_causal": True})
        np.testing.assert_allclose(f64(o), attention(q, k, v, True, past=skv - sq), rtol=1e-2, atol=1e-2)

    def test_gqa_fwd_bshd(self):
        b, s, h, g, d = 1, 128, 4, 2, 64
        q, k, v = randn(b, s, h, d), randn(b, s, h // g, d), randn(b, s, h // g, d)
        o = empty(b, s, h, d)
        tlc.interpret(port("example_gqa_fwd_bshd.py"), {"Q": q, "K": k, "V": v, "Output": o},
                      defines={"dim": d, "is_causal": False, "heads": h, "groups": g})
        t = lambda x: np.swapaxes(x, 1, 2)  # noqa: E731
        ref = attention(t(q), np.repeat(t(k), g, axis=1), np.repeat(t(v), g, axis=1), False)
        np.testing.assert_allclose(f64(o), np.swapaxes(ref, 1, 2), rtol=1e-2, atol=1e-2)

    def test_mha_sink_fwd_bhsd(self):
        b, h, s, d = 1, 2, 128, 64
        for window in (None, 64):
            with self.subTest(window=window):
                q, k, v = randn(b, h, s, d), randn(b, h, s, d), randn(b, h, s, d)
                sinks = randn(h)
                o = empty(b, h, s, d)
                defines = {"dim": d}
                if window is not None:
                    defines["window_size"] = window
                tlc.interpret(port("example_mha_sink_fwd_bhsd.py"),
                              {"Q": q, "K": k, "V": v, "Output": o, "Sinks": sinks}, defines=defines)
                ref = attention(q, k, v, True, sinks=f64(sinks)[None, :, None, None], window=window)
                np.testing.assert_allclose(f64(o), ref, rtol=1e-2, atol=1e-2)

    def test_block_sparse_attn(self):
        # the mask's row block is read element by element in the key loop (a fragment every thread
        # holds whole); blocks the mask drops are skipped, the causal mask applies inside the rest
        b, h, s, d, blk = 1, 2, 256, 64, 64
        nb = s // blk
        for causal in (False, True):
            with self.subTest(causal=causal):
                q, k, v = randn(b, h, s, d), randn(b, h, s, d), randn(b, h, s, d)
                mask = RNG.random((b, h, nb, nb)) < 0.5
                mask |= np.eye(nb, dtype=bool)
                if causal:
                    mask &= np.tril(np.ones((nb, nb), dtype=bool))
                o = empty(b, h, s, d)
                tlc.interpret(port("example_tilelang_block_sparse_attn.py"),
                              {"Q": q, "K": k, "V": v, "BlockSparseMask": mask, "Output": o},
                              defines={"batch": b, "heads": h, "seq_len": s, "dim": d, "downsample_len": nb,
                                       "is_causal": causal})
                keep = np.kron(mask, np.ones((blk, blk))) > 0
                sc = f64(q) @ np.swapaxes(f64(k), -1, -2) / np.sqrt(d)
                if causal:
                    keep &= np.tril(np.ones((s, s), dtype=bool))
                sc = np.where(keep, sc, -np.inf)
                e = np.exp(sc - sc.max(axis=-1, keepdims=True))
                ref = e / e.sum(axis=-1, keepdims=True) @ f64(v)
                np.testing.assert_allclose(f64(o), ref, rtol=1e-2, atol=1e-2)


class TopkSelectorPortTest(unittest.TestCase):
    def test_topk(self):
        # DeepSeek V3.2's top-k selector: a radix select over 8-bit digits in one 1024-thread block per row
        # (histograms by shared atomics, a cumsum among 256 threads at a named barrier, rounds that break)
        x = RNG.standard_normal((3, 4096)).astype(np.float32)
        starts = np.array([0, 100, 7], np.int32)
        ends = np.array([4096, 3000, 60], np.int32)  # the last row: fewer candidates than k
        index = np.full((3, 64), -1, np.int32)
        tlc.interpret(port("topk_selector.py"), {"input": x, "index": index, "starts": starts, "ends": ends},
                      defines={"topk": 64})
        for r in range(3):
            inside = np.arange(starts[r], ends[r])
            want = inside[np.argsort(-x[r, inside], kind="stable")[:64]]
            got = index[r][index[r] >= 0] if ends[r] - starts[r] < 64 else index[r]
            self.assertEqual(sorted(got.tolist()), sorted(want.tolist()), r)


class CumsumPortTest(unittest.TestCase):
    def test_chunk_local_cumsum(self):
        # T.cumsum in shared memory and on a fragment (alloc_fragment(..., scope="shared") is a shared
        # buffer, as in TileLang), forward and reversed, both layouts of G
        b, s, h, c = 2, 256, 3, 64
        for head_first in (False, True):
            for reverse in (False, True):
                for use_fragment in (False, True):
                    with self.subTest(head_first=head_first, reverse=reverse, use_fragment=use_fragment):
                        g = randn(*((b, h, s) if head_first else (b, s, h)))
                        out = empty(*g.shape, dtype=np.float32)
                        tlc.interpret(port("example_cumsum.py"), {"G": g, "G_new": out},
                                      defines={"B": b, "S": s, "H": h, "head_first": head_first, "reverse": reverse,
                                               "use_fragment": use_fragment})
                        x = f64(g) if head_first else np.swapaxes(f64(g), 1, 2)
                        x = x.reshape(b, h, s // c, c)
                        ref = (np.cumsum(x[..., ::-1], axis=-1)[..., ::-1] if reverse else np.cumsum(x, axis=-1))
                        ref = ref.reshape(b, h, s)
                        np.testing.assert_allclose(f64(out), ref if head_first else np.swapaxes(ref, 1, 2),
                                                   rtol=1e-4, atol=1e-4)


class MambaChunkStatePortTest(unittest.TestCase):
    def test_chunk_state(self):
        # the chunk's last dA_cumsum in a (1,) fragment set outside any Parallel loop; x read transposed
        # into the gemm's register operand
        b, l, g, h, p, n, c = 1, 256, 1, 2, 64, 64, 128
        nc = l // c
        bm, x = randn(b, l, g, n), randn(b, l, h, p)
        dt = RNG.random((b, h, nc, c)).astype(np.float16)
        da = np.cumsum(-RNG.random((b, h, nc, c)), axis=-1).astype(np.float16)
        out = empty(b, nc, h, p, n)
        tlc.interpret(port("example_mamba_chunk_state.py"),
                      {"B": bm, "x": x, "dt": dt, "dA_cumsum": da, "Output": out}, defines={"chunk_size": c})
        bh = np.repeat(f64(bm), h // g, axis=2).reshape(b, nc, c, h, n)
        xc = f64(x).reshape(b, nc, c, h, p)
        w = np.transpose(np.exp(f64(da)[..., -1:] - f64(da)) * f64(dt), (0, 2, 3, 1))
        ref = np.einsum("bclhn,bclh,bclhp->bchpn", bh, w, xc)
        np.testing.assert_allclose(f64(out), ref, rtol=2e-2, atol=5e-2)


class AttentionBackwardPortTest(unittest.TestCase):
    def test_mha_bwd_bshd(self):
        # the forward (O and the log2-sum-exp), Delta, the backward (dK, dV; dQ added by atomics into a
        # float32 buffer in make_dq_layout's permuted order) and dQ back to the plain order, against
        # attention's gradients in float64; the buffer itself is checked against the layout's formula
        b, s, h, d = 1, 128, 2, 32
        q, k, v, do = (randn(b, s, h, d) for _ in range(4))
        sizes = {"batch": b, "heads": h, "seq_len": s, "dim": d}
        for causal in (False, True):
            with self.subTest(causal=causal):
                tiles = {**sizes, "is_causal": causal, "block_M": 64, "block_N": 64}
                o, lse = empty(b, s, h, d), empty(b, h, s, dtype=np.float32)
                tlc.interpret(port("example_mha_bwd_bshd.py"), {"Q": q, "K": k, "V": v, "Output": o, "lse": lse},
                              kernel="flashattn_fwd", defines=tiles)
                delta = empty(b, h, s, dtype=np.float32)
                tlc.interpret(port("example_mha_bwd_bshd.py"), {"O": o, "dO": do, "Delta": delta},
                              kernel="flashattn_bwd_preprocess", defines=sizes)
                dq = np.zeros((b, s, h, d), np.float32)
                dk, dv = empty(b, s, h, d), empty(b, s, h, d)
                tlc.interpret(port("example_mha_bwd_bshd.py"), {"Q": q, "K": k, "V": v, "dO": do, "lse": lse,
                              "Delta": delta, "dQ": dq, "dK": dk, "dV": dv}, kernel="flashattn_bwd", defines=tiles)
                dq_out = empty(b, s, h, d)
                tlc.interpret(port("example_mha_bwd_bshd.py"), {"dQ": dq, "dQ_out": dq_out},
                              kernel="flashattn_bwd_postprocess", defines=sizes)

                bh = [np.swapaxes(f64(x), 1, 2) for x in (q, k, v, do)]  # (b, h, s, d)
                qq, kk, vv, dd = bh
                sc = qq @ np.swapaxes(kk, -1, -2) / np.sqrt(d)
                if causal:
                    sc = np.where(np.tril(np.ones((s, s), dtype=bool)), sc, -np.inf)
                p = np.exp(sc - sc.max(axis=-1, keepdims=True))
                p /= p.sum(axis=-1, keepdims=True)
                dp = dd @ np.swapaxes(vv, -1, -2)
                ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) / np.sqrt(d)
                back = lambda x: np.swapaxes(x, 1, 2)  # noqa: E731
                ref = {"O": back(p @ vv), "dQ": back(ds @ kk), "dK": back(np.swapaxes(ds, -1, -2) @ qq),
                       "dV": back(np.swapaxes(p, -1, -2) @ dd)}
                for name, got in (("O", o), ("dQ", dq_out), ("dK", dk), ("dV", dv)):
                    np.testing.assert_allclose(f64(got), ref[name], rtol=1e-2, atol=1e-2, err_msg=name)
                # dQ[bb, l, hh, dd] sits at the row-major position of
                # [bb, l // 8, hh, dd // 8, dd % 2, 4 * (l % 8) + (dd % 8) // 2] in (b, s / 8, h, d / 8, 2, 32)
                bb, ll, hh, cc = np.meshgrid(*(np.arange(n) for n in (b, s, h, d)), indexing="ij")
                pos = np.ravel_multi_index((bb, ll // 8, hh, cc // 8, cc % 2, 4 * (ll % 8) + (cc % 8) // 2),
                                           (b, s // 8, h, d // 8, 2, 32))
                np.testing.assert_allclose(f64(dq.reshape(-1)[pos]), ref["dQ"], rtol=1e-2, atol=1e-2)
                self.assertFalse(np.allclose(f64(dq), ref["dQ"], rtol=1e-2, atol=1e-2))


class MlaDecodePortTest(unittest.TestCase):
    def test_mla_decode_split_and_whole(self):
        # the factory returns its split kernel and combine (through fp16 workspaces) for num_split > 1,
        # its one-kernel function otherwise; both against MLA in float64
        b, h, s, dim, pe = 2, 64, 256, 64, 32
        q, q_pe = randn(b, h, dim), randn(b, h, pe)
        kv, k_pe = randn(b, s, 1, dim), randn(b, s, 1, pe)
        scores = np.einsum("bhd,bsd->bhs", f64(q), f64(kv[:, :, 0])) + np.einsum("bhd,bsd->bhs", f64(q_pe),
                                                                                f64(k_pe[:, :, 0]))
        scores /= np.sqrt(dim + pe)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        ref = np.einsum("bhs,bsd->bhd", e / e.sum(axis=-1, keepdims=True), f64(kv[:, :, 0]))
        for num_split in (1, 2):
            with self.subTest(num_split=num_split):
                o = empty(b, h, dim)
                tlc.interpret(port("example_mla_decode.py"), {"Q": q, "Q_pe": q_pe, "KV": kv, "K_pe": k_pe, "Output": o},
                              defines={"heads": h, "kv_head_num": 1, "dim": dim, "pe_dim": pe, "block_N": 32, "block_H": 64,
                                       "num_split": num_split, "softmax_scale": (dim + pe) ** -0.5})
                np.testing.assert_allclose(f64(o), ref, rtol=1e-2, atol=1e-2)
        # the persistent form: one block per SM walks the split tiles, T.sync_grid(), then the combine
        o, glse, part = empty(b, h, dim), empty(b, h, 2), empty(b, h, 2, dim)
        tlc.interpret(port("example_mla_decode_persistent.py"),
                      {"Q": q, "Q_pe": q_pe, "KV": kv, "K_pe": k_pe, "glse": glse, "Output_partial": part, "Output": o},
                      defines={"batch": b, "heads": h, "kv_head_num": 1, "seqlen_kv": s, "dim": dim, "pe_dim": pe,
                               "block_N": 32, "block_H": 64, "num_split": 2})
        np.testing.assert_allclose(f64(o), ref, rtol=1e-2, atol=1e-2)


def sparse_gqa_decode_inputs(b, h_kv, seqlens, num_split, block=32):
    """A block mask that keeps, in every split of every sequence's blocks, at least one block holding keys
    below the sequence's length (the example's combine takes a split whose log-sum-exp is 0 as empty)."""
    rng = np.random.default_rng(11)
    s = max(seqlens)
    nblocks = (s + block - 1) // block
    mask = np.zeros((b, h_kv, nblocks), dtype=bool)
    per = nblocks // num_split
    for i in range(b):
        valid = (seqlens[i] + block - 1) // block
        for g in range(h_kv):
            for p in range(num_split):
                blocks = [k for k in range(p * per, (p + 1) * per) if k < valid]
                mask[i, g, blocks] = rng.random(len(blocks)) < 0.5
                mask[i, g, rng.choice(blocks)] = True
    return mask


def sparse_gqa_decode_ref(q, k, v, mask, seqlens, block=32):
    """softmax(q k^T / sqrt(d)) v over the keys of the blocks the mask keeps, below each sequence's length."""
    b, h, d = q.shape
    group = h // k.shape[2]
    out = np.zeros((b, h, v.shape[-1]))
    for i in range(b):
        for j in range(h):
            keys = [t for t in range(seqlens[i]) if mask[i, j // group, t // block]]
            sc = f64(k[i, keys, j // group]) @ f64(q[i, j]) / np.sqrt(d)
            e = np.exp(sc - sc.max())
            out[i, j] = e / e.sum() @ f64(v[i, keys, j // group])
    return out


def masked_gqa_decode_ref(q, k, v, mask):
    """One query per head over keys [b, s, g, d] kept where mask[b, s, g] != 0; heads in groups of h / g."""
    b, h, d = q.shape
    g = k.shape[2]
    qq = f64(q).reshape(b, g, h // g, d)
    s = np.einsum("bghd,bsgd->bghs", qq, f64(k)) / np.sqrt(d)
    s = np.where(np.transpose(mask, (0, 2, 1))[:, :, None, :] != 0, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bghs,bsgd->bghd", p / p.sum(-1, keepdims=True), f64(v)).reshape(b, h, d)


class GqaDecodePortTest(unittest.TestCase):
    def test_split_and_combine(self):
        # flash decoding's GQA file: a uint8 key mask; the combine reads lse_local[k, j] in a serial loop over
        # the splits k (an index the Parallel loop's iterations share)
        b, h, g, s, d = 2, 32, 8, 1024, 128
        q, k, v = randn(b, h, d), randn(b, s, g, d), randn(b, s, g, d)
        mask = RNG.integers(0, 2, (b, s, g)).astype(np.uint8)
        for num_split in (8, 4):
            with self.subTest(num_split=num_split):
                o = empty(b, h, d)
                tlc.interpret(port("example_gqa_decode.py"), {"Q": q, "K": k, "V": v, "mask": mask, "Output": o},
                              kernel="flashattn",
                              defines={"batch": b, "heads": h, "groups": g, "seqlen_kv": s, "dim": d, "block_N": 128,
                                       "block_H": 64, "num_split": num_split, "num_stages": 2, "threads": 128})
                np.testing.assert_allclose(f64(o), masked_gqa_decode_ref(q, k, v, mask), rtol=1e-2, atol=2e-3)


class SparseGqaDecodePortTest(unittest.TestCase):
    # two sequences of 256 and 200 keys, heads 16 over 4 kv heads
    B, H, H_KV, D, SEQLENS = 2, 16, 4, 64, [256, 200]

    def chosen_blocks(self, rng, chosen=6):
        """`chosen` of each sequence's key blocks by index, sorted descending, and the same as a mask."""
        idx = np.full((self.B, self.H_KV, chosen), -1, np.int32)
        mask = np.zeros((self.B, self.H_KV, 8), dtype=bool)
        for i in range(self.B):
            for g in range(self.H_KV):
                pick = np.sort(rng.choice((self.SEQLENS[i] + 31) // 32, chosen, replace=False))[::-1]
                idx[i, g] = pick
                mask[i, g, pick] = True
        return idx, mask

    def check(self, name, q, k, v, mask, num_split, args, defines=None):
        """Runs the port's function on args (plus the common ones) and compares with attention over the mask's
        blocks of the keys k, v (each sequence's, in order)."""
        b, h, d = self.B, self.H, self.D
        o = empty(b, h, d)
        args = {"Q": q, "cache_seqlens": np.array(self.SEQLENS, dtype=np.int32),
                "glse": np.zeros((b, h, num_split), np.float32),
                "Output_partial": np.zeros((b, h, num_split, d), np.float32), "Output": o, **args}
        tlc.interpret(port(name), args, kernel="flashattn",
                      defines={"batch": b, "heads": h, "heads_kv": self.H_KV, "dim": d, "dim_v": d, "block_N": 32,
                               "block_H": 64, "num_stages": 2, "threads": 128, **(defines or {})})
        np.testing.assert_allclose(f64(o), sparse_gqa_decode_ref(q, k, v, mask, self.SEQLENS), rtol=1e-2, atol=1e-2)

    def test_varlen_mask(self):
        # 4 splits
        mask = sparse_gqa_decode_inputs(self.B, self.H_KV, self.SEQLENS, 4)
        q, k, v = randn(self.B, self.H, self.D), randn(self.B, 256, self.H_KV, self.D), randn(self.B, 256, self.H_KV, self.D)
        self.check("example_tilelang_sparse_gqa_decode_varlen_mask.py", q, k, v, mask, 4,
                   {"K": k, "V": v, "block_mask": mask})

    def test_varlen_indice(self):
        # 6 of each sequence's key blocks, chosen by index (sorted descending), in 3 splits
        idx, mask = self.chosen_blocks(np.random.default_rng(13))
        q, k, v = randn(self.B, self.H, self.D), randn(self.B, 256, self.H_KV, self.D), randn(self.B, 256, self.H_KV, self.D)
        self.check("example_tilelang_sparse_gqa_decode_varlen_indice.py", q, k, v, mask, 3,
                   {"K": k, "V": v, "block_indices": idx})

    def test_paged(self):
        # the chosen blocks of test_varlen_indice in a cache of 64-token pages, placed by a block table
        rng = np.random.default_rng(17)
        idx, mask = self.chosen_blocks(rng)
        table = rng.permutation(8).astype(np.int32).reshape(self.B, 4)
        kp, vp = randn(8, 64, self.H_KV, self.D), randn(8, 64, self.H_KV, self.D)
        k = kp[table].reshape(self.B, 256, self.H_KV, self.D)  # each sequence's keys in order
        v = vp[table].reshape(self.B, 256, self.H_KV, self.D)
        q = randn(self.B, self.H, self.D)
        self.check("example_tilelang_sparse_gqa_decode_paged.py", q, k, v, mask, 3,
                   {"K": kp, "V": vp, "block_indices": idx, "block_table": table},
                   {"page_block_size": 64, "num_pages": 8})


class LinearAttentionPortsTest(unittest.TestCase):
    B, S, H, D = 1, 128, 2, 64

    def inputs(self):
        shape = (self.B, self.S, self.H, self.D)
        return randn(*shape, scale=0.3), randn(*shape, scale=0.3), randn(*shape)

    def test_retention_fwd(self):
        q, k, v = self.inputs()
        o = empty(1, self.B, self.S, self.H, self.D)
        tlc.interpret(port("example_retention_fwd.py"), {"Q": q, "K": k, "V": v, "O": o},
                      defines={"DK": self.D, "DV": self.D})
        ref = np.zeros((self.B, self.S, self.H, self.D))
        pos = np.arange(self.S)
        for hh in range(self.H):
            gamma = 1 - 2.0 ** (-5 - hh)
            decay = np.where(pos[:, None] >= pos[None, :], gamma ** (pos[:, None] - pos[None, :]), 0)
            scores = f64(q[:, :, hh]) @ np.swapaxes(f64(k[:, :, hh]), -1, -2) * self.D**-0.5
            ref[:, :, hh] = (scores * decay) @ f64(v[:, :, hh])
        np.testing.assert_allclose(f64(o[0]), ref, rtol=2e-2, atol=2e-2)

    def test_linear_attn_fwd(self):
        q, k, v = self.inputs()
        o = np.zeros((self.B, self.S, self.H, self.D), dtype=np.float32)  # the kernel adds into O
        state = empty(self.B, self.H, self.D, self.D, dtype=np.float32)
        tlc.interpret(port("example_linear_attn_fwd.py"), {"Q": q, "K": k, "V": v, "O": o, "final_state": state},
                      defines={"DK": self.D, "DV": self.D})
        causal = np.tril(np.ones((self.S, self.S)))
        for hh in range(self.H):
            qh, kh, vh = f64(q[:, :, hh]), f64(k[:, :, hh]), f64(v[:, :, hh])
            ref = (qh @ np.swapaxes(kh, -1, -2) * self.D**-0.5 * causal) @ vh
            np.testing.assert_allclose(o[:, :, hh], ref, rtol=2e-2, atol=2e-2)
            np.testing.assert_allclose(state[:, hh], np.swapaxes(kh, -1, -2) @ vh, rtol=2e-2, atol=2e-2)


if __name__ == "__main__":
    unittest.main()


class HadamardPortTest(unittest.TestCase):
    def test_rows(self):
        # thread-indexed code: a row's chunk per thread, warp shuffles, then an exchange through shared memory
        # (n = 1024 and up: more than one warp; 8192: 256 threads of 32 values)
        for n in (256, 1024, 8192):
            with self.subTest(n=n):
                x = RNG.standard_normal((3, n)).astype(np.float32)
                y = np.full_like(x, np.nan)
                tlc.interpret(port("example_hadamard.py"), {"A": x, "B": y}, defines={"n": n, "dtype": "float32"})
                ref = f64(x) @ hadamard_matrix(n).T
                np.testing.assert_allclose(f64(y), ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def hadamard_matrix(n):
    """The n x n Hadamard matrix in Sylvester's order (the port's reference builds the same)."""
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def vertical_slash_inputs(b, h, s, vs, ss, rng):
    """Per 64-query block x: slash blocks x and up to ss - 1 random earlier ones (offsets descending), and up to
    vs earlier key columns (ascending); the arrays the MInference kernel takes, and the (s, s) count of how many
    times each query attends to each key (a key in both sets counts twice, as the kernel adds it twice)."""
    nb = s // 64
    bc, bo = np.zeros((b, h, nb), np.int32), np.zeros((b, h, nb, ss), np.int32)
    cc, ci = np.zeros((b, h, nb), np.int32), np.zeros((b, h, nb, vs), np.int32)
    times = np.zeros((b, h, s, s))
    q_pos = np.arange(s)[:, None]
    for i in range(b):
        for g in range(h):
            for x in range(nb):
                blocks = [x] + sorted(rng.permutation(x)[: rng.integers(0, min(x, ss - 1) + 1)], reverse=True)
                bc[i, g, x], bo[i, g, x, : len(blocks)] = len(blocks), np.array(blocks) * 64
                cols = np.sort(rng.choice(64 * x, rng.integers(0, min(64 * x, vs) + 1), replace=False)) if x else []
                cc[i, g, x], ci[i, g, x, : len(cols)] = len(cols), cols
                rows = slice(64 * x, 64 * x + 64)
                for o in blocks:
                    keys = np.arange(64 * o, 64 * o + 64)
                    times[i, g, rows, keys[0]:keys[-1] + 1] += q_pos[rows] >= keys[None, :]
                times[i, g, rows, cols] += 1
    return (bc, bo, cc, ci), times


def weighted_attention(q, k, v, times):
    """softmax over keys with multiplicities `times` (0: not attended), in float64."""
    s = np.einsum("bhqd,bhkd->bhqk", f64(q), f64(k)) / np.sqrt(q.shape[-1])
    s = np.where(times > 0, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True)) * times
    return np.einsum("bhqk,bhkd->bhqd", p / p.sum(-1, keepdims=True), f64(v))


class VerticalSlashPortTest(unittest.TestCase):
    def test_blocks_and_columns(self):
        # TileLang's manual warp specialization written as `if tid >= 128`, producer and consumer each looping
        # over the blocks (tlc fuses the two loops), then the vertical columns gathered by Parallel loops
        b, h, s, d, vs, ss = 1, 2, 256, 64, 64, 4
        rng = np.random.default_rng(31)
        idx, times = vertical_slash_inputs(b, h, s, vs, ss, rng)
        q, k, v = randn(b, h, s, d, scale=0.5), randn(b, h, s, d, scale=0.5), randn(b, h, s, d)
        o = empty(b, h, s, d)
        tlc.interpret(port("example_vertical_slash_sparse_attn.py"),
                      {"Q": q, "K": k, "V": v, "Output": o, "BlockCount": idx[0], "BlockOffset": idx[1],
                       "ColumnCount": idx[2], "ColumnIndex": idx[3]},
                      defines={"batch": b, "heads": h, "seq_len": s, "dim": d, "vertical_size": vs, "slash_size": ss})
        np.testing.assert_allclose(f64(o), weighted_attention(q, k, v, times), rtol=1e-2, atol=2e-3)
