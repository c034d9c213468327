# A file whose only decorated function is a macro has no kernel.
import tilelang.language as T


@T.macro
def helper(acc: T.FragmentBuffer([64], "float")):
    for i in T.Parallel(64):
        acc[i] = acc[i] * 2.0
