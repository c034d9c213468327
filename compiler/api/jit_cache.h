/* The JIT's on-disk cache: compiled PTX (with its tlc.meta block) keyed by a
 * SHA-256 of everything that determines it (source, defines, kernel filter,
 * arch, compiler version).
 *
 * Directory: $TLC_CACHE_DIR, else ~/.cache/tlc (created on store, like
 * mkdir -p). One file per entry, <64 hex digits of the key>.tlcjit:
 *   offset  0  magic "TLCJITC\0"            8 bytes
 *           8  format version (1)          u32 little-endian
 *          12  reserved (0)                u32
 *          16  key                          32 bytes
 *          48  payload length               u64 little-endian
 *          56  payload checksum            32 bytes (4 x 64-bit lanes, see jit_cache.c)
 *          88  payload
 * Entries are written to a uniquely named temporary file in the same
 * directory, fsync'd, then renamed into place, so readers see either no entry
 * or a whole one, from any number of threads and processes. Reads verify
 * everything; an entry that fails (truncated, corrupted, wrong key) is removed
 * and reported as TLC_JIT_CACHE_CORRUPT, which callers treat as a miss.
 * No global state. */
#ifndef TLC_JIT_CACHE_H
#define TLC_JIT_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../frontend/sema.h" /* tlc_define */

enum { TLC_JIT_KEY_BYTES = 32, TLC_JIT_ENTRY_HEADER_BYTES = 88, TLC_JIT_FORMAT_VERSION = 1 };

typedef struct tlc_jit_key {
    uint8_t bytes[TLC_JIT_KEY_BYTES];
} tlc_jit_key;

typedef struct tlc_jit_key_input {
    const char *source; size_t source_len;
    const tlc_define *defines; int ndefines; /* any order: sorted by name (stably) before hashing */
    const char *kernel;           /* kernel filter; NULL: every kernel */
    const char *arch;             /* "sm_90a" */
    const char *compiler_version; /* TLC_VERSION */
    const char *options;          /* anything else that changes the output (e.g. "O3"); may be NULL */
} tlc_jit_key_input;

void tlc_jit_key_compute(const tlc_jit_key_input *in, tlc_jit_key *out);
void tlc_jit_key_hex(const tlc_jit_key *k, char out[2 * TLC_JIT_KEY_BYTES + 1]);

/* $TLC_CACHE_DIR, else $HOME/.cache/tlc. False (err set) when neither is set
 * or the path does not fit. Does not create it. */
bool tlc_jit_cache_default_dir(char *buf, size_t n, char *err, size_t errlen);
/* mkdir -p. */
bool tlc_jit_cache_mkdirs(const char *dir, char *err, size_t errlen);

typedef enum {
    TLC_JIT_CACHE_HIT,
    TLC_JIT_CACHE_MISS,
    TLC_JIT_CACHE_CORRUPT, /* an entry existed but failed verification; it was removed */
    TLC_JIT_CACHE_ERROR,   /* I/O error other than "absent" (err set); treat as a miss */
} tlc_jit_cache_result;

/* On a hit, *payload is malloc'd (plus a NUL after the len bytes, so PTX
 * can be used as a C string); the caller frees it. */
tlc_jit_cache_result tlc_jit_cache_lookup(const char *dir, const tlc_jit_key *key, char **payload, size_t *len,
                                          char *err, size_t errlen);
/* Writes the entry atomically (creating dir if needed). */
bool tlc_jit_cache_store(const char *dir, const tlc_jit_key *key, const void *payload, size_t len, char *err,
                         size_t errlen);
/* Path of an entry: dir + "/" + hex + ".tlcjit". False when it does not fit. */
bool tlc_jit_cache_entry_path(const char *dir, const tlc_jit_key *key, char *buf, size_t n);
#endif
