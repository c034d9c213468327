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

/* MLA decode over a paged latent cache (dsl-examples/mla_decode.tl):
 *   Q [batch, s_q, h_q, dv]   Q_pe [batch, s_q, h_q, dpe]
 *   KV [num_pages, page, 1, dv]   K_pe [num_pages, page, 1, dpe]
 *   block_table [batch, max_pages]   cache_seqlens [batch]
 * Query token t of sequence b attends keys k < cache_seqlens[b] (and, when
 * causal, k <= cache_seqlens[b] - s_q + t); key k lives in cache page
 * block_table[b, k / page], row k % page. score = (Q.KV + Q_pe.K_pe) * sm_scale.
 * Rows with no key get 0. */
typedef struct tlc_ref_mla_shape {
    int64_t batch, s_q, h_q, dv, dpe, num_pages, page, max_pages;
    bool causal;
} tlc_ref_mla_shape;

void tlc_ref_mla_decode(const tlc_ref_mla_shape *s, const float *Q, const float *Q_pe, const float *KV,
                        const float *K_pe, const int32_t *block_table, const int32_t *cache_seqlens,
                        double sm_scale, float *Out /* [batch, s_q, h_q, dv] */);

/* The split-KV partials of the same computation: split i covers the pages
 * [i * per, min((i + 1) * per, n_pages)) with n_pages = ceil(seqlen / page)
 * and per = ceil(n_pages / num_split). Partial[b,t,h,i,:] is the softmax-
 * normalised output over that split's keys (0 if none) and
 * Glse[b,t,h,i] = log2(sum exp2(score * log2(e))) over them (-inf if none):
 * the log2-sum-exp2 of the scores in base-2 units. */
void tlc_ref_mla_split(const tlc_ref_mla_shape *s, int64_t num_split, const float *Q, const float *Q_pe,
                       const float *KV, const float *K_pe, const int32_t *block_table,
                       const int32_t *cache_seqlens, double sm_scale,
                       float *Glse /* [batch, s_q, h_q, num_split] */,
                       float *Partial /* [batch, s_q, h_q, num_split, dv] */);
#endif
