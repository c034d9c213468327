/* tlc-interp-check [DIR]: runs the shipped kernels of DIR (default
 * dsl-examples) on small shapes, tails included, in the Tile IR interpreter
 * and compares each with its C reference (tests/ref). One line per case;
 * exit status 1 when any case does not match. Needs no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_checks.h"
#include "support/read_file.h"

static int failures;

static void report(const char *file, const char *what, kc_result r) {
    if (r.status == KC_MATCH)
        printf("%s: %s: matches reference (max abs err %.3g, max rel err %.3g)\n", file, what, r.max_abs_err,
               r.max_rel_err);
    else {
        failures++;
        printf("%s: %s: %s (%lld elements off, max rel err %.3g)\n%s", file, what, kc_status_name(r.status),
               (long long)r.bad, r.max_rel_err, r.msg);
    }
    fflush(stdout);
}

static char *load(const char *dir, const char *name, char *path, size_t plen, size_t *len) {
    snprintf(path, plen, "%s/%s", dir, name);
    char *t = tlc_read_file(path, len);
    if (!t) {
        printf("%s: cannot read\n", path);
        failures++;
    }
    return t;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "dsl-examples";
    char path[4096], what[256];
    size_t len;
    char *t;

    if ((t = load(dir, "gemm.tl", path, sizeof path, &len))) {
        static const struct { int64_t m, n, k; const char *dt; bool relu; } g[] = {
            {128, 96, 200, "float16", false}, {100, 72, 136, "float16", true}, {64, 256, 64, "bfloat16", false},
        };
        for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
            snprintf(what, sizeof what, "matmul %lldx%lldx%lld %s%s", (long long)g[i].m, (long long)g[i].n,
                     (long long)g[i].k, g[i].dt, g[i].relu ? " relu" : "");
            report("gemm.tl", what, kc_check_gemm(path, t, len, g[i].m, g[i].n, g[i].k, g[i].dt, g[i].relu, NULL, 0, 1 + i));
        }
        free(t);
    }
    if ((t = load(dir, "gemm_fp8.tl", path, sizeof path, &len))) {
        report("gemm_fp8.tl", "matmul_fp8 200x96x208 scales 0.5 2",
               kc_check_gemm_fp8(path, t, len, 200, 96, 208, 0.5, 2, NULL, 0, 11));
        free(t);
    }
    if ((t = load(dir, "rmsnorm.tl", path, sizeof path, &len))) {
        static const struct { const char *k; int64_t rows, c; const char *dt; } r[] = {
            {"rmsnorm", 37, 1024, "float16"}, {"rmsnorm", 6, 96, "bfloat16"}, {"rmsnorm_silu", 9, 640, "float16"},
        };
        for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
            snprintf(what, sizeof what, "%s %lldx%lld %s", r[i].k, (long long)r[i].rows, (long long)r[i].c, r[i].dt);
            report("rmsnorm.tl", what, kc_check_rmsnorm(path, t, len, r[i].k, r[i].rows, r[i].c, r[i].dt, 1.0, NULL, 0, 7 + i));
        }
        free(t);
    }
    if ((t = load(dir, "mla_decode.tl", path, sizeof path, &len))) {
        static const int32_t sl1[] = {200, 77}, sl2[] = {130, 64, 1};
        kc_mla_cfg cfgs[] = {
            {.batch = 2, .s_q = 1, .h_q = 16, .dv = 512, .dpe = 64, .num_parts = 4, .causal = true,
             .dtype = "float16", .seqlens = sl1, .seed = 11},
            {.batch = 3, .s_q = 2, .h_q = 8, .dv = 128, .dpe = 32, .num_parts = 3, .causal = true,
             .dtype = "float16", .seqlens = sl2, .seed = 12},
        };
        for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
            kc_mla_cfg *c = &cfgs[i];
            int n = snprintf(what, sizeof what, "mla_decode b=%lld s_q=%lld h_q=%lld dv=%lld dpe=%lld parts=%d seqlens=",
                             (long long)c->batch, (long long)c->s_q, (long long)c->h_q, (long long)c->dv,
                             (long long)c->dpe, c->num_parts);
            for (int64_t b = 0; b < c->batch && n < (int)sizeof what - 16; b++)
                n += snprintf(what + n, sizeof what - (size_t)n, "%s%d", b ? "," : "", c->seqlens[b]);
            report("mla_decode.tl", what, kc_check_mla(path, t, len, c, NULL, 0));
        }
        free(t);
    }
    if ((t = load(dir, "flash_attention.tl", path, sizeof path, &len))) {
        /* small tiles, so that several key blocks and a partial last one are walked */
        const tlc_define small[3] = {{"block_M", "64"}, {"threads", "128"}, {"block_N", "16"}};
        kc_attn_cfg cfgs[] = {
            {.batch = 1, .seq_q = 70, .seq_kv = 45, .heads = 4, .heads_kv = 2, .dim = 32, .causal = false,
             .dtype = "float16", .seed = 13},
            {.batch = 2, .seq_q = 30, .seq_kv = 50, .heads = 2, .heads_kv = 1, .dim = 16, .causal = true,
             .dtype = "bfloat16", .seed = 14},
        };
        for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
            kc_attn_cfg *c = &cfgs[i];
            snprintf(what, sizeof what, "flash_attention b=%lld seq_q=%lld seq_kv=%lld heads=%lld/%lld dim=%lld%s %s",
                     (long long)c->batch, (long long)c->seq_q, (long long)c->seq_kv, (long long)c->heads,
                     (long long)c->heads_kv, (long long)c->dim, c->causal ? " causal" : "", c->dtype);
            report("flash_attention.tl", what, kc_check_attention(path, t, len, c, small, 3));
        }
        /* packed sequences, one of them empty */
        static const int32_t vq[] = {70, 0, 21}, vkv[] = {45, 5, 30};
        kc_attn_varlen_cfg vc = {3, vq, vkv, 4, 2, 32, true, "float16", 15};
        snprintf(what, sizeof what, "flash_attention_varlen 3 sequences (91 / 80 rows) heads=4/2 dim=32 causal float16");
        report("flash_attention.tl", what, kc_check_attention_varlen(path, t, len, &vc, small, 3));
        free(t);
    }
    if ((t = load(dir, "split_logsumexp.tl", path, sizeof path, &len))) {
        snprintf(what, sizeof what, "split_logsumexp 37x1000 (two kernels, two workspaces)");
        report("split_logsumexp.tl", what, kc_check_logsumexp(path, t, len, 37, 1000, NULL, 0, 16));
        free(t);
    }
    printf("interp check: %s\n", failures ? "FAILED" : "all shipped kernels match their references");
    return failures ? 1 : 0;
}
