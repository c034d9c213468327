/* The input of the tlc commands: a file, or standard input for "-". */
#include "cli.h"
#include <string.h>
#include <unistd.h>
#include "support/read_file.h"

char *tlc_read_input(const char *path, size_t *len) {
    return strcmp(path, "-") == 0 ? tlc_read_fd(STDIN_FILENO, len) : tlc_read_file(path, len);
}
