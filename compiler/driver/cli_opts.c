/* Option-matching primitives shared by `tlc` (cli_args.c) and `tlc run`
 * (tlc_run.c): the two commands spell options the same way. */
#include <ctype.h>
#include <string.h>
#include "cli.h"

bool tlc_opt_is_identifier(const char *s, size_t n) {
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return true;
}

int tlc_opt_long(const char *name, int argc, char **argv, int *i, const char **value) {
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0') return 0;
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}

int tlc_opt_short(char letter, int argc, char **argv, int *i, const char **value) {
    const char *arg = argv[*i];
    if (arg[0] != '-' || arg[1] != letter) return 0;
    if (arg[2] != '\0') {
        *value = arg + 2;
        return 1;
    }
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}

bool tlc_opt_split_define(const char *text, size_t *name_len, const char **value) {
    const char *eq = strchr(text, '=');
    if (!eq || !tlc_opt_is_identifier(text, (size_t)(eq - text)) || eq[1] == '\0') return false;
    *name_len = (size_t)(eq - text);
    *value = eq + 1;
    return true;
}
