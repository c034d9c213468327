# RUN: run %s
# A layout on a global tensor, run by the interpreter: the kernel writes
# X[i] = i through T.Layout(lambda i: [(i % 4) * 8 + i // 4]), so X's
# memory holds at position (i % 4) * 8 + i // 4 the value i; R gets that
# order written out without a layout (R[p] = (p % 8) * 4 + p // 8): X and
# R have the same fnv64. C copies X back through the layout (a copy into a
# fragment, then out): C[i] = i, as A (written plainly) has it: C and A
# have the same fnv64, and X's differs from it. W (zeros before the run,
# the same layout) gets a fragment holding i at i added by one tile
# atomic_add, which becomes element atomic_adds through the layout: W's
# memory is X's (the same fnv64).
import tilelang
import tilelang.language as T


@tilelang.jit
def layout_run():
    @T.prim_func
    def main(X: T.Tensor((32,), "float32"), R: T.Tensor((32,), "float32"), C: T.Tensor((32,), "float32"),
             A: T.Tensor((32,), "float32"), W: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            T.annotate_layout({X: T.Layout(X.shape, lambda i: [(i % 4) * 8 + i // 4]),
                               W: T.Layout(W.shape, lambda i: [(i % 4) * 8 + i // 4])})
            back = T.alloc_fragment((32,), "float32")
            ramp = T.alloc_fragment((32,), "float32")
            for i in T.Parallel(32):
                X[i] = T.cast(i, "float32")
                R[i] = T.cast((i % 8) * 4 + i // 8, "float32")
                A[i] = T.cast(i, "float32")
                ramp[i] = T.cast(i, "float32")
            T.atomic_add(W, ramp)
            T.copy(X, back)
            T.copy(back, C)

    return main
