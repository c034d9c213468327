"""Inside a kernel as before it, a name set in the branch a compile-time
`if` takes stays set after the `if`, as in Python: `start` and `end` are
chosen by is_causal and window_size, then used by the loop; `x`, set
before and reassigned in the branch, keeps the branch's value."""
import tilelang
import tilelang.language as T


@tilelang.jit
def k(A, is_causal=True, window_size=None, block_N=64):
    N = T.const("N")
    A: T.Tensor((N,), "float32")

    with T.Kernel(1, threads=64) as bx:
        n_blocks = T.ceildiv(N, block_N)
        x = 1
        if is_causal:
            if window_size is not None:
                start = T.max(0, n_blocks - window_size)
            else:
                start = 0
            end = n_blocks
            x = 2
        else:
            start = 0
            end = n_blocks
        for k in T.serial(end - start):
            A[k] = x
