/* Fragment: how a register tile is spread over the threads of a block
 * (docs/architecture.md, "Layouts"). A fragment of a tile of shape [d0, d1, ...]
 * maps each logical index to (thread, register slot), and may be replicated
 * (several threads hold the same element, e.g. a row statistic after
 * reduce_max is held by every thread that owned part of that row).
 *
 * Representation: mixed-radix digits. Each logical dim is split into digits
 * (extent e, logical stride ls: the digit's value v contributes v*ls to the
 * logical index of that dim). Each digit is placed either on the thread index
 * (thread += v*ts) or on the register slot (slot += v*ts). Replication digits
 * belong to no logical dim: they are thread index digits over which the value
 * is the same. With this one form we express
 *   - blocked layouts for Parallel loops and copies (vector of V consecutive
 *     elements per thread in slots, then threads, then repeats in slots),
 *   - reduction results (the reduced dim's thread digits become replication),
 *   - the accumulator fragments fixed by mma.sync m16n8k16 and wgmma m64nNk16
 *     and a warp policy (lane / warp / warpgroup bits are thread digits).
 * Forward map (logical -> thread, slot) and inverse (thread, slot -> logical)
 * are both closed-form div/mod by constants, which lowering emits as code. */
#ifndef TLC_FRAGMENT_H
#define TLC_FRAGMENT_H
#include <stdbool.h>
#include <stdint.h>
#include "../support/arena.h"
#include "../support/strbuf.h"

#define TLC_FRAG_MAX_DIGITS 16
#define TLC_FRAG_MAX_RANK 4

typedef enum { TLC_DIGIT_THREAD, TLC_DIGIT_SLOT } tlc_digit_target;

typedef struct tlc_digit {
    int dim;         /* logical dim, or -1 for a replication digit (thread target only) */
    int64_t extent;  /* number of values of this digit (>= 1) */
    int64_t lstride; /* logical stride within `dim` (unused for replication) */
    tlc_digit_target target;
    int64_t tstride; /* stride in the thread index or in the slot index */
} tlc_digit;

typedef struct tlc_fragment {
    int rank;
    int64_t shape[TLC_FRAG_MAX_RANK];
    int ndigits;
    tlc_digit digits[TLC_FRAG_MAX_DIGITS];
    int64_t threads;   /* threads covered: product of thread digit extents */
    int64_t slots;     /* registers per thread: product of slot digit extents */
    int64_t replicate; /* product of replication digit extents */
    /* Where the fragment came from, for --emit=layout and conflict messages:
     * "gemm accumulator (wgmma m64n256k16, FullCol)", "parallel", "reduce of acc_s dim 1". */
    const char *origin;
} tlc_fragment;

/* Strength of a layout proposal during inference (section 3). */
typedef enum { TLC_STRENGTH_FREE = 0, TLC_STRENGTH_COMMON = 1, TLC_STRENGTH_STRICT = 2 } tlc_strength;

/* A blocked fragment for an elementwise tile of `shape` over `threads`
 * threads: `vec` consecutive elements of the last dim per thread in slots
 * (halved until it divides the last dim), threads laid row-major over the
 * rest, then repeats in slots. Threads beyond the tile's size are replicas.
 * Placement, chosen for memory-bound kernels (see layout/fragment.c):
 *   - the 16-byte vectors of a row go across the lanes of a warp, their
 *     count padded to a power of two (at most 32): a row of 20 vectors takes
 *     32 lanes, 12 of them masked, so a warp never straddles two rows and
 *     reductions along the row are butterfly shuffles;
 *   - lanes left over go to the next outer dims;
 *   - warps go to the outer dims when those have at least one row per warp
 *     (reductions along the row then stay inside a warp), else along the row;
 *   - what is left of every dim repeats in slots. */
