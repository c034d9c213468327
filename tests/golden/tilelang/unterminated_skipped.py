# RUN: --emit=summary
# A triple-quoted string that never ends, in Python tlc skips, would swallow
# the kernels after it: an error.
import tilelang
import tilelang.language as T


def helper():
    """This docstring is never closed.
    return 1


@tilelang.jit
def k(A):
    M = T.const("M")
    A: T.Tensor((M,), "float32")
    with T.Kernel(1, threads=32):
        pass
