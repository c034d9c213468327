# RUN: --emit=tir
# What T.cumsum refuses.
import tilelang
import tilelang.language as T


@T.prim_func
def cumsum_errors(A: T.Tensor((4, 64), "float32"), M: T.Tensor((4, 64), "bool")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((4, 64), "float32")
        t = T.alloc_shared((64, 4), "float32")
        m = T.alloc_fragment((4, 64), "bool")
        T.cumsum(A, dim=1)
        T.cumsum(s[0:2, :], dim=1)
        T.cumsum(s, t, dim=1)
        T.cumsum(s, dim=2)
        T.copy(M, m)
        T.cumsum(m, dim=1)