tlc_fragment *tlc_fragment_blocked(tlc_arena *a, int rank, const int64_t *shape, int64_t threads, int vec);
/* f with its dim d renamed to[d] (a permutation, or dims of extent 1
 * dropped or added): the same threads and slots hold the same elements of
 * a tile of `rank` dims and `shape`. Dims without digits need no entry. */
tlc_fragment *tlc_fragment_relabel(tlc_arena *a, const tlc_fragment *f, const int *to, int rank, const int64_t *shape);
/* The layout of a loop over `shape` (rank dims) in which fragment b's dim d
 * is the loop's dim map[d] (-1: a dim of extent 1 the loop does not name):
 * b's placement of the dims it has, the loop's other dims spread over b's
 * replicas (the threads that hold the same element of b) where their
 * extents divide, the rest in new slots. A thread then runs the iterations
 * whose elements of b it holds. NULL where that needs more digits than a
 * fragment holds. */
tlc_fragment *tlc_fragment_expand(tlc_arena *a, const tlc_fragment *b, const int *map, int rank,
                                  const int64_t *shape);
/* Every one of `threads` threads holds the whole tile, row-major in its
 * slots (TileLang's fragments used element by element outside Parallel
 * loops: a scalar kept in a (1,) fragment, a mask indexed by a serial loop). */
tlc_fragment *tlc_fragment_per_thread(tlc_arena *a, int rank, const int64_t *shape, int64_t threads);
/* Whether f is such a layout (for any thread count): slot = the row-major
 * index of the element, every thread digit a replication digit. */
bool tlc_fragment_is_per_thread(const tlc_fragment *f);
/* Whether f holds dim d in register slots alone (no thread digit), so that
 * a thread holding one element along it holds them all: what an index a
 * Parallel loop's iterations share (lse[k, j]) needs. */
bool tlc_fragment_dim_in_slots(const tlc_fragment *f, int d);
/* Fragment of reducing `dim` of `src`: digits of `dim` on threads become
 * replication digits, digits of `dim` on slots disappear; the other dims keep
 * their places (renumbered). */
tlc_fragment *tlc_fragment_reduce(tlc_arena *a, const tlc_fragment *src, int dim);
/* The layout of a tile whose element k of dim `dim` is src's elements
 * k * c .. k * c + c - 1 (TileLang's packed `B_local[i, j // 2]`): the
 * digits of dim below c become replication digits (threads) or disappear
 * (slots), the rest divide their stride by c. NULL unless c divides the
 * dim's extent and the digits below c cover exactly 0 .. c - 1 (a digit
 * across c is split where its extent allows). */
tlc_fragment *tlc_fragment_divide(tlc_arena *a, const tlc_fragment *src, int dim, int64_t c);
/* The same elements in the same threads and slots, seen as a tile of
 * `rank` dims and `shape` with the same row-major order (TileLang's
 * T.reshape of a fragment): digits split where they cross a new dim's end.
 * NULL where the element counts differ, a dim is padded, or a digit
 * cannot be split. */
tlc_fragment *tlc_fragment_reshape(tlc_arena *a, const tlc_fragment *src, int rank, const int64_t *shape);
/* Whether a and b put every element in the same thread (replica 0) and
 * slot, and have the same counts: tlc_fragment_equal, or the same mapping
 * written in other digits (a reshaped layout reshaped back). */
bool tlc_fragment_same(const tlc_fragment *a, const tlc_fragment *b);
/* f with a new dim `dim` of `extent` elements (dims from `dim` on move up
 * one) held in register slots after f's own: every thread that holds an
 * element of f holds the whole new dim beside it. NULL past the rank or
 * digit limits. */
tlc_fragment *tlc_fragment_add_slot_dim(tlc_arena *a, const tlc_fragment *f, int dim, int64_t extent);
/* Element (thread, slot) -> logical index; returns false if `thread` is not
 * covered. replica_index (may be NULL) says which replica this thread is. */
