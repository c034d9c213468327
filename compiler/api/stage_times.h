/* Wall time per stage of one compilation. The pipeline records it itself
 * (compile.c, compile_backend.c), so `tlc --time-passes` and
 * tools/bench/compile_bench.c report one and the same measurement. */
#ifndef TLC_STAGE_TIMES_H
#define TLC_STAGE_TIMES_H
#include <stdbool.h>

typedef enum {
    TLC_TIMED_FRONT_END,   /* lexer, parser, sema, Tile IR verifier */
    TLC_TIMED_LAYOUT_PLAN, /* layout inference + planning */
    TLC_TIMED_LOWER,       /* lowering to Thread IR */
    TLC_TIMED_CODEGEN,     /* PTX: tlc's own generator, or LLVM IR, its pipeline and the NVPTX backend */
    TLC_TIMED_PTXAS,       /* ptxas (--emit=cubin) */
    TLC_NTIMED,
} tlc_timed_stage;

typedef struct tlc_stage_times {
    double ms[TLC_NTIMED]; /* summed over every run of the stage */
    bool ran[TLC_NTIMED];
} tlc_stage_times;

/* A monotonic clock, in milliseconds from an arbitrary origin. */
double tlc_clock_ms(void);
/* Adds the time since start_ms (a tlc_clock_ms value) to stage s. */
void tlc_stage_times_add(tlc_stage_times *t, tlc_timed_stage s, double start_ms);
/* "front end (lex, parse, sema, verify)", ... */
const char *tlc_timed_stage_name(tlc_timed_stage s);
/* The sum over the stages that ran. */
double tlc_stage_times_total(const tlc_stage_times *t);
#endif
