#include "arena.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tlc_arena_block {
    tlc_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void tlc_arena_init(tlc_arena *a) { a->head = NULL; a->total = 0; }

void tlc_arena_free(tlc_arena *a) {
    tlc_arena_block *b = a->head;
    while (b) { tlc_arena_block *n = b->next; free(b); b = n; }
    a->head = NULL;
    a->total = 0;
}

static void oom(void) {
    fputs("tlc: fatal: out of memory\n", stderr);
    abort();
}

void *tlc_arena_alloc(tlc_arena *a, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    tlc_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        b = malloc(sizeof(tlc_arena_block) + cap);
        if (!b) oom();
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    a->total += size;
    memset(p, 0, size);
    return p;
}

void *tlc_arena_calloc(tlc_arena *a, size_t n, size_t size) {
    if (size && n > (size_t)-1 / size) oom();
    return tlc_arena_alloc(a, n * size);
}

char *tlc_arena_strndup(tlc_arena *a, const char *s, size_t n) {
    char *p = tlc_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *tlc_arena_strdup(tlc_arena *a, const char *s) { return tlc_arena_strndup(a, s, strlen(s)); }

char *tlc_arena_printf(tlc_arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    char *p = tlc_arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void tlc_ptrvec_push(tlc_ptrvec *v, void *p) {
    if (v->len == v->cap) {
        int nc = v->cap ? v->cap * 2 : 8;
        void **ni = realloc(v->items, (size_t)nc * sizeof(void *));
        if (!ni) oom();
        v->items = ni;
        v->cap = nc;
    }
    v->items[v->len++] = p;
}

void **tlc_ptrvec_freeze(tlc_ptrvec *v, tlc_arena *a) {
    void **out = tlc_arena_calloc(a, (size_t)(v->len ? v->len : 1), sizeof(void *));
    if (v->len) memcpy(out, v->items, (size_t)v->len * sizeof(void *));
    tlc_ptrvec_free(v);
    return out;
}

void tlc_ptrvec_free(tlc_ptrvec *v) {
    free(v->items);
    v->items = NULL;
    v->len = v->cap = 0;
}
