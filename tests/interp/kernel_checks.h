/* Runs the shipped kernels (or mutated copies of their source) in the
 * interpreter on random inputs and compares with the C references in
 * tests/ref. Used by the interp tests and by tools/interp_check. */
#ifndef TLC_KERNEL_CHECKS_H
#define TLC_KERNEL_CHECKS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "api/compile.h"

typedef enum { KC_MATCH, KC_MISMATCH, KC_ERROR } kc_status;

typedef struct kc_result {
    kc_status status;
    double max_abs_err;  /* over all compared outputs */
    double max_rel_err;  /* max |out - ref| / max |ref| per output, the largest */
    int64_t bad;         /* elements outside the tolerance */
    char msg[4096];      /* errors, or the first mismatches */
} kc_result;

const char *kc_status_name(kc_status s);

/* gemm.tl's matmul: C[M,N] = A[M,K] @ B[K,N] (relu optional) in dtype
 * (float16 or bfloat16). Extra -D defines (block sizes) may be given. */
kc_result kc_check_gemm(const char *name, const char *text, size_t len, int64_t M, int64_t N, int64_t K,
                        const char *dtype, bool relu, const tlc_define *extra, int nextra, uint64_t seed);

/* gemm_fp8.tl's matmul_fp8: C[M,N] (bfloat16) = A[M,K] @ B[N,K]^T * scale_a
 * * scale_b on float8_e4m3 inputs. */
kc_result kc_check_gemm_fp8(const char *name, const char *text, size_t len, int64_t M, int64_t N, int64_t K,
                            double scale_a, double scale_b, const tlc_define *extra, int nextra, uint64_t seed);

/* rmsnorm.tl's `kernel` (rmsnorm or rmsnorm_silu) on rows x C; X is
 * normal-ish times x_scale (small scales make eps = 1e-5 matter). */
kc_result kc_check_rmsnorm(const char *name, const char *text, size_t len, const char *kernel, int64_t rows,
                           int64_t C, const char *dtype, double x_scale, const tlc_define *extra, int nextra,
                           uint64_t seed);

/* split_logsumexp.tl, a function of two kernels (split, combine) through
 * two workspaces: LSE of rows x cols against tlc_ref_logsumexp. */
kc_result kc_check_logsumexp(const char *name, const char *text, size_t len, int64_t rows, int64_t cols,
                             const tlc_define *extra, int nextra, uint64_t seed);

/* mla_decode.tl: schedule, split and combine kernels over num_parts parts
 * (workspaces of batch + num_parts slots); checks Output and the schedule.
 * Pages are 64 tokens; each sequence gets a shuffled set of distinct pages. */
typedef struct kc_mla_cfg {
    int64_t batch, s_q, h_q, dv, dpe;
    int num_parts;
    bool causal;
    const char *dtype;
    const int32_t *seqlens; /* batch entries */
    uint64_t seed;
} kc_mla_cfg;
kc_result kc_check_mla(const char *name, const char *text, size_t len, const kc_mla_cfg *cfg,
                       const tlc_define *extra, int nextra);

/* flash_attention.tl: Output and Lse against tlc_ref_attention; -D sizes
 * (block_M, block_N, dim, ...) through extra. */
typedef struct kc_attn_cfg {
    int64_t batch, seq_q, seq_kv, heads, heads_kv, dim;
    bool causal;
    const char *dtype;
    uint64_t seed;
} kc_attn_cfg;
kc_result kc_check_attention(const char *name, const char *text, size_t len, const kc_attn_cfg *cfg,
                             const tlc_define *extra, int nextra);
/* flash_attention_varlen: packed sequences of the given query and key
 * lengths, against tlc_ref_attention_varlen. */
typedef struct kc_attn_varlen_cfg {
    int64_t batch;
    const int32_t *seq_q, *seq_kv; /* batch entries each */
    int64_t heads, heads_kv, dim;
    bool causal;
    const char *dtype;
    uint64_t seed;
} kc_attn_varlen_cfg;
kc_result kc_check_attention_varlen(const char *name, const char *text, size_t len, const kc_attn_varlen_cfg *cfg,
                                    const tlc_define *extra, int nextra);

/* Copy of text with the first occurrence of `from` replaced by `to` (all of
 * them when all is true); NULL when `from` does not occur. */
char *kc_replace(const char *text, const char *from, const char *to, bool all);
#endif
