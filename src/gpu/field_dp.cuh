/* field_dp.cuh: Fr Montgomery product with the 510-bit integer product a*b formed on the FP64
 * pipe and only the Montgomery reduction on the integer multiplier (IMAD).
 *
 * Why: ncu shows the NTT passes with the FMA-heavy pipe (IMAD) 87% busy but only ~45% of the
 * issue slots used: IMAD.HI / IMAD.WIDE occupy that pipe for several cycles each, so the
 * 8 x 8-word CIOS product is bound by one pipe while the FP64 pipe (DFMA) sits idle. A 51 x
 * 51-bit partial product costs 3 FP64 instructions (against ~2.5 32 x 32-bit lo/hi pairs on
 * IMAD for the same bits), so forming a*b in doubles moves about half of the IMAD work to a
 * pipe nobody uses and leaves the reduction (8 rows) where it was.
 *
 * Method (all exact, round-to-nearest IEEE double):
 * - a, b < r < 2^255 are split into five 51-bit limbs, each made a double exactly by putting
 *   it into the mantissa of 2^52 and subtracting 2^52;
 * - each partial product x*y < 2^102 is split at 2^51 without a conversion instruction:
 *   t = fma(x, y, 2^103) rounds x*y to a multiple of 2^51, so t = 2^103 + H 2^51 and the bits
 *   of t are bits(2^103) + H; then u = (2^103 + 3 2^51) - t = (3 - H) 2^51 exactly, and
 *   l' = fma(x, y, u) = x*y - H 2^51 + 1.5 2^52 lies in [2^52, 2^53), whose bits are
 *   bits(1.5 2^52) + l with l = x*y - H 2^51 in [-2^50, 2^50];
 * - the bit patterns are summed per column in 64-bit integers (wrapping), and the known
 *   number of exponent offsets is subtracted once per column; the column sums stay far inside
 *   int64, so the wrap cancels;
 * - ten 51-bit columns are carried into a 512-bit integer T = a*b (16 words), and
 *   (T + M r) / 2^256 = hi(T) + REDC(lo(T)) since M depends on lo(T) only: REDC's rows run
 *   on the low 8 words and hi(T) < r/2 is added before the one conditional subtraction.
 * The result is the canonical a*b*2^-256 mod r, bit-identical to f_mul_rows<fr_params>. */
#ifndef CUZK_GPU_FIELD_DP_CUH
#define CUZK_GPU_FIELD_DP_CUH

#include "field.cuh"

#if defined(CZ_HOST_EMU)
#include <math.h>
#include <string.h>
#endif

CZ_FN double cz_dfma(double a, double b, double c)
{
#ifdef __CUDA_ARCH__
    return __fma_rn(a, b, c);
#else
    return fma(a, b, c);
#endif
}
CZ_FN double cz_dsub(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}
CZ_FN uint64_t cz_dbits(double x)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}
/* the double whose bits are hi:lo */
CZ_FN double cz_hilo_d(uint32_t hi, uint32_t lo)
{
#ifdef __CUDA_ARCH__
    return __hiloint2double((int)hi, (int)lo);
#else
    uint64_t u = (uint64_t)hi << 32 | lo;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}
/* (hi:lo) >> s, low 32 bits (0 <= s < 32) */
CZ_FN uint32_t cz_fshr(uint32_t lo, uint32_t hi, unsigned s)
{
#ifdef __CUDA_ARCH__
    return __funnelshift_r(lo, hi, s);
#else
    return (uint32_t)(((uint64_t)hi << 32 | lo) >> s);
#endif
}

