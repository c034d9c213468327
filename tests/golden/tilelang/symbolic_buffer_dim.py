# RUN: --emit=summary
# A buffer's dimensions are compile-time constants; a symbolic dimension
# (T.const, known only at launch) there is an error that names the -D
# which specializes it (TileLang's rms_norm example: a fragment of a row);
# the tile ops on that buffer are not analysed further (no second error).
import tilelang
import tilelang.language as T


@tilelang.jit
def rms_norm(A, blk_m=1):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
        row = T.alloc_fragment((blk_m, N), T.float32)
        T.copy(A[bx * blk_m:(bx + 1) * blk_m, :], row)
        T.copy(row, B[bx * blk_m:(bx + 1) * blk_m, :])
    return B
