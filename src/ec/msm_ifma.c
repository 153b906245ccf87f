/* msm_ifma.c: the G1 MSM's batch-affine flush on 8 lanes of AVX-512 IFMA (52-bit limbs), used
 * when the CPU has it; the scalar flush in msm_impl.h is the reference and the fallback. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cuzk/ec.h"
#include "ec_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(CUZK_NO_IFMA)
#define EC_HAVE_IFMA 1
#include <immintrin.h>
#else
#define EC_HAVE_IFMA 0
#endif

/* -1: not probed yet, 0: off, 1: on. Relaxed atomics: probing twice is harmless. */
static int ec_ifma_state = -1;

bool ec_ifma_usable(void)
{
    int st = __atomic_load_n(&ec_ifma_state, __ATOMIC_RELAXED);
    if (st < 0) {
#if EC_HAVE_IFMA
        __builtin_cpu_init();
        st = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
#else
        st = 0;
#endif
        __atomic_store_n(&ec_ifma_state, st, __ATOMIC_RELAXED);
    }
    return st > 0;
}

bool ec__ifma_set(bool on)
{
    bool was = ec_ifma_usable();
    __atomic_store_n(&ec_ifma_state, on ? -1 : 0, __ATOMIC_RELAXED);   /* -1: what the CPU offers */
    return was;
}

/* Vector state per batch: for each group of 8 entries, den and its prefix product (8 limbs x 8
 * lanes each), plus one group of alignment slack. */
size_t ec_ifma_scratch_bytes(size_t batch) { return (batch / 8 + 2) * 2 * 512 + 64; }

#if EC_HAVE_IFMA

#define IFMA __attribute__((target("avx512f,avx512ifma")))
#define M52 ((1ULL << 52) - 1)

/* An Fp element on each of 8 lanes: l[i] holds limb i (bits 52i .. 52i+51) of every lane, the
 * same integer as the scalar fp_t (Montgomery form, R = 2^384, fully reduced). */
typedef struct { __m512i l[8]; } v8_t;

/* Constants: p in 52-bit limbs, -p^-1 mod 2^52 and mod 2^20, R mod p (one). */
typedef struct {
    __m512i p[8], pinv52, pinv20, one[8];
} v8_const_t;

IFMA static inline void v8_from64(v8_t *o, const __m512i L[6])
{
    const __m512i m = _mm512_set1_epi64((long long)M52);
    o->l[0] = _mm512_and_si512(L[0], m);
    o->l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(L[0], 52), _mm512_slli_epi64(L[1], 12)), m);
    o->l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(L[1], 40), _mm512_slli_epi64(L[2], 24)), m);
    o->l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(L[2], 28), _mm512_slli_epi64(L[3], 36)), m);
    o->l[4] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(L[3], 16), _mm512_slli_epi64(L[4], 48)), m);
    o->l[5] = _mm512_and_si512(_mm512_srli_epi64(L[4], 4), m);
    o->l[6] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(L[4], 56), _mm512_slli_epi64(L[5], 8)), m);
    o->l[7] = _mm512_srli_epi64(L[5], 44);
}

IFMA static inline void v8_to64(__m512i L[6], const v8_t *a)
{
    const __m512i *n = a->l;
    L[0] = _mm512_or_si512(n[0], _mm512_slli_epi64(n[1], 52));
    L[1] = _mm512_or_si512(_mm512_srli_epi64(n[1], 12), _mm512_slli_epi64(n[2], 40));
    L[2] = _mm512_or_si512(_mm512_srli_epi64(n[2], 24), _mm512_slli_epi64(n[3], 28));
    L[3] = _mm512_or_si512(_mm512_srli_epi64(n[3], 36), _mm512_slli_epi64(n[4], 16));
    L[4] = _mm512_or_si512(_mm512_or_si512(_mm512_srli_epi64(n[4], 48), _mm512_slli_epi64(n[5], 4)),
                           _mm512_slli_epi64(n[6], 56));
    L[5] = _mm512_or_si512(_mm512_srli_epi64(n[6], 8), _mm512_slli_epi64(n[7], 44));
}

