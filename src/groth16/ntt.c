/* ntt.c: radix-2 Fr NTT (natural order in and out), coset transforms with generator 7, and
 * the prover's h pipeline, with bellperson/supraseal domain conventions. */
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/util.h"

#define NTT_MAX_LG 32
#define BLOCK_LG 10         /* stages with 2m <= 2^BLOCK_LG run per cache-resident block */
#define GRAIN 4096

void g16_domain_omega(fr_t *omega, unsigned lg)
{
    fr_t w = FR_ROOT_OF_UNITY_2_32;
    for (unsigned i = lg; i < 32; i++) fr_sqr(&w, &w);   /* w32^(2^(32-lg)) */
    *omega = w;
}

unsigned g16_domain_lg(uint64_t n_h)
{
    /* ceil_log2(n_h); the one key where that is wrong is N = 2 (n_h = 1), kept at lg = 1. */
    if (n_h <= 1) return (unsigned)n_h;
    unsigned lg = 0;
    while ((1ULL << lg) < n_h) lg++;
    return lg;
}

/* ---------------------------------------------------------------- helpers -- */

struct pow_ctx {
    fr_t *v;
    const fr_t *base, *mul;   /* v[i] *= mul * base^i (mul NULL = 1); v NULL: fill tw */
    fr_t *fill;
    const fr_t *sub;          /* non-NULL: then v[i] -= sub[i] * mul (mul non-NULL) */
};

static void pow_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct pow_ctx *c = ctx;
    uint64_t e = begin;
    fr_t cur;
    fr_pow(&cur, c->base, &e, 1);
    if (c->mul) fr_mul(&cur, &cur, c->mul);
    for (size_t i = begin; i < end; i++) {
        if (c->fill) c->fill[i] = cur;
        else fr_mul(&c->v[i], &c->v[i], &cur);
        if (c->sub) {
            fr_t t;
            fr_mul(&t, &c->sub[i], c->mul);
            fr_sub(&c->v[i], &c->v[i], &t);
        }
        fr_mul(&cur, &cur, c->base);
    }
}

/* v[i] *= mul * base^i for i < n. */
static void scale_powers(fr_t *v, size_t n, const fr_t *base, const fr_t *mul, struct pool *pool)
{
    struct pow_ctx c = {v, base, mul, NULL, NULL};
    pool_parallel_for(pool, n, GRAIN, pow_range, &c);
}

/* v[i] = (v[i] * base^i - sub[i]) * mul for i < n. */
static void scale_powers_sub(fr_t *v, size_t n, const fr_t *base, const fr_t *mul, const fr_t *sub,
                             struct pool *pool)
{
    struct pow_ctx c = {v, base, mul, NULL, sub};
    pool_parallel_for(pool, n, GRAIN, pow_range, &c);
}

