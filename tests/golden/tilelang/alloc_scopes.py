"""TileLang's scope argument of the allocs, and clear / fill of a scalar
variable: alloc_shared in "shared" or "shared.dyn" (by keyword or third
argument) is shared memory; alloc_fragment in "local" is a thread's own
buffer (alloc_local), alloc_local in "local.fragment" a fragment; T.clear
and T.fill set an alloc_var."""
import tilelang
import tilelang.language as T


@tilelang.jit
def scopes(block=64):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            s1 = T.alloc_shared((block,), "float32", scope="shared")
            s2 = T.alloc_shared((block,), "float32", "shared.dyn")
            it = T.alloc_fragment((1,), T.int32, "local")
            fr = T.alloc_local((block,), T.float32, scope="local.fragment")
            acc = T.alloc_var(T.float32)
            T.clear(acc)
            T.fill(acc, 2.0)
            it[0] = bx + 3
            T.copy(A, s1)
            T.copy(s1, fr)
            for i in T.Parallel(block):
                fr[i] = fr[i] * acc
            T.copy(fr, s2)
            T.copy(s2, A)
            B[0] = it[0]
    return main
