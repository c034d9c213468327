# RUN: --emit=tir
# What a branch that splits the threads into ranges refuses: ranges that
# are not whole warps, an else branch with tile work on threads that are no
# interval, a fragment used by two ranges; a value a range sets differs
# between threads outside its branch (each thread holds what its branch
# left), so tile work there cannot read it.
import tilelang.language as T


@T.prim_func
def not_warps(A: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128, 64), "float32")
        if tx < 48:
            T.copy(A, s)


@T.prim_func
def middle(A: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128, 64), "float32")
        if tx >= 32 and tx < 64:
            T.copy(A, s)
        else:
            T.fill(s, 0)


@T.prim_func
def shared_fragment(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        f = T.alloc_fragment((128, 64), "float32")
        if tx < 64:
            T.copy(A, f)
        else:
            T.copy(f, B)


@T.prim_func
def escaping(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128,), "float32"), C: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128, 64), "float32")
        f = T.alloc_fragment((128, 64), "float32")
        v = 0.0
        if tx < 64:
            T.copy(A, s)
            v = s[0, 0]
        B[tx] = v
        T.fill(f, v)
        T.copy(f, C)
