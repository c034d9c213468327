/* What tlc says about a compilation on standard error when asked: -v (what
 * the driver does, in the manner of cc -v) and --time-passes (time per
 * stage, in the manner of clang's -ftime-report). The times come from the
 * compilation itself (api/stage_times.h). */
#include "cli.h"
#include <string.h>
#include "ir/thread_ir.h"
#include "target/target.h"

void tlc_verbose_start(tlc_strbuf *out, const tlc_cli_options *o, size_t input_bytes) {
    const char *input = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
    tlc_sb_printf(out, "tlc: input: %s (%zu bytes)\n", input, input_bytes);
    const tlc_target *t = tlc_target_of(o->arch);
    tlc_sb_printf(out, "tlc: target: %s (PTX ISA %d.%d), ", t->name, t->ptx_isa / 10, t->ptx_isa % 10);
    if (o->backend == TLC_BACKEND_LLVM) tlc_sb_printf(out, "LLVM -O%d\n", o->opt_level);
    else tlc_sb_puts(out, "tlc's own PTX generator\n");
    for (int i = 0; i < o->ndefines; i++)
        tlc_sb_printf(out, "tlc: define: %s=%s\n", o->defines[i].name, o->defines[i].value);
    if (o->kernel) tlc_sb_printf(out, "tlc: kernel filter: %s\n", o->kernel);
    tlc_sb_printf(out, "tlc: emit: %s\n", o->emit->name);
}

void tlc_verbose_end(tlc_strbuf *out, const tlc_cli_options *o, const tlc_compilation *c, bool wrote,
                     size_t out_bytes) {
    if (c->tir) {
        tlc_sb_puts(out, "tlc: kernels:");
        for (int i = 0; i < c->tir->nkernels; i++)
            tlc_sb_printf(out, "%s %s", i ? "," : "", c->tir->kernels[i]->name);
        tlc_sb_puts(out, c->tir->nkernels ? "\n" : " none\n");
    }
    for (int s = 0; s < TLC_NTIMED; s++)
        if (c->times.ran[s]) tlc_sb_printf(out, "tlc: stage: %s\n", tlc_timed_stage_name((tlc_timed_stage)s));
    if (wrote) tlc_sb_printf(out, "tlc: output: %zu bytes to %s\n", out_bytes, o->output ? o->output : "<stdout>");
    else tlc_sb_puts(out, "tlc: output: none (errors)\n");
}

void tlc_time_report(tlc_strbuf *out, const char *input, const tlc_stage_times *t) {
    double total = tlc_stage_times_total(t);
    tlc_sb_printf(out, "tlc: stage times for %s:\n", input);
    tlc_sb_puts(out, "        ms       %  stage\n");
    for (int s = 0; s < TLC_NTIMED; s++) {
        if (!t->ran[s]) continue;
        tlc_sb_printf(out, "  %8.3f  %5.1f%%  %s\n", t->ms[s], total > 0 ? 100 * t->ms[s] / total : 0.0,
                      tlc_timed_stage_name((tlc_timed_stage)s));
    }
    tlc_sb_printf(out, "  %8.3f  %5.1f%%  total\n", total, 100.0);
}
