"""Small DSL kernels the tests compile and run."""
import math
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "dsl-examples")

SCALE = """\
@jit(N=256, threads=128)
def scale(X: Tensor[(N,), float32], Y: Tensor[(N,), float32], s: float32):
    with Kernel(1, threads=threads) as bx:
        x = alloc_fragment((N,), float32)
        copy(X, x)
        for i in Parallel(N):
            x[i] = x[i] * s
        copy(x, Y)
"""

# Reads past the end of a local buffer: sema cannot see it (the index is a scalar parameter), the
# interpreter must.
OUT_OF_BOUNDS = """\
@jit(N=64, threads=32)
def oob(X: Tensor[(N,), float32], Y: Tensor[(N,), float32], k: int32):
    with Kernel(1, threads=threads) as bx:
        t = alloc_local((4,), float32)
        for i in range(4):
            t[i] = X[i]
        Y[0] = t[k]
"""

# Unsigned and 16-bit integer dtypes (tests/golden/tilelang/unsigned.py): inputs, the scalar `bound`, and
# NumPy's results for F, U, B, C and R.
UNSIGNED = os.path.join(ROOT, "tests", "golden", "tilelang", "unsigned.py")
UNSIGNED_BOUND = 0x90000000


def unsigned_inputs():
    import numpy as np
    rng = np.random.default_rng(7)
    m = rng.integers(0, 256, 256).astype(np.uint8)
    w = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    w[:5] = [0, 0xFFFFFFFF, 0x80000000, 0x80000001, 7]
    h = rng.integers(0, 65536, 256).astype(np.uint16)
    s = rng.integers(-32768, 32768, 256).astype(np.int16)
    s[:2] = [-32768, 32767]
    return {"M": m, "W": w, "H": h, "S": s}


