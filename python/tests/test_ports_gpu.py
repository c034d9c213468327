"""The ports of TileLang's examples (tests/ports) compiled by tlc and run on the GPU against torch, with
the defines of tests/ports/ptx_defines.txt, so that the code generated for them (not only the
interpreter's reading, test_ports.py) is checked. Skipped where torch or a CUDA device is missing."""
import os
import unittest

import tlc
from kernels import (ROOT, fp4_to_fp16, int4_to_int8, mhc_pre_reference, sparse_mla_grads, sparse_mla_reference,
                     streamk_defines)

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    HAVE_GPU = False

PORTS = os.path.join(ROOT, "tests", "ports")


def port(name):
    return os.path.join(PORTS, name)


def randn(*shape, dtype=None, scale=1.0):
    return (scale * torch.randn(*shape, device="cuda")).to(dtype or torch.float16)


def attention(q, k, v, causal, past=0, sinks=None, window=None):
    """softmax(q k^T / sqrt(d)) v over (..., seq, dim) tensors in float64; the queries are the last
    positions; sinks add exp(sink - max) to each row's denominator."""
    q, k, v = q.double(), k.double(), v.double()
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    qi = torch.arange(q.shape[-2], device="cuda")[:, None] + past
    ki = torch.arange(k.shape[-2], device="cuda")[None, :]
    keep = torch.ones_like(s, dtype=torch.bool)
    if causal:
        keep &= qi >= ki
    if window is not None:
        keep &= qi < ki + window
    s = s.masked_fill(~keep, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    if sinks is not None:
        m = torch.maximum(m, sinks)
    e = torch.exp(s - m)
    den = e.sum(dim=-1, keepdim=True) + (torch.exp(sinks - m) if sinks is not None else 0)
    return e / den @ v


@unittest.skipUnless(HAVE_GPU, "needs torch with a CUDA device")
class PortsOnGpuTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(7)

    def close(self, out, ref, rtol=1e-2, atol=1e-2):
        torch.testing.assert_close(out.double(), ref.double(), rtol=rtol, atol=atol)

    def test_gemm_fp8(self):
        # TileLang's float8 gemms (A [M, K], B [N, K]): the plain one stores float8, the 2xAcc one adds
        # the tensor cores' partial sums into a float32 accumulator every 128 of K (DeepGEMM's promotion)
        if torch.cuda.get_device_capability(0) != (9, 0):
            self.skipTest("float8 gemms need sm_90a")
        m, n, kk = 512, 384, 2048
        a = torch.randn(m, kk, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, kk, device="cuda").to(torch.float8_e4m3fn)
        ref = a.double() @ b.double().T
        tiles = {"block_M": 128, "block_N": 128, "block_K": 64, "dtype": "float8_e4m3"}
        c8 = torch.zeros(m, n, device="cuda", dtype=torch.float8_e4m3fn)
        tlc.compile(port("example_tilelang_gemm_fp8.py"), defines=tiles)(a, b, c8)
        # one float8 rounding of a sum the tensor cores add with fewer bits than float32
        err = (c8.double() - ref.clamp(-448, 448)).abs()
        self.assertTrue(bool((err <= 2 ** -4 * ref.abs() + 8e-3 * ref.abs().max()).all()), err.max().item())
        c = torch.full((m, n), float("nan"), device="cuda")
        tlc.compile(port("example_tilelang_gemm_fp8_2xAcc.py"), defines=tiles)(a, b, c)
        promoted = ((c.double() - ref).norm() / ref.norm()).item()
        self.close(c, ref, rtol=0, atol=1e-3 * ref.abs().max().item())
        # the promotion is what makes the float32 result this close: the plain sum is further off
        c_plain = torch.full((m, n), float("nan"), device="cuda")
        k = tlc.compile(os.path.join(ROOT, "tests", "golden", "tilelang", "fp8.py"), kernel="fp8_gemm",
                        defines={"block_K": 64})
        k(a, b, c_plain)
        plain = ((c_plain.double() - ref).norm() / ref.norm()).item()
        self.assertLess(promoted, plain)

    def test_fp8_lighting_indexer(self):
        # DeepSeek V3.2's lightning indexer: float8 scores of 2 queries x 64 heads per block against 256
        # keys (wgmma), a fragment seen as [keys, queries, heads] through T.reshape, ReLU times the
        # head weights summed over heads, each query's key range; then the rest of each row -inf
        if torch.cuda.get_device_capability(0) != (9, 0):
            self.skipTest("float8 gemms on sm_90")
        s, skv, h, d = 300, 1500, 64, 128
        q = torch.randn(s, h, d, device="cuda").to(torch.float8_e4m3fn)
        kv_f = torch.randn(skv, d, device="cuda")
        kv_scales = kv_f.abs().amax(1) / 448
        kv = (kv_f / kv_scales[:, None]).to(torch.float8_e4m3fn)
        weights = torch.randn(s, h, device="cuda")
        ke = torch.randint(skv // 2, skv + 1, (s,), device="cuda", dtype=torch.int32)
        ks = (ke - torch.randint(1, skv // 2, (s,), device="cuda", dtype=torch.int32)).clamp(min=0)
        path = port("fp8_lighting_indexer.py")
        logits = torch.full((s, skv), float("nan"), device="cuda")
        tlc.compile(path, kernel="mqa_attn_return_logits", defines={"heads": h, "index_dim": d})(
            q.view(s * h, d), kv, kv_scales, weights, ks, ke, logits)
        tlc.compile(path, kernel="clean_logits_")(logits, ks, ke)
        scores = torch.einsum("shd,nd->hsn", q.double(), kv.double() * kv_scales.double()[:, None])
        ref = (scores.clamp(min=0) * weights.double().t()[:, :, None]).sum(0)
        cols = torch.arange(skv, device="cuda")[None, :]
        inside = (cols >= ks[:, None]) & (cols < ke[:, None])
        self.assertTrue(bool((logits[~inside] == float("-inf")).all()))
        self.close(logits[inside], ref[inside], rtol=1e-2, atol=1e-2 * ref[inside].abs().max().item())

    def test_topk_selector(self):
        # DeepSeek V3.2's top-k selector against torch.topk (as the example's own test): the same index sets
        b, s, k = 64, 32 * 1024, 2048
        x = torch.randn(b, s, device="cuda")
        starts = torch.zeros(b, device="cuda", dtype=torch.int32)
        ends = torch.full((b,), s, device="cuda", dtype=torch.int32)
        ends[1::2] = torch.randint(k, s, (b // 2,), device="cuda", dtype=torch.int32)
        for backend in ("direct", "llvm"):
            with self.subTest(backend=backend):
                index = torch.full((b, k), -1, device="cuda", dtype=torch.int32)
                tlc.compile(port("topk_selector.py"), defines={"topk": k}, backend=backend)(x, index, starts, ends)
                for r in range(b):
                    e = int(ends[r])
                    want = torch.topk(x[r, :e], k).indices.sort().values.int()
                    torch.testing.assert_close(index[r].sort().values, want, rtol=0, atol=0)

    def test_w4a8(self):
        # the example's own sizes and tiles, and larger ones; exact int32 against float64 sums
        m, n, kk = 128, 256, 256
        a = torch.randint(-128, 128, (m, kk), device="cuda", dtype=torch.int8)
        b = torch.randint(0, 256, (n, kk // 2), device="cuda", dtype=torch.uint8)
        w = torch.from_numpy(int4_to_int8(b.cpu().numpy())).cuda()
        want = (a.double() @ w.double().T).T.int()
        sizes = {"M": m, "N": n, "K": kk, "in_dtype": "int8", "out_dtype": "int32", "accum_dtype": "int32"}
        for tiles in ({}, {"block_M": 64, "block_N": 64, "block_K": 128, "num_stages": 2}):
            for backend in ("direct", "llvm"):
                for arch in ("sm_90a", "sm_80") if torch.cuda.get_device_capability(0) == (9, 0) else ("sm_80",):
                    with self.subTest(backend=backend, arch=arch, **tiles):
                        ct = torch.full((n, m), -1, device="cuda", dtype=torch.int32)
                        tlc.compile(port("example_dequant_gemm_w4a8.py"), kernel="matmul_int8xint4", arch=arch,
                                    backend=backend, defines={**sizes, **tiles})(a, b, ct)
                        torch.testing.assert_close(ct, want, rtol=0, atol=0)

    def test_streamk(self):
        # the stream-K GEMM with the example's own sizes over 108 programs, and over 132 (an H100's SMs)
        m, n, kk = 256, 1024, 512
        a, b = randn(m, kk), randn(n, kk)
        ref = a.double() @ b.double().T
        for sms in (108, 132):
            for backend in ("direct", "llvm"):
                with self.subTest(sms=sms, backend=backend):
                    c = torch.zeros(m, n, device="cuda")
                    tlc.compile(port("example_tilelang_gemm_streamk.py"), defines=streamk_defines(m, n, kk, sms=sms),
                                backend=backend)(a, b, c)
                    self.close(c, ref, rtol=1e-3, atol=1e-2)

    def test_deepseek_v32_fp8_kernels(self):
        # DeepSeek V3.2's inference kernels: block-wise float8 quantization of activations, the float8
        # GEMM with per-128-block scales (M = 32 per block: mma.sync m16n8k32), the indexer's scores
        if torch.cuda.get_device_capability(0) != (9, 0):
            self.skipTest("float8 gemms on sm_90")
        path = port("deepseek_v32_inference_kernel.py")
        m, n, kk = 100, 512, 1024
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 3
        for round_scale in (False, True):
            with self.subTest(kernel="act_quant_kernel", round_scale=round_scale):
                y = torch.zeros(m, n, device="cuda", dtype=torch.float8_e4m3fn)
                s = torch.full((m, n // 128), float("nan"), device="cuda")
                tlc.compile(path, kernel="act_quant_kernel", defines={"N": n, "round_scale": round_scale})(x, y, s)
                amax = x.float().view(m, n // 128, 128).abs().amax(-1).clamp(min=1e-4)
                want_s = amax / 448
                if round_scale:  # the next power of two
                    want_s = torch.exp2(torch.ceil(torch.log2(want_s)))
                torch.testing.assert_close(s, want_s, rtol=1e-6, atol=0)
                want_y = (x.float().view(m, n // 128, 128) / want_s[..., None]).clamp(-448, 448).view(m, n)
                # one float8 step (2^-3 relative) where the division rounds across a rounding boundary
                err = (y.float() - want_y.to(torch.float8_e4m3fn).float()).abs()
                self.assertTrue(bool((err <= 2 ** -3 * want_y.abs() + 2 ** -9).all()), err.max().item())
        with self.subTest(kernel="fp8_gemm_kernel"):
            a = torch.randn(m, kk, device="cuda").to(torch.float8_e4m3fn)
            b = torch.randn(n, kk, device="cuda").to(torch.float8_e4m3fn)
            sa = torch.rand(m, kk // 128, device="cuda") + 0.5
            sb = torch.rand(n // 128, kk // 128, device="cuda") + 0.5
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            tlc.compile(path, kernel="fp8_gemm_kernel", defines={"N": n, "K": kk})(a, b, c, sa, sb)
            ad = a.double().view(m, kk // 128, 128) * sa.double()[..., None]
            bd = b.double().view(n // 128, 128, kk // 128, 128) * sb.double()[:, None, :, None]
            ref = ad.view(m, kk) @ bd.view(n, kk).T
            self.close(c, ref, rtol=2 ** -7, atol=2e-3 * ref.abs().max().item())
        with self.subTest(kernel="fp8_index_kernel"):
            bb, mq, h, d, nk = 2, 3, 64, 128, 1000
            q = torch.randn(bb, mq, h, d, device="cuda").to(torch.float8_e4m3fn)
            q_s = torch.rand(bb, mq, h, device="cuda")
            k = torch.randn(bb, nk, d, device="cuda").to(torch.float8_e4m3fn)
            k_s = torch.rand(bb, nk, device="cuda")
            o = torch.full((bb, mq, nk), float("nan"), device="cuda")
            tlc.compile(path, kernel="fp8_index_kernel", defines={"h": h, "d": d})(q, q_s, k, k_s, o)
            logits = torch.einsum("bmhd,bnd->bmhn", q.double(), k.double()).clamp(min=0)
            ref = (logits * q_s.double()[..., None]).sum(2) * k_s.double()[:, None, :]
            self.close(o, ref, rtol=1e-3, atol=2e-3 * ref.abs().max().item())

    def test_mha_fwd_bhsd(self):
        # three stages: P @ V deferred to the next iteration (its V copy stands further down the body)
        b, h, sq, skv, d = 2, 4, 256, 384, 64
        for stages in (1, 3):
            with self.subTest(stages=stages):
                k = tlc.compile(port("example_mha_fwd_bhsd.py"),
                                defines={"dim": d, "is_causal": True, "num_stages": stages})
                q, kk, v = randn(b, h, sq, d), randn(b, h, skv, d), randn(b, h, skv, d)
                o = torch.full_like(q, float("nan"))
                k(q, kk, v, o)
                self.close(o, attention(q, kk, v, True, past=skv - sq))

    def test_gqa_fwd_bshd(self):
        b, s, h, g, d = 2, 517, 8, 2, 128
        for stages in (2, 3):
            with self.subTest(stages=stages):
                k = tlc.compile(port("example_gqa_fwd_bshd.py"),
                                defines={"dim": d, "is_causal": False, "heads": h, "groups": g, "num_stages": stages})
                q, kk, v = randn(b, s, h, d), randn(b, s, h // g, d), randn(b, s, h // g, d)
                o = torch.full_like(q, float("nan"))
                k(q, kk, v, o)
                t = lambda x: x.transpose(1, 2)  # noqa: E731  (b, h, s, d)
                ref = attention(t(q), t(kk).repeat_interleave(g, dim=1), t(v).repeat_interleave(g, dim=1), False)
                self.close(o, t(ref))

    def test_mha_sink_fwd_bhsd(self):
        b, h, s = 1, 4, 512
        for d, window, defines in ((128, None, {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}),
                                   (64, 128, {"window_size": 128})):
            with self.subTest(dim=d, window=window):
                k = tlc.compile(port("example_mha_sink_fwd_bhsd.py"), defines={"dim": d, **defines})
                q, kk, v = randn(b, h, s, d), randn(b, h, s, d), randn(b, h, s, d)
                sinks = randn(h)
                o = torch.full_like(q, float("nan"))
                k(q, kk, v, o, sinks)
                ref = attention(q, kk, v, True, sinks=sinks.double()[None, :, None, None], window=window)
                self.close(o, ref)

    def test_block_sparse_attn(self):
        # a bool block mask per row block, copied into a fragment every thread holds whole and read in
        # the key loop; the reference masks the scores with the mask's blocks (and the causal mask)
        b, h, s, d, blk = 2, 4, 1024, 64, 64
        nb = s // blk
        for causal in (False, True):
            with self.subTest(causal=causal):
                q, kk, v = randn(b, h, s, d), randn(b, h, s, d), randn(b, h, s, d)
                mask = torch.rand(b, h, nb, nb, device="cuda") < 0.4
                mask |= torch.eye(nb, device="cuda", dtype=torch.bool)
                if causal:
                    mask = mask.tril()
                k = tlc.compile(port("example_tilelang_block_sparse_attn.py"),
                                defines={"batch": b, "heads": h, "seq_len": s, "dim": d, "downsample_len": nb,
                                         "is_causal": causal})
                o = torch.full_like(q, float("nan"))
                k(q, kk, v, mask, o)
                keep = torch.kron(mask.double(), torch.ones(blk, blk, device="cuda", dtype=torch.float64)) > 0
                if causal:
                    keep &= torch.ones(s, s, device="cuda", dtype=torch.bool).tril()
                sc = (q.double() @ kk.double().transpose(-1, -2) / d ** 0.5).masked_fill(~keep, float("-inf"))
                self.close(o, torch.softmax(sc, dim=-1) @ v.double())

    def test_chunk_local_cumsum(self):
        # T.cumsum over 64-token chunks of a gate tensor, in shared memory and on a fragment, both ways
        b, s, h, c = 4, 4096, 16, 64
        for reverse in (False, True):
            for use_fragment in (False, True):
                with self.subTest(reverse=reverse, use_fragment=use_fragment):
                    k = tlc.compile(port("example_cumsum.py"), defines={"B": b, "S": s, "H": h, "reverse": reverse,
                                                                        "use_fragment": use_fragment})
                    g = randn(b, s, h)
                    out = torch.full((b, s, h), float("nan"), device="cuda")
                    k(g, out)
                    x = g.double().transpose(1, 2).reshape(b, h, s // c, c)
                    ref = x.flip(-1).cumsum(-1).flip(-1) if reverse else x.cumsum(-1)
                    self.close(out, ref.reshape(b, h, s).transpose(1, 2), rtol=1e-4, atol=1e-3)

    def test_mamba_chunk_state(self):
        # symbolic sizes (TileLang's T.const dims), a (1,) fragment set outside Parallel loops, a
        # transposed fragment read feeding the gemm's register operand; two groups of heads
        b, l, g, h, p, n, c = 2, 1024, 2, 8, 64, 128, 256
        nc = l // c
        k = tlc.compile(port("example_mamba_chunk_state.py"))
        bm, x = randn(b, l, g, n), randn(b, l, h, p)
        dt = torch.rand(b, h, nc, c, device="cuda").half()
        da = (-torch.rand(b, h, nc, c, device="cuda")).cumsum(-1).half()
        out = torch.full((b, nc, h, p, n), float("nan"), device="cuda", dtype=torch.float16)
        k(bm, x, dt, da, out)
        bh = bm.double().repeat_interleave(h // g, dim=2).reshape(b, nc, c, h, n)
        w = (torch.exp(da.double()[..., -1:] - da.double()) * dt.double()).permute(0, 2, 3, 1)
        ref = torch.einsum("bclhn,bclh,bclhp->bchpn", bh, w, x.double().reshape(b, nc, c, h, p))
        self.close(out, ref, rtol=2e-2, atol=5e-2)

    def test_mhc_pre(self):
        # DeepSeek mHC's pre block: the tf32 gemm and sums of squares (a fragment read at a serial loop's
        # offset, a 32-row tile of the 24-row weights masked), then the fused kernel whose one warp computes the
        # post mix and the Sinkhorn-normalized combination while two warps apply the pre mix, split by
        # `if T.get_thread_binding() < 32:` (thread ranges)
        for tokens, hidden in ((64, 1280), (300, 2560)):
            with self.subTest(tokens=tokens, hidden=hidden):
                hc, args = 4, (1e-6, 1e-6, 1e-6, 2.0, 20)
                residual = torch.randn(tokens, hc, hidden, device="cuda").bfloat16()
                fn = torch.randn(hc * (2 + hc), hc * hidden, device="cuda") / (hc * hidden) ** 0.5
                hc_scale, hc_base = torch.rand(3, device="cuda"), torch.randn(hc * (2 + hc), device="cuda")
                flat = residual.flatten(-2, -1).float()
                mul = torch.full((1, tokens, hc * (2 + hc)), float("nan"), device="cuda")
                sqrsum = torch.full((1, tokens), float("nan"), device="cuda")
                g = tlc.compile(port("example_mhc_pre.py"), kernel="mhc_pre_gemm_sqrsum_tilelang",
                                defines={"hc_mult3": hc * (2 + hc), "hc_hidden_size": hc * hidden})
                g(residual.view(tokens, hc * hidden), fn, mul[0], sqrsum[0])
                # tf32 products: the gemm within tf32's rounding of torch's float32 one
                self.close(mul[0], flat @ fn.T, rtol=1e-2, atol=2e-2)
                self.close(sqrsum[0], flat.square().sum(-1), rtol=1e-4, atol=1e-2)
                post = torch.full((tokens, hc), float("nan"), device="cuda")
                comb = torch.full((tokens, hc * hc), float("nan"), device="cuda")
                layer_input = torch.full((tokens, hidden), float("nan"), device="cuda").bfloat16()
                k = tlc.compile(port("example_mhc_pre.py"), kernel="mhc_pre_big_fuse_tilelang",
                                defines={"hidden_size": hidden, "rms_eps": args[0], "hc_pre_eps": args[1],
                                         "hc_sinkhorn_eps": args[2], "hc_post_mult_value": args[3],
                                         "sinkhorn_repeat": args[4], "n_splits": 1})
                k(mul, sqrsum, hc_scale, hc_base, residual, post, comb, layer_input)
                for out, want in zip((post, comb, layer_input), mhc_pre_reference(residual, fn, hc_scale, hc_base, *args)):
                    self.close(out, want, rtol=2e-2, atol=2e-2)

    def test_sparse_mla_fwd(self):
        # DeepSeek V3.2's sparse MLA forward against a float64 torch reference: the top-k KV rows of each query
        # gathered by the Pipelined loop's cp.async chunks, the rows an index past the cache's end pads read as 0
        # and masked, 128 heads (two blocks a query) and 16 (padded to the 16-row tile)
        torch.manual_seed(0)
        b, s, skv, dim, tail, topk = 2, 80, 256, 512, 64, 128
        for h in (128, 16):
            with self.subTest(heads=h):
                q = torch.randn(b, s, h, dim + tail, device="cuda", dtype=torch.bfloat16)
                kv = torch.randn(b, skv, 1, dim + tail, device="cuda", dtype=torch.bfloat16)
                idx = torch.full((b, s, 1, topk), skv, device="cuda", dtype=torch.int32)
                for bi in range(b):
                    for t in range(s):
                        pick = torch.randperm(max(1, t + 40))[:topk]
                        idx[bi, t, 0, :len(pick)] = pick
                out = torch.full((b, s, h, dim), float("nan"), device="cuda", dtype=torch.bfloat16)
                lse = torch.full((b, s, h), float("nan"), device="cuda", dtype=torch.float32)
                kern = tlc.compile(port("sparse_mla_fwd.py"), defines={"heads": h, "dim": dim, "tail_dim": tail,
                                                                       "topk": topk})
                kern(q, kv, idx, out, lse)
                want, want_lse = sparse_mla_reference(q, kv, idx)
                self.close(out, want, rtol=2e-2, atol=2e-2)
                self.close(lse, want_lse, rtol=1e-3, atol=1e-3)

    def test_sparse_mla_fwd_pipelined(self):
        # TileLang's hand-pipelined form of the same kernel (a producer warpgroup gathering rows with per-thread
        # cp.async, two consumers, mbarriers; the branches run as written) against the float64 reference, 128
        # heads (two blocks a query) and 64; every index names a visible row (a row it masks is not loaded,
        # and its scores are -inf plus whatever the stage held before, as in TileLang)
        # (and its seesaw schedule: the pages in pairs, one each consumer, maxima and sums exchanged)
        torch.manual_seed(0)
        b, s, skv, dim, tail, topk = 2, 80, 256, 512, 64, 128
        for h, file in ((128, "sparse_mla_fwd_pipelined.py"), (64, "sparse_mla_fwd_pipelined.py"),
                        (128, "sparse_mla_fwd_seesaw.py"), (64, "sparse_mla_fwd_seesaw.py")):
            with self.subTest(heads=h, file=file):
                q = torch.randn(b, s, h, dim + tail, device="cuda", dtype=torch.bfloat16)
                kv = torch.randn(b, skv, 1, dim + tail, device="cuda", dtype=torch.bfloat16)
                pos = torch.arange(s, device="cuda")[None, :, None, None]
                idx = (torch.rand(b, s, 1, topk, device="cuda") * (pos + 1)).int()
                start = torch.zeros(1, device="cuda", dtype=torch.int32)
                out = torch.full((b, s, h, dim), float("nan"), device="cuda", dtype=torch.bfloat16)
                lse = torch.empty((b, s, h), device="cuda", dtype=torch.float32)
                kern = tlc.compile(port(file),
                                   defines={"heads": h, "dim": dim, "tail_dim": tail, "topk": topk, "kv_stride": 1})
                kern(q, kv, idx, start, out, lse)
                want, _ = sparse_mla_reference(q, kv, idx)
                self.close(out, want, rtol=2e-2, atol=2e-2)

    def test_sparse_mla_bwd(self):
        # DeepSeek V3.2's sparse MLA backward (Delta, the backward with dKV by atomics, dKV's conversion)
        # against float64 autograd through the forward's reference: 64 and 128 heads (one and two head
        # blocks), the padding index past the end and rows past the causal position masked
        dim, tail = 512, 64
        for (b, s, s_kv, h, topk) in ((1, 64, 128, 64, 64), (2, 48, 96, 128, 32)):
            with self.subTest(batch=b, seq=s, seq_kv=s_kv, heads=h, topk=topk):
                q, kv = randn(b, s, h, dim + tail, dtype=torch.bfloat16), randn(b, s_kv, 1, dim + tail, dtype=torch.bfloat16)
                do = randn(b, s, h, dim, dtype=torch.bfloat16)
                idx = torch.full((b, s, 1, topk), s_kv, device="cuda", dtype=torch.int32)
                gen = torch.Generator().manual_seed(7)
                for bi in range(b):
                    for t in range(s):
                        pick = torch.randperm(max(1, t), generator=gen)[:topk]
                        idx[bi, t, 0, :len(pick)] = pick.to(torch.int32).cuda()
                out, lse, want_dq, want_dkv = sparse_mla_grads(q, kv, do, idx, dim)
                pre = tlc.compile(port("sparse_mla_bwd.py"), kernel="preprocess")
                delta = torch.empty((b, s, h), device="cuda", dtype=torch.float32)
                pre(out.to(torch.bfloat16), do, delta)
                bwd = tlc.compile(port("sparse_mla_bwd.py"), kernel="bwd",
                                  defines={"H": h, "D": dim, "D_tail": tail, "topk": topk})
                dkv = torch.zeros((b, s_kv, 1, dim + tail), device="cuda", dtype=torch.float32)
                dq = torch.full((b, s, h, dim + tail), float("nan"), device="cuda", dtype=torch.bfloat16)
                bwd(q, kv, do, idx, lse.float(), delta, dkv, dq)
                post = tlc.compile(port("sparse_mla_bwd.py"), kernel="postprocess", defines={"D": dim, "D_tail": tail})
                dkv_out = torch.full((b, s_kv, 1, dim + tail), float("nan"), device="cuda", dtype=torch.bfloat16)
                post(dkv, dkv_out)
                self.close(dq, want_dq, rtol=3e-2, atol=3e-2 * want_dq.abs().max().item())
                self.close(dkv_out, want_dkv, rtol=3e-2, atol=3e-2 * want_dkv.abs().max().item())

    def test_convolution(self):
        # T.im2col and the tensor views on the GPU against torch.conv2d: padding, stride, dilation, a last
        # tile past the last pixel; a channel count the column tile does not divide is refused at launch.
        # On sm_90a the column tiles are TMA loads in im2col mode: padding other than the output-preserving
        # one (its bounding box), a 5 x 5 filter at stride 2, a 1 x 1 filter (no offsets), a tile of two
        # 64-channel panels
        import torch.nn.functional as F
        cases = ((8, 28, 28, 64, 128, 3, 1, 1, 1, (64, 128, 32, 3, 256)),
                 (3, 17, 13, 128, 64, 3, 2, 2, 2, (128, 64, 64, 2, 128)),
                 (2, 9, 9, 32, 32, 1, 1, 1, 0, (64, 32, 32, 2, 128)),
                 (2, 10, 12, 64, 64, 3, 1, 1, 0, (64, 64, 64, 3, 128)),
                 (3, 15, 11, 64, 32, 5, 2, 1, 1, (128, 32, 32, 3, 256)),
                 (2, 12, 12, 128, 64, 3, 1, 3, 2, (64, 64, 128, 2, 128)))
        for (n, h, w, c, f, k, s, d, p, t) in cases:
            with self.subTest(n=n, h=h, w=w, c=c, f=f, k=k, stride=s, dilation=d, pad=p):
                image, filters = randn(n, h, w, c), randn(k, k, c, f)
                kern = tlc.compile(port("example_convolution.py"),
                                   defines={"S": s, "D": d, "P": p, "block_M": t[0], "block_N": t[1],
                                            "block_K": t[2], "num_stages": t[3], "threads": t[4]})
                oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
                out = torch.full((n, oh, ow, f), float("nan"), device="cuda", dtype=torch.float16)
                kern(image, filters, out)
                ref = F.conv2d(image.double().permute(0, 3, 1, 2), filters.double().permute(3, 2, 0, 1), stride=s,
                               padding=p, dilation=d).permute(0, 2, 3, 1)
                self.close(out, ref, rtol=1e-2, atol=5e-2)
        # sm_90's code: the im2col tiles by TMA on mbarriers without warp specialization, mma.sync gemms
        n, h, w, c, f, k, s, d, p, t = cases[1]
        image, filters = randn(n, h, w, c), randn(k, k, c, f)
        kern = tlc.compile(port("example_convolution.py"), arch="sm_90",
                           defines={"S": s, "D": d, "P": p, "block_M": t[0], "block_N": t[1], "block_K": t[2],
                                    "num_stages": t[3], "threads": t[4]})
        oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
        out = torch.full((n, oh, ow, f), float("nan"), device="cuda", dtype=torch.float16)
        kern(image, filters, out)
        ref = F.conv2d(image.double().permute(0, 3, 1, 2), filters.double().permute(3, 2, 0, 1), stride=s, padding=p,
                       dilation=d).permute(0, 2, 3, 1)
        self.close(out, ref, rtol=1e-2, atol=5e-2)
        # stride, dilation and pad as scalar parameters, passed at launch (one compiled kernel); a stride of
        # 0 refused by the launch checks
        with open(port("example_convolution.py")) as f:
            source = f.read().replace(
                "def convolution(data, kernel, S, D, P,", "def convolution(data, kernel, S: T.int32, D: T.int32, P: T.int32,")
        kern = tlc.compile(source, defines={"block_M": 128, "block_N": 64, "block_K": 64, "num_stages": 2,
                                            "threads": 128})
        image, filters = randn(3, 17, 13, 128), randn(3, 3, 128, 64)
        for s, d, p in ((1, 1, 1), (2, 2, 2), (3, 1, 0)):
            with self.subTest(launch_values=(s, d, p)):
                oh, ow = (17 + 2 * p - d * 2 - 1) // s + 1, (13 + 2 * p - d * 2 - 1) // s + 1
                out = torch.full((3, oh, ow, 64), float("nan"), device="cuda", dtype=torch.float16)
                kern(image, filters, s, d, p, out)
                ref = F.conv2d(image.double().permute(0, 3, 1, 2), filters.double().permute(3, 2, 0, 1), stride=s,
                               padding=p, dilation=d).permute(0, 2, 3, 1)
                self.close(out, ref, rtol=1e-2, atol=5e-2)
        with self.assertRaises(tlc.LaunchError):
            kern(image, filters, 0, 1, 1, torch.empty((3, 17, 13, 64), device="cuda", dtype=torch.float16))
        kern = tlc.compile(port("example_convolution.py"),
                           defines={"S": 1, "D": 1, "P": 1, "block_M": 64, "block_N": 64, "block_K": 32,
                                    "num_stages": 2, "threads": 128})
        image, filters = randn(1, 8, 8, 48), randn(3, 3, 48, 64)
        with self.assertRaises(tlc.LaunchError):
            kern(image, filters, torch.empty((1, 8, 8, 64), device="cuda", dtype=torch.float16))
        # a padding of 130 puts the im2col map's corners outside TMA's range: refused at launch, saying so
        kern = tlc.compile(port("example_convolution.py"),
                           defines={"S": 1, "D": 1, "P": 130, "block_M": 64, "block_N": 64, "block_K": 32,
                                    "num_stages": 2, "threads": 128})
        image, filters = randn(1, 4, 4, 32), randn(3, 3, 32, 64)
        with self.assertRaisesRegex(tlc.LaunchError, "im2col mode"):
            kern(image, filters, torch.empty((1, 262, 262, 64), device="cuda", dtype=torch.float16))

    def test_gemm_persistent(self):
        # one block per SM of the compile target walking the tiles with T.Persistent (two and more
        # waves), the hand-written order, the plain kernel; a last tile count that the group (8) does
        # not divide is refused at launch
        tiles = {"block_M": 128, "block_N": 256, "block_K": 64, "threads": 256, "num_stages": 3}
        for m, n, kk in ((4096, 4096, 1024), (8192, 4096, 512), (1000, 2048, 320)):
            a, b = randn(m, kk), randn(kk, n)
            ref = a.double() @ b.double()
            for kernel, extra in (("matmul_persistent", {}), ("matmul_persistent", {"use_persistent_primitive": False}),
                                  ("matmul_non_persistent", {})):
                with self.subTest(m=m, n=n, k=kk, kernel=kernel, **extra):
                    k = tlc.compile(port("example_gemm_persistent.py"), kernel=kernel, defines={**tiles, **extra})
                    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
                    k(a, b, c)
                    self.close(c, ref, rtol=1e-2, atol=5e-2)
        k = tlc.compile(port("example_gemm_persistent.py"), kernel="matmul_persistent", defines=tiles)
        a, b = randn(1024, 256), randn(256, 3072)
        with self.assertRaisesRegex(tlc.LaunchError, "fails the assert at line"):
            k(a, b, torch.empty(1024, 3072, device="cuda", dtype=torch.float16))

    def test_dequant_gemm_fp4(self):
        # fp4 weights packed two to a uint8, dequantized through B_local[i, j // 2], through wgmma and mma.sync
        import numpy as np
        defines = {"in_dtype": "float16", "out_dtype": "float16", "accum_dtype": "float32"}
        for m, n, k in ((256, 256, 256), (1024, 512, 2048)):
            a = randn(m, k)
            qb = np.random.default_rng(m).integers(0, 256, (n, k // 2)).astype(np.uint8)
            b = torch.from_numpy(fp4_to_fp16(qb)).cuda()
            sm90 = torch.cuda.get_device_capability(0) == (9, 0)
            for arch in ("sm_90a", "sm_80") if sm90 else ("sm_80",):
                with self.subTest(m=m, n=n, k=k, arch=arch):
                    kern = tlc.compile(port("example_dequant_gemm_fp4_hopper.py"), kernel="matmul", arch=arch,
                                       defines={"M": m, "N": n, "K": k, **defines})
                    ct = torch.full((n, m), float("nan"), device="cuda", dtype=torch.float16)
                    kern(a, torch.from_numpy(qb).cuda(), ct)
                    self.close(ct, b.double() @ a.double().T, rtol=1e-2, atol=5e-2)
            conv = tlc.compile(port("example_dequant_gemm_fp4_hopper.py"), kernel="test_convert",
                               defines={"N": n, "K": k, "block_N": 128, "block_K": 128, **defines})
            c = torch.full((n, k), float("nan"), device="cuda", dtype=torch.float16)
            conv(torch.from_numpy(qb).cuda(), c)
            self.assertTrue(torch.equal(c.view(torch.int16), b.view(torch.int16)))

    def test_warp_specialize_gemms(self):
        # TileLang's manual warp specialization (T.ws scopes, mbarriers, tma_copy), run by tlc in
        # program order; sizes with edge tiles and a K that is not a multiple of block_K
        tiles = {"block_M": 128, "block_N": 128, "block_K": 64}
        for name in ("copy_0_gemm_1", "copy_gemm_0_1", "softpipe_stage2", "barrierpipe_stage2"):
            k = tlc.compile(port(f"example_warp_specialize_gemm_{name}.py"), defines=tiles)
            for m, n, kk in ((1024, 1024, 1024), (1000, 776, 328)):
                with self.subTest(name=name, m=m, n=n, k=kk):
                    a, b = randn(m, kk), randn(kk, n)
                    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
                    k(a, b, c)
                    self.close(c, a.double() @ b.double(), rtol=1e-2, atol=5e-2)

    # the sparse GQA decode ports at the example's shape: 32 heads over 8 kv heads, head_dim 128, key
    # blocks of 32, sequences of several lengths, 8 splits
    SPARSE_B, SPARSE_H, SPARSE_H_KV, SPARSE_D, SPARSE_SEQLENS = 4, 32, 8, 128, [2048, 1900, 1800, 2000]

    def chosen_blocks(self, gen, chosen=40):
        """`chosen` key blocks of each sequence by index (sorted descending), and the same as a mask."""
        b, h_kv, seqlens = self.SPARSE_B, self.SPARSE_H_KV, self.SPARSE_SEQLENS
        idx = torch.full((b, h_kv, chosen), -1, dtype=torch.int32)
        for i in range(b):
            for g in range(h_kv):
                idx[i, g] = torch.randperm((seqlens[i] + 31) // 32, generator=gen)[:chosen].sort(descending=True).values
        mask = torch.zeros(b, h_kv, 64, dtype=torch.bool)
        mask.scatter_(2, idx.long(), True)
        return idx, mask

    def check_sparse_decode(self, name, q, k, v, mask, inputs, defines=None):
        """Runs the port's function on `inputs` (its parameters before glse), and compares with attention
        over the mask's blocks of the keys k, v (each sequence's, in order) below each sequence's length."""
        b, h, h_kv, d, seqlens, num_split = (self.SPARSE_B, self.SPARSE_H, self.SPARSE_H_KV, self.SPARSE_D,
                                             self.SPARSE_SEQLENS, 8)
        keep = mask.cuda().repeat_interleave(32, dim=2)[:, :, :2048]  # [b, h_kv, keys]
        keep &= torch.arange(2048, device="cuda")[None, None, :] < torch.tensor(seqlens, device="cuda")[:, None, None]
        keep = keep.repeat_interleave(h // h_kv, dim=1)  # [b, h, keys]
        s = torch.einsum("bhd,bshd->bhs", q.double(), k.double().repeat_interleave(h // h_kv, dim=2)) / d ** 0.5
        p = torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)
        ref = torch.einsum("bhs,bshd->bhd", p, v.double().repeat_interleave(h // h_kv, dim=2))
        kern = tlc.compile(port(name), kernel="flashattn",
                           defines={"batch": b, "heads": h, "heads_kv": h_kv, "dim": d, "dim_v": d, "block_N": 32,
                                    "block_H": 64, "num_stages": 2, "threads": 128, **(defines or {})})
        o = torch.full((b, h, d), float("nan"), device="cuda", dtype=torch.float16)
        glse = torch.empty(b, h, num_split, device="cuda")
        part = torch.empty(b, h, num_split, d, device="cuda")
        kern(*inputs, glse, part, o)
        self.close(o, ref)

    def seqlens(self):
        return torch.tensor(self.SPARSE_SEQLENS, device="cuda", dtype=torch.int32)

    def test_gqa_decode(self):
        # flash decoding's GQA file: a uint8 key mask, the combine reading lse_local[k, j] in a loop over splits
        import numpy as np
        from test_ports import masked_gqa_decode_ref
        b, h, g, s, d = 4, 32, 8, 8192, 128
        q, k, v = randn(b, h, d), randn(b, s, g, d), randn(b, s, g, d)
        mask = torch.randint(0, 2, (b, s, g), device="cuda", dtype=torch.uint8)
        ref = masked_gqa_decode_ref(q.cpu().numpy(), k.cpu().numpy(), v.cpu().numpy(), mask.cpu().numpy())
        for num_split in (8, 1):
            with self.subTest(num_split=num_split):
                kern = tlc.compile(port("example_gqa_decode.py"), kernel="flashattn",
                                   defines={"batch": b, "heads": h, "groups": g, "seqlen_kv": s, "dim": d,
                                            "block_N": 128, "block_H": 64, "num_split": num_split, "num_stages": 2,
                                            "threads": 128})
                o = torch.full((b, h, d), float("nan"), device="cuda", dtype=torch.float16)
                kern(q, k, v, mask, o)
                self.close(o, torch.from_numpy(np.asarray(ref)).cuda(), rtol=1e-2, atol=2e-3)

    def test_sparse_gqa_decode_varlen_mask(self):
        # a mask keeping about half the blocks (every split keeps one below the length)
        from test_ports import sparse_gqa_decode_inputs
        b, h, h_kv, d = self.SPARSE_B, self.SPARSE_H, self.SPARSE_H_KV, self.SPARSE_D
        mask = torch.from_numpy(sparse_gqa_decode_inputs(b, h_kv, self.SPARSE_SEQLENS, 8)).cuda()
        q, k, v = randn(b, h, d), randn(b, 2048, h_kv, d), randn(b, 2048, h_kv, d)
        self.check_sparse_decode("example_tilelang_sparse_gqa_decode_varlen_mask.py", q, k, v, mask,
                                 (q, k, v, mask, self.seqlens()))

    def test_sparse_gqa_decode_varlen_indice(self):
        # 40 key blocks of each sequence chosen by index (sorted descending), 8 splits of 5
        b, h, h_kv, d = self.SPARSE_B, self.SPARSE_H, self.SPARSE_H_KV, self.SPARSE_D
        idx, mask = self.chosen_blocks(torch.Generator().manual_seed(13))
        q, k, v = randn(b, h, d), randn(b, 2048, h_kv, d), randn(b, 2048, h_kv, d)
        self.check_sparse_decode("example_tilelang_sparse_gqa_decode_varlen_indice.py", q, k, v, mask,
                                 (q, k, v, idx.cuda(), self.seqlens()))

    def test_sparse_gqa_decode_paged(self):
        # test_sparse_gqa_decode_varlen_indice's choice of blocks in a cache of 64-token pages placed by a
        # block table (128 pages, shuffled)
        b, h, h_kv, d = self.SPARSE_B, self.SPARSE_H, self.SPARSE_H_KV, self.SPARSE_D
        gen = torch.Generator().manual_seed(17)
        idx, mask = self.chosen_blocks(gen)
        table = torch.randperm(128, generator=gen).to(torch.int32).reshape(b, 32)
        kp, vp = randn(128, 64, h_kv, d), randn(128, 64, h_kv, d)
        k = kp[table.cuda().long()].reshape(b, 2048, h_kv, d)
        v = vp[table.cuda().long()].reshape(b, 2048, h_kv, d)
        q = randn(b, h, d)
        self.check_sparse_decode("example_tilelang_sparse_gqa_decode_paged.py", q, k, v, mask,
                                 (q, kp, vp, idx.cuda(), self.seqlens(), table.cuda()),
                                 {"page_block_size": 64, "num_pages": 128})

    def test_nsa_selected_blocks(self):
        # DeepSeek's native sparse attention, the selected-blocks branch: the forward (blocks after the token
        # skipped, causal inside a block) and the decode (negative indices skipped, one block a head: the
        # example's decode does not rescale its output between blocks), against float64
        b, t, h, g, d, bs, nsel = 2, 256, 2, 16, 64, 32, 4
        q, k, v = randn(b, t, h * g, d), randn(b, t, h, d), randn(b, t, h, d)
        idx = torch.full((b, t, h, nsel), t, dtype=torch.int32, device="cuda")
        for bi in range(b):
            for ti in range(t):
                for hi in range(h):
                    pick = torch.randperm(ti // bs + 1)[:nsel]
                    idx[bi, ti, hi, :len(pick)] = pick.to(torch.int32)

        def reference(causal):  # a block that starts after the token is skipped; inside, causal masks
            out = torch.zeros(q.shape, dtype=torch.float64, device="cuda")
            for bi in range(b):
                for ti in range(t):
                    for hi in range(h):
                        keys = torch.cat([torch.arange(int(i) * bs, int(i) * bs + bs, device="cuda")
                                          for i in idx[bi, ti, hi] if int(i) * bs <= ti])
                        if causal:
                            keys = keys[keys <= ti]
                        sc = q[bi, ti, hi * g:(hi + 1) * g].double() @ k[bi, keys, hi].double().T / d ** 0.5
                        out[bi, ti, hi * g:(hi + 1) * g] = torch.softmax(sc, -1) @ v[bi, keys, hi].double()
            return out
        for causal in (True, False):
            with self.subTest(kernel="forward", causal=causal):
                kern = tlc.compile(port("example_tilelang_nsa_fwd.py"),
                                   defines={"dim": d, "is_causal": causal, "block_size": bs, "groups": g,
                                            "selected_blocks": nsel})
                out = torch.full_like(q, float("nan"))
                kern(q, k, v, idx, out)
                self.close(out, reference(causal))
        with self.subTest(kernel="decode"):
            qd = randn(b, 1, h * g, d)
            one = torch.full((b, 1, h, nsel), -1, dtype=torch.int32, device="cuda")
            for bi in range(b):
                for hi in range(h):
                    one[bi, 0, hi, (bi + hi) % nsel] = int(torch.randint(t // bs, ()))
            kern = tlc.compile(port("example_tilelang_nsa_decode.py"),
                               defines={"dim": d, "block_size": bs, "groups": g, "selected_blocks": nsel})
            out = torch.full_like(qd, float("nan"))
            kern(qd, k, v, one, out)
            ref = torch.zeros(qd.shape, dtype=torch.float64, device="cuda")
            for bi in range(b):
                for hi in range(h):
                    blk = int(one[bi, 0, hi].max())
                    keys = torch.arange(blk * bs, blk * bs + bs, device="cuda")
                    sc = qd[bi, 0, hi * g:(hi + 1) * g].double() @ k[bi, keys, hi].double().T / d ** 0.5
                    ref[bi, 0, hi * g:(hi + 1) * g] = torch.softmax(sc, -1) @ v[bi, keys, hi].double()
            self.close(out, ref)

    def test_mha_bwd_bshd(self):
        # TileLang's FlashAttention backward: forward with log2-sum-exp, Delta, the backward kernel (dQ
        # added by atomics in make_dq_layout's permuted order, a layout on a global tensor) and dQ back
        # to the plain order, against torch autograd in float64; head_dim 128 takes the original's key
        # block of 32
        b, s, h = 2, 512, 4
        for d in (64, 128):
            for causal in (False, True):
                with self.subTest(dim=d, causal=causal):
                    sizes = {"batch": b, "heads": h, "seq_len": s, "dim": d}
                    tiles = {**sizes, "is_causal": causal, "block_M": 64, "block_N": 64 if d <= 64 else 32}

                    def kernel(name, defines):
                        return tlc.compile(port("example_mha_bwd_bshd.py"), kernel=name, defines=defines)

                    q, k, v, do = (randn(b, s, h, d) for _ in range(4))
                    o = torch.empty_like(q)
                    lse = torch.empty(b, h, s, device="cuda")
                    kernel("flashattn_fwd", {**tiles, "block_N": 64})(q, k, v, o, lse)
                    delta = torch.empty(b, h, s, device="cuda")
                    kernel("flashattn_bwd_preprocess", sizes)(o, do, delta)
                    dq = torch.zeros(b, s, h, d, device="cuda")
                    dk, dv = torch.empty_like(q), torch.empty_like(q)
                    kernel("flashattn_bwd", tiles)(q, k, v, do, lse, delta, dq, dk, dv)
                    dq_out = torch.empty_like(q)
                    kernel("flashattn_bwd_postprocess", sizes)(dq, dq_out)

                    qd, kd, vd = (x.double().transpose(1, 2).requires_grad_() for x in (q, k, v))
                    ref = attention(qd, kd, vd, causal)
                    ref.backward(do.double().transpose(1, 2))
                    self.close(o, ref.detach().transpose(1, 2))
                    self.close(dq_out, qd.grad.transpose(1, 2))
                    self.close(dk, kd.grad.transpose(1, 2))
                    self.close(dv, vd.grad.transpose(1, 2))

    def test_mla_decode(self):
        # the factory returns its split kernel and combine (fp16 workspaces the runtime allocates) for
        # num_split > 1, its one-kernel function otherwise; each against MLA in float64
        b, h, s, dim, pe = 4, 128, 1024, 512, 64
        q, q_pe = randn(b, h, dim), randn(b, h, pe)
        kv, k_pe = randn(b, s, 1, dim), randn(b, s, 1, pe)
        scores = torch.einsum("bhd,bsd->bhs", q.double(), kv[:, :, 0].double()) + \
            torch.einsum("bhd,bsd->bhs", q_pe.double(), k_pe[:, :, 0].double())
        ref = torch.softmax(scores / (dim + pe) ** 0.5, dim=-1) @ kv[:, :, 0].double()
        for num_split in (1, 4):
            with self.subTest(num_split=num_split):
                k = tlc.compile(port("example_mla_decode.py"),
                                defines={"heads": h, "kv_head_num": 1, "dim": dim, "pe_dim": pe, "block_N": 64,
                                         "block_H": 64, "num_split": num_split, "softmax_scale": (dim + pe) ** -0.5})
                o = torch.full((b, h, dim), float("nan"), dtype=torch.float16, device="cuda")
                k(q, q_pe, kv, k_pe, o)
                self.close(o, ref)
        # the persistent form: one block per SM (the GPU's count) walks the split tiles, then T.sync_grid()
        # (a cooperative launch) and the combine; both generators
        for backend in ("direct", "llvm"):
            with self.subTest(persistent=True, backend=backend):
                k = tlc.compile(port("example_mla_decode_persistent.py"), backend=backend,
                                defines={"batch": b, "heads": h, "kv_head_num": 1, "seqlen_kv": s, "dim": dim,
                                         "pe_dim": pe, "block_N": 64, "block_H": 64, "num_split": 4})
                glse = torch.full((b, h, 4), float("nan"), dtype=torch.float16, device="cuda")
                part = torch.full((b, h, 4, dim), float("nan"), dtype=torch.float16, device="cuda")
                o = torch.full((b, h, dim), float("nan"), dtype=torch.float16, device="cuda")
                k(q, q_pe, kv, k_pe, glse, part, o)
                self.close(o, ref)

    def test_mla_decode_ws(self):
        # TileLang's hand-pipelined MLA decode: two consumer warpgroups and a cp.async producer waiting
        # for each other on mbarriers, wgmma left in flight, setmaxnreg (the branches run as written);
        # one kernel (num_split 1) and the split kernel with its combine, against MLA in float64; and
        # its FlashMLA-schedule example (two warpgroups taking pages in pairs, T.tma_copy, a dynamic
        # clear_accum in unrolled loops)
        dim, pe = 512, 64
        for b, h, s, num_split in ((4, 128, 1024, 1), (2, 64, 2048, 1), (3, 128, 2048, 4), (2, 128, 512, 2)):
            with self.subTest(batch=b, heads=h, seqlen=s, num_split=num_split):
                q, q_pe = randn(b, h, dim), randn(b, h, pe)
                kv, k_pe = randn(b, s, 1, dim), randn(b, s, 1, pe)
                scores = torch.einsum("bhd,bsd->bhs", q.double(), kv[:, :, 0].double()) + \
                    torch.einsum("bhd,bsd->bhs", q_pe.double(), k_pe[:, :, 0].double())
                ref = torch.softmax(scores / (dim + pe) ** 0.5, dim=-1) @ kv[:, :, 0].double()
                k = tlc.compile(port("example_mla_decode_ws.py"),
                                defines={"heads": h, "kv_head_num": 1, "dim": dim, "pe_dim": pe, "block_N": 64,
                                         "block_H": 64, "num_split": num_split, "softmax_scale": (dim + pe) ** -0.5})
                glse = torch.full((b, h, num_split), float("nan"), dtype=torch.float16, device="cuda")
                part = torch.full((b, h, num_split, dim), float("nan"), dtype=torch.float16, device="cuda")
                o = torch.full((b, h, dim), float("nan"), dtype=torch.float16, device="cuda")
                k(q, q_pe, kv, k_pe, glse, part, o)
                self.close(o, ref)
                if num_split == 1:  # the FlashMLA schedule written in TileLang: pages in pairs, one kernel
                    fm = tlc.compile(port("example_warp_specialize_flashmla.py"),
                                     defines={"heads": h, "kv_head_num": 1, "dim": dim, "pe_dim": pe, "block_N": 64,
                                              "block_H": 64, "num_split": 1})
                    o.fill_(float("nan"))
                    fm(q, q_pe, kv, k_pe, glse, part, o)
                    self.close(o, ref)

    def test_blocksparse_gemm(self):
        n, bm, bk = 1024, 128, 32
        a, bb = randn(n, n), randn(n, n)
        mask = torch.rand(n // bm, n // bm, n // bk, device="cuda") > 0.5
        tiles = {"block_M": bm, "block_N": bm, "block_K": bk, "num_stages": 2, "thread_num": 128,
                 "enable_rasteration": True}
        # with M, N, K symbolic the mask's shape (M // block_M, ...) is three derived dims, checked at launch
        derived = tlc.compile(port("example_blocksparse_gemm.py"), defines=tiles)
        with self.assertRaisesRegex(tlc.TlcError, "fails the assert"):
            derived(a, bb, mask[:, :, :-1].contiguous(), torch.empty_like(a))
        c = torch.full((n, n), float("nan"), dtype=torch.float16, device="cuda")
        derived(a, bb, mask, c)
        k = tlc.compile(port("example_blocksparse_gemm.py"), defines={"M": n, "N": n, "K": n, **tiles})
        c2 = torch.full((n, n), float("nan"), dtype=torch.float16, device="cuda")
        k(a, bb, mask, c2)
        self.assertTrue(torch.equal(c, c2))
        # block (i, j) sums A's (i, kk) times B's (kk, j) over the k blocks kk its mask keeps
        ref = torch.empty(n, n, dtype=torch.float64, device="cuda")
        for i in range(n // bm):
            for j in range(n // bm):
                cols = mask[i, j].repeat_interleave(bk).double()
                ref[i * bm:(i + 1) * bm, j * bm:(j + 1) * bm] = \
                    (a[i * bm:(i + 1) * bm].double() * cols) @ bb[:, j * bm:(j + 1) * bm].double()
        self.close(c, ref, rtol=1e-2, atol=5e-2)

    def test_rms_norm(self):
        x = randn(1000, 4096, dtype=torch.float32)
        ref = x.double() / torch.sqrt((x.double() ** 2).mean(dim=1, keepdim=True) + 1e-12)
        for kernel in ("rms_norm", "rms_norm_splitk"):
            with self.subTest(kernel):
                k = tlc.compile(port("rms_norm.py"), kernel=kernel, defines={"blk_m": 1, "blk_k": 512, "N": 4096})
                y = torch.full_like(x, float("nan"))
                k(x, y)
                self.close(y, ref, rtol=1e-5, atol=1e-5)

    def test_layernorm_forward(self):
        n, d, eps = 4096, 1024, 1e-5
        k = tlc.compile(port("layernorm.py"), kernel="_layernorm_fwd",
                        defines={"N": n, "D": d, "in_dtype": "float16", "out_dtype": "float16"})
        x, g, bb = randn(n, d, scale=2.0), randn(d), randn(d)
        y = torch.full_like(x, float("nan"))
        mean = torch.full((n,), float("nan"), device="cuda")
        rstd = torch.full((n,), float("nan"), device="cuda")
        k(x, g, bb, y, mean, rstd)
        mu = x.double().mean(dim=1, keepdim=True)
        rs = 1.0 / torch.sqrt(x.double().var(dim=1, unbiased=False, keepdim=True) + eps)
        self.close(y, (x.double() - mu) * rs * g.double() + bb.double(), atol=2e-2)
        self.close(mean, mu[:, 0], rtol=1e-4, atol=1e-4)
        self.close(rstd, rs[:, 0], rtol=1e-3, atol=1e-4)

    def test_linear_attn_fwd(self):
        b, s, h, d = 2, 256, 4, 128
        k = tlc.compile(port("example_linear_attn_fwd.py"), defines={"DK": d, "DV": d})
        q, kk, v = randn(b, s, h, d, scale=0.3), randn(b, s, h, d, scale=0.3), randn(b, s, h, d)
        o = torch.zeros(b, s, h, d, device="cuda")  # the kernel adds into O
        state = torch.full((b, h, d, d), float("nan"), device="cuda")
        k(q, kk, v, o, state)
        t = lambda x: x.double().transpose(1, 2)  # noqa: E731  (b, h, s, d)
        causal = torch.tril(torch.ones(s, s, device="cuda", dtype=torch.float64))
        ref = (t(q) @ t(kk).transpose(-1, -2) * d**-0.5 * causal) @ t(v)
        self.close(o, ref.transpose(1, 2), rtol=2e-2, atol=5e-2)
        self.close(state, t(kk).transpose(-1, -2) @ t(v), rtol=2e-2, atol=5e-2)

    def test_vertical_slash_sparse_attn(self):
        # MInference's kernel: manual warp specialization as `if tid >= 128`, two role loops tlc fuses
        import numpy as np
        from test_ports import vertical_slash_inputs, weighted_attention
        b, h, s, d, vs, ss = 1, 4, 1024, 64, 128, 16
        idx, times = vertical_slash_inputs(b, h, s, vs, ss, np.random.default_rng(37))
        q, k, v = randn(b, h, s, d, scale=0.5), randn(b, h, s, d, scale=0.5), randn(b, h, s, d)
        ref = torch.from_numpy(weighted_attention(q.cpu().numpy(), k.cpu().numpy(), v.cpu().numpy(), times)).cuda()
        for arch in ("sm_90a", "sm_80") if torch.cuda.get_device_capability()[0] >= 9 else ("sm_80",):
            with self.subTest(arch=arch):
                kern = tlc.compile(port("example_vertical_slash_sparse_attn.py"), arch=arch,
                                   defines={"batch": b, "heads": h, "seq_len": s, "dim": d, "vertical_size": vs,
                                            "slash_size": ss})
                o = torch.full_like(q, float("nan"))
                kern(q, k, v, o, *(torch.from_numpy(a).cuda() for a in idx))
                self.close(o, ref, rtol=1e-2, atol=2e-3)

    def test_hadamard(self):
        # thread-indexed code with warp shuffles; 32768: four exchanges through shared memory, float16 two
        from test_ports import hadamard_matrix
        for n, dtype in ((256, torch.float32), (1024, torch.float32), (8192, torch.float32), (32768, torch.float32),
                         (4096, torch.float16)):
            with self.subTest(n=n, dtype=dtype):
                name = "float32" if dtype == torch.float32 else "float16"
                for arch in ("sm_90a", "sm_80") if torch.cuda.get_device_capability()[0] >= 9 else ("sm_80",):
                    k = tlc.compile(port("example_hadamard.py"), arch=arch, defines={"n": n, "dtype": name})
                    x = torch.randn((16, n), device="cuda").to(dtype)
                    y = torch.full_like(x, float("nan"))
                    k(x, y)
                    ref = x.double() @ torch.from_numpy(hadamard_matrix(n)).cuda().T
                    tol = 1e-5 if dtype == torch.float32 else 2e-3
                    self.close(y, ref, rtol=tol, atol=tol * ref.abs().max().item())


if __name__ == "__main__":
    unittest.main()
