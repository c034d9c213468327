/* Per-stage wall time of a compilation (stage_times.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "stage_times.h"
#include <time.h>

double tlc_clock_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void tlc_stage_times_add(tlc_stage_times *t, tlc_timed_stage s, double start_ms) {
    t->ms[s] += tlc_clock_ms() - start_ms;
    t->ran[s] = true;
}

const char *tlc_timed_stage_name(tlc_timed_stage s) {
    switch (s) {
    case TLC_TIMED_FRONT_END: return "front end (lex, parse, sema, verify)";
    case TLC_TIMED_LAYOUT_PLAN: return "layout inference + planning";
    case TLC_TIMED_LOWER: return "lowering to Thread IR";
    case TLC_TIMED_CODEGEN: return "PTX generation";
    case TLC_TIMED_PTXAS: return "ptxas";
    case TLC_NTIMED: break;
    }
    return "?";
}

double tlc_stage_times_total(const tlc_stage_times *t) {
    double sum = 0;
    for (int s = 0; s < TLC_NTIMED; s++)
        if (t->ran[s]) sum += t->ms[s];
    return sum;
}