/* Loads the fp_t at byte offset off[lane] from base on every lane (gathers). */
IFMA static inline void v8_gather(v8_t *o, const void *base, __m512i off)
{
    __m512i L[6];
    for (int k = 0; k < 6; k++)
        L[k] = _mm512_i64gather_epi64(_mm512_add_epi64(off, _mm512_set1_epi64(8 * k)), base, 1);
    v8_from64(o, L);
}

IFMA static inline void v8_scatter(void *base, __mmask8 mask, __m512i off, const v8_t *a)
{
    __m512i L[6];
    v8_to64(L, a);
    for (int k = 0; k < 6; k++)
        _mm512_mask_i64scatter_epi64(base, mask, _mm512_add_epi64(off, _mm512_set1_epi64(8 * k)),
                                     L[k], 1);
}

/* r = t - p if that does not borrow, else t (t < 2p, normalized limbs). */
IFMA static inline void v8_reduce_once(v8_t *r, const __m512i t[8], const v8_const_t *k)
{
    const __m512i m = _mm512_set1_epi64((long long)M52), z = _mm512_setzero_si512();
    __m512i d[8], br = z;
    for (int j = 0; j < 8; j++) {
        d[j] = _mm512_sub_epi64(_mm512_sub_epi64(t[j], k->p[j]), br);
        br = _mm512_srli_epi64(d[j], 63);
        d[j] = _mm512_and_si512(d[j], m);
    }
    __mmask8 keep = _mm512_cmpeq_epi64_mask(br, z);   /* no borrow: t >= p, take t - p */
    for (int j = 0; j < 8; j++) r->l[j] = _mm512_mask_blend_epi64(keep, t[j], d[j]);
}

/* r = a b / 2^384 mod p: operand scanning over the 8 limbs of b, each round adding a b_i and
 * q p (q = t_0 (-p^-1) mod 2^52) and dropping the low limb (7 rounds of 52 bits, 364 bits),
 * then one round of 20 bits (q mod 2^20) to reach 2^384 = R of the scalar code, so both hold
 * the same integers. Limbs accumulate unnormalized (< 2^58); t < 2p at the end. */
IFMA static void v8_mul(v8_t *r, const v8_t *a, const v8_t *b, const v8_const_t *k)
{
    const __m512i m = _mm512_set1_epi64((long long)M52), z = _mm512_setzero_si512();
    __m512i t[16];
    for (int j = 0; j < 16; j++) t[j] = z;
    for (int i = 0; i < 8; i++) {
        __m512i bi = b->l[i];
        for (int j = 0; j < 8; j++) t[i + j] = _mm512_madd52lo_epu64(t[i + j], a->l[j], bi);
        for (int j = 0; j < 8; j++) t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a->l[j], bi);
        if (i == 7) break;   /* the 8th reduction round is the 20-bit one below */
        __m512i q = _mm512_and_si512(_mm512_madd52lo_epu64(z, t[i], k->pinv52), m);
        for (int j = 0; j < 8; j++) t[i + j] = _mm512_madd52lo_epu64(t[i + j], k->p[j], q);
        for (int j = 0; j < 8; j++) t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], k->p[j], q);
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srli_epi64(t[i], 52));   /* t_i = 0 mod 2^52 */
    }
    /* now the value is sum_{j=7}^{15} t[j] 2^(52 (j - 7)) (after dividing by 2^364) */
    __m512i u[10];
    for (int j = 0; j < 9; j++) u[j] = t[7 + j];
    u[9] = z;
    for (int j = 0; j < 9; j++) {
        u[j + 1] = _mm512_add_epi64(u[j + 1], _mm512_srli_epi64(u[j], 52));
        u[j] = _mm512_and_si512(u[j], m);
    }
    __m512i q = _mm512_and_si512(_mm512_madd52lo_epu64(z, u[0], k->pinv20),
                                 _mm512_set1_epi64((1LL << 20) - 1));
    for (int j = 0; j < 8; j++) u[j] = _mm512_madd52lo_epu64(u[j], k->p[j], q);
    for (int j = 0; j < 8; j++) u[j + 1] = _mm512_madd52hi_epu64(u[j + 1], k->p[j], q);
    for (int j = 0; j < 9; j++) {
        u[j + 1] = _mm512_add_epi64(u[j + 1], _mm512_srli_epi64(u[j], 52));
        u[j] = _mm512_and_si512(u[j], m);
    }
    /* divide by 2^20 (the low 20 bits are now 0) */
    __m512i s[8];
    for (int j = 0; j < 8; j++)
        s[j] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(u[j], 20), _mm512_slli_epi64(u[j + 1], 32)), m);
    v8_reduce_once(r, s, k);
}