/* exact integer value of a double holding an integer below 2^63 in magnitude */
CZ_FN int64_t cz_d2ll(double x)
{
#ifdef __CUDA_ARCH__
    return __double2ll_rn(x);
#else
    return (int64_t)x;
#endif
}
CZ_FN double cz_dadd(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

#define CZ_DP_W 51
#define CZ_DP_L 5
#define CZ_DP_TWO52 4503599627370496.0              /* 2^52 */
#define CZ_DP_C 10141204801825835211973625643008.0  /* 2^103 */
#define CZ_DP_K (CZ_DP_C + 3.0 * 2251799813685248.0) /* 2^103 + 3 * 2^51 */
#define CZ_DP_BITS_C 0x4660000000000000ull           /* bits of 2^103 */
#define CZ_DP_BITS_M 0x4338000000000000ull           /* bits of 1.5 * 2^52 */

/* Limb k (bits 51k .. 51k + 50) of an 8-word value < 2^255 as an exact double. */
template <int K> CZ_FN double dp_limb(const uint32_t *v)
{
    constexpr int o = CZ_DP_W * K, w = o / 32, s = o % 32;
    const uint32_t lo = s ? cz_fshr(v[w], v[w + 1], s) : v[w];
    uint32_t hi;
    if (w + 2 < 8) hi = s ? cz_fshr(v[w + 1], v[w + 2], s) : v[w + 1];
    else hi = v[w + 1] >> s;
    hi &= (1u << (CZ_DP_W - 32)) - 1;
    return cz_dsub(cz_hilo_d(hi | 0x43300000u, lo), CZ_DP_TWO52);
}

CZ_FN void dp_limbs(double *x, const uint32_t *v)
{
    x[0] = dp_limb<0>(v);
    x[1] = dp_limb<1>(v);
    x[2] = dp_limb<2>(v);
    x[3] = dp_limb<3>(v);
    x[4] = dp_limb<4>(v);
}

/* Ten signed 64-bit column sums c_k (weight 2^(51 k)) into T = sum c_k 2^(51 k) as 16 words. */
CZ_FN void dp_columns_to_words(uint32_t *T, const int64_t *col)
{
    constexpr int L = CZ_DP_L;
    uint64_t limb[2 * L];
    int64_t carry = 0;
#pragma unroll
    for (int k = 0; k < 2 * L; k++) {
        const int64_t v = col[k] + carry;
        limb[k] = (uint64_t)v & ((1ull << CZ_DP_W) - 1);
        carry = v >> CZ_DP_W;   /* arithmetic: v may be negative below the top */
    }
#pragma unroll
    for (int w = 0; w < 16; w++) {
        const int b0 = 32 * w;
        const int k0 = b0 / CZ_DP_W, s0 = b0 % CZ_DP_W;
        uint64_t word = limb[k0] >> s0;
        if (s0 + 32 > CZ_DP_W && k0 + 1 < 2 * L) word |= limb[k0 + 1] << (CZ_DP_W - s0);
        T[w] = (uint32_t)word;
    }
}

/* Form 1: column sums of the partial products' bit patterns in 64-bit integers. */
CZ_FN void dp_wide_product_bits(uint32_t *T, const double *x, const double *y)
{
    constexpr int L = CZ_DP_L;
    uint64_t cur = 0, nxt = 0;   /* column k (l terms, H terms of column k - 1) and k + 1 */
    int nprev = 0;               /* pairs of column k - 1: the H terms in column k */
    int64_t col[2 * L];
#pragma unroll
    for (int k = 0; k < 2 * L; k++) {
        int nl = 0;
#pragma unroll
        for (int i = 0; i < L; i++) {
            const int j = k - i;
            if (j < 0 || j >= L) continue;
            const double t = cz_dfma(x[i], y[j], CZ_DP_C);
            const double u = cz_dsub(CZ_DP_K, t);
            const double l = cz_dfma(x[i], y[j], u);
            cur += cz_dbits(l);
            nxt += cz_dbits(t);
            nl++;
        }
        col[k] = (int64_t)(cur - (uint64_t)nl * CZ_DP_BITS_M - (uint64_t)nprev * CZ_DP_BITS_C);
        nprev = nl;
        cur = nxt;
        nxt = 0;
    }
    dp_columns_to_words(T, col);
}

/* Form 2: column sums in doubles, converted once per column. With t = fma(x, y, 2^103),
 * nh = 2^103 - t = -H 2^51 and l = fma(x, y, nh) = x y - H 2^51 in [-2^50, 2^50]: a column's
 * l sum (<= 5 terms) stays below 2^53, exact; its nh sum is a multiple of 2^51 below 2^104
 * (exact) for up to 4 terms (H <= 2^51 - 2), so the 5-term middle column keeps two. */
CZ_FN void dp_wide_product_fp(uint32_t *T, const double *x, const double *y)
{
    constexpr int L = CZ_DP_L;
    double ls[2 * L - 1], hs[2 * L - 1], hs2 = 0.0;
#pragma unroll
    for (int k = 0; k < 2 * L - 1; k++) {
        int n = 0;
#pragma unroll
        for (int i = 0; i < L; i++) {
            const int j = k - i;
            if (j < 0 || j >= L) continue;
            const double t = cz_dfma(x[i], y[j], CZ_DP_C);
            const double nh = cz_dsub(CZ_DP_C, t);
            const double l = cz_dfma(x[i], y[j], nh);
            ls[k] = n ? cz_dadd(ls[k], l) : l;
            if (k != L - 1 || n < 3) hs[k] = n ? cz_dadd(hs[k], nh) : nh;
            else hs2 = n > 3 ? cz_dadd(hs2, nh) : nh;
            n++;
        }
    }
    const double s = -1.0 / 2251799813685248.0;   /* -2^-51 */
    int64_t col[2 * L];
#pragma unroll
    for (int k = 0; k < 2 * L; k++) {
        int64_t c = k < 2 * L - 1 ? cz_d2ll(ls[k]) : 0;
        if (k > 0) c += cz_d2ll(hs[k - 1] * s);
        if (k == L) c += cz_d2ll(hs2 * s);
        col[k] = c;
    }
    dp_columns_to_words(T, col);
}

/* res = a b 2^-256 mod r (canonical), a, b < r: FP64 product, IMAD reduction. FORM 1 / 2: the
 * column sums of dp_wide_product_bits / _fp; RED 0: REDC rows on lo(T), 1: lo(T) * 1 by the
 * even/odd CIOS product (its product rows fold away). */
template <int FORM, int RED> CZ_FN void f_mul_dp_fr(uint32_t *res, const uint32_t *a, const uint32_t *b)
{
    constexpr int N = fr_params::N;
    double x[CZ_DP_L], y[CZ_DP_L];
    dp_limbs(x, a);
    dp_limbs(y, b);
    uint32_t T[2 * N];
    if (FORM == 1) dp_wide_product_bits(T, x, y);
    else dp_wide_product_fp(T, x, y);
    uint32_t t[N];
    if (RED == 1) {
        /* (lo(T) + M r) / 2^256 mod r, canonical: lo(T) < 2^256 keeps the product's bound */
        const uint32_t one[N] = {1, 0, 0, 0, 0, 0, 0, 0};
        f_mul_rows<fr_params>(t, T, one);
    } else {
        /* REDC rows on the low half (the f_redc_rows recurrence, without its final
         * subtraction): t = (lo(T) + M r) / 2^256 <= r */
#pragma unroll
        for (int j = 0; j < N; j++) t[j] = T[j];
#pragma unroll
        for (int i = 0; i < N; i++) {
            const uint32_t m = t[0] * fr_params::n0;
            t[0] = cz_madlo_cc(fr_params::p(0), m, t[0]);
#pragma unroll
            for (int j = 1; j < N; j++) t[j] = cz_madlo_c_cc(fr_params::p(j), m, t[j]);
            uint32_t top = cz_addc(0, 0);
            t[1] = cz_madhi_cc(fr_params::p(0), m, t[1]);
#pragma unroll
            for (int j = 1; j < N - 1; j++) t[j + 1] = cz_madhi_c_cc(fr_params::p(j), m, t[j + 1]);
            top = cz_madhi_c(fr_params::p(N - 1), m, top);
#pragma unroll
            for (int j = 0; j < N - 1; j++) t[j] = t[j + 1];
            t[N - 1] = top;
        }
    }
    /* + hi(T) (< r / 2): the sum is below 1.5 r < 2^256 */
    uint32_t s[N];
    s[0] = cz_add_cc(t[0], T[N]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) s[j] = cz_addc_cc(t[j], T[N + j]);
    s[N - 1] = cz_addc(t[N - 1], T[2 * N - 1]);
    f_reduce_once<fr_params>(res, s);
}

/* CIOS with plain 64-bit C arithmetic (Koc et al.'s operand scanning): each step is
 * (u64) x * y + t + carry, which ptxas can map to one IMAD.WIDE.U32 (both halves of the partial
 * product in one instruction) plus ALU adds for the 32-bit addends, instead of the separate
 * IMAD.HI / IMAD.X pairs that part of the PTX carry-chain form compiles to. Same bounds as
 * f_mul_rows: a, b < p < 2^(32N-1), the running value stays below 2p. */
template <class P> CZ_FN void f_mul_wide(uint32_t *res, const uint32_t *a, const uint32_t *b)
{
    constexpr int N = P::N;
    uint32_t t[N + 2];
#pragma unroll
    for (int j = 0; j < N + 2; j++) t[j] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint64_t c = 0;
#pragma unroll
        for (int j = 0; j < N; j++) {
            const uint64_t q = (uint64_t)a[j] * b[i] + t[j] + c;
            t[j] = (uint32_t)q;
            c = q >> 32;
        }
        uint64_t s = (uint64_t)t[N] + c;
        t[N] = (uint32_t)s;
        t[N + 1] = (uint32_t)(s >> 32);
        const uint32_t m = t[0] * P::n0;
        c = ((uint64_t)m * P::p(0) + t[0]) >> 32;
#pragma unroll
        for (int j = 1; j < N; j++) {
            const uint64_t q = (uint64_t)m * P::p(j) + t[j] + c;
            t[j - 1] = (uint32_t)q;
            c = q >> 32;
        }
        s = (uint64_t)t[N] + c;
        t[N - 1] = (uint32_t)s;
        t[N] = t[N + 1] + (uint32_t)(s >> 32);
    }
    f_reduce_once<P>(res, t);
}

template <int FORM = 2, int RED = 1> __device__ __forceinline__ dfr f_mul_dp(const dfr &a, const dfr &b)
{
    dfr r;
    f_mul_dp_fr<FORM, RED>(r.v, a.v, b.v);
    return r;
}

#endif
