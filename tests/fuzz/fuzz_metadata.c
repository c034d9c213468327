/* libFuzzer target for the runtime's kernel-metadata parser (the
 * `// tlc.meta` block libtlrt reads from PTX before a launch). Any bytes:
 * the parser accepts or refuses with a message, never crashes. What it
 * accepts must survive a round trip: the formatter writes it, the parser
 * reads that back, and writing it again gives the same text. Every grid
 * and tensor-map expression is evaluated with extreme symbol values
 * (overflow is refused, never undefined). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlc/metadata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what, const char *detail) {
    if (!ok) {
        fprintf(stderr, "fuzz_metadata: invariant broken: %s (%s)\n", what, detail ? detail : "");
        abort();
    }
}

static void evaluate_grids(const tlrt_kernel_meta *k) {
    static const int64_t edge[] = {0, 1, -1, 7, INT32_MAX, INT64_MAX, INT64_MIN};
    int64_t syms[TLRT_MAX_SYMS], scalars[TLRT_MAX_PARAMS];
    for (size_t e = 0; e < sizeof edge / sizeof edge[0]; e++) {
        for (int i = 0; i < TLRT_MAX_SYMS; i++) syms[i] = edge[(e + (size_t)i) % (sizeof edge / sizeof edge[0])];
        for (int i = 0; i < TLRT_MAX_PARAMS; i++) scalars[i] = edge[(e + (size_t)i + 3) % (sizeof edge / sizeof edge[0])];
        for (int d = 0; d < 3; d++) {
            int64_t v;
            char err[256];
            if (k->grid[d].n > 0) tlrt_expr_eval(&k->grid[d], syms, scalars, &v, err, sizeof err);
        }
        for (int x = 0; x < k->nmap_exprs; x++) { /* tensor maps' view dims and im2col corners */
            int64_t v;
            char err[256];
            tlrt_expr_eval(&k->map_exprs[x], syms, scalars, &v, err, sizeof err);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tlrt_module_meta m;
    char err[512];
    if (!tlrt_meta_parse((const char *)data, size, &m, err, sizeof err)) {
        check(err[0] != '\0', "a refusal without a message", NULL);
        return 0;
    }
    for (int i = 0; i < m.nkernels; i++) evaluate_grids(&m.kernels[i]);
    for (int i = 0; i < m.nfunctions; i++) /* launch checks and workspace dims are evaluated as grids are */
        for (int l = 0; l < m.functions[i].nlaunches; l++)
            check(m.functions[i].launches[l] >= 0 && m.functions[i].launches[l] < m.nkernels,
                  "a function launches a kernel the module lacks", m.functions[i].sig.name);
    char *text = tlrt_meta_format(&m, err, sizeof err);
    check(text != NULL, "accepted metadata the formatter refuses", err);
    tlrt_module_meta again;
    check(tlrt_meta_parse(text, strlen(text), &again, err, sizeof err), "the formatter's output does not parse", err);
    check(again.nkernels == m.nkernels, "a round trip changed the number of kernels", NULL);
    check(again.nfunctions == m.nfunctions, "a round trip changed the number of functions", NULL);
    char *text2 = tlrt_meta_format(&again, err, sizeof err);
    check(text2 != NULL && strcmp(text, text2) == 0, "a round trip changed the metadata", text);
    free(text2);
    free(text);
    tlrt_meta_free(&again);
    tlrt_meta_free(&m);
    return 0;
}
