# RUN: run --random --dim M=16 --dim N=256 --kernel=row_group_max derived_dims.py %nofile
# derived_dims.py's row_group_max in the interpreter: `tlc run` gives
# X_amax_dim1 its expression's value, ceildiv(256, 128) = 2.
