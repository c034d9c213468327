/* SHA-256 (FIPS 180-4), used by the JIT cache for keys and entry checksums.
 * Streaming: init, update any number of times, final. No global state. */
#ifndef TLC_JIT_SHA256_H
#define TLC_JIT_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct tlc_sha256_ctx {
    uint32_t h[8];
    uint64_t total; /* bytes hashed so far */
    uint8_t block[64];
    size_t fill;    /* bytes in block */
} tlc_sha256_ctx;

void tlc_sha256_init(tlc_sha256_ctx *s);
void tlc_sha256_update(tlc_sha256_ctx *s, const void *data, size_t len);
void tlc_sha256_final(tlc_sha256_ctx *s, uint8_t out[32]);
void tlc_sha256(const void *data, size_t len, uint8_t out[32]);
#endif
