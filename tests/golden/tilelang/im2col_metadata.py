# RUN: --emit=metadata -D S=2 -D D=1 -D P=1 im2col.py %nofile
# im2col.py's launch checks: the output's derived dims, the output view's
# element count (sizes decide it), the channels a multiple of the column
# tile's 32; the filters' view needs none (the same factors). On sm_90a the
# column tile is a TMA load in im2col mode (its map's corners -pad and
# pad - dilation * (K - 1), the traversal stride 2) and the filters' view a
# tiled map over the view's dims, both of the warp-specialized loop.
