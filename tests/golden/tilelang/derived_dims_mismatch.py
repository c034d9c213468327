# RUN: run --random --dim M=16 --dim N=256 --dim X_amax_dim1=3 --kernel=row_group_max derived_dims.py %nofile
# A tensor whose derived dim disagrees with its expression (3, not
# ceildiv(256, 128) = 2): the interpreter refuses the launch, as the
# runtime does, at the dimension's expression.
