/* tlc: the command-line compiler, a thin layer over libtlc (api/compile.h).
 * Exit status: 0 success, 1 a diagnostic was reported (or I/O failed),
 * 2 bad usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#if __has_include("tlc_run.h")
#include "tlc_run.h"
#define TLC_HAVE_RUN 1
#endif

enum { EXIT_DIAG = 1, EXIT_USAGE = 2 };

static int write_output(const char *path, const tlc_strbuf *sb) {
    FILE *f = path ? fopen(path, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "tlc: error: cannot write '%s': %s\n", path, strerror(errno));
        return EXIT_DIAG;
    }
    bool ok = fwrite(sb->data ? sb->data : "", 1, sb->len, f) == sb->len;
    ok = (path ? fclose(f) : fflush(f)) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "tlc: error: cannot write '%s': %s\n", path ? path : "<stdout>", strerror(errno));
        return EXIT_DIAG;
    }
    return 0;
}

/* Prints and empties a report buffer. */
static void flush_report(tlc_strbuf *report) {
    fputs(tlc_sb_cstr(report), stderr);
    tlc_sb_free(report);
    tlc_sb_init(report);
}

static int compile_and_emit(const tlc_cli_options *o) {
    if (o->emit->binary && !o->output && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "tlc: error: --emit=%s writes binary data: use -o FILE or redirect standard output\n",
                o->emit->name);
        return EXIT_DIAG;
    }
    size_t len = 0;
    char *text = tlc_read_input(o->input, &len);
    if (!text) {
        fprintf(stderr, "tlc: error: cannot open '%s': %s\n", o->input, strerror(errno));
        return EXIT_DIAG;
    }
    tlc_strbuf report;
    tlc_sb_init(&report);
    if (o->verbose) {
        tlc_verbose_start(&report, o, len);
        flush_report(&report);
    }
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    co.arch = o->arch;
    co.defines = o->defines;
    co.ndefines = o->ndefines;
    co.kernel = o->kernel;
    co.stop_after = o->emit->stage;
    co.opt_level = o->opt_level;
    co.backend = o->backend;
    co.num_sms = o->num_sms;

    tlc_compilation c;
    const char *name = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
    bool ok = tlc_compile_source(&c, name, text, len, &co);
    free(text);
    fputs(tlc_sb_cstr(&c.diag.out), stderr);
    size_t reported = c.diag.out.len;
    int status = EXIT_DIAG;
    bool wrote = false;
    size_t out_bytes = 0;
    if (ok) {
        tlc_strbuf out;
        tlc_sb_init(&out);
        ok = o->emit->print(&out, &c);
        /* later stages run inside the emitter: print what they reported */
        if (c.diag.out.len > reported) fputs(c.diag.out.data + reported, stderr);
        if (ok && c.diag.errors == 0) {
            status = write_output(o->output, &out);
            wrote = status == 0;
            out_bytes = out.len;
        } else if (c.diag.errors == 0) {
            fputs("tlc: error: internal error: a stage failed without a diagnostic\n", stderr);
        }
        tlc_sb_free(&out);
    }
    if (o->verbose) tlc_verbose_end(&report, o, &c, wrote, out_bytes);
    if (o->time_passes) tlc_time_report(&report, name, &c.times);
    flush_report(&report);
    tlc_sb_free(&report);
    tlc_compilation_free(&c);
    return status;
}

int main(int argc, char **argv) {
#ifdef TLC_HAVE_RUN
    if (argc > 1 && strcmp(argv[1], "run") == 0) return tlc_run_main(argc - 1, argv + 1);
#endif
    tlc_cli_options o;
    tlc_strbuf msg;
    tlc_sb_init(&msg);
    tlc_args_result r = tlc_cli_parse(argc, argv, &o, &msg);
    int status = 0;
    switch (r) {
    case TLC_ARGS_USAGE:
        fprintf(stderr, "tlc: error: %s\ntlc: note: run 'tlc --help' for usage\n", tlc_sb_cstr(&msg));
        status = EXIT_USAGE;
        break;
    case TLC_ARGS_FAIL:
        fprintf(stderr, "tlc: error: %s\n", tlc_sb_cstr(&msg));
        status = EXIT_DIAG;
        break;
    case TLC_ARGS_EXIT_OK:
        if (o.help) {
            tlc_sb_free(&msg);
            tlc_cli_usage(&msg);
            fputs(tlc_sb_cstr(&msg), stdout);
        } else {
            printf("tlc %s\n", TLC_VERSION);
        }
        break;
    case TLC_ARGS_OK:
        fputs(o.warnings, stderr);
        status = compile_and_emit(&o);
        break;
    }
    tlc_sb_free(&msg);
    return status;
}
