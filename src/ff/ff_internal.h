/* ff_internal.h: generic arithmetic on n x 64-bit limbs (n = 4 for Fr, 6 for Fp): portable
 * Montgomery add/sub/mul (unsigned __int128) and the binary-GCD inversion. fp.c and fr.c
 * instantiate it with the modulus fixed so the compiler unrolls every loop. See docs/ff.md. */
#ifndef CUZK_FF_INTERNAL_H
#define CUZK_FF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ff_bingcd.h"   /* ff__u128, ff__geq and the GCD's batch, shared with the GPU */

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

/* ---- inversion: binary extended GCD with 31-step batches (T. Pornin, "Optimized Binary GCD
 * for Modular Inversion", ePrint 2020/972, Algorithm 2). NOT constant-time. ----
 * Invariants (y the input, m the odd prime modulus): a = u*y and b = v*y (mod m), a, b >= 0.
 * Start a = y, b = m, u = 1, v = 0. Each batch runs 31 binary-GCD steps on 64-bit stand-ins
 * for a and b (their low 31 bits, exact, and their top 33 bits, approximate), recording the
 * steps as a 2x2 matrix [f0 g0; f1 g1] with |entries| <= 2^31; the full-size values then get
 * (a, b) = ([f0 g0; f1 g1] (a, b)) / 2^31, an exact division, and (u, v) the same matrix times
 * 2^-31 mod m (a 31-bit Montgomery reduction). ceil((2 len(m) - 1) / 31) batches bring a to 0
 * and b to gcd(y, m) = 1, so v = y^-1. */

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
        const ff__bingcd_mat mt = ff__bingcd_batch(xa, xb);
        int64_t f0 = mt.f0, g0 = mt.g0, f1 = mt.f1, g1 = mt.g1;
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
