# RUN: --emit=tir
# T.Persistent(domain, wave_size, index, group_size=8): block `index` takes
# tiles index, index + wave_size, ... of the domain, written out as a serial
# loop over the waves, the tile's coordinates as lets and an if for the last
# wave. With g = min(group_size, domain[-1]) the tile number's digits, last
# first, are (g, domain[0], ..., domain[-2], domain[-1] / g): g consecutive
# tiles share the other coordinates. A constant last extent the group does
# not divide is refused; a symbolic one becomes a launch check.
# driver.get_num_sms() is a constant of the compile: the JIT's device, or
# --num-sms, else the target's part (132 for sm_90a; golden num_sms).
import tilelang
import tilelang.language as T
from tilelang.carver.arch import driver


@tilelang.jit
def walk(M, group=4):
    sm_num = driver.get_num_sms()

    @T.prim_func
    def main(X: T.Tensor((M, 96), "float32")):
        with T.Kernel(sm_num, threads=128) as block_id:
            for bx, by in T.Persistent([T.ceildiv(M, 32), 12], sm_num, block_id, group):
                X[bx * 32, by * 8] = 1.0

    return main
