/* ff_internal.h: generic arithmetic on n x 64-bit limbs (n = 4 for Fr, 6 for Fp): portable
 * Montgomery add/sub/mul (unsigned __int128) and the binary-GCD inversion. fp.c and fr.c
 * instantiate it with the modulus fixed so the compiler unrolls every loop. See docs/ff.md. */
#ifndef CUZK_FF_INTERNAL_H
#define CUZK_FF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef unsigned __int128 ff__u128;

/* out = a + b mod m. Needs a, b < m and m < 2^(64n - 1), true for p and r (no carry out). */
static inline __attribute__((always_inline)) void ff__add(uint64_t *out, const uint64_t *a,
                                                          const uint64_t *b, const uint64_t *m,
                                                          int n)
{
    uint64_t s[6], t[6];
    ff__u128 c = 0;
    for (int i = 0; i < n; i++) {
        c += (ff__u128)a[i] + b[i];
        s[i] = (uint64_t)c;
        c >>= 64;
    }
    ff__u128 bw = 0;   /* t = s - m; borrow says s < m */
    for (int i = 0; i < n; i++) {
        ff__u128 d = (ff__u128)s[i] - m[i] - (uint64_t)bw;
        t[i] = (uint64_t)d;
        bw = (d >> 64) & 1;
    }
    uint64_t keep = (uint64_t)0 - (uint64_t)bw;   /* all ones: keep s */
    for (int i = 0; i < n; i++) out[i] = (s[i] & keep) | (t[i] & ~keep);
}

/* out = a - b mod m. */
static inline __attribute__((always_inline)) void ff__sub(uint64_t *out, const uint64_t *a,
                                                          const uint64_t *b, const uint64_t *m,
                                                          int n)
{
    uint64_t d[6];
    ff__u128 bw = 0;
    for (int i = 0; i < n; i++) {
        ff__u128 x = (ff__u128)a[i] - b[i] - (uint64_t)bw;
        d[i] = (uint64_t)x;
        bw = (x >> 64) & 1;
    }
    uint64_t mask = (uint64_t)0 - (uint64_t)bw;   /* add m back if it underflowed */
    ff__u128 c = 0;
    for (int i = 0; i < n; i++) {
        c += (ff__u128)d[i] + (m[i] & mask);
        out[i] = (uint64_t)c;
        c >>= 64;
    }
}

/* Montgomery product out = a*b*2^(-64n) mod m, CIOS (Koc, Acar, Kaliski 1996). Since the top
 * limb of m is below 2^63 the running value stays below 2m and fits n+1 limbs. */
static inline __attribute__((always_inline)) void ff__mont_mul(uint64_t *out, const uint64_t *a,
                                                               const uint64_t *b,
                                                               const uint64_t *m, uint64_t n0,
                                                               int n)
{
    uint64_t t[8] = {0};
    for (int i = 0; i < n; i++) {
        ff__u128 c = 0;
        for (int j = 0; j < n; j++) {
            c += (ff__u128)a[j] * b[i] + t[j];
            t[j] = (uint64_t)c;
            c >>= 64;
        }
        ff__u128 top = (ff__u128)t[n] + (uint64_t)c;
        t[n] = (uint64_t)top;
        t[n + 1] = (uint64_t)(top >> 64);
        uint64_t q = t[0] * n0;
        c = (ff__u128)q * m[0] + t[0];
        c >>= 64;
        for (int j = 1; j < n; j++) {
            c += (ff__u128)q * m[j] + t[j];
            t[j - 1] = (uint64_t)c;
            c >>= 64;
        }
        top = (ff__u128)t[n] + (uint64_t)c;
        t[n - 1] = (uint64_t)top;
        t[n] = t[n + 1] + (uint64_t)(top >> 64);
    }
    /* final conditional subtraction */
    uint64_t s[6];
    ff__u128 bw = 0;
    for (int i = 0; i < n; i++) {
        ff__u128 d = (ff__u128)t[i] - m[i] - (uint64_t)bw;
        s[i] = (uint64_t)d;
        bw = (d >> 64) & 1;
    }
    bool lt = t[n] == 0 && bw;   /* t < m */
    for (int i = 0; i < n; i++) out[i] = lt ? t[i] : s[i];
}