def unsigned_expected(inp):
    import numpy as np
    m, w, h, s = inp["M"], inp["W"].astype(np.int64), inp["H"], inp["S"]
    f = (m + ((w >> 28) & 15) * 1000.0 + h * 0.25 + s + np.where(w > 0x80000000, 0.5, 0)
         + np.where(0xFFFFFFFF < w, 0, 0.125)).astype(np.float32)
    u = ((w // 3) + np.maximum(w, 7) % 5 + np.minimum(w, UNSIGNED_BOUND) + (w << 3) + (0xFFFFFFFF - w)) & 0xFFFFFFFF
    b = np.clip(np.trunc(m.astype(np.float32) * np.float32(2) - np.float32(100)), 0, 255).astype(np.uint8)
    c = np.clip(np.trunc(s.astype(np.float32) * np.float32(0.01)), -128, 127).astype(np.int8)
    r = np.array([w.max(), w.min(), (int(m[0]) * 0x01010101) & 0xFFFFFFFF, int(s[0]) & 0xFFFFFFFF], np.uint32)
    return {"F": f, "U": u.astype(np.uint32), "B": b, "C": c, "R": r}


def int4_to_int8(b):
    """w4a8's packed weights [N, K / 2] (uint8, the low nibble first) as int8 values [N, K], sign-extended."""
    import numpy as np
    lo, hi = (b & 0x0F).astype(np.int8), (b >> 4).astype(np.int8)
    q = np.stack((lo, hi), axis=-1).reshape(b.shape[0], b.shape[1] * 2)
    return np.where(q > 7, q - 16, q).astype(np.int8)


def fp4_to_fp16(b):
    """TileLang's fp4 dequantization of a (rows, n) uint8 array, low nibble first: (rows, 2 n) float16,
    each nibble's sign, 2-bit exponent (biased by 14 in float16) and mantissa bit, as its helper computes."""
    import numpy as np
    nib = np.stack([b & 15, b >> 4], axis=2).reshape(b.shape[0], 2 * b.shape[1]).astype(np.uint16)
    s, e, m = nib >> 3, ((nib & 6) >> 1) + 14, nib & 1
    return (((e | (s << 5)) << 10) | (m << 9)).astype(np.uint16).view(np.float16)


def reinterpret_expected(b):
    """NumPy's C, D, E of unsigned.py's reinterpret_bits for its input B."""
    import numpy as np
    c = fp4_to_fp16(b)
    d = ((b[:, 0] >> 4).astype(np.int8) << 4) >> 4
    return {"C": c, "D": d, "E": (b[:, 1].astype(np.float32) - 64).view(np.uint32)}


# Thread-indexed code (tests/golden/tilelang/thread_binding.py: TileLang's GEMV kernels; thread_binding_barriers.py).
THREAD_BINDING = os.path.join(ROOT, "tests", "golden", "tilelang", "thread_binding.py")
THREAD_BARRIERS = os.path.join(ROOT, "tests", "golden", "tilelang", "thread_binding_barriers.py")
GEMV_KERNELS = ("naive_gemv", "naive_splitk_gemv", "splitk_gemv_vectorized", "splitk_gemv_vectorized_tvm")
# TileLang's reducers (tests/golden/tilelang/reducer.py): gemv_alloc_reducer's o = a @ x, row_max's O = max of A's rows.
REDUCER = os.path.join(ROOT, "tests", "golden", "tilelang", "reducer.py")
FP8 = os.path.join(ROOT, "tests", "golden", "tilelang", "fp8.py")
FRAGMENT_RESHAPE = os.path.join(ROOT, "tests", "golden", "layout", "fragment_reshape.py")


def grouped_sums_expected(x, w):
    """fragment_reshape.py's grouped_sums: per row, each half of the columns' ReLU times W, summed."""
    import numpy as np
    return (np.maximum(x.reshape(64, 2, 64), 0) * w[None]).sum(-1)


CONVERTED_READ = os.path.join(ROOT, "tests", "golden", "layout", "converted_read.tl")
ATOMIC_VECTOR = os.path.join(ROOT, "tests", "golden", "tilelang", "atomic_add_vector.py")
INT8 = os.path.join(ROOT, "tests", "golden", "tilelang", "gemm_int8.py")
TF32 = os.path.join(ROOT, "tests", "golden", "tilelang", "gemm_tf32.py")
A_REGS_TRANSPOSED = os.path.join(ROOT, "tests", "golden", "tilelang", "gemm_a_regs_transposed.py")
# gemm operand A in registers for tf32, int8 and float8 (tests/golden/tilelang/gemm_a_regs_wide.py)
A_REGS_WIDE = os.path.join(ROOT, "tests", "golden", "tilelang", "gemm_a_regs_wide.py")
# gemm operand B in registers (b_regs: A shared; both_regs: A too), its elements clamped at 0 first
B_REGS = os.path.join(ROOT, "tests", "golden", "tilelang", "gemm_b_regs.py")
# sync_grid(): a row scaled by the grid's total; blocks counting themselves (tests/golden/tilelang/sync_grid.py)
SYNC_GRID = os.path.join(ROOT, "tests", "golden", "tilelang", "sync_grid.py")
THREAD_RANGES = os.path.join(ROOT, "tests", "golden", "tilelang", "thread_ranges.py")
FRAGMENT_OFFSETS = os.path.join(ROOT, "tests", "golden", "tilelang", "fragment_offsets.py")
FRAGMENT_HALVES = os.path.join(ROOT, "tests", "golden", "tilelang", "fragment_halves.py")
# a fragment holding a value per thread in thread-indexed code (tests/golden/tilelang/fragment_per_thread.py):
# B[t] = sum over r of (r + 1) A[t, r]
FRAGMENT_PER_THREAD = os.path.join(ROOT, "tests", "golden", "tilelang", "fragment_per_thread.py")


def fragment_halves_expected(a, b):
    """fragment_halves.py's outputs in float64: C = A^T B, M the row maxima of C's first 8 rows."""
    c = a.astype("float64").T @ b.astype("float64")
    return c, c[:8].max(1)


def fragment_offsets_expected(x, w):
    """fragment_offsets.py's outputs in float64: Y = X W^T, S[i, j] the sum over jj of X[i, 8 jj + j]^2, Z = 2 X."""
    x64, w64 = x.astype("float64"), w.astype("float64")
    return x64 @ w64.T, (x64 ** 2).reshape(x.shape[0], -1, 8).sum(1), 2 * x64


def thread_ranges_expected(a, b, block=64):
    """thread_ranges.py's outputs in float64: C = A B, each row's sum and max of 2 A, B's column sums per row
    block of A (the same in every one)."""
    a64, b64 = a.astype("float64"), b.astype("float64")
    return a64 @ b64, (2 * a64).sum(1), (2 * a64).max(1), b64.sum(0)


THREAD_RANGES_SHARED = os.path.join(ROOT, "tests", "golden", "tilelang", "thread_ranges_shared.py")


def thread_ranges_shared_expected(a, b, x):
    """thread_ranges_shared.py's outputs in float64: in_pipeline's C (the sum over the 16 row tiles of A of tile
    times B) and R (each tile row's sum, summed over the tiles); odd_threads' copy of X, doubled past row 64."""
    tiles = a.astype("float64").reshape(16, 64, 64)
    x64 = x.astype("float64")
    return (sum(t @ b.astype("float64") for t in tiles), tiles.sum(axis=(0, 2)),
            x64 * ([[1.0]] * 64 + [[2.0]] * (x64.shape[0] - 64)))


def sums_in_range_expected(x):
    """thread_ranges.py's sums_in_range: column r of Y sums the r-th 64 columns of each 128 of X's rows."""
    x64 = x.astype("float64").reshape(x.shape[0], -1, 2, 64)
    return x64.sum(axis=(1, 3))
# break, while and continue, a per-thread while loop, named barriers (tests/golden/tilelang/loop_exit.py)
LOOP_EXIT = os.path.join(ROOT, "tests", "golden", "tilelang", "loop_exit.py")


def loop_exit_inputs(seed=31):
    """loop_exit.py's inputs: A [64, 256] (rows with and without a value over 2.5), N [1024] starting values
    of Collatz walks, C [16, 128] for the compaction; and what each kernel should give: first_over's column
    per row, positive_sums' sums, collatz_steps' step counts, each row's positive values (sorted) and count."""
    import numpy as np
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((64, 256)).astype(np.float32)
    first = np.array([int(np.argmax(r > 2.5)) if (r > 2.5).any() else -1 for r in a], np.int32)
    sums = np.where(a < 0, 0, a).astype(np.float64).sum(axis=1)
    n = rng.integers(1, 5000, 1024).astype(np.int32)

    def steps(x):
        k = 0
        while x > 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            k += 1
        return k
    c = rng.standard_normal((16, 128)).astype(np.float32)
    kept = [np.sort(r[r > 0]) for r in c]
    return a, first, sums, n, np.array([steps(int(x)) for x in n], np.int32), c, kept


def nested_exits_expected(a):
    """loop_exit.py's nested_exits for A [64, 16]: per row, Python's own loops (in float32)."""
    import numpy as np
    out = np.zeros(a.shape[0], np.float32)
    for r in range(a.shape[0]):
        acc = np.float32(0)
        for i in range(4):
            if i == 1:
                continue
            for j in range(3, -1, -1):
                if a[r, i * 4 + j] > 1:
                    break
                acc += a[r, i * 4 + j]
            if acc > 3:
                break
        out[r] = acc
    return out


def gemv_inputs(n=256, k=512):
    """A (k,) and B (n, k) float16 for the GEMV kernels (n a multiple of 128, k of 256: their blocks divide them),
    and NumPy's C = B @ A in float32."""
    import numpy as np
    rng = np.random.default_rng(17)
    a = rng.standard_normal(k).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    return a, b, b.astype(np.float32) @ a.astype(np.float32)


WARP_SHUFFLE = os.path.join(ROOT, "tests", "golden", "tilelang", "warp_shuffle.py")


def warp_shuffle_expected(a):
    """warp_shuffle.py's S (each row's sum in every lane) and G (each 8-lane group's sum) for A [4, 32]."""
    import numpy as np
    s = np.repeat(a.sum(axis=1, keepdims=True), 32, axis=1)
    g = np.repeat(a.reshape(4, 4, 8).sum(axis=2), 8, axis=1)
    return s, g


def shift_expected(a):
    """thread_binding_barriers.py's B for its A: the first half reversed from the other end, the rest as is."""
    import numpy as np
    return np.concatenate([a[::-1][:64], a[64:]])


# Packed fragment reads (tests/golden/layout/packed_access.py): B two nibbles a byte, W eight a word.
PACKED = os.path.join(ROOT, "tests", "golden", "layout", "packed_access.py")


def packed_inputs():
    import numpy as np
    rng = np.random.default_rng(11)
    return {"B": rng.integers(0, 256, (64, 32)).astype(np.uint8),
            "W": rng.integers(0, 2**32, (64, 8), dtype=np.uint64).astype(np.uint32)}


def packed_expected(inp):
    """C and D of the `packed` kernel (C alone is `from_global`'s): each nibble, low first, as float16."""
    import numpy as np
    b, w = inp["B"], inp["W"].astype(np.uint64)
    c = np.stack([b & 15, b >> 4], axis=2).reshape(64, 64).astype(np.float16)
    d = np.stack([(w >> (4 * n)) & 15 for n in range(8)], axis=2).reshape(64, 64).astype(np.float16)
    return {"C": c, "D": d}


# Fragment reads at an index a Parallel loop's iterations share (tests/golden/layout/shared_index.py).
SHARED_INDEX = os.path.join(ROOT, "tests", "golden", "layout", "shared_index.py")


def shared_index_expected(g8x128, g8x64):
    """NumPy's O of the `combine` kernel (a log-sum-exp over rows, plus row 0) and of `row_copy`."""
    import numpy as np
    g = g8x128.astype(np.float64)
    m = g.max(axis=0)
    combine = np.log2(np.exp2(g - m).sum(axis=0)) + m + g[0]
    row_copy = (g8x64.astype(np.float64) * np.arange(1, 9)[:, None]).sum(axis=0)
    return combine, row_copy


def streamk_defines(m, n, k, block_m=16, block_n=128, block_k=32, sms=108, threads=64):
    """The -D values of TileLang's stream-K example (tests/ports/example_tilelang_gemm_streamk.py) for an
    [m, k] x [n, k]^T float16 GEMM over `sms` programs: what its module-level code computes from the tensors'
    shapes, and the factory's arguments as its main() passes them."""
    iters_per_tile = -(-k // block_k)
    total_tiles = -(-m // block_m) * -(-n // block_n)
    streamk_tiles = total_tiles % sms
    if total_tiles - streamk_tiles > sms:
        streamk_tiles += sms
    streamk_iters = streamk_tiles * iters_per_tile
    return {"M": m, "N": n, "K": k, "total_sm": sms, "iters_per_tile": iters_per_tile,
            "streamk_full_tiles": streamk_iters // sms, "streamk_partial_tiles": streamk_iters % sms,
            "sm_patition_factor": max((total_tiles - streamk_tiles) // sms, 1), "streamk_tiles": streamk_tiles,
            "block_M": block_m, "block_N": block_n, "block_K": block_k, "trans_A": False, "trans_B": True,
            "dtypeAB": "float16", "dtypeC": "float32", "accum_dtype": "float32", "num_stages": 2,
            "threads": threads}


def mhc_pre_reference(residual, fn, hc_scale, hc_base, rms_eps, hc_pre_eps, hc_sinkhorn_eps, hc_post_mult_value,
                      sinkhorn_repeat):
    """DeepSeek mHC's pre block (tests/ports/example_mhc_pre.py) unfused, in float32 torch: (post_mix, comb_mix,
    layer_input) of residual [tokens, hc, hidden] and fn [hc * (2 + hc), hc * hidden]."""
    import torch
    hc = residual.shape[-2]
    flat = residual.flatten(-2, -1).float()
    mixes = flat @ fn.T * (flat.square().sum(-1, keepdim=True) / fn.shape[-1] + rms_eps).rsqrt()
    scale = torch.cat([hc_scale[0].expand(hc), hc_scale[1].expand(hc), hc_scale[2].expand(hc * hc)])
    mixes = mixes * scale + hc_base
    pre = mixes[:, :hc].sigmoid() + hc_pre_eps
    post = mixes[:, hc:2 * hc].sigmoid() * hc_post_mult_value
    comb = mixes[:, 2 * hc:].view(-1, hc, hc).softmax(-1) + hc_sinkhorn_eps
    comb = comb / (comb.sum(-2, keepdim=True) + hc_sinkhorn_eps)
    for _ in range(sinkhorn_repeat - 1):
        comb = comb / (comb.sum(-1, keepdim=True) + hc_sinkhorn_eps)
        comb = comb / (comb.sum(-2, keepdim=True) + hc_sinkhorn_eps)
    layer_input = (pre.unsqueeze(-1) * residual.float()).sum(-2)
    return post, comb.flatten(-2, -1), layer_input.bfloat16()


def sparse_mla_reference(q, kv, indices, dim=512):
    """DeepSeek V3.2's sparse MLA forward in float64 (tests/ports/sparse_mla_fwd.py): query t of batch b
    attends to the rows indices[b, t, 0, :] of kv that are at most t (an index past the end pads); the output
    and the base-2 log-sum-exp of the scaled scores."""
    import torch
    seq_kv = kv.shape[1]
    pos = torch.arange(q.shape[1], device=q.device)[None, :, None]
    keep = (indices[:, :, 0] < seq_kv) & (indices[:, :, 0] <= pos)
    rows = torch.stack([kv[b, :, 0].double()[indices[b, :, 0].clamp(max=seq_kv - 1).long()]
                        for b in range(q.shape[0])])
    scores = torch.einsum("bshd,bskd->bshk", q.double(), rows) * q.shape[-1] ** -0.5
    scores = scores.masked_fill(~keep[:, :, None, :], float("-inf"))
    out = torch.einsum("bshk,bskd->bshd", scores.softmax(-1), rows[..., :dim])
    return out, torch.logsumexp(scores, -1) / math.log(2)


def sparse_mla_grads(q, kv, do, indices, dim=512):
    """sparse_mla_reference's output and log-sum-exp, and dQ and dKV for the output gradient do, by
    autograd in float64 (tests/ports/sparse_mla_bwd.py)."""
    q64 = q.double().requires_grad_(True)
    kv64 = kv.double().requires_grad_(True)
    out, lse = sparse_mla_reference(q64, kv64, indices, dim)
    out.backward(do.double())
    return out.detach(), lse.detach(), q64.grad, kv64.grad
