/* Internals of the Tile IR interpreter (include/tlc/interp.h), shared by
 * interp.c (driver, statements), interp_expr.c and interp_tileops.c. */
#ifndef TLC_INTERP_INTERNAL_H
#define TLC_INTERP_INTERNAL_H
#include <setjmp.h>
#include <stdnoreturn.h>
#include "interp/interp.h"
#include "interp/float_conv.h"

#define TLC_INTERP_MAX_RANK 8

/* One scalar: floats as doubles holding a value of their dtype, the rest as int64. */
typedef union tlc_ival { double f; int64_t i; } tlc_ival;

static inline bool tlc_interp_isf(tir_dtype t) { return tir_dtype_is_float(t); }

/* A buffer as it exists during a run: every dtype is widened in memory
 * (floats to double, integers / bool to int64) holding values already
 * rounded to the buffer's dtype. */
typedef struct ibuf {
    const tir_buffer *b;
    tlc_ival *data;        /* the elements (the current thread's copy where per_thread) */
    tlc_ival *base;        /* the allocation */
    int64_t cap;           /* allocated elements */
    bool per_thread;       /* one copy per thread (thread-indexed kernels' local and var buffers) */
    int rank;
    int64_t dims[TLC_INTERP_MAX_RANK];
    int64_t strides[TLC_INTERP_MAX_RANK];
    int64_t elems;
    bool live;             /* allocated in this block / launch */
} ibuf;

/* A region with its starts and extents evaluated. */
typedef struct rregion {
    ibuf *ib;
    int rank;
    int64_t start[TLC_INTERP_MAX_RANK];
    int64_t ext[TLC_INTERP_MAX_RANK];
    int64_t elems;
    tlc_loc loc;
} rregion;

typedef struct targ {       /* a bound tensor argument */
    bool bound;
    void *data;
    tir_dtype dtype;
    int rank;
    int64_t shape[TLC_INTERP_MAX_RANK];
} targ;

typedef struct sarg { bool bound; bool isf; tlc_ival v; } sarg;

struct tlc_interp {
    const tir_kernel *k;
    tlc_source src;     /* copy; text may be NULL */
    bool have_src;
    tlc_diag diag;
    jmp_buf jb;
    tlc_ival *vars;     /* by tir_var id */
    ibuf *bufs;         /* by tir_buffer id */
    targ *targs;        /* by parameter index */
    sarg *sargs;
    int64_t *symval;    /* by index into k->sym_dims; -1 unbound */
    /* scratch for tile ops (owned here so an error longjmp leaks nothing) */
    tlc_ival *scr[3];
    int64_t scr_cap[3];
    float *fa, *fb;
    int64_t fa_cap, fb_cap;
    tlc_interp_stats stats;
    tlc_interp_options opts;
    /* thread-indexed kernels (interp_threads.c): the threads in lockstep */
    int nthreads;          /* the block's threads; 0: not thread-indexed */
    tlc_ival *tvars;       /* nthreads x nvars; vars is the current thread's row */
    int thread;            /* the current thread */
    const bool *active;    /* nthreads: the threads running the current statement */
    int levels;            /* nesting levels of the body's conditions and loops, plus one */
    bool *masks;           /* levels x nthreads: the threads that run a level */
    int64_t *lv_a, *lv_b;  /* levels x nthreads: a level's per-thread values (a condition; a loop's bounds) */
    int64_t *st_off;       /* nthreads: an element store's offsets and values, before any is written */
    tlc_ival *st_val;
    /* thread ranges that wait for each other on mbarriers (interp_ranges.c) */
    struct tlc_interp_ranges *ranges;
    /* T.wgmma_gemm groups in flight (interp_wgmma.c), each tagged with the
     * strand that issued it; wgmma_owner: the running strand (-1: the
     * block's code); `issuing` while such a gemm runs (its own operands
     * are not checked) */
    struct tlc_interp_wgmma *wgmma;
    int wgmma_owner;
    bool wgmma_issuing;
    /* sync_grid (interp_grid_sync.c): each block's state between the parts */
    int64_t gs_blocks;
    tlc_ival *gs_vars;     /* blocks x the variables (of every thread) */
    ibuf *gs_bufs;         /* blocks x nbuffers */
    tlc_ival **gs_data;    /* blocks x nbuffers: a live buffer's elements */
};

