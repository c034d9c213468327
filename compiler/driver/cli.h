/* The tlc command line: parsed options, input reading and the table of
 * --emit kinds. main.c glues them to the compile pipeline (api/compile.h). */
#ifndef TLC_DRIVER_CLI_H
#define TLC_DRIVER_CLI_H
#include <stdbool.h>
#include <stddef.h>
#include "api/compile.h"

/* ---- --emit kinds (emit.c) ---- */
/* Appends the dump of `c` to out. Called only after the pipeline reached
 * the kind's stage without errors. A kind past Tile IR runs the rest of
 * the pipeline here (api/compile_backend.h); it returns false when that
 * reported an error (in c->diag). */
typedef bool (*tlc_emit_fn)(tlc_strbuf *out, tlc_compilation *c);

typedef struct tlc_emit_kind {
    const char *name;  /* the word after --emit= */
    tlc_stage stage;   /* run the pipeline up to this stage */
    tlc_emit_fn print; /* NULL: planned but not implemented yet */
    const char *help;  /* one line for --help */
    bool binary;       /* not text: never written to a terminal */
} tlc_emit_kind;

/* Looks up an --emit kind by name; NULL when the name is unknown. */
const tlc_emit_kind *tlc_emit_find(const char *name);
/* Appends one help line per kind to out ("  tir      the checked Tile IR"). */
void tlc_emit_help(tlc_strbuf *out);
/* "tokens|ast|tir|summary": the implemented kinds, for messages. */
void tlc_emit_list(tlc_strbuf *out);

/* ---- option matching (cli_opts.c), for `tlc` and `tlc run` ---- */
/* `--name=value` or `--name value` (the value from the next argument): 0
 * when argv[*i] is not this option, 1 when it is (*value set, *i past the
 * value), -1 when the value is missing. */
int tlc_opt_long(const char *name, int argc, char **argv, int *i, const char **value);
/* The same for a short option: `-xVALUE` or `-x VALUE`. */
int tlc_opt_short(char letter, int argc, char **argv, int *i, const char **value);
bool tlc_opt_is_identifier(const char *s, size_t n);
/* NAME=VALUE with NAME an identifier and VALUE not empty. */
bool tlc_opt_split_define(const char *text, size_t *name_len, const char **value);

/* ---- options (cli_args.c) ---- */
#define TLC_CLI_MAX_DEFINES 256

typedef struct tlc_cli_options {
    const char *input;        /* file name, or "-" for stdin */
    const char *output;       /* -o FILE; NULL: stdout */
    const tlc_emit_kind *emit;
    tlc_arch arch;
    const char *kernel;
    tlc_define defines[TLC_CLI_MAX_DEFINES];
    int ndefines;
    int opt_level;            /* -O0 .. -O3: LLVM's optimization level (default 3) */
    bool opt_level_given;     /* an -O was on the command line */
    int backend;              /* --backend: tlc_backend (ir/thread_ir.h), tlc's own generator by default */
    int num_sms;              /* --num-sms: driver.get_num_sms() (0: the target's) */
    bool verbose;             /* -v: say what the driver does, on stderr */
    bool time_passes;         /* --time-passes: per-stage times on stderr */
    bool help, version;
    char warnings[1024];      /* "tlc: warning: ..." lines for main.c to print */
} tlc_cli_options;

typedef enum {
    TLC_ARGS_OK,      /* compile */
    TLC_ARGS_EXIT_OK, /* --help / --version printed what was asked */
    TLC_ARGS_USAGE,   /* bad usage: message written to err; exit 2 */
    TLC_ARGS_FAIL,    /* valid usage that cannot be honoured (planned --emit); exit 1 */
} tlc_args_result;

/* Parses argv[1..argc-1]. Messages (without the "tlc: error: " prefix) go
 * to err; the strings in *o point into argv. */
tlc_args_result tlc_cli_parse(int argc, char **argv, tlc_cli_options *o, tlc_strbuf *err);
/* Full --help text. */
void tlc_cli_usage(tlc_strbuf *out);

/* ---- reports on standard error (reports.c) ---- */
/* -v before compiling: input, target, optimization level, defines, emit. */
void tlc_verbose_start(tlc_strbuf *out, const tlc_cli_options *o, size_t input_bytes);
/* -v after: the kernels compiled, the stages that ran, where the output
 * went (out_bytes; wrote false when nothing was written). */
void tlc_verbose_end(tlc_strbuf *out, const tlc_cli_options *o, const tlc_compilation *c, bool wrote,
                     size_t out_bytes);
/* --time-passes: one line per stage that ran (ms, share of the total), then
 * the total. */
void tlc_time_report(tlc_strbuf *out, const char *input, const tlc_stage_times *t);

/* ---- input (read_input.c) ---- */
/* Reads a whole file ("-": stdin) into a malloc'd buffer (NUL-terminated,
 * may contain NULs). Returns NULL and sets errno on failure. */
char *tlc_read_input(const char *path, size_t *len);
#endif
