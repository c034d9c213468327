/* libFuzzer target for the whole compiler: any bytes go through sema, the
 * Tile IR verifier, layout inference, planning, lowering to Thread IR and
 * both PTX generators (LLVM's NVPTX back end, then tlc's own), with the
 * printers of each stage.
 *
 * Command-line options come from the input itself, from lines starting with
 * `# RUN:` (a comment to the language, the golden tests' convention;
 * fuzz_source.h).
 *
 * A bug, reported by abort() after printing the input's diagnostics:
 * - "internal error" in the diagnostics (that is for compiler bugs only),
 * - an error without a file:line:col location, except the two about the
 *   command line itself (an unknown -D name, no such --kernel),
 * - a failed stage without an error, or a successful one with errors,
 * - a crash, a hang or a sanitizer report (libFuzzer's and the sanitizers'
 *   own checks). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compile.h"
#include "api/compile_backend.h"
#include "fuzz_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TARGET "fuzz_pipeline"

static _Noreturn void bug(tlc_compilation *c, const char *what) { fuzz_fail(TARGET, what, tlc_sb_cstr(&c->diag.out)); }

static void run_pipeline(const char *text, size_t len) {
    fuzz_options o;
    fuzz_parse_options(&o, text, len);
    tlc_compile_options co;
    fuzz_compile_options(&o, &co);
    co.backend = TLC_BACKEND_LLVM; /* then the same Thread IR through tlc's own generator */
    tlc_compilation c;
    bool ok = tlc_compile_source(&c, "fuzz.tl", text, len, &co);
    if (ok) {
        tlc_strbuf dump;
        tlc_sb_init(&dump);
        ok = tlc_compile_layouts(&c, &dump) && tlc_compile_plan(&c, &dump) && tlc_compile_thread(&c, &dump);
        char *ptx = ok ? tlc_compile_ptx(&c, false) : NULL;
        if (ok && !ptx) ok = false;
        if (ok && !strstr(ptx, ".entry")) bug(&c, "PTX without a kernel entry");
        if (ok) {
            c.backend = TLC_BACKEND_DIRECT;
            ptx = tlc_compile_ptx(&c, false);
            if (!ptx) ok = false;
            else if (!strstr(ptx, ".entry")) bug(&c, "direct PTX without a kernel entry");
        }
        tlc_sb_free(&dump);
    }
    if (!ok && c.diag.errors == 0) bug(&c, "a stage failed without an error");
    if (ok && c.diag.errors != 0) bug(&c, "a stage succeeded with errors");
    fuzz_check_diagnostics(TARGET, c.src.name, tlc_sb_cstr(&c.diag.out));
    tlc_compilation_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_source_text(data, size);
    if (!text) return 0;
    run_pipeline(text, size);
    free(text);
    return 0;
}
