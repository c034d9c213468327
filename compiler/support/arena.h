/* Region allocator: every IR node (tokens, AST, Tile IR, Thread IR) lives in an
 * arena owned by one compilation, so freeing a compilation is one call and no
 * pass ever frees a node. Not thread-safe by design: one arena per compilation. */
#ifndef TLC_ARENA_H
#define TLC_ARENA_H
#include <stddef.h>

typedef struct tlc_arena_block tlc_arena_block;
typedef struct tlc_arena {
    tlc_arena_block *head;
    size_t total; /* bytes handed out, for statistics */
} tlc_arena;

void tlc_arena_init(tlc_arena *a);
void tlc_arena_free(tlc_arena *a);
/* Zero-initialised, aligned to 16 bytes. Aborts with a message on OOM. */
void *tlc_arena_alloc(tlc_arena *a, size_t size);
void *tlc_arena_calloc(tlc_arena *a, size_t n, size_t size);
char *tlc_arena_strdup(tlc_arena *a, const char *s);
char *tlc_arena_strndup(tlc_arena *a, const char *s, size_t n);
char *tlc_arena_printf(tlc_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define TLC_NEW(arena, T) ((T *)tlc_arena_alloc((arena), sizeof(T)))
#define TLC_NEW_ARRAY(arena, T, n) ((T *)tlc_arena_calloc((arena), (n), sizeof(T)))

/* Growable array of pointers backed by malloc (used while building; freeze
 * into the arena with tlc_ptrvec_freeze). */
typedef struct tlc_ptrvec {
    void **items;
    int len, cap;
} tlc_ptrvec;
void tlc_ptrvec_push(tlc_ptrvec *v, void *p);
void **tlc_ptrvec_freeze(tlc_ptrvec *v, tlc_arena *a); /* copies + frees v */
void tlc_ptrvec_free(tlc_ptrvec *v);
#endif
