# RUN: --emit=summary
# Tensor dimensions given as expressions of sizes (TileLang's
# per-token fp8 cast: X_amax is (M, T.ceildiv(N, group_size)); mamba's
# chunk state: nchunks = T.ceildiv(seqlen, chunk_size)): each is a
# symbolic dim of its own, TENSOR_dimD, bound at launch, with a launch
# check that it equals the expression (`check` lines in the metadata).
import tilelang
import tilelang.language as T


@tilelang.jit
def row_group_max(X, blk_m=8, group_size=128):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    X_amax = T.empty((M, T.ceildiv(N, group_size)), T.float32)
    with T.Kernel(T.ceildiv(M, blk_m), T.ceildiv(N, group_size), threads=128) as (bx, by):
        x_local = T.alloc_fragment((blk_m, group_size), T.float32)
        amax_local = T.alloc_fragment((blk_m,), T.float32)
        T.copy(X[bx * blk_m:(bx + 1) * blk_m, by * group_size:(by + 1) * group_size], x_local)
        T.reduce_absmax(x_local, amax_local, dim=1)
        for i in T.Parallel(blk_m):
            X_amax[bx * blk_m + i, by] = amax_local[i]
    return X_amax


@tilelang.jit
def chunk_sums(X, S, W, chunk_size=64):
    batch, seqlen, heads = T.const("batch, seqlen, heads")
    nchunks = T.ceildiv(seqlen, chunk_size)
    X: T.Tensor((batch, seqlen, heads), T.float32)
    S: T.Tensor((batch, heads, nchunks), T.float32)
    W: T.Tensor((batch, heads * 2, seqlen // 2 + 1), T.float32)
    with T.Kernel(nchunks, heads, batch, threads=64) as (c, h, b):
        acc = T.alloc_fragment((chunk_size,), T.float32)
        total = T.alloc_fragment((1,), T.float32)
        for i in T.Parallel(chunk_size):
            acc[i] = T.if_then_else(c * chunk_size + i < seqlen, X[b, c * chunk_size + i, h], 0.0)
        T.reduce_sum(acc, total, dim=0)
        S[b, h, c] = total[0]
        W[b, h * 2, 0] = total[0]
