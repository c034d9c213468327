# RUN: --emit=tir
# T.cumsum(src, dst=None, dim=0, reverse=False): inclusive prefix sums along
# dim (suffix sums with reverse), in place when dst is not given. Written
# out as Tile IR: the scan runs in shared memory (a fragment goes through a
# shared buffer of its shape), a Parallel loop over the lines along dim,
# each a serial loop summing in float32. B = cumsum of A's rows, C = suffix
# sums of A's columns, D = cumsum of A's first row in float16
# (python/tests/test_interpret.py and test_gpu.py run it).
import tilelang
import tilelang.language as T


@T.prim_func
def cumsum(A: T.Tensor((4, 64), "float32"), B: T.Tensor((4, 64), "float32"), C: T.Tensor((4, 64), "float32"),
           D: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((4, 64), "float32")
        f = T.alloc_fragment((4, 64), "float32")
        g = T.alloc_fragment((64,), "float16")
        T.copy(A, s)
        T.cumsum(s, dim=1)
        T.copy(s, B)
        T.copy(A, f)
        T.cumsum(f, dim=0, reverse=True)
        T.copy(f, C)
        T.copy(A[0, :], g)
        T.cumsum(src=g, dim=0)
        T.copy(g, D)