/* r = a - b mod p (inputs reduced). */
IFMA static inline void v8_sub(v8_t *r, const v8_t *a, const v8_t *b, const v8_const_t *k)
{
    const __m512i m = _mm512_set1_epi64((long long)M52), z = _mm512_setzero_si512();
    __m512i d[8], br = z;
    for (int j = 0; j < 8; j++) {
        d[j] = _mm512_sub_epi64(_mm512_sub_epi64(a->l[j], b->l[j]), br);
        br = _mm512_srli_epi64(d[j], 63);
        d[j] = _mm512_and_si512(d[j], m);
    }
    __mmask8 neg = _mm512_cmpneq_epi64_mask(br, z);   /* a < b: add p back */
    __m512i c = z;
    for (int j = 0; j < 8; j++) {
        __m512i s = _mm512_add_epi64(_mm512_add_epi64(d[j], _mm512_maskz_mov_epi64(neg, k->p[j])), c);
        c = _mm512_srli_epi64(s, 52);
        r->l[j] = _mm512_and_si512(s, m);
    }
}

/* r = a + b mod p (inputs reduced). */
IFMA static inline void v8_add(v8_t *r, const v8_t *a, const v8_t *b, const v8_const_t *k)
{
    const __m512i m = _mm512_set1_epi64((long long)M52), z = _mm512_setzero_si512();
    __m512i s[8], c = z;
    for (int j = 0; j < 8; j++) {
        s[j] = _mm512_add_epi64(_mm512_add_epi64(a->l[j], b->l[j]), c);
        c = _mm512_srli_epi64(s[j], 52);
        s[j] = _mm512_and_si512(s[j], m);
    }
    v8_reduce_once(r, s, k);   /* p < 2^381: the sum fits the 416 bits */
}

IFMA static inline __mmask8 v8_is_zero(const v8_t *a)
{
    __m512i o = a->l[0];
    for (int j = 1; j < 8; j++) o = _mm512_or_si512(o, a->l[j]);
    return _mm512_cmpeq_epi64_mask(o, _mm512_setzero_si512());
}

static void v8_split52_(uint64_t o[8], const fp_t *a)
{
    for (int i = 0; i < 8; i++) {
        unsigned bit = 52u * (unsigned)i, w = bit / 64, sh = bit % 64;
        uint64_t v = a->l[w] >> sh;
        if (sh > 12 && w + 1 < 6) v |= a->l[w + 1] << (64 - sh);
        o[i] = v & M52;
    }
}

IFMA static void v8_consts(v8_const_t *k)
{
    uint64_t p52[8], one52[8];
    v8_split52_(p52, &FP_MODULUS);
    v8_split52_(one52, &FP_ONE);
    uint64_t inv = 1, p0 = FP_MODULUS.l[0];
    for (int i = 0; i < 6; i++) inv *= 2 - p0 * inv;   /* p^-1 mod 2^64 (Newton) */
    for (int j = 0; j < 8; j++) {
        k->p[j] = _mm512_set1_epi64((long long)p52[j]);
        k->one[j] = _mm512_set1_epi64((long long)one52[j]);
    }
    k->pinv52 = _mm512_set1_epi64((long long)((0 - inv) & M52));
    k->pinv20 = _mm512_set1_epi64((long long)((0 - inv) & ((1ULL << 20) - 1)));
}

IFMA static void v8_load_lanes(v8_t *o, const fp_t a[8])
{
    __m512i off = _mm512_set_epi64(7 * 48, 6 * 48, 5 * 48, 4 * 48, 3 * 48, 2 * 48, 48, 0);
    v8_gather(o, a, off);
}

IFMA static void v8_store_lanes(fp_t a[8], const v8_t *v)
{
    __m512i off = _mm512_set_epi64(7 * 48, 6 * 48, 5 * 48, 4 * 48, 3 * 48, 2 * 48, 48, 0);
    v8_scatter(a, 0xff, off, v);
}

