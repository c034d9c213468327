#include "read_file.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *read_fd(int fd, size_t hint, size_t *len) {
    size_t cap = hint + 1 > 4096 ? hint + 1 : 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) { errno = ENOMEM; return NULL; }
    for (;;) {
        if (cap - n < 2) {
            if (cap > SIZE_MAX / 2) { free(buf); errno = EFBIG; return NULL; }
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); errno = ENOMEM; return NULL; }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

char *tlc_read_fd(int fd, size_t *len) { return read_fd(fd, 0, len); }

char *tlc_read_file(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        errno = EISDIR;
        return NULL;
    }
    size_t hint = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
    char *buf = read_fd(fd, hint, len);
    int e = errno;
    close(fd);
    errno = e;
    return buf;
}
