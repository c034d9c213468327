# RUN: --emit=summary
# slice_extent_names.py's rule is for names assigned once: `lo` assigned
# twice is a term of its own, so hi - lo is not known (hi = bid * 64 + 64,
# lo = bid * 64 + 1 here, as written).
import tilelang
import tilelang.language as T


@tilelang.jit
def reassigned(seqlen):
    @T.prim_func
    def main(KV: T.Tensor((4, seqlen, 64), "float16")):
        with T.Kernel(4, threads=128) as bid:
            S = T.alloc_shared((64, 64), "float16")
            lo = bid * 64
            hi = lo + 64
            lo = lo + 1
            T.copy(KV[bid, lo:hi, :], S)

    return main
