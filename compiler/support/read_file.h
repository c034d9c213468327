/* Reading a whole file into memory. */
#ifndef TLC_READ_FILE_H
#define TLC_READ_FILE_H
#include <stddef.h>

/* The whole file at path (a regular file is sized first, so hundreds of MB
 * are one read; pipes and devices grow a buffer) in a malloc'd buffer,
 * NUL-terminated (the text may itself hold NULs); its length goes to *len
 * unless len is NULL. NULL with errno set when it cannot be read (EISDIR
 * for a directory). */
char *tlc_read_file(const char *path, size_t *len);
/* The same for what remains to be read from an open descriptor. */
char *tlc_read_fd(int fd, size_t *len);
#endif
