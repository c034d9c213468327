/* The JIT's on-disk cache (format and guarantees: jit_cache.h). */
#include "jit_cache.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "jit_sha256.h"

static const char MAGIC[8] = {'T', 'L', 'C', 'J', 'I', 'T', 'C', 0};
enum { MAX_PAYLOAD = 1 << 30 };

static void errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- key ---- */

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Each field: a tag byte, a length, the bytes; absent (NULL) fields have
 * their own tag, so NULL and "" differ and no two inputs serialize alike. */
static void hash_field(tlc_sha256_ctx *s, char tag, const char *data, size_t len) {
    uint8_t hdr[9];
    hdr[0] = (uint8_t)(data ? tag : '-');
    put_u64(hdr + 1, data ? len : 0);
    tlc_sha256_update(s, hdr, sizeof hdr);
    if (data && len) tlc_sha256_update(s, data, len);
}

static void hash_str(tlc_sha256_ctx *s, char tag, const char *str) { hash_field(s, tag, str, str ? strlen(str) : 0); }

void tlc_jit_key_compute(const tlc_jit_key_input *in, tlc_jit_key *out) {
    tlc_sha256_ctx s;
    tlc_sha256_init(&s);
    static const char domain[] = "tlc jit cache key v1";
    tlc_sha256_update(&s, domain, sizeof domain);
    hash_field(&s, 'S', in->source ? in->source : "", in->source ? in->source_len : 0);
    /* Stable insertion sort of indices by name: order of -D flags does not
     * matter, except between repeats of one name (the last one wins). */
    int n = in->ndefines > 0 && in->defines ? in->ndefines : 0;
    int stack_idx[64];
    int *idx = n <= 64 ? stack_idx : malloc((size_t)n * sizeof *idx);
    uint8_t count[9];
    count[0] = 'N';
    if (!idx) { /* out of memory: hash in the given order (still deterministic, just order-sensitive) */
        put_u64(count + 1, (uint64_t)n);
        tlc_sha256_update(&s, count, sizeof count);
        for (int i = 0; i < n; i++) {
            hash_str(&s, 'n', in->defines[i].name);
            hash_str(&s, 'v', in->defines[i].value);
        }
    } else {
        for (int i = 0; i < n; i++) {
            int j = i;
            const char *name = in->defines[i].name ? in->defines[i].name : "";
            while (j > 0) {
                const char *prev = in->defines[idx[j - 1]].name ? in->defines[idx[j - 1]].name : "";
                if (strcmp(prev, name) <= 0) break;
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = i;
        }
        put_u64(count + 1, (uint64_t)n);
        tlc_sha256_update(&s, count, sizeof count);
        for (int i = 0; i < n; i++) {
            hash_str(&s, 'n', in->defines[idx[i]].name);
            hash_str(&s, 'v', in->defines[idx[i]].value);
        }
        if (idx != stack_idx) free(idx);
    }
    hash_str(&s, 'K', in->kernel);
    hash_str(&s, 'A', in->arch);
    hash_str(&s, 'C', in->compiler_version);
    hash_str(&s, 'O', in->options);
    tlc_sha256_final(&s, out->bytes);
}

void tlc_jit_key_hex(const tlc_jit_key *k, char out[2 * TLC_JIT_KEY_BYTES + 1]) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < TLC_JIT_KEY_BYTES; i++) {
        out[2 * i] = hex[k->bytes[i] >> 4];
        out[2 * i + 1] = hex[k->bytes[i] & 15];
    }
    out[2 * TLC_JIT_KEY_BYTES] = 0;
}

/* ---- payload checksum ----
 * Corruption detection, not security, and it must not dominate a cache hit
 * (SHA-256 of a 100 KiB PTX costs ~0.3 ms): four independent 64-bit lanes,
 * each word folded in by xor, multiply by an odd constant and rotate. Every
 * step is a bijection of the lane state, so any change confined to one lane
 * always changes the sum; the length is checked separately. */

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t finish_lane(uint64_t x, uint64_t len) {
    x ^= len * 0x9fb21c651e98df25ull;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 32);
}

