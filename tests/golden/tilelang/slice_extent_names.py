# RUN: --emit=summary
# A slice's bounds may be names (TileLang's MLA decode example:
# kv_start = ... + k * block_N, kv_end = ... + (k + 1) * block_N, then
# KV[bid, kv_start:kv_end, ...]). A name assigned once, from a value that
# reads no memory and only names that do not change once set, stands for
# that value when tlc works out the extent; a name read from memory (once)
# is a term of its own.
import tilelang
import tilelang.language as T


@tilelang.jit
def names_as_bounds(seqlen, num_split=2, block_N=64):
    @T.prim_func
    def main(KV: T.Tensor((4, seqlen, 64), "float16"), Idx: T.Tensor((4,), "int32"),
             O: T.Tensor((4, 64), "float16")):
        with T.Kernel(4, num_split, threads=128) as (bid, bz):
            S = T.alloc_shared((block_N, 64), "float16")
            R = T.alloc_shared((32, 64), "float16")
            for k in T.Pipelined(T.ceildiv(seqlen // num_split, block_N), num_stages=2):
                kv_start = (seqlen // num_split) * bz + k * block_N
                kv_end = (seqlen // num_split) * bz + (k + 1) * block_N
                T.copy(KV[bid, kv_start:kv_end, :], S)
            first = Idx[bid]
            last = first + 32
            T.copy(KV[bid, first:last, :], R)
            T.copy(S[0, :], O[bid, :])
            T.copy(R[1, :], O[bid, :])

    return main
