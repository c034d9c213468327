# RUN: run --random --dim N=256 --kernel=split_or_whole -D num_split=1 factory_choice.py %nofile
# factory_choice_run.py with -D num_split=1: the factory returns its
# one-kernel function, B = 4A, the same B (same fnv64) as the split form.