static void payload_checksum(const void *data, size_t len, uint8_t out[32]) {
    static const uint64_t mult[4] = {0xa0761d6478bd642full, 0xe7037ed1a0b428dbull, 0x8ebc6af09c88c6e3ull,
                                     0x589965cc75374cc3ull};
    uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
    const uint8_t *p = data;
    size_t i = 0;
    for (; i + 32 <= len; i += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * l, 8); /* host byte order: entries are not meant to move between machines */
            lane[l] = rotl64((lane[l] ^ w) * mult[l], 27);
        }
    uint8_t tail[32] = {0};
    memcpy(tail, p + i, len - i);
    for (int l = 0; l < 4; l++) {
        uint64_t w;
        memcpy(&w, tail + 8 * l, 8);
        lane[l] = rotl64((lane[l] ^ w) * mult[l], 27);
        put_u64(out + 8 * l, finish_lane(lane[l], (uint64_t)len));
    }
}

/* ---- directory ---- */

bool tlc_jit_cache_default_dir(char *buf, size_t n, char *err, size_t errlen) {
    const char *d = getenv("TLC_CACHE_DIR");
    int w;
    if (d && *d) w = snprintf(buf, n, "%s", d);
    else {
        const char *home = getenv("HOME");
        if (!home || !*home) {
            errf(err, errlen, "no JIT cache directory: neither TLC_CACHE_DIR nor HOME is set");
            return false;
        }
        w = snprintf(buf, n, "%s/.cache/tlc", home);
    }
    if (w < 0 || (size_t)w >= n) {
        errf(err, errlen, "JIT cache directory path too long");
        return false;
    }
    return true;
}

bool tlc_jit_cache_mkdirs(const char *dir, char *err, size_t errlen) {
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        errf(err, errlen, "bad JIT cache directory '%.200s'", dir);
        return false;
    }
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != 0) continue;
        char c = path[i];
        path[i] = 0;
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            errf(err, errlen, "cannot create '%.200s': %s", path, strerror(errno));
            return false;
        }
        path[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errf(err, errlen, "'%.200s' is not a directory", dir);
        return false;
    }
    return true;
}

bool tlc_jit_cache_entry_path(const char *dir, const tlc_jit_key *key, char *buf, size_t n) {
    char hex[2 * TLC_JIT_KEY_BYTES + 1];
    tlc_jit_key_hex(key, hex);
    int w = snprintf(buf, n, "%s/%s.tlcjit", dir, hex);
    return w > 0 && (size_t)w < n;
}

/* ---- read ---- */

