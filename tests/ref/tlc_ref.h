/* Plain C references for the shipped kernels (dsl-examples/), shared by the
 * interpreter tests (tests/interp) and the GPU tests (tests/gpu). Inputs are
 * float arrays holding values already rounded to the kernel's input dtype;
 * everything is computed in double and returned as float (round to the
 * output dtype before comparing). All arrays are dense, row-major. */
#ifndef TLC_REF_H
#define TLC_REF_H
#include <stdbool.h>
#include <stdint.h>

/* C[M,N] = A[M,K] @ B[K,N], then max(., 0) if relu. */
void tlc_ref_gemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, bool relu);

/* Y[r,:] = X[r,:] * rsqrt(mean(X[r,:]^2) + eps) * W, then silu(v) = v / (1 + exp(-v)) if silu. */
void tlc_ref_rmsnorm(int64_t rows, int64_t C, const float *X, const float *W, double eps, bool silu, float *Y);

/* LSE[r] = log(sum_c exp(X[r,c])) (dsl-examples/split_logsumexp.tl). */
void tlc_ref_logsumexp(int64_t rows, int64_t cols, const float *X, float *LSE);

/* MLA decode over a paged latent cache (dsl-examples/mla_decode.tl), in
 * FlashMLA's layout (a token's dv latent columns, then its dpe rope columns):
 *   Q [batch, s_q, h_q, dv + dpe]   KV [num_pages, page, 1, dv + dpe]
 *   block_table [batch, max_pages]   cache_seqlens [batch]
 * Query token t of sequence b attends keys k < cache_seqlens[b] (and, when
 * causal, k <= cache_seqlens[b] - s_q + t); key k lives in cache page
 * block_table[b, k / page], row k % page. score = Q.KV (all dv + dpe
 * columns) * sm_scale; the output sums the keys' first dv columns. Rows
 * with no key get 0. */
typedef struct tlc_ref_mla_shape {
    int64_t batch, s_q, h_q, dv, dpe, num_pages, page, max_pages;
    bool causal;
} tlc_ref_mla_shape;

void tlc_ref_mla_decode(const tlc_ref_mla_shape *s, const float *Q, const float *KV, const int32_t *block_table,
                        const int32_t *cache_seqlens, double sm_scale, float *Out /* [batch, s_q, h_q, dv] */);

/* mla_decode_schedule's result, by a plain walk: sequence b costs
 * n_pages(b) + overhead units; each part may take payload units, the
 * smallest of max(ceildiv(total, num_parts) + s, 2 * overhead), s = 0 ..
 * overhead, whose walk fits in num_parts parts (tried in turn). A sequence
 * that fits what is left of the current part goes there whole; else the
 * part takes its first (left - overhead) pages if that is any, the
 * following parts payload - overhead pages each while more than that is
 * left, and the next part the rest.
 *   sched[p] = (first sequence, its first page, last sequence, its end page),
 *              or (1, 0, 0, 0) for a part with nothing;
 *   seq_splits[b] = (b + the part of its first piece, number of pieces). */
void tlc_ref_mla_schedule(int64_t batch, const int32_t *cache_seqlens, int64_t page, int64_t overhead,
                          int64_t num_parts, int32_t *sched /* [num_parts, 4] */,
                          int32_t *seq_splits /* [batch, 2] */);
/* Attention forward (dsl-examples/flash_attention.tl) over [batch, seq,
 * heads, dim] tensors in float, computed in double: GQA (kv head h / (heads
 * / heads_kv)); with `causal`, query row i sees keys j <= i + seq_kv - seq_q.
 * Out [batch, seq_q, heads, dim]; Lse [batch, heads, seq_q], natural log
 * (-inf and an output of 0 for a row that sees no key). */
typedef struct tlc_ref_attn_shape {
    int64_t batch, seq_q, seq_kv, heads, heads_kv, dim;
    bool causal;
} tlc_ref_attn_shape;
void tlc_ref_attention(const tlc_ref_attn_shape *s, const float *Q, const float *K, const float *V, double sm_scale,
                       float *Out, float *Lse);
/* The same over packed sequences (flash_attention_varlen): sequence b's
 * query rows are rows cu_q[b] .. cu_q[b + 1] - 1 of Q [total_q, heads, dim],
 * its keys rows cu_kv[b] .. cu_kv[b + 1] - 1 of K and V [total_kv,
 * heads_kv, dim]; Out [total_q, heads, dim]; Lse [heads, total_q]. */
typedef struct tlc_ref_attn_varlen_shape {
    int64_t batch;
    const int32_t *cu_q, *cu_kv; /* batch + 1 entries each */
    int64_t heads, heads_kv, dim;
    bool causal;
} tlc_ref_attn_varlen_shape;
void tlc_ref_attention_varlen(const tlc_ref_attn_varlen_shape *s, const float *Q, const float *K, const float *V,
                              double sm_scale, float *Out, float *Lse);
#endif
