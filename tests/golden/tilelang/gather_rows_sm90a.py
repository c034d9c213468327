# RUN: --emit=plan --arch=sm_90a gather_rows.py %nofile
# gather_rows.py on sm_90a: gather_gemm's B tile goes by TMA and its
# gathered A rows by cp.async chunks, in one pipeline that waits for both
# (not warp-specialized: the producer warpgroup issues TMA only);
# gather_sum's rows are its only load, a cp.async pipeline.
