/* Command-line parsing for tlc. Options take their value either attached
 * (--emit=tir, -DNAME=V, -oFILE) or as the next argument (--emit tir,
 * -D NAME=V, -o FILE). The parser only records; main.c acts. */
#include "cli.h"
#include "ir/thread_ir.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tlc_cli_usage(tlc_strbuf *out) {
    tlc_sb_puts(out,
        "usage: tlc [options] FILE.tl\n"
#if __has_include("tlc_run.h")
        "       tlc run [options] FILE.tl   (run a kernel in the Tile IR interpreter;\n"
        "                                    'tlc run --help' for its options)\n"
#endif
        "\n"
        "Compiles a tlc kernel file ('-' reads standard input) and prints the\n"
        "requested stage to standard output. Diagnostics go to standard error.\n"
        "\n"
        "options:\n"
        "  -o FILE             write the output to FILE instead of standard output (-o -: standard output)\n"
        "  --emit=KIND         what to print (default: tir):\n");
    tlc_emit_help(out);
    tlc_sb_puts(out,
        "  -D NAME=VALUE       override the @jit default of compile-time parameter NAME,\n"
        "                      or specialize the symbolic dim NAME (repeatable; also -DNAME=VALUE;\n"
        "                      a NAME given twice takes the later value, with a warning)\n"
        "  --kernel=NAME       compile only kernel NAME\n"
        "  -O0, -O1, -O2, -O3  LLVM's optimization level for --emit=llvm and, with --backend=llvm,\n"
        "                      ptx and cubin (default: -O3)\n");
    char names[128];
    tlc_arch_names(names, sizeof names, ", ");
    tlc_sb_printf(out, "  --arch=ARCH         target: %s (default: %s); nvcc's -arch=ARCH too\n", names,
                  tlc_arch_name(TLC_DEFAULT_ARCH));
    tlc_sb_puts(out,
        "  -v, --verbose       say what tlc does (input, target, kernels, stages, output) on standard error\n"
        "  --time-passes       print the time each compilation stage took on standard error\n"
        "  --backend=NAME      who writes the PTX: direct (tlc's own generator, the default; ptxas\n"
        "                      optimizes; no -O level applies) or llvm (LLVM's NVPTX backend)\n"
        "  --num-sms=N         the SM count a kernel asking for it (driver.get_num_sms()) is compiled\n"
        "                      with (default: the target's data-center part, 132 for sm_90a)\n"
        "  --help              print this help and exit\n"
        "  --version           print the version and exit\n"
        "\n"
        "exit status: 0 success, 1 a diagnostic was reported, 2 bad usage\n");
}

/* A "tlc: warning: ..." line for main.c to print. */
static void add_warning(tlc_cli_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_warning(tlc_cli_options *o, const char *fmt, ...) {
    size_t used = strlen(o->warnings);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->warnings + used, sizeof o->warnings - used, fmt, ap);
    va_end(ap);
}

static tlc_args_result add_define(tlc_cli_options *o, char *text, tlc_strbuf *err) {
    size_t n;
    const char *value;
    if (!tlc_opt_split_define(text, &n, &value)) {
        tlc_sb_printf(err, "-D expects NAME=VALUE, got '%s'", text);
        return TLC_ARGS_USAGE;
    }
    char *eq = text + n;
    /* The same name given twice: the later value wins, as with cc -D, but
     * say so (a build script that sets a parameter twice is usually wrong). */
    for (int k = 0; k < o->ndefines; k++) {
        if (strlen(o->defines[k].name) == n && strncmp(o->defines[k].name, text, n) == 0) {
            add_warning(o, "tlc: warning: -D %s given twice ('%s', then '%s'): using '%s'\n", o->defines[k].name,
                        o->defines[k].value, value, value);
            o->defines[k].value = value;
            return TLC_ARGS_OK;
        }
    }
    if (o->ndefines >= TLC_CLI_MAX_DEFINES) {
        tlc_sb_printf(err, "too many -D options (at most %d)", TLC_CLI_MAX_DEFINES);
        return TLC_ARGS_USAGE;
    }
    /* argv strings are writable (C11 5.1.2.2.1): ending the name at its '='
     * gives a NUL-terminated name without copying. */
    *eq = '\0';
    o->defines[o->ndefines].name = text;
    o->defines[o->ndefines].value = value;
    o->ndefines++;
    return TLC_ARGS_OK;
}

/* The level of -O0 .. -O3 (arg is "-O..."); false for anything else. */
static bool parse_opt_level(const char *arg, int *level) {
    if (arg[2] < '0' || arg[2] > '3' || arg[3] != '\0') return false;
    *level = arg[2] - '0';
    return true;
}

static tlc_args_result missing_value(tlc_strbuf *err, const char *opt) {
    tlc_sb_printf(err, "option '%s' needs a value", opt);
    return TLC_ARGS_USAGE;
}

