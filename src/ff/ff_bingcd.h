/* ff_bingcd.h: the pieces of the binary-GCD inversion (T. Pornin, "Optimized Binary GCD for
 * Modular Inversion", ePrint 2020/972, Algorithm 2; the algorithm is described in
 * ff_internal.h) that the CPU library (ff_internal.h) and the GPU (src/gpu/field.cuh) share:
 * one batch of 31 steps on the 64-bit stand-ins, and the updates of (a, b) and (u, v) by its
 * matrix, on n x 64-bit limbs. Plain C on scalars and small arrays; a CUDA includer defines
 * FF_GCD_FN first (its device qualifiers). */
#ifndef CUZK_FF_BINGCD_H
#define CUZK_FF_BINGCD_H

#include <stdbool.h>
#include <stdint.h>

#ifndef FF_GCD_FN
#define FF_GCD_FN static inline __attribute__((always_inline))
#endif

typedef unsigned __int128 ff__u128;

/* a >= m (plain integers) */
FF_GCD_FN bool ff__geq(const uint64_t *a, const uint64_t *m, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        if (a[i] != m[i]) return a[i] > m[i];
    }
    return true;
}

/* The matrix of one batch: (f0 a + g0 b, f1 a + g1 b) = 2^31 (a', b'). */
typedef struct {
    int64_t f0, g0, f1, g1;
} ff__bingcd_mat;

/* 31 binary-GCD steps on the stand-ins xa, xb of a and b, by masks, not branches (a GPU warp
 * running it in every thread stays converged). */
FF_GCD_FN ff__bingcd_mat ff__bingcd_batch(uint64_t xa, uint64_t xb)
{
    int64_t f0 = 1, g0 = 0, f1 = 0, g1 = 1;
    for (int j = 0; j < 31; j++) {
        /* if xa is odd: swap so that xa >= xb, then xa -= xb; always halve xa */
        uint64_t odd = (uint64_t)0 - (xa & 1);
        uint64_t sw = odd & ((uint64_t)0 - (uint64_t)(xa < xb));
        uint64_t t = (xa ^ xb) & sw;
        xa ^= t;
        xb ^= t;
        int64_t tf = (f0 ^ f1) & (int64_t)sw, tg = (g0 ^ g1) & (int64_t)sw;
        f0 ^= tf;
        f1 ^= tf;
        g0 ^= tg;
        g1 ^= tg;
        xa -= xb & odd;
        f0 -= f1 & (int64_t)odd;
        g0 -= g1 & (int64_t)odd;
        xa >>= 1;
        f1 *= 2;
        g1 *= 2;
    }
    const ff__bingcd_mat m = {f0, g0, f1, g1};
    return m;
}

/* out = |a*f + b*g| / 2^31 (exact); returns true when a*f + b*g was negative. */
FF_GCD_FN bool ff__lin_shift(uint64_t *out, const uint64_t *a,
                                                                const uint64_t *b, int64_t f,
                                                                int64_t g, int n)
{
    uint64_t w[7];
    __int128 acc = 0;
    for (int i = 0; i < n; i++) {
        acc += (__int128)f * (__int128)a[i] + (__int128)g * (__int128)b[i];
        w[i] = (uint64_t)acc;
        acc >>= 64;   /* arithmetic: gcc and clang define >> of negative values so */
    }
    w[n] = (uint64_t)(int64_t)acc;
    bool neg = (int64_t)w[n] < 0;
    if (neg) {
        ff__u128 c = 1;
        for (int i = 0; i <= n; i++) {
            c += (uint64_t)~w[i];
            w[i] = (uint64_t)c;
            c >>= 64;
        }
    }
    for (int i = 0; i < n; i++) out[i] = (w[i] >> 31) | (w[i + 1] << 33);
    return neg;
}

/* out = (u*f + v*g) * 2^-31 mod m, for u, v < m, |f|, |g| <= 2^31; n0 = -m^-1 mod 2^64. */
FF_GCD_FN void ff__lin_mod(uint64_t *out, const uint64_t *u,
                                                              const uint64_t *v, int64_t f,
                                                              int64_t g, const uint64_t *m,
                                                              uint64_t n0, int n)
{
    uint64_t w[7], r[7];
    __int128 acc = (__int128)f * (__int128)u[0] + (__int128)g * (__int128)v[0];
    uint64_t q = ((uint64_t)acc * n0) & 0x7fffffff;   /* S + q m = 0 mod 2^31 */
    for (int i = 0; i < n; i++) {
        if (i) acc += (__int128)f * (__int128)u[i] + (__int128)g * (__int128)v[i];
        acc += (__int128)q * (__int128)m[i];
        w[i] = (uint64_t)acc;
        acc >>= 64;
    }
    w[n] = (uint64_t)(int64_t)acc;
    for (int i = 0; i < n; i++) r[i] = (w[i] >> 31) | (w[i + 1] << 33);
    r[n] = (uint64_t)((int64_t)w[n] >> 31);
    /* now -2m < r < 3m, held in n + 1 limbs as a signed number: bring it into [0, m) */
    while ((int64_t)r[n] < 0) {
        ff__u128 c = 0;
        for (int i = 0; i < n; i++) {
            c += (ff__u128)r[i] + m[i];
            r[i] = (uint64_t)c;
            c >>= 64;
        }
        r[n] += (uint64_t)c;
    }
    while (r[n] != 0 || ff__geq(r, m, n)) {
        ff__u128 bw = 0;
        for (int i = 0; i < n; i++) {
            ff__u128 d = (ff__u128)r[i] - m[i] - (uint64_t)bw;
            r[i] = (uint64_t)d;
            bw = (d >> 64) & 1;
        }
        r[n] -= (uint64_t)bw;
    }
    for (int i = 0; i < n; i++) out[i] = r[i];
}

#endif