IFMA static void ec_ifma_ops_(fp_t mul[8], fp_t sub[8], fp_t add[8], const fp_t a[8],
                              const fp_t b[8])
{
    v8_const_t k;
    v8_consts(&k);
    v8_t va, vb, r;
    v8_load_lanes(&va, a);
    v8_load_lanes(&vb, b);
    v8_mul(&r, &va, &vb, &k);
    v8_store_lanes(mul, &r);
    v8_sub(&r, &va, &vb, &k);
    v8_store_lanes(sub, &r);
    v8_add(&r, &va, &vb, &k);
    v8_store_lanes(add, &r);
}

/* Groups ahead whose buckets and points are prefetched: a group costs about one vector
 * product (~70 ns); the buckets of a wide window live in L3 or DRAM, and the gathers stall on
 * them otherwise. */
#define EC_IFMA_PF 3

/* always_inline: as a separate function of prefetches only, GCC 12 deems it pure and drops
 * the calls. */
IFMA static inline __attribute__((always_inline)) void ec_ifma_prefetch_(const g1_aff_t *abk, const g1_aff_t *bases,
                                     const uint32_t *bidx, const size_t *pidx, size_t j0, size_t m)
{
    size_t end = j0 + 8 < m ? j0 + 8 : m;
    for (size_t j = j0; j < end; j++) {
        const char *a = (const char *)&abk[bidx[j] & MSM_BMASK], *q = (const char *)&bases[pidx[j]];
        _mm_prefetch(a, _MM_HINT_T0);
        _mm_prefetch(a + sizeof(g1_aff_t) - 1, _MM_HINT_T0);
        _mm_prefetch(q, _MM_HINT_T0);
        _mm_prefetch(q + sizeof(g1_aff_t) - 1, _MM_HINT_T0);
    }
}

/* The flush (see msm_impl.h, msm_flush_, for the scalar original): entry j runs on lane j % 8,
 * group j / 8; each lane keeps its own chain of prefix products, the 8 lane totals are
 * inverted together (one fp_inv), then the groups are walked back. Lanes past m (padding) and
 * entries with den = 0 carry den = 1 and write nothing. */
