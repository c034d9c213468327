import math

import numpy as np
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics import make_mma_swizzle_layout

# The fast Walsh-Hadamard transform of each row (hadamard_transform/
# example_hadamard.py), written as thread-indexed code: each thread
# transforms its chunk of a row in registers, then the warps exchange
# values by warp shuffles (tvm_warp_shuffle) and the block through shared
# memory. The kernel and its helpers are the example's; the reference and
# the driver are written for this port.


def is_pow_of_2(n):
    return isinstance(n, int) and n > 0 and (n & (n - 1)) == 0


@T.macro
def warp_shfl(local, buf, thread_elem, warp_size, round):
    tx = T.get_thread_binding(0)
    for i in T.serial(round):
        tx_stride = 1 << i
        another_tx = tx ^ tx_stride
        sign = (tx >> i) & 1  # get i-th lowest bit of tx, which determines the operation type for shared[tx, :]
        for j in T.Pipelined(thread_elem, num_stages=1):
            buf[j] = T.tvm_warp_shuffle(
                0xFFFFFFFF,  # mask of all threads
                local[j],
                another_tx % warp_size,
                warp_size,
                warp_size,
            )
            local[j] = T.if_then_else(sign == 0, local[j] + buf[j], buf[j] - local[j])


@tilelang.jit
def hadamard(A, n, dtype):
    b = T.const("b")

    A: T.Tensor((b, n), dtype)
    B = T.empty((b, n), dtype)

    assert is_pow_of_2(n), "n must be a power of 2"
    assert 2 <= n <= 32768, "n must be in [2, 32768]"

    elem_size = {T.float32: 4, T.float16: 2, T.bfloat16: 2}[dtype]

    logN = int(math.log2(n))
    threads = [0, 1, 1, 1, 2, 4, 8, 16, 32, 32, 128, 256, 256, 256, 256, 256][logN]
    thread_elem = n // threads  # Each thread is responsible for a chunk of elements
    thread_round = int(math.log2(thread_elem))

    warps = 1 if threads <= 32 else threads // 32
    warp_round = int(math.log2(threads / warps))
    warp_size = threads // warps

    block_round = int(math.log2(warps))

    exchange_round = n * elem_size // 32768 if n * elem_size > 32768 else 1  # Suppose we use 32KB shared memory at most
    thread_elem_in_smem = thread_elem // exchange_round if exchange_round > 1 else thread_elem

    with T.Kernel(b, threads=threads) as bx:
        local = T.alloc_local((thread_elem,), dtype)
        shared = T.alloc_shared((threads, thread_elem_in_smem), dtype)
        T.annotate_layout({shared: make_mma_swizzle_layout(shared)})
        tx = T.get_thread_binding(0)

        # 1. Load from HBM to register
        for i in T.vectorized(thread_elem):
            local[i] = A[bx, tx * thread_elem + i]

        # 2. Hadamard inside thread, n<=8
        for i in T.serial(thread_round):
            chunksize = 1 << (i + 1)
            chunknum = thread_elem // chunksize
            for j in T.serial(chunknum):
                chunkbase = j * chunksize
                for k in T.serial(chunksize // 2):
                    local[chunkbase + k] = local[chunkbase + k] + local[chunkbase + k + chunksize // 2]
                    local[chunkbase + k + chunksize // 2] = local[chunkbase + k] - 2 * local[chunkbase + k + chunksize // 2]

        # 3. Hadamard inside warp, n<=512
        # In warp level, we rely on warp shuffle to exchange data inside each warp, without using shared memory
        another_val = T.alloc_local((thread_elem,), dtype)

        warp_shfl(local, another_val, thread_elem, warp_size, warp_round)

        # 4. Hadamard inside block, n<=32768
        # Only exchange once for n<=8192, since shared mem can hold all elems
        if block_round > 0:
            warp_id = tx // warp_size
            lane_id = tx % warp_size
            src_tx = warp_id * warp_size + lane_id
            tgt_warp_id = tx % warps
            tgt_lane_id = tx // warps
            tgt_tx = tgt_warp_id * warp_size + tgt_lane_id

            # 4.1 Write to smem, swap, read from smem
            for cur_round in T.serial(exchange_round):
                exchange_base = thread_elem_in_smem * cur_round
                for j in T.vectorized(thread_elem_in_smem):
                    shared[src_tx, j] = local[exchange_base + j]

                for j in T.vectorized(thread_elem_in_smem):
                    local[exchange_base + j] = shared[tgt_tx, j]

            # 4.2 Warp shuffle
            warp_shfl(local, another_val, thread_elem, warp_size, block_round)

            # 4.3 Write to smem, swap, read from smem
            for cur_round in T.serial(exchange_round):
                exchange_base = thread_elem_in_smem * cur_round
                for j in T.vectorized(thread_elem_in_smem):
                    shared[tgt_tx, j] = local[exchange_base + j]

                for j in T.vectorized(thread_elem_in_smem):
                    local[exchange_base + j] = shared[src_tx, j]

        # 5. Write back to HBM
        for i in T.vectorized(thread_elem):
            B[bx, tx * thread_elem + i] = local[i]

    return B


def sylvester(n):
    """The n x n Hadamard matrix (n a power of two) in Sylvester's order, as float64."""
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def ref_program(x):
    """x @ H^T for each row of x, in float64."""
    return np.asarray(x, dtype=np.float64) @ sylvester(x.shape[-1]).T


def main(batch=64, dim=4096):
    import torch

    x = torch.randn((batch, dim), device="cuda")
    y = hadamard(x, dim, T.float32)
    ref = ref_program(x.cpu().numpy())
    err = np.abs(y.cpu().numpy() - ref).max() / np.abs(ref).max()
    assert err < 1e-5, err
    print("All tests passed.")


if __name__ == "__main__":
    main()
