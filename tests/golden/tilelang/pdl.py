# RUN: --emit=thread
# Programmatic dependent launch: pdl_sync() makes the kernel a dependent of
# the stream's previous kernel (metadata `pdl`, griddepcontrol.wait first
# thing, pointers without noalias); pdl_trigger() lets the next one start.
import tilelang.language as T


@T.prim_func
def scale(X: T.Tensor((256,), "float32"), Y: T.Tensor((256,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        T.pdl_sync()
        for i in T.Parallel(128):
            Y[bx * 128 + i] = X[bx * 128 + i] * 2.0
        T.pdl_trigger()
