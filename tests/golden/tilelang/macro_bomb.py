# Macros that call macros twice, 14 deep, would expand 16,384 bodies:
# refused once 64 expansions are reached.
import tilelang.language as T

@T.macro
def m0(a: T.FragmentBuffer([64], "float")):
    m1(a)
    m1(a)

@T.macro
def m1(a: T.FragmentBuffer([64], "float")):
    m2(a)
    m2(a)

@T.macro
def m2(a: T.FragmentBuffer([64], "float")):
    m3(a)
    m3(a)

@T.macro
def m3(a: T.FragmentBuffer([64], "float")):
    m4(a)
    m4(a)

@T.macro
def m4(a: T.FragmentBuffer([64], "float")):
    m5(a)
    m5(a)

@T.macro
def m5(a: T.FragmentBuffer([64], "float")):
    m6(a)
    m6(a)

@T.macro
def m6(a: T.FragmentBuffer([64], "float")):
    m7(a)
    m7(a)

@T.macro
def m7(a: T.FragmentBuffer([64], "float")):
    m8(a)
    m8(a)

@T.macro
def m8(a: T.FragmentBuffer([64], "float")):
    m9(a)
    m9(a)

@T.macro
def m9(a: T.FragmentBuffer([64], "float")):
    m10(a)
    m10(a)

@T.macro
def m10(a: T.FragmentBuffer([64], "float")):
    m11(a)
    m11(a)

@T.macro
def m11(a: T.FragmentBuffer([64], "float")):
    m12(a)
    m12(a)

@T.macro
def m12(a: T.FragmentBuffer([64], "float")):
    m13(a)
    m13(a)

@T.macro
def m13(a: T.FragmentBuffer([64], "float")):
    m14(a)
    m14(a)

@T.macro
def m14(a: T.FragmentBuffer([64], "float")):
    for i in T.Parallel(64):
        a[i] = a[i] + 1.0

@T.prim_func
def k(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        a = T.alloc_fragment((64,), "float")
        T.copy(A, a)
        m0(a)
        T.copy(a, A)