static bool read_full(int fd, void *buf, size_t n) {
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

/* Removes a bad entry, unless another process has replaced it meanwhile. */
static void remove_if_same(const char *path, const struct stat *seen) {
    struct stat now;
    if (stat(path, &now) == 0 && now.st_ino == seen->st_ino && now.st_dev == seen->st_dev) unlink(path);
}

tlc_jit_cache_result tlc_jit_cache_lookup(const char *dir, const tlc_jit_key *key, char **payload, size_t *len,
                                          char *err, size_t errlen) {
    char path[4096];
    *payload = NULL;
    *len = 0;
    if (!tlc_jit_cache_entry_path(dir, key, path, sizeof path)) {
        errf(err, errlen, "JIT cache path too long");
        return TLC_JIT_CACHE_ERROR;
    }
    /* O_NONBLOCK: a FIFO (or device) in an entry's place must not block the
     * open; fstat below rejects anything but a regular file */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return TLC_JIT_CACHE_MISS;
        errf(err, errlen, "cannot open '%.200s': %s", path, strerror(errno));
        return TLC_JIT_CACHE_ERROR;
    }
    struct stat st;
    uint8_t hdr[TLC_JIT_ENTRY_HEADER_BYTES];
    char *data = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) goto corrupt;
    if (st.st_size < TLC_JIT_ENTRY_HEADER_BYTES || st.st_size > (off_t)MAX_PAYLOAD + TLC_JIT_ENTRY_HEADER_BYTES) goto corrupt;
    if (!read_full(fd, hdr, sizeof hdr)) goto corrupt;
    uint32_t version = (uint32_t)hdr[8] | (uint32_t)hdr[9] << 8 | (uint32_t)hdr[10] << 16 | (uint32_t)hdr[11] << 24;
    uint64_t plen = get_u64(hdr + 48);
    if (memcmp(hdr, MAGIC, 8) != 0 || version != TLC_JIT_FORMAT_VERSION ||
        memcmp(hdr + 16, key->bytes, TLC_JIT_KEY_BYTES) != 0 ||
        plen != (uint64_t)st.st_size - TLC_JIT_ENTRY_HEADER_BYTES)
        goto corrupt;
    data = malloc((size_t)plen + 1);
    if (!data) {
        close(fd);
        errf(err, errlen, "out of memory reading the JIT cache");
        return TLC_JIT_CACHE_ERROR;
    }
    if (!read_full(fd, data, (size_t)plen)) goto corrupt;
    uint8_t extra;
    if (read(fd, &extra, 1) != 0) goto corrupt; /* grew since fstat: not the file we sized */
    uint8_t sum[32];
    payload_checksum(data, (size_t)plen, sum);
    if (memcmp(sum, hdr + 56, 32) != 0) goto corrupt;
    close(fd);
    data[plen] = 0;
    *payload = data;
    *len = (size_t)plen;
    return TLC_JIT_CACHE_HIT;
corrupt:
    free(data);
    close(fd);
    remove_if_same(path, &st);
    errf(err, errlen, "JIT cache entry '%.200s' failed verification and was removed", path);
    return TLC_JIT_CACHE_CORRUPT;
}

/* ---- write ---- */

static bool write_full(int fd, const void *buf, size_t n) {
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

bool tlc_jit_cache_store(const char *dir, const tlc_jit_key *key, const void *payload, size_t len, char *err,
                         size_t errlen) {
    if (len > MAX_PAYLOAD || (len && !payload)) {
        errf(err, errlen, "JIT cache payload too large");
        return false;
    }
    if (!tlc_jit_cache_mkdirs(dir, err, errlen)) return false;
    char path[4096], tmp[4200], hex[2 * TLC_JIT_KEY_BYTES + 1];
    if (!tlc_jit_cache_entry_path(dir, key, path, sizeof path)) {
        errf(err, errlen, "JIT cache path too long");
        return false;
    }
    tlc_jit_key_hex(key, hex);
    /* Unique per process, thread and attempt; O_EXCL settles any collision. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long tid = (unsigned long)(uintptr_t)pthread_self();
    int fd = -1;
    for (unsigned attempt = 0; attempt < 1000 && fd < 0; attempt++) {
        snprintf(tmp, sizeof tmp, "%s/.tmp-%.16s-%ld-%lx-%lx-%u", dir, hex, (long)getpid(), tid,
                 (unsigned long)ts.tv_nsec, attempt);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST) {
            errf(err, errlen, "cannot create '%.200s': %s", tmp, strerror(errno));
            return false;
        }
    }
    if (fd < 0) {
        errf(err, errlen, "cannot create a temporary file in '%.200s'", dir);
        return false;
    }
    uint8_t hdr[TLC_JIT_ENTRY_HEADER_BYTES] = {0};
    memcpy(hdr, MAGIC, 8);
    hdr[8] = TLC_JIT_FORMAT_VERSION;
    memcpy(hdr + 16, key->bytes, TLC_JIT_KEY_BYTES);
    put_u64(hdr + 48, (uint64_t)len);
    payload_checksum(payload ? payload : "", len, hdr + 56);
    bool ok = write_full(fd, hdr, sizeof hdr) && write_full(fd, payload ? payload : "", len) && fsync(fd) == 0;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        saved = errno;
    }
    if (!ok) {
        unlink(tmp);
        errf(err, errlen, "cannot write JIT cache entry '%.200s': %s", path, strerror(saved));
        return false;
    }
    return true;
}
