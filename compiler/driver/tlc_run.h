/* `tlc run`: runs kernels in the Tile IR interpreter (include/tlc/interp.h)
 * on .npy or random inputs and summarises the outputs. */
#ifndef TLC_DRIVER_RUN_H
#define TLC_DRIVER_RUN_H
/* argv[0] is "run". Exit status: 0 success, 1 error, 2 bad usage. */
int tlc_run_main(int argc, char **argv);
#endif