static inline bool ff__is_zero(const uint64_t *a, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++) x |= a[i];
    return x == 0;
}

/* a >= m (plain integers) */
static inline bool ff__geq(const uint64_t *a, const uint64_t *m, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        if (a[i] != m[i]) return a[i] > m[i];
    }
    return true;
}

/* ---- inversion: binary extended GCD with 31-step batches (T. Pornin, "Optimized Binary GCD
 * for Modular Inversion", ePrint 2020/972, Algorithm 2). NOT constant-time. ----
 * Invariants (y the input, m the odd prime modulus): a = u*y and b = v*y (mod m), a, b >= 0.
 * Start a = y, b = m, u = 1, v = 0. Each batch runs 31 binary-GCD steps on 64-bit stand-ins
 * for a and b (their low 31 bits, exact, and their top 33 bits, approximate), recording the
 * steps as a 2x2 matrix [f0 g0; f1 g1] with |entries| <= 2^31; the full-size values then get
 * (a, b) = ([f0 g0; f1 g1] (a, b)) / 2^31, an exact division, and (u, v) the same matrix times
 * 2^-31 mod m (a 31-bit Montgomery reduction). ceil((2 len(m) - 1) / 31) batches bring a to 0
 * and b to gcd(y, m) = 1, so v = y^-1. */

/* out = |a*f + b*g| / 2^31 (exact); returns true when a*f + b*g was negative. */
static inline __attribute__((always_inline)) bool ff__lin_shift(uint64_t *out, const uint64_t *a,
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
static inline __attribute__((always_inline)) void ff__lin_mod(uint64_t *out, const uint64_t *u,
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
    memcpy(out, r, (size_t)n * sizeof *out);
}

/* The 64-bit stand-in: low 31 bits of x, and above them bits [s, s + 33) of x. */
static inline uint64_t ff__approx(const uint64_t *x, int s, int n)
{
    if (s == 0) return x[0];
    int w = s >> 6, sh = s & 63;
    uint64_t top = x[w] >> sh;
    if (sh && w + 1 < n) top |= x[w + 1] << (64 - sh);
    return (x[0] & 0x7fffffff) | (top << 31);
}

/* out = y^-1 mod m (plain integers), y in [1, m). Returns false if the batches did not end at
 * gcd 1 (y == 0; never for nonzero y by the paper's bound, and the caller then falls back). */
static inline __attribute__((always_inline)) bool ff__inv_bingcd(uint64_t *out,
                                                                 const uint64_t *y,
                                                                 const uint64_t *m, uint64_t n0,
                                                                 int batches, int n)
{
    uint64_t a[6], b[6], u[6] = {1}, v[6] = {0};
    memcpy(a, y, (size_t)n * sizeof *a);
    memcpy(b, m, (size_t)n * sizeof *b);
    for (int it = 0; it < batches; it++) {
        int top = n - 1;
        while (top > 0 && (a[top] | b[top]) == 0) top--;
        uint64_t hi = a[top] | b[top];
        int len = 64 * top + (hi ? 64 - __builtin_clzll(hi) : 0);
        int s = len <= 64 ? 0 : len - 33;
        uint64_t xa = ff__approx(a, s, n), xb = ff__approx(b, s, n);
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
        uint64_t na[6], nb[6];
        if (ff__lin_shift(na, a, b, f0, g0, n)) f0 = -f0, g0 = -g0;
        if (ff__lin_shift(nb, a, b, f1, g1, n)) f1 = -f1, g1 = -g1;
        memcpy(a, na, (size_t)n * sizeof *a);
        memcpy(b, nb, (size_t)n * sizeof *b);
        uint64_t nu[6];
        ff__lin_mod(nu, u, v, f0, g0, m, n0, n);
        ff__lin_mod(v, u, v, f1, g1, m, n0, n);
        memcpy(u, nu, (size_t)n * sizeof *u);
    }
    static const uint64_t one[6] = {1};
    if (!ff__is_zero(a, n) || memcmp(b, one, (size_t)n * sizeof *b) != 0) return false;
    memcpy(out, v, (size_t)n * sizeof *out);
    return true;
}

#endif
