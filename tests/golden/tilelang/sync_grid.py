# RUN: --emit=tir
# sync_grid(): every block sums its row and publishes the sum, the grid
# meets, and every block scales its row (still in its registers) by the
# sum over all rows, which it reads from the other blocks' results.
import tilelang
import tilelang.language as T


@T.prim_func
def scale_by_total(X: T.Tensor((64, 256), T.float32), Out: T.Tensor((64, 256), T.float32),
                   Part: T.Tensor((64,), T.float32)):
    with T.Kernel(64, threads=128) as bx:
        row = T.alloc_fragment((1, 256), T.float32)
        s = T.alloc_fragment((1,), T.float32)
        total = T.alloc_var(T.float32)
        T.copy(X[bx:bx + 1, :], row)
        T.reduce_sum(row, s, dim=1)
        Part[bx] = s[0]
        T.sync_grid()
        total = 0.0
        for i in T.serial(64):
            total += Part[i]
        for i, j in T.Parallel(1, 256):
            Out[bx + i, j] = row[i, j] / total


@tilelang.jit
def count_blocks(blocks=64):
    # every block counts itself, the grid meets, and every block then sees
    # all the counts (a block of 1024 threads: two fit on an SM at most)
    @T.prim_func
    def main(Count: T.Tensor((1,), T.int32), Seen: T.Tensor((blocks,), T.int32)):
        with T.Kernel(blocks, threads=1024) as bx:
            tx = T.get_thread_binding()
            if tx == 0:
                T.atomic_add(Count[0], 1)
            T.sync_grid()
            if tx == 0:
                Seen[bx] = Count[0]

    return main
