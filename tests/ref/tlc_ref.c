#include "tlc_ref.h"
#include <math.h>
#include <stdlib.h>

void tlc_ref_gemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, bool relu) {
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++) acc += (double)A[i * K + k] * (double)B[k * N + j];
            if (relu && acc < 0) acc = 0;
            C[i * N + j] = (float)acc;
        }
}

void tlc_ref_rmsnorm(int64_t rows, int64_t C, const float *X, const float *W, double eps, bool silu, float *Y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *x = X + r * C;
        double ss = 0;
        for (int64_t c = 0; c < C; c++) ss += (double)x[c] * x[c];
        double inv = 1.0 / sqrt(ss / (double)C + eps);
        for (int64_t c = 0; c < C; c++) {
            double v = x[c] * inv * W[c];
            if (silu) v = v / (1.0 + exp(-v));
            Y[r * C + c] = (float)v;
        }
    }
}

void tlc_ref_logsumexp(int64_t rows, int64_t cols, const float *X, float *LSE) {
    for (int64_t r = 0; r < rows; r++) {
        const float *x = X + r * cols;
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < cols; c++) mx = fmax(mx, x[c]);
        for (int64_t c = 0; c < cols; c++) sum += exp(x[c] - mx);
        LSE[r] = (float)(mx + log(sum));
    }
}

/* Softmax-weighted sum of the keys [k0, k1) (the ones the query may see) of
 * one query row q (dv + dpe columns); returns log(sum exp(score)) or -inf
 * when no key is visible. */
static double attend(const tlc_ref_mla_shape *s, const float *q, const float *KV, const int32_t *bt_row, int64_t k0,
                     int64_t k1, double sm_scale, double *scores, double *out) {
    int64_t d_all = s->dv + s->dpe;
    for (int64_t d = 0; d < s->dv; d++) out[d] = 0;
    if (k1 <= k0) return -INFINITY;
    double mx = -INFINITY;
    for (int64_t k = k0; k < k1; k++) {
        const float *kv = KV + (bt_row[k / s->page] * s->page + k % s->page) * d_all;
        double acc = 0;
        for (int64_t d = 0; d < d_all; d++) acc += (double)q[d] * kv[d];
        scores[k - k0] = acc * sm_scale;
        if (scores[k - k0] > mx) mx = scores[k - k0];
    }
    double sum = 0;
    for (int64_t k = k0; k < k1; k++) {
        double p = exp(scores[k - k0] - mx);
        sum += p;
        const float *kv = KV + (bt_row[k / s->page] * s->page + k % s->page) * d_all;
        for (int64_t d = 0; d < s->dv; d++) out[d] += p * kv[d];
    }
    for (int64_t d = 0; d < s->dv; d++) out[d] /= sum;
    return mx + log(sum);
}

/* Keys visible to query token t: [0, limit). */
static int64_t visible(const tlc_ref_mla_shape *s, int64_t seqlen, int64_t t) {
    int64_t lim = s->causal ? seqlen - s->s_q + 1 + t : seqlen;
    if (lim > seqlen) lim = seqlen;
    return lim < 0 ? 0 : lim;
}

void tlc_ref_mla_decode(const tlc_ref_mla_shape *s, const float *Q, const float *KV, const int32_t *block_table,
                        const int32_t *cache_seqlens, double sm_scale, float *Out) {
    double *scores = malloc(sizeof(double) * (size_t)(s->max_pages * s->page + 1));
    double *out = malloc(sizeof(double) * (size_t)s->dv);
    for (int64_t b = 0; b < s->batch; b++)
        for (int64_t t = 0; t < s->s_q; t++)
            for (int64_t h = 0; h < s->h_q; h++) {
                int64_t row = (b * s->s_q + t) * s->h_q + h;
                attend(s, Q + row * (s->dv + s->dpe), KV, block_table + b * s->max_pages, 0,
                       visible(s, cache_seqlens[b], t), sm_scale, scores, out);
                for (int64_t d = 0; d < s->dv; d++) Out[row * s->dv + d] = (float)out[d];
            }
    free(scores);
    free(out);
}

/* Part p of the schedule takes pages [from, to) of sequence b; the first
 * piece it takes opens it. */
static void take_pages(int32_t *sched, int64_t num_parts, int64_t p, int64_t b, int64_t from, int64_t to) {
    if (p >= num_parts) return;
    int32_t *r = sched + 4 * p;
    if (r[0] > r[2]) {
        r[0] = (int32_t)b;
        r[1] = (int32_t)from;
    }
    r[2] = (int32_t)b;
    r[3] = (int32_t)to;
}

/* The walk with `payload`: fills sched and seq_splits when they are given;
 * returns the number of parts it uses. */