static inline size_t rev_bits(size_t x, unsigned lg)
{
    uint64_t r = x;
    r = ((r >> 1) & 0x5555555555555555ULL) | ((r & 0x5555555555555555ULL) << 1);
    r = ((r >> 2) & 0x3333333333333333ULL) | ((r & 0x3333333333333333ULL) << 2);
    r = ((r >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((r & 0x0f0f0f0f0f0f0f0fULL) << 4);
    r = __builtin_bswap64(r);
    return (size_t)(r >> (64 - lg));
}

struct ntt_ctx {
    fr_t *v;
    const fr_t *tw;     /* twiddle levels: tw[m + j] = omega_2m^j for m = 2^s, j < m */
    unsigned lg;
    size_t m;           /* current stage half-size (large stages) */
};

static void bitrev_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct ntt_ctx *c = ctx;
    for (size_t i = begin; i < end; i++) {
        size_t j = rev_bits(i, c->lg);
        if (i < j) {
            fr_t t = c->v[i];
            c->v[i] = c->v[j];
            c->v[j] = t;
        }
    }
}

static inline void butterfly(fr_t *x, fr_t *y, const fr_t *w)
{
    fr_t t;
    fr_mul(&t, y, w);
    fr_sub(y, x, &t);
    fr_add(x, x, &t);
}

/* All stages with 2m <= block size, one block of 2^blk_lg points per item. */
static void small_stages(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct ntt_ctx *c = ctx;
    unsigned blk_lg = c->lg < BLOCK_LG ? c->lg : BLOCK_LG;
    size_t blk = (size_t)1 << blk_lg;
    for (size_t b = begin; b < end; b++) {
        fr_t *v = c->v + b * blk;
        for (unsigned s = 0; s < blk_lg; s++) {
            size_t m = (size_t)1 << s;
            const fr_t *tw = c->tw + m;
            for (size_t k = 0; k < blk; k += 2 * m) {
                fr_t t = v[k + m];                       /* j = 0: twiddle 1 */
                fr_sub(&v[k + m], &v[k], &t);
                fr_add(&v[k], &v[k], &t);
                for (size_t j = 1; j < m; j++) butterfly(&v[k + j], &v[k + j + m], &tw[j]);
            }
        }
    }
}

/* One stage with half-size m > block: butterfly i -> (k, j) = (i / m, i % m). */
static void large_stage(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct ntt_ctx *c = ctx;
    size_t m = c->m;
    const fr_t *tw = c->tw + m;
    for (size_t i = begin; i < end; i++) {
        size_t j = i & (m - 1), pos = ((i - j) << 1) + j;
        butterfly(&c->v[pos], &c->v[pos + m], &tw[j]);
    }
}

/* Forward transform without a twiddle table (allocation failed): single-threaded. */
static void ntt_no_table(fr_t *v, unsigned lg, const fr_t *omega)
{
    size_t n = (size_t)1 << lg;
    for (size_t i = 0; i < n; i++) {
        size_t j = rev_bits(i, lg);
        if (i < j) {
            fr_t t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    }
    for (unsigned s = 0; s < lg; s++) {
        size_t m = (size_t)1 << s;
        fr_t wm = *omega;
        for (unsigned k = s + 1; k < lg; k++) fr_sqr(&wm, &wm);   /* primitive 2m-th root */
        for (size_t k = 0; k < n; k += 2 * m) {
            fr_t w = FR_ONE;
            for (size_t j = 0; j < m; j++) {
                butterfly(&v[k + j], &v[k + j + m], &w);
                fr_mul(&w, &w, &wm);
            }
        }
    }
}

/* Forward NTT, unscaled: bit-reverse, then Cooley-Tukey stages. tw may be NULL. */
static void ntt_forward(fr_t *v, unsigned lg, const fr_t *tw, struct pool *pool)
{
    if (lg == 0) return;
    if (!tw) {
        fr_t w;
        g16_domain_omega(&w, lg);
        ntt_no_table(v, lg, &w);
        return;
    }
    size_t n = (size_t)1 << lg;
    struct ntt_ctx c = {v, tw, lg, 0};
    pool_parallel_for(pool, n, GRAIN, bitrev_range, &c);
    unsigned blk_lg = lg < BLOCK_LG ? lg : BLOCK_LG;
    pool_parallel_for(pool, n >> blk_lg, 1, small_stages, &c);
    for (unsigned s = blk_lg; s < lg; s++) {
        c.m = (size_t)1 << s;
        pool_parallel_for(pool, n / 2, GRAIN, large_stage, &c);
    }
}

struct rev_ctx { fr_t *v; size_t n; };

static void reverse_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct rev_ctx *c = ctx;
    for (size_t j = begin + 1; j < end + 1; j++) {
        fr_t t = c->v[j];
        c->v[j] = c->v[c->n - j];
        c->v[c->n - j] = t;
    }
}

/* Inverse NTT, unscaled: iNTT(v)[j] * N = NTT(v)[-j mod N], so reuse the forward table. */
static void ntt_inverse_unscaled(fr_t *v, unsigned lg, const fr_t *tw, struct pool *pool)
{
    if (lg == 0) return;
    ntt_forward(v, lg, tw, pool);
    size_t n = (size_t)1 << lg;
    struct rev_ctx c = {v, n};
    pool_parallel_for(pool, n / 2 - 1, GRAIN, reverse_range, &c);   /* swap j <-> N-j, 0<j<N/2 */
}

/* Twiddle levels (N entries, index 0 unused): tw[m + j] = omega_2m^j for every stage
 * half-size m and j < m, so each stage reads its twiddles contiguously (a strided read of
 * one omega^j table misses the cache on every butterfly of the large stages).
 * NULL on allocation failure (callers fall back). */
static fr_t *twiddles(unsigned lg, struct pool *pool)
{
    if (lg == 0) return NULL;
    size_t n = (size_t)1 << lg, half = n / 2;
    fr_t *tw = cuzk_malloc(n * sizeof *tw);
    if (!tw) return NULL;
    fr_t w;
    g16_domain_omega(&w, lg);
    struct pow_ctx c = {NULL, &w, NULL, tw + half, NULL};
    pool_parallel_for(pool, half, GRAIN, pow_range, &c);
    for (size_t m = half / 2; m >= 1; m /= 2)   /* omega_2m^j = omega_4m^(2j) */
        for (size_t j = 0; j < m; j++) tw[m + j] = tw[2 * m + 2 * j];
    return tw;
}

static void inv_n(fr_t *out, unsigned lg)
{
    fr_t n;
    fr_from_u64(&n, 1ULL << lg);
    fr_inv(out, &n);
}

/* ------------------------------------------------------------------ public -- */

void g16_ntt(fr_t *v, unsigned lg, bool inverse, struct pool *pool)
{
    if (lg > NTT_MAX_LG || lg == 0) return;
    fr_t *tw = twiddles(lg, pool);
    if (!inverse) {
        ntt_forward(v, lg, tw, pool);
    } else {
        ntt_inverse_unscaled(v, lg, tw, pool);
        fr_t ninv, one = FR_ONE;
        inv_n(&ninv, lg);
        scale_powers(v, (size_t)1 << lg, &one, &ninv, pool);
    }
    cuzk_free(tw);
}

void g16_coset_ntt(fr_t *v, unsigned lg, bool inverse, struct pool *pool)
{
    if (lg > NTT_MAX_LG) return;
    size_t n = (size_t)1 << lg;
    fr_t *tw = twiddles(lg, pool);
    if (!inverse) {
        scale_powers(v, n, &FR_GENERATOR, NULL, pool);          /* v[i] *= g^i */
        ntt_forward(v, lg, tw, pool);
    } else {
        fr_t ginv, ninv;
        fr_inv(&ginv, &FR_GENERATOR);
        inv_n(&ninv, lg);
        ntt_inverse_unscaled(v, lg, tw, pool);
        scale_powers(v, n, &ginv, &ninv, pool);                 /* v[i] *= g^-i / N */
    }
    cuzk_free(tw);
}

struct h_ctx { fr_t *a; const fr_t *b; };

static void h_pointwise(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct h_ctx *c = ctx;
    for (size_t i = begin; i < end; i++) fr_mul(&c->a[i], &c->a[i], &c->b[i]);
}

/* h = (a b - c) / Z in 6 transforms instead of 7: Z is the constant g^N - 1 on the coset and the
 * inverse coset NTT (CI) is linear, so CI((a_c b_c - c_c) / Z) = (CI(a_c b_c) - CI(c_c)) / Z, and
 * CI(c_c) is c's coefficient vector (deg c < N): c needs its iNTT only. An identity of the
 * computation, true whether or not a b = c on the domain. */
void g16_compute_h(fr_t *a, fr_t *b, fr_t *c, unsigned lg, struct pool *pool)
{
    if (lg > NTT_MAX_LG) return;
    size_t n = (size_t)1 << lg;
    fr_t *tw = twiddles(lg, pool);
    fr_t ninv, ginv, k, one = FR_ONE;
    inv_n(&ninv, lg);
    fr_inv(&ginv, &FR_GENERATOR);
    uint64_t e = n;
    fr_pow(&k, &FR_GENERATOR, &e, 1);
    fr_sub(&k, &k, &one);
    fr_inv(&k, &k);
    fr_mul(&k, &k, &ninv);   /* 1 / (N Z) */
    fr_t *x[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        /* iNTT (to coefficients), then evaluate on the coset g*omega^j; the 1/N of the
         * inverse and the coset shift g^i share one pass. */
        ntt_inverse_unscaled(x[i], lg, tw, pool);
        scale_powers(x[i], n, &FR_GENERATOR, &ninv, pool);
        ntt_forward(x[i], lg, tw, pool);
    }
    ntt_inverse_unscaled(c, lg, tw, pool);                  /* N times c's coefficients */
    struct h_ctx hc = {a, b};
    pool_parallel_for(pool, n, GRAIN, h_pointwise, &hc);
    ntt_inverse_unscaled(a, lg, tw, pool);
    scale_powers_sub(a, n, &ginv, &k, c, pool);            /* (a g^-i - c) / (N Z) */
    cuzk_free(tw);
}
