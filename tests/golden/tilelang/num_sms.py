# RUN: --emit=tir --arch=sm_80 --num-sms=114
# driver.get_num_sms() with --num-sms (the target's part otherwise: 108 for
# sm_80, 132 for sm_90a, golden persistent).
import tilelang
import tilelang.language as T
from tilelang.carver.arch import driver


@tilelang.jit
def per_sm():
    sm_num = driver.get_num_sms()

    @T.prim_func
    def main(X: T.Tensor((sm_num,), "int32")):
        with T.Kernel(sm_num, threads=32) as b:
            X[b] = sm_num

    return main