IFMA static void ec_g1_flush_ifma_(g1_aff_t *abk, const g1_aff_t *bases, uint32_t *bidx,
                                   const size_t *pidx, size_t m, void *scratch)
{
    v8_const_t k;
    v8_consts(&k);
    size_t ng = (m + 7) / 8;
    v8_t *den = (v8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63), *pref = den + ng;
    for (size_t g = 0; g < ng; g++) {
        size_t j0 = 8 * g;
        ec_ifma_prefetch_(abk, bases, bidx, pidx, j0 + 8 * EC_IFMA_PF, m);
        uint64_t ob[8], oq[8];
        __mmask8 act = 0;
        for (int l = 0; l < 8; l++) {
            size_t j = j0 + (size_t)l;
            if (j < m) {
                ob[l] = (uint64_t)(bidx[j] & MSM_BMASK) * sizeof(g1_aff_t);
                oq[l] = (uint64_t)pidx[j] * sizeof(g1_aff_t);
                act |= (__mmask8)(1u << l);
            } else {
                ob[l] = oq[l] = 0;
            }
        }
        v8_t x1, x2, d;
        v8_gather(&x1, abk, _mm512_loadu_si512(ob));
        v8_gather(&x2, bases, _mm512_loadu_si512(oq));
        v8_sub(&d, &x2, &x1, &k);
        __mmask8 zero = v8_is_zero(&d) & act;
        for (int l = 0; l < 8; l++)
            if (zero & (1u << l)) bidx[j0 + (size_t)l] |= MSM_SKIP;   /* caller adds it */
        __mmask8 use = act & (__mmask8)~zero;
        for (int j = 0; j < 8; j++) d.l[j] = _mm512_mask_blend_epi64(use, k.one[j], d.l[j]);
        den[g] = d;
        if (g) v8_mul(&pref[g], &pref[g - 1], &d, &k);
        else pref[g] = d;
    }
    /* invert the 8 lane totals: Montgomery's trick in scalar code, one fp_inv */
    fp_t tot[8], pre[8], inv8[8], iv;
    v8_store_lanes(tot, &pref[ng - 1]);
    pre[0] = tot[0];
    for (int l = 1; l < 8; l++) fp_mul(&pre[l], &pre[l - 1], &tot[l]);
    fp_inv(&iv, &pre[7]);
    for (int l = 7; l > 0; l--) {
        fp_mul(&inv8[l], &iv, &pre[l - 1]);
        fp_mul(&iv, &iv, &tot[l]);
    }
    inv8[0] = iv;
    v8_t inv, ij, lam, x3, t;
    v8_load_lanes(&inv, inv8);
    for (size_t g = ng; g-- > 0;) {
        size_t j0 = 8 * g;
        if (g >= EC_IFMA_PF) ec_ifma_prefetch_(abk, bases, bidx, pidx, j0 - 8 * EC_IFMA_PF, m);
        if (g) {
            v8_mul(&ij, &inv, &pref[g - 1], &k);
            v8_mul(&inv, &inv, &den[g], &k);
        } else {
            ij = inv;
        }
        uint64_t ob[8], oq[8];
        __mmask8 wr = 0, neg = 0;
        for (int l = 0; l < 8; l++) {
            size_t j = j0 + (size_t)l;
            if (j < m) {
                ob[l] = (uint64_t)(bidx[j] & MSM_BMASK) * sizeof(g1_aff_t);
                oq[l] = (uint64_t)pidx[j] * sizeof(g1_aff_t);
                if (!(bidx[j] & MSM_SKIP)) wr |= (__mmask8)(1u << l);
                if (bidx[j] & MSM_NEG) neg |= (__mmask8)(1u << l);
            } else {
                ob[l] = oq[l] = 0;
            }
        }
        __m512i vob = _mm512_loadu_si512(ob), voq = _mm512_loadu_si512(oq);
        v8_t x1, y1, x2, y2, ny2;
        v8_gather(&x1, abk, vob);
        v8_gather(&y1, (const char *)abk + sizeof(fp_t), vob);
        v8_gather(&x2, bases, voq);
        v8_gather(&y2, (const char *)bases + sizeof(fp_t), voq);
        if (neg) {   /* -P: y -> p - y (y != 0: no point of order 2) */
            v8_t pv;
            for (int j = 0; j < 8; j++) pv.l[j] = k.p[j];
            v8_sub(&ny2, &pv, &y2, &k);
            for (int j = 0; j < 8; j++) y2.l[j] = _mm512_mask_blend_epi64(neg, y2.l[j], ny2.l[j]);
        }
        v8_sub(&t, &y2, &y1, &k);
        v8_mul(&lam, &t, &ij, &k);                  /* lambda = (y2 - y1) / (x2 - x1) */
        v8_mul(&x3, &lam, &lam, &k);
        v8_sub(&x3, &x3, &x1, &k);
        v8_sub(&x3, &x3, &x2, &k);                  /* x3 = lambda^2 - x1 - x2 */
        v8_sub(&t, &x1, &x3, &k);
        v8_mul(&t, &t, &lam, &k);
        v8_sub(&t, &t, &y1, &k);                    /* y3 = lambda (x1 - x3) - y1 */
        v8_scatter(abk, wr, vob, &x3);
        v8_scatter((char *)abk + sizeof(fp_t), wr, vob, &t);
    }
}

void ec_g1_flush_ifma(g1_aff_t *abk, const g1_aff_t *bases, uint32_t *bidx, const size_t *pidx,
                      size_t m, void *scratch)
{
    if (m) ec_g1_flush_ifma_(abk, bases, bidx, pidx, m, scratch);
}

void ec__ifma_ops(fp_t mul[8], fp_t sub[8], fp_t add[8], const fp_t a[8], const fp_t b[8])
{
    ec_ifma_ops_(mul, sub, add, a, b);
}

#else

void ec_g1_flush_ifma(g1_aff_t *abk, const g1_aff_t *bases, uint32_t *bidx, const size_t *pidx,
                      size_t m, void *scratch)
{
    (void)abk, (void)bases, (void)bidx, (void)pidx, (void)m, (void)scratch;
}

void ec__ifma_ops(fp_t mul[8], fp_t sub[8], fp_t add[8], const fp_t a[8], const fp_t b[8])
{
    (void)mul, (void)sub, (void)add, (void)a, (void)b;
}

#endif
