# RUN: --emit=metadata -D S=2 -D D=1 -D P=1 im2col.py %nofile
# im2col.py's launch checks: the output's derived dims, the output view's
# element count (sizes decide it), the channels a multiple of the column
# tile's 32; the filters' view needs none (the same factors).
