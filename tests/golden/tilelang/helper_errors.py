"""The file's functions run at compile time, and what stops them: a failed
assert, a call that never ends, a statement tlc does not run, a call with
the wrong arguments, a condition known only at run time, and a function tlc
cannot read at all (it stays Python; a call of it says why)."""
import tilelang
import tilelang.language as T


def check(block):
    assert block % 32 == 0, "block must be a multiple of 32"


def forever(n):
    return forever(n + 1)


def loops(n):
    while n > 0:
        n -= 1
    return n


def runtime_branch(x):
    if x > 0:
        return x
    return 0


def by_key(xs):
    try:
        return sorted(xs)
    except TypeError:
        return xs


@tilelang.jit
def k(block=48):
    check(block)
    a = forever(0)
    b = loops(3)
    c = check(64, 2)
    d = by_key((1, 2))

    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A[bx] = runtime_branch(bx)
    return main
