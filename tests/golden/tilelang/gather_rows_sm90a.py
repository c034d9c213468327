# RUN: --emit=plan --arch=sm_90a gather_rows.py %nofile
# gather_rows.py on sm_90a: gather_gemm's B tile fits a TMA box, and its
# gathered A rows (cp.async) would take TMA and warp specialization from
# it, so they stay a Parallel loop in the body; gather_sum's rows are its
# only load and go with the stages.
