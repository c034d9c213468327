# RUN: --emit=summary --arch=sm_80
# torch.cuda.get_device_capability() in a helper the factory calls (the
# TileLang attention-sink backward examples pick their tiles so): the
# compile target's compute capability, (8, 0) here, so 64-row blocks of
# 128 threads; device_capability_sm90a.py compiles this file for sm_90a:
# (9, 0), 128-row blocks of 256 threads.
import torch
import tilelang
import tilelang.language as T


def get_configs():
    major, minor = torch.cuda.get_device_capability()
    if major * 10 + minor == 80:
        return 64, 128
    return 128, 256


@tilelang.jit
def scale_rows(M=1024):
    block_M, threads = get_configs()

    @T.prim_func
    def main(X: T.Tensor((M, 64), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            for i, j in T.Parallel(block_M, 64):
                X[bx * block_M + i, j] = X[bx * block_M + i, j] * 2.0

    return main


# torch.cuda.get_device_properties(0): the compile target's major, minor
# and multi_processor_count (the convolution example checks for Hopper
# with a tuple comparison); one block per SM.
def check_hopper():
    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    return (props.major, props.minor) == (9, 0)


@tilelang.jit
def per_sm(M=1024):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    threads = 256 if check_hopper() else 128

    @T.prim_func
    def main(X: T.Tensor((M, 64), "float32")):
        with T.Kernel(sms, threads=threads) as bx:
            for j in T.Parallel(64):
                X[bx, j] = X[bx, j] * 2.0

    return main