/* A loop with a condition (while, break) goes on to its iteration'th
 * iteration (from 0): the condition in the current thread's values, and
 * a loop past TLC_INTERP_MAX_WHILE iterations stopped with an error. */
enum { TLC_INTERP_MAX_WHILE = 1 << 24 };
bool tlc_interp_loop_goes_on(tlc_interp *it, const tir_stmt *loop, int64_t i);
/* A loop iteration at loc: one step of the run, an error past
 * tlc_interp_options.max_steps (so is a block). */
void tlc_interp_step(tlc_interp *it, tlc_loc loc);
/* n steps at once: a loop iteration of thread-indexed code is one step for
 * each thread that runs it, so that the limit bounds the work done. */
void tlc_interp_steps(tlc_interp *it, tlc_loc loc, int64_t n);
noreturn void tlc_interp_fail(tlc_interp *it, tlc_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* interp_expr.c */
tlc_ival tlc_interp_eval(tlc_interp *it, const tir_expr *e); /* in e->dtype's representation */
double tlc_interp_eval_f(tlc_interp *it, const tir_expr *e);
bool tlc_interp_truthy(tlc_interp *it, const tir_expr *e); /* e's value as a condition */
int64_t tlc_interp_eval_i(tlc_interp *it, const tir_expr *e);
/* Converts v from dtype `from` to dtype `to` (rounding / truncation / wrap). */
tlc_ival tlc_interp_convert(tlc_ival v, tir_dtype from, tir_dtype to);
/* v's bytes (as a buffer of dtype from holds them) read as dtype to. */
tlc_ival tlc_interp_reinterpret(tlc_ival v, tir_dtype from, tir_dtype to);
/* Flat offset of buf[idx], checking bounds (error at loc). */
int64_t tlc_interp_offset(tlc_interp *it, const tir_buffer *b, tir_expr *const *idx, tlc_loc loc);
ibuf *tlc_interp_buf(tlc_interp *it, const tir_buffer *b, tlc_loc loc);

/* interp.c: one statement as the whole block runs it */
void tlc_interp_exec(tlc_interp *it, const tir_stmt *s);
/* calloc that aborts when out of memory (never NULL). */
void *tlc_interp_xcalloc(size_t n, size_t sz);
void *tlc_interp_xrealloc(void *p, size_t n, size_t sz); /* the same for realloc (n elements of sz) */

/* interp_threads.c */
void tlc_interp_threads_create(tlc_interp *it);  /* it->vars per thread */
void tlc_interp_threads_destroy(tlc_interp *it);
void tlc_interp_use_thread(tlc_interp *it, int t);
/* The first thread set in mask (callers ask only when one is; else 0). */
int tlc_interp_first_thread(const tlc_interp *it, const bool *mask);
/* Thread t's value of variable v (wrapped to its dtype). */
void tlc_interp_set_thread_var(tlc_interp *it, const tir_var *v, int t, int64_t value);
/* A block of a thread-indexed kernel (block indices set in thread 0):
 * thread 0's values in every thread, the thread indices set; then its
 * statements s run (the body, or a part of it between sync_grid()s). */
void tlc_interp_threads_setup(tlc_interp *it);
void tlc_interp_threads_run(tlc_interp *it, const tir_stmt *s);
/* Statement s for the threads of masks' row `level` (interp_ranges.c's
 * strands run their statements through it). */
void tlc_interp_threads_exec(tlc_interp *it, const tir_stmt *s, int level);

/* interp_wgmma.c: T.wgmma_gemm leaves its group in flight until a
 * T.wait_wgmma of its strand retires it; meanwhile any other use of its
 * accumulator, and any write to the shared memory it reads, is an error (on
 * the GPU either would race with the tensor cores). */
void tlc_interp_wgmma_begin(tlc_interp *it);                     /* a T.wgmma_gemm starts */
void tlc_interp_wgmma_issued(tlc_interp *it, const tir_stmt *s); /* ... and is in flight */
void tlc_interp_wgmma_wait(tlc_interp *it, int pending);         /* T.wait_wgmma(pending) */
bool tlc_interp_wgmma_any(const tlc_interp *it);                 /* groups in flight */
void tlc_interp_wgmma_check(tlc_interp *it, const tir_buffer *b, tlc_loc loc); /* b used at loc */
/* Writes to region r (at loc), or to element `off` of buffer b. */
void tlc_interp_wgmma_check_write(tlc_interp *it, const rregion *r, tlc_loc loc);
void tlc_interp_wgmma_check_store(tlc_interp *it, const tir_buffer *b, int64_t off, tlc_loc loc);
void tlc_interp_wgmma_reset(tlc_interp *it);                     /* a block starts */
void tlc_interp_wgmma_free(tlc_interp *it);

/* interp_ranges.c: a block whose thread ranges wait for each other on the
 * kernel's mbarriers (tir_kernel.mbarriers), each range a strand of
 * threads in lockstep, switching at waits that cannot return yet. */
typedef struct tlc_interp_ranges tlc_interp_ranges;
void tlc_interp_ranges_run(tlc_interp *it, const tir_stmt *body);
void tlc_interp_ranges_restore(tlc_interp *it); /* the interpreter's own masks back (after an error) */
void tlc_interp_ranges_free(tlc_interp *it);
/* Barrier statement s (an arrive, or a cp.async arrive) by the current
 * thread: one arrival. */
void tlc_interp_mbarrier_arrive(tlc_interp *it, const tir_stmt *s);
/* A wait reached as a plain statement: an error unless it returns at once. */
void tlc_interp_mbarrier_check_wait(tlc_interp *it, const tir_stmt *s);

/* interp_grid_sync.c: a kernel body in parts between its sync_grid()s */
int tlc_interp_grid_parts(const tir_kernel *k); /* 1: no sync_grid */
void tlc_interp_grid_begin(tlc_interp *it, int64_t blocks);
void tlc_interp_grid_free(tlc_interp *it);
void tlc_interp_grid_save(tlc_interp *it, int64_t block);    /* the block's variables and buffers */
void tlc_interp_grid_restore(tlc_interp *it, int64_t block);
void tlc_interp_grid_run_part(tlc_interp *it, int part);
/* A warp shuffle: its value as the source lane computes it. */
tlc_ival tlc_interp_shuffle(tlc_interp *it, const tir_expr *e);

/* interp_tileops.c */
/* Region primitives for the tile ops' steps (interp_tileops.c; the steps
 * are in the ops' files, reached through tir_stmt.op). A region is read
 * into a dense array in region order and written back; reads outside a
 * global tensor give 0 and writes there are dropped, any other
 * out-of-bounds element is an error at the op. */
void tlc_interp_region(tlc_interp *it, const tir_region *r, rregion *out, tlc_loc loc); /* evaluates bounds */
void tlc_interp_same_shape(tlc_interp *it, const rregion *a, const rregion *b, tlc_loc loc, const char *op);
void tlc_interp_gather(tlc_interp *it, const rregion *r, tlc_ival *out, tir_dtype to);
void tlc_interp_scatter(tlc_interp *it, const rregion *r, const tlc_ival *in, tir_dtype from);
void tlc_interp_set_all(tlc_interp *it, const rregion *r, tlc_ival v);
tlc_ival *tlc_interp_scratch(tlc_interp *it, int slot, int64_t n); /* slot 0..2, reused */
float *tlc_interp_gather_f32(tlc_interp *it, const rregion *r, int slot); /* slot 0 or 1 */
#endif