static int64_t mla_walk(int64_t batch, const int32_t *cache_seqlens, int64_t page, int64_t overhead,
                        int64_t num_parts, int64_t payload, int32_t *sched, int32_t *seq_splits) {
    int64_t cap = payload - overhead > 1 ? payload - overhead : 1;
    int64_t p = 0, remain = payload;
    for (int64_t b = 0; b < batch; b++) {
        int64_t n = (cache_seqlens[b] + page - 1) / page, pg = 0, first = p;
        if (n + overhead > remain) { /* not in what is left of part p */
            if (remain - overhead > 0) {
                pg = remain - overhead;
                if (sched) take_pages(sched, num_parts, p, b, 0, pg);
            } else {
                first = p + 1;
            }
            p++;
            remain = payload;
            while (n - pg > cap) { /* whole parts */
                if (sched) take_pages(sched, num_parts, p, b, pg, pg + cap);
                pg += cap;
                p++;
            }
        }
        if (sched) take_pages(sched, num_parts, p, b, pg, n);
        remain -= n - pg + overhead;
        if (seq_splits) {
            seq_splits[2 * b] = (int32_t)(b + first);
            seq_splits[2 * b + 1] = (int32_t)(p - first + 1);
        }
    }
    return p + (remain < payload ? 1 : 0);
}

void tlc_ref_mla_schedule(int64_t batch, const int32_t *cache_seqlens, int64_t page, int64_t overhead,
                          int64_t num_parts, int32_t *sched, int32_t *seq_splits) {
    int64_t total = 0;
    for (int64_t b = 0; b < batch; b++) total += (cache_seqlens[b] + page - 1) / page + overhead;
    /* the smallest payload ceildiv(total, num_parts) + s (s = 0 .. overhead,
     * at least 2 * overhead) whose walk fits; s = overhead always does */
    int64_t payload = 0;
    for (int64_t s = 0; s <= overhead && !payload; s++) {
        int64_t c = (total + num_parts - 1) / num_parts + s;
        if (c < 2 * overhead) c = 2 * overhead;
        if (s == overhead || mla_walk(batch, cache_seqlens, page, overhead, num_parts, c, NULL, NULL) <= num_parts)
            payload = c;
    }
    for (int64_t p = 0; p < num_parts; p++) {
        int32_t *r = sched + 4 * p;
        r[0] = 1; r[1] = 0; r[2] = 0; r[3] = 0;
    }
    mla_walk(batch, cache_seqlens, page, overhead, num_parts, payload, sched, seq_splits);
}

void tlc_ref_attention(const tlc_ref_attn_shape *s, const float *Q, const float *K, const float *V, double sm_scale,
                       float *Out, float *Lse) {
    double *p = malloc(sizeof(double) * (size_t)(s->seq_kv + 1));
    double *o = malloc(sizeof(double) * (size_t)(s->dim + 1));
    int64_t group = s->heads / s->heads_kv;
    for (int64_t b = 0; b < s->batch; b++)
        for (int64_t h = 0; h < s->heads; h++)
            for (int64_t i = 0; i < s->seq_q; i++) {
                int64_t hk = h / group, n = s->seq_kv;
                if (s->causal) n = i + 1 + s->seq_kv - s->seq_q;
                if (n > s->seq_kv) n = s->seq_kv;
                if (n < 0) n = 0;
                const float *q = Q + ((b * s->seq_q + i) * s->heads + h) * s->dim;
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < n; j++) {
                    const float *k = K + ((b * s->seq_kv + j) * s->heads_kv + hk) * s->dim;
                    double acc = 0;
                    for (int64_t d = 0; d < s->dim; d++) acc += (double)q[d] * k[d];
                    p[j] = acc * sm_scale;
                    if (p[j] > mx) mx = p[j];
                }
                for (int64_t j = 0; j < n; j++) sum += (p[j] = exp(p[j] - mx));
                for (int64_t d = 0; d < s->dim; d++) o[d] = 0;
                for (int64_t j = 0; j < n; j++) {
                    const float *v = V + ((b * s->seq_kv + j) * s->heads_kv + hk) * s->dim;
                    for (int64_t d = 0; d < s->dim; d++) o[d] += p[j] * v[d];
                }
                float *out = Out + ((b * s->seq_q + i) * s->heads + h) * s->dim;
                for (int64_t d = 0; d < s->dim; d++) out[d] = n > 0 ? (float)(o[d] / sum) : 0.0f;
                Lse[(b * s->heads + h) * s->seq_q + i] = n > 0 ? (float)(mx + log(sum)) : -INFINITY;
            }
    free(p);
    free(o);
}

void tlc_ref_attention_varlen(const tlc_ref_attn_varlen_shape *s, const float *Q, const float *K, const float *V,
                              double sm_scale, float *Out, float *Lse) {
    int64_t total_q = s->cu_q[s->batch];
    for (int64_t b = 0; b < s->batch; b++) {
        int64_t q0 = s->cu_q[b], kv0 = s->cu_kv[b];
        tlc_ref_attn_shape one = {1, s->cu_q[b + 1] - q0, s->cu_kv[b + 1] - kv0, s->heads, s->heads_kv, s->dim,
                                  s->causal};
        float *lse = malloc(sizeof(float) * (size_t)(one.heads * one.seq_q + 1)); /* [heads, seq_q] */
        if (!lse) abort();
        tlc_ref_attention(&one, Q + q0 * s->heads * s->dim, K + kv0 * s->heads_kv * s->dim,
                          V + kv0 * s->heads_kv * s->dim, sm_scale, Out + q0 * s->heads * s->dim, lse);
        for (int64_t h = 0; h < s->heads; h++)
            for (int64_t i = 0; i < one.seq_q; i++) Lse[h * total_q + q0 + i] = lse[h * one.seq_q + i];
        free(lse);
    }
}
