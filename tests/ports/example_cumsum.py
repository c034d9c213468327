import argparse

import torch
import tilelang
import tilelang.language as T


# Chunk-local cumulative sums of gated linear attention's gates (the GDN
# examples): G's sequence axis cut into chunks of block_S, each chunk summed
# in place with T.cumsum, in shared memory or on a fragment.


@tilelang.jit(out_idx=[-1], pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def tilelang_chunk_local_cumsum_scalar(
    # task config
    B,
    S,
    H,
    chunk_size=64,
    is_varlen=False,
    head_first=False,
    reverse=False,
    input_dtype=T.float16,
    output_dtype=T.float32,
    # kernel config
    block_S=64,
    threads=256,
    use_fragment=False,
):
    G_shape = (B, H, S) if head_first else (B, S, H)
    assert chunk_size == 2 ** (chunk_size.bit_length() - 1), "chunk_size must be a power of 2"
    assert chunk_size == block_S, "chunk_size must be equal to block_S"

    @T.prim_func
    def kernel(
        G: T.Tensor(G_shape, dtype=input_dtype),
        G_new: T.Tensor(G_shape, dtype=output_dtype),
    ):
        with T.Kernel(T.ceildiv(S, block_S), B * H, threads=threads) as (bs, bbh):
            bb, bh = bbh // H, bbh % H
            G_shared = T.alloc_shared((1, block_S), dtype=output_dtype, scope="shared")
            if head_first:
                T.copy(G[bb, bh, bs * block_S : (bs + 1) * block_S], G_shared)
            else:
                T.copy(G[bb, bs * block_S : (bs + 1) * block_S, bh], G_shared)
            if use_fragment:
                G_fragment = T.alloc_fragment((1, block_S), dtype=output_dtype, scope="shared")
                T.copy(G_shared, G_fragment)
                T.cumsum(G_fragment, dim=1, reverse=reverse)
                if head_first:
                    T.copy(G_fragment, G_new[bb, bh, bs * block_S : (bs + 1) * block_S])
                else:
                    T.copy(G_fragment, G_new[bb, bs * block_S : (bs + 1) * block_S, bh])
            else:
                T.cumsum(G_shared, dim=1, reverse=reverse)
                if head_first:
                    T.copy(G_shared, G_new[bb, bh, bs * block_S : (bs + 1) * block_S])
                else:
                    T.copy(G_shared, G_new[bb, bs * block_S : (bs + 1) * block_S, bh])

    return kernel


def reference(G, chunk_size, reverse, head_first):
    """Each chunk of chunk_size along the sequence axis, cumulatively summed (from its end with reverse)."""
    g = G.float() if head_first else G.float().transpose(1, 2)  # (B, H, S)
    b, h, s = g.shape
    c = g.reshape(b, h, s // chunk_size, chunk_size)
    out = c.flip(-1).cumsum(-1).flip(-1) if reverse else c.cumsum(-1)
    out = out.reshape(b, h, s)
    return out if head_first else out.transpose(1, 2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--B", type=int, default=4)
    parser.add_argument("--S", type=int, default=4096)
    parser.add_argument("--H", type=int, default=16)
    args = parser.parse_args()
    for reverse in (False, True):
        for use_fragment in (False, True):
            G = torch.randn(args.B, args.S, args.H, device="cuda", dtype=torch.float16)
            kernel = tilelang_chunk_local_cumsum_scalar(args.B, args.S, args.H, reverse=reverse, use_fragment=use_fragment)
            out = kernel(G)
            torch.testing.assert_close(out, reference(G, 64, reverse, False), rtol=1e-3, atol=1e-3)
    print("chunk-local cumsum matches the reference")


if __name__ == "__main__":
    main()