bool tlc_fragment_inverse(const tlc_fragment *f, int64_t thread, int64_t slot, int64_t *logical, int64_t *replica_index);
/* Logical index -> (thread of replica 0, slot). */
void tlc_fragment_forward(const tlc_fragment *f, const int64_t *logical, int64_t *thread, int64_t *slot);
/* Checks the digits form a bijection (logical x replicas <-> thread x slot
 * for the covered range). Used by tests and the verifier. */
bool tlc_fragment_is_valid(const tlc_fragment *f, char *why, int whylen);
/* Padding: the digits of a dim may cover more than shape[dim] (20 vectors
 * of a row over 32 lanes); such logical indices are holes that hold no
 * element, which lowering masks. True when `logical` is a hole. */
bool tlc_fragment_is_hole(const tlc_fragment *f, const int64_t *logical);
bool tlc_fragment_has_padding(const tlc_fragment *f);
/* The slot in which `thread` holds element `logical` (any replica), or -1
 * when that thread holds no copy of it. */
int64_t tlc_fragment_slot_of(const tlc_fragment *f, const int64_t *logical, int64_t thread);
/* Contribution of the slot digits alone / the thread digits alone to the
 * logical index (they add up: logical = thread part + slot part). */
void tlc_fragment_slot_part(const tlc_fragment *f, int64_t slot, int64_t *logical);
void tlc_fragment_thread_part(const tlc_fragment *f, int64_t thread, int64_t *logical);
/* Number of consecutive slots (from a slot index multiple of it) holding
 * consecutive elements of the last dim: the register vector width. */
int64_t tlc_fragment_vector_len(const tlc_fragment *f);
/* Sorts digits (thread digits first, then slots, each by stride), drops
 * extent-1 digits and recomputes threads / slots / replicate. Every
 * constructor returns canonical fragments, so equal layouts compare equal. */
void tlc_fragment_canonicalize(tlc_fragment *f);
bool tlc_fragment_equal(const tlc_fragment *a, const tlc_fragment *b);
void tlc_fragment_print(tlc_strbuf *sb, const tlc_fragment *f);

/* ---- shared-memory layout ---- */
typedef enum { TLC_SWIZZLE_NONE = 0, TLC_SWIZZLE_32B = 32, TLC_SWIZZLE_64B = 64, TLC_SWIZZLE_128B = 128 } tlc_swizzle;

/* Logical index -> element offset. Row-major over `shape` with the innermost
 * row padded to `row_elems` (>= shape[last]) and an optional XOR swizzle of
 * 16-byte chunks within each `swizzle`-byte row segment, the pattern TMA
 * writes and wgmma descriptors read (chunk ^= (row % (swizzle/16))). */
typedef struct tlc_layout {
    int rank;
    int64_t shape[TLC_FRAG_MAX_RANK];
    int64_t row_elems;
    int elem_bytes;
    tlc_swizzle swizzle;
    int64_t bytes;    /* total size */
    int64_t offset;   /* byte offset in the block's dynamic shared memory (set by allocation) */
    int stages;       /* > 1 when multi-buffered by Pipelined */
    /* > 0: the tile is stored as column panels of panel_elems columns
     * (panel_elems * elem_bytes == swizzle bytes), each panel a row-major
     * [rows, panel_elems] block, panels one after another; the swizzle
     * applies within panels. What TMA boxes and wgmma descriptors address
     * when a row is wider than the swizzle (gemm_layouts.h). */
    int64_t panel_elems;
} tlc_layout;

tlc_layout *tlc_layout_row_major(tlc_arena *a, int rank, const int64_t *shape, int elem_bytes);
tlc_layout *tlc_layout_swizzled(tlc_arena *a, int rank, const int64_t *shape, int elem_bytes, tlc_swizzle s);
int64_t tlc_layout_offset(const tlc_layout *l, const int64_t *logical); /* element offset */
/* Bytes of shared memory the buffer takes: one copy per pipeline stage. */
int64_t tlc_layout_total_bytes(const tlc_layout *l);
void tlc_layout_print(tlc_strbuf *sb, const tlc_layout *l);
#endif
