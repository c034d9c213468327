# RUN: run --random --dim N=256 --kernel=split_or_whole factory_choice.py %nofile
# factory_choice.py's split_or_whole run by the interpreter with its
# default num_split=2 (the split kernel and its combine, through a
# workspace): B = 2A + 2A, the same B (same fnv64) as with -D num_split=1
# (factory_choice_run_whole.py), which runs the one-kernel function.