tlc_args_result tlc_cli_parse(int argc, char **argv, tlc_cli_options *o, tlc_strbuf *err) {
    memset(o, 0, sizeof *o);
    o->arch = TLC_DEFAULT_ARCH;
    o->opt_level = 3;
    o->backend = TLC_DEFAULT_BACKEND;
    o->emit = tlc_emit_find("tir");
    const char *emit_name = "tir";
    bool only_files = false;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        int r;
        if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (o->input) {
                tlc_sb_printf(err, "more than one input file ('%s' and '%s')", o->input, arg);
                return TLC_ARGS_USAGE;
            }
            o->input = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_files = true;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            o->help = true;
            return TLC_ARGS_EXIT_OK;
        } else if (strcmp(arg, "--version") == 0) {
            o->version = true;
            return TLC_ARGS_EXIT_OK;
        } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            o->verbose = true;
        } else if (strcmp(arg, "--time-passes") == 0) {
            o->time_passes = true;
        } else if (arg[1] == 'O') { /* the last -O wins, as with cc */
            if (!parse_opt_level(arg, &o->opt_level)) {
                tlc_sb_printf(err, "unknown optimization level '%s' (expected -O0, -O1, -O2 or -O3)", arg);
                return TLC_ARGS_USAGE;
            }
            o->opt_level_given = true;
        } else if ((r = tlc_opt_long("--backend", argc, argv, &i, &v)) != 0) {
            if (r < 0) return missing_value(err, arg);
            if (strcmp(v, "llvm") == 0) o->backend = TLC_BACKEND_LLVM;
            else if (strcmp(v, "direct") == 0) o->backend = TLC_BACKEND_DIRECT;
            else {
                tlc_sb_printf(err, "unknown --backend '%s' (expected llvm or direct)", v);
                return TLC_ARGS_USAGE;
            }
        } else if ((r = tlc_opt_long("--num-sms", argc, argv, &i, &v)) != 0) {
            if (r < 0) return missing_value(err, arg);
            char *end = NULL;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 1024) {
                tlc_sb_printf(err, "--num-sms expects a number of SMs from 1 to 1024, got '%s'", v);
                return TLC_ARGS_USAGE;
            }
            o->num_sms = (int)n;
        } else if ((r = tlc_opt_long("--emit", argc, argv, &i, &v)) != 0) {
            if (r < 0) return missing_value(err, arg);
            emit_name = v;
            o->emit = tlc_emit_find(v);
            if (!o->emit) {
                tlc_sb_printf(err, "unknown --emit kind '%s' (expected ", v);
                tlc_emit_list(err);
                tlc_sb_putc(err, ')');
                return TLC_ARGS_USAGE;
            }
        } else if ((r = tlc_opt_long("--arch", argc, argv, &i, &v)) != 0 ||
                   (r = tlc_opt_long("-arch", argc, argv, &i, &v)) != 0) { /* nvcc's spelling too */
            if (r < 0) return missing_value(err, arg);
            if (!tlc_arch_parse(v, &o->arch)) {
                char names[128];
                tlc_arch_names(names, sizeof names, " or ");
                tlc_sb_printf(err, "unknown --arch '%s' (expected %s)", v, names);
                return TLC_ARGS_USAGE;
            }
        } else if ((r = tlc_opt_long("--kernel", argc, argv, &i, &v)) != 0) {
            if (r < 0) return missing_value(err, arg);
            if (!tlc_opt_is_identifier(v, strlen(v))) {
                tlc_sb_printf(err, "--kernel expects a kernel name, got '%s'", v);
                return TLC_ARGS_USAGE;
            }
            o->kernel = v;
        } else if ((r = tlc_opt_long("--output", argc, argv, &i, &v)) != 0 ||
                   (r = tlc_opt_short('o', argc, argv, &i, &v)) != 0) {
            if (r < 0) return missing_value(err, arg);
            if (v[0] == '\0') return missing_value(err, arg);
            o->output = strcmp(v, "-") == 0 ? NULL : v; /* -o -: standard output, as in cc */
        } else if ((r = tlc_opt_short('D', argc, argv, &i, &v)) != 0) {
            if (r < 0) return missing_value(err, arg);
            tlc_args_result ar = add_define(o, (char *)v, err); /* v points into argv */
            if (ar != TLC_ARGS_OK) return ar;
        } else {
            tlc_sb_printf(err, "unknown option '%s'", arg);
            return TLC_ARGS_USAGE;
        }
    }
    if (!o->input) {
        tlc_sb_puts(err, "no input file");
        return TLC_ARGS_USAGE;
    }
    if (!o->emit->print) {
        tlc_sb_printf(err, "--emit=%s is not implemented yet", emit_name);
        return TLC_ARGS_FAIL;
    }
    if (o->opt_level_given && o->backend == TLC_BACKEND_DIRECT &&
        (strcmp(o->emit->name, "ptx") == 0 || strcmp(o->emit->name, "cubin") == 0)) {
        add_warning(o, "tlc: warning: -O%d has no effect on tlc's own PTX generator (the default): "
                       "add --backend=llvm for LLVM's\n", o->opt_level);
    }
    return TLC_ARGS_OK;
}
