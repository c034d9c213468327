/* Small helpers shared by the unit tests that compile real kernels:
 * reading a source file (support/read_file.h), counting instructions in
 * PTX, and checking that ptxas accepts a PTX text (where ptxas is
 * installed). Include after <cmocka.h>. */
#ifndef TLC_TEST_SUPPORT_H
#define TLC_TEST_SUPPORT_H
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/thread_ir.h"
#include "support/arena.h"
#include "support/diag.h"
#include "support/read_file.h"

static inline bool tst_blank(char c) { return c == ' ' || c == '\t'; }

/* needle at hay, a run of blanks in needle matching any run of blanks (so
 * that LLVM's "bar.sync \t1" and tlc's own "bar.sync 1" both match). */
static inline bool tst_match_at(const char *hay, const char *needle) {
    while (*needle) {
        if (tst_blank(*needle)) {
            if (!tst_blank(*hay)) return false;
            while (tst_blank(*needle)) needle++;
            while (tst_blank(*hay)) hay++;
        } else if (*hay++ != *needle++) {
            return false;
        }
    }
    return true;
}

/* Occurrences of needle in hay (overlapping ones included; blanks as in
 * tst_match_at: the PTX of either generator). */
static inline int tst_count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; *p; p++) n += tst_match_at(p, needle);
    return n;
}

/* Fails the test unless ptxas assembles `ptx` for `arch`. Returns false
 * (and checks nothing) when ptxas is not installed. */
static inline bool tst_assemble_ptx(const char *ptx, tlc_arch arch, const char *what) {
    if (!tlc_ptxas_available()) return false;
    tlc_arena a;
    tlc_arena_init(&a);
    tlc_source s = {what, ptx, strlen(ptx)};
    tlc_diag d;
    tlc_diag_init(&d, &s);
    size_t size = 0;
    unsigned char *cubin = tlc_ptxas_assemble(ptx, arch, &size, &a, &d);
    if (!cubin) fail_msg("ptxas rejected %s: %s", what, tlc_sb_cstr(&d.out));
    assert_true(size > 0);
    tlc_diag_free(&d);
    tlc_arena_free(&a);
    return true;
}
#endif
