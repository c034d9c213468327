# RUN: --emit=summary -D num_split=1 -D use_wide=True -D mode=1 factory_choice.py %nofile
# factory_choice.py's factories with other -D values: each returns
# another of its functions.
