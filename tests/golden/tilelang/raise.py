# RUN: --emit=summary
# `raise` stops the compilation where compile-time code reaches it: a
# helper's branch for a target it does not take is never reached (the
# attention-sink backward examples raise for an unsupported SM version),
# one reached is an error with the exception's message; in a kernel the
# same under a compile-time `if`, and an error under a run-time one.
import torch
import tilelang
import tilelang.language as T


def configs(block):
    major, minor = torch.cuda.get_device_capability()
    if major < 8:
        raise ValueError("needs sm_80 or later")
    if block % 32:
        raise ValueError("block must be a multiple of 32")
    return block, 2 * block


def unsupported():
    raise NotImplementedError


@tilelang.jit
def fine(block=64):
    block_M, threads = configs(block)

    @T.prim_func
    def main(X: T.Tensor((1024,), "float32")):
        with T.Kernel(T.ceildiv(1024, block_M), threads=threads) as bx:
            if block_M > 1024:
                raise ValueError("a block larger than the tensor")
            for i in T.Parallel(block_M):
                X[bx * block_M + i] = 0.0

    return main


@tilelang.jit
def reached(block=48):
    block_M, threads = configs(block)

    @T.prim_func
    def main(X: T.Tensor((1024,), "float32")):
        with T.Kernel(T.ceildiv(1024, block_M), threads=threads) as bx:
            for i in T.Parallel(block_M):
                X[bx * block_M + i] = 0.0

    return main


@tilelang.jit
def bare():
    unsupported()

    @T.prim_func
    def main(X: T.Tensor((1024,), "float32")):
        with T.Kernel(1, threads=128):
            X[0] = 0.0

    return main


@tilelang.jit
def at_run_time():
    @T.prim_func
    def main(X: T.Tensor((1024,), "float32"), n: T.int32):
        with T.Kernel(1, threads=128):
            if n > 4:
                raise ValueError("too big")
            X[0] = 0.0

    return main
