# RUN: --emit=plan
# A gemm's A operand in registers, transposed (DeepSeek's indexer backward:
# dQ = P^T @ K with P a fragment): the fragment takes the instruction's A
# layout with its dims swapped, so the instruction reads the same registers.
# Also a variable of each iteration's own in a Parallel loop (T.alloc_var).
import tilelang.language as T


@T.prim_func
def pt_k(P: T.Tensor((64, 64), T.float16), K: T.Tensor((64, 128), T.float16), C: T.Tensor((64, 128), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        p_frag = T.alloc_fragment((64, 64), T.float16)
        k_shared = T.alloc_shared((64, 128), T.float16)
        c_frag = T.alloc_fragment((64, 128), T.float32)
        for i, j in T.Parallel(64, 64):
            relu = T.alloc_var(T.float32)
            if P[i, j] > 0:
                relu = 1.0
            else:
                relu = 0.0
            p_frag[i, j] = P[i, j] * relu
        T.copy(K, k_shared)
        T.gemm(p_frag, k_shared, c_frag, transpose_A=True, clear_accum=True)
        T.copy(c_frag, C)


@T.prim_func
def column_sums_bf16(X: T.Tensor((64, 256), T.bfloat16), S: T.Tensor((256,), T.bfloat16)):
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(64, 256):
            T.atomic_add(S[j], X[i, j])
