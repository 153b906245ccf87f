/* ff_internal.h: generic Montgomery arithmetic on n x 64-bit limbs (n = 4 for Fr, 6 for Fp).
 * fp.c and fr.c instantiate it with the modulus fixed so the compiler unrolls every loop.
 * Portable C with unsigned __int128 (gcc/clang turn it into mul/mulx + adc). See docs/ff.md. */
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

#endif
