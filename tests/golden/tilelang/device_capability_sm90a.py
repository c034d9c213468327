# RUN: --emit=summary --arch=sm_90a device_capability.py %nofile
# device_capability.py for sm_90a: torch.cuda.get_device_capability() is
# (9, 0), so 128-row blocks of 256 threads.
