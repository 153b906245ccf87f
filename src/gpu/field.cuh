/* field.cuh: device Montgomery arithmetic for Fp (12 x u32, R = 2^384), Fr (8 x u32,
 * R = 2^256) and Fp2 = Fp[u]/(u^2+1). Limbs are little-endian and byte-identical to the CPU
 * library's 6 x u64 / 4 x u64 layout (include/cuzk/ff.h), so host data is used unconverted. */
#ifndef CUZK_GPU_FIELD_CUH
#define CUZK_GPU_FIELD_CUH

#include <stdint.h>

/* Modulus limbs are returned by constexpr switches so that, in fully unrolled loops, they
 * become instruction immediates instead of memory loads. */
struct fp_params {
    static constexpr int N = 12;
    static constexpr uint32_t n0 = 0xfffcfffdu;   /* -p^-1 mod 2^32 */
    __host__ __device__ static constexpr uint32_t p(int i)
    {
        return i == 0 ? 0xffffaaabu : i == 1 ? 0xb9feffffu : i == 2 ? 0xb153ffffu
             : i == 3 ? 0x1eabfffeu : i == 4 ? 0xf6b0f624u : i == 5 ? 0x6730d2a0u
             : i == 6 ? 0xf38512bfu : i == 7 ? 0x64774b84u : i == 8 ? 0x434bacd7u
             : i == 9 ? 0x4b1ba7b6u : i == 10 ? 0x397fe69au : 0x1a0111eau;
    }
    __host__ __device__ static constexpr uint32_t one(int i)   /* R mod p */
    {
        return i == 0 ? 0x0002fffdu : i == 1 ? 0x76090000u : i == 2 ? 0xc40c0002u
             : i == 3 ? 0xebf4000bu : i == 4 ? 0x53c758bau : i == 5 ? 0x5f489857u
             : i == 6 ? 0x70525745u : i == 7 ? 0x77ce5853u : i == 8 ? 0xa256ec6du
             : i == 9 ? 0x5c071a97u : i == 10 ? 0xfa80e493u : 0x15f65ec3u;
    }
    __host__ __device__ static constexpr uint32_t r3(int i)   /* R^3 mod p */
    {
        return i == 0 ? 0xd94ca1e0u : i == 1 ? 0xed48ac6bu : i == 2 ? 0x03a7adf8u
             : i == 3 ? 0x315f831eu : i == 4 ? 0x615e29ddu : i == 5 ? 0x9a53352au
             : i == 6 ? 0x921e1761u : i == 7 ? 0x34c04e5eu : i == 8 ? 0x65724728u
             : i == 9 ? 0x2512d435u : i == 10 ? 0x91755d4du : 0x0aa63460u;
    }
    static constexpr int inv_batches = 25;   /* ceil((2 * 381 - 1) / 31) */
};

struct fr_params {
    static constexpr int N = 8;
    static constexpr uint32_t n0 = 0xffffffffu;   /* -r^-1 mod 2^32 */
    __host__ __device__ static constexpr uint32_t p(int i)
    {
        return i == 0 ? 0x00000001u : i == 1 ? 0xffffffffu : i == 2 ? 0xfffe5bfeu
             : i == 3 ? 0x53bda402u : i == 4 ? 0x09a1d805u : i == 5 ? 0x3339d808u
             : i == 6 ? 0x299d7d48u : 0x73eda753u;
    }
    __host__ __device__ static constexpr uint32_t one(int i)   /* R mod r */
    {
        return i == 0 ? 0xfffffffeu : i == 1 ? 0x00000001u : i == 2 ? 0x00034802u
             : i == 3 ? 0x5884b7fau : i == 4 ? 0xecbc4ff5u : i == 5 ? 0x998c4fefu
             : i == 6 ? 0xacc5056fu : 0x1824b159u;
    }
    __host__ __device__ static constexpr uint32_t r3(int i)   /* R^3 mod r */
    {
        return i == 0 ? 0x439b73afu : i == 1 ? 0xc62c1807u : i == 2 ? 0x8cf06990u
             : i == 3 ? 0x1b3e0d18u : i == 4 ? 0xc7b5f418u : i == 5 ? 0x73d13c71u
             : i == 6 ? 0xc8db33e9u : 0x6e2a5bb9u;
    }
    static constexpr int inv_batches = 17;   /* ceil((2 * 255 - 1) / 31) */
};

/* 16-byte alignment lets shared/global accesses use 128-bit loads. */
template <class P> struct __align__(16) mont {
    uint32_t v[P::N];
};
typedef mont<fp_params> dfp;
typedef mont<fr_params> dfr;

/* Carry chains are written in PTX: each asm statement is volatile so that the compiler keeps
 * the chain in order (the carry flag is invisible to it). */
#define CZ_ASM(...) asm volatile(__VA_ARGS__)

/* One-instruction carry-chain primitives (PTX names: cc = sets the carry, c = adds it). With
 * CZ_HOST_EMU they are also host functions emulating the flag, so that a host program can check
 * the product formulations bit-for-bit without a GPU (the device build never defines it). */
#ifdef CZ_HOST_EMU
#define CZ_FN __host__ __device__ __forceinline__
static uint32_t cz_emu_cf;
#else
#define CZ_FN __device__ __forceinline__
#endif

#if defined(CZ_HOST_EMU) && !defined(__CUDA_ARCH__)
CZ_FN uint32_t cz_emu_add(uint64_t s, bool set)
{
    if (set) cz_emu_cf = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
CZ_FN uint32_t cz_mul_lo(uint32_t a, uint32_t b) { return a * b; }
CZ_FN uint32_t cz_mul_hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
CZ_FN uint32_t cz_madlo_cc(uint32_t a, uint32_t b, uint32_t c) { return cz_emu_add((uint64_t)(a * b) + c, true); }
CZ_FN uint32_t cz_madlo_c_cc(uint32_t a, uint32_t b, uint32_t c) { return cz_emu_add((uint64_t)(a * b) + c + cz_emu_cf, true); }
CZ_FN uint32_t cz_madhi_cc(uint32_t a, uint32_t b, uint32_t c) { return cz_emu_add((uint64_t)cz_mul_hi(a, b) + c, true); }
CZ_FN uint32_t cz_madhi_c_cc(uint32_t a, uint32_t b, uint32_t c) { return cz_emu_add((uint64_t)cz_mul_hi(a, b) + c + cz_emu_cf, true); }
CZ_FN uint32_t cz_madhi_c(uint32_t a, uint32_t b, uint32_t c) { return cz_emu_add((uint64_t)cz_mul_hi(a, b) + c + cz_emu_cf, false); }
CZ_FN uint32_t cz_add_cc(uint32_t a, uint32_t b) { return cz_emu_add((uint64_t)a + b, true); }
CZ_FN uint32_t cz_addc_cc(uint32_t a, uint32_t b) { return cz_emu_add((uint64_t)a + b + cz_emu_cf, true); }
CZ_FN uint32_t cz_addc(uint32_t a, uint32_t b) { return cz_emu_add((uint64_t)a + b + cz_emu_cf, false); }
CZ_FN uint32_t cz_sub_cc(uint32_t a, uint32_t b)
{
    cz_emu_cf = a < b;
    return a - b;
}
CZ_FN uint32_t cz_subc_cc(uint32_t a, uint32_t b)
{
    uint64_t d = (uint64_t)a - b - cz_emu_cf;
    cz_emu_cf = (uint32_t)(d >> 63);
    return (uint32_t)d;
}
CZ_FN uint32_t cz_subc(uint32_t a, uint32_t b) { return a - b - cz_emu_cf; }
#else
#define CZ_OP3(name, ins)                                                              \
    CZ_FN uint32_t name(uint32_t a, uint32_t b, uint32_t c)                            \
    {                                                                                  \
        uint32_t d;                                                                    \
        CZ_ASM(ins " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));             \
        return d;                                                                      \
    }
#define CZ_OP2(name, ins)                                                              \
    CZ_FN uint32_t name(uint32_t a, uint32_t b)                                        \
    {                                                                                  \
        uint32_t d;                                                                    \
        CZ_ASM(ins " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));                         \
        return d;                                                                      \
    }
CZ_FN uint32_t cz_mul_lo(uint32_t a, uint32_t b) { return a * b; }
CZ_FN uint32_t cz_mul_hi(uint32_t a, uint32_t b) { return __umulhi(a, b); }
CZ_OP3(cz_madlo_cc, "mad.lo.cc.u32")
CZ_OP3(cz_madlo_c_cc, "madc.lo.cc.u32")
CZ_OP3(cz_madhi_cc, "mad.hi.cc.u32")
CZ_OP3(cz_madhi_c_cc, "madc.hi.cc.u32")
CZ_OP3(cz_madhi_c, "madc.hi.u32")
CZ_OP2(cz_add_cc, "add.cc.u32")
CZ_OP2(cz_addc_cc, "addc.cc.u32")
CZ_OP2(cz_addc, "addc.u32")
CZ_OP2(cz_sub_cc, "sub.cc.u32")
CZ_OP2(cz_subc_cc, "subc.cc.u32")
CZ_OP2(cz_subc, "subc.u32")
#undef CZ_OP2
#undef CZ_OP3
#endif

template <class P> __device__ __forceinline__ mont<P> f_zero()
{
    mont<P> r;
#pragma unroll
    for (int i = 0; i < P::N; i++) r.v[i] = 0;
    return r;
}

template <class P> __device__ __forceinline__ mont<P> f_one()
{
    mont<P> r;
#pragma unroll
    for (int i = 0; i < P::N; i++) r.v[i] = P::one(i);
    return r;
}

template <class P> __device__ __forceinline__ bool f_is_zero(const mont<P> &a)
{
    uint32_t x = 0;
#pragma unroll
    for (int i = 0; i < P::N; i++) x |= a.v[i];
    return x == 0;
}

template <class P> __device__ __forceinline__ bool f_eq(const mont<P> &a, const mont<P> &b)
{
    uint32_t x = 0;
#pragma unroll
    for (int i = 0; i < P::N; i++) x |= a.v[i] ^ b.v[i];
    return x == 0;
}

template <class P> __device__ __forceinline__ bool f_is_one(const mont<P> &a)
{
    uint32_t x = 0;
#pragma unroll
    for (int i = 0; i < P::N; i++) x |= a.v[i] ^ P::one(i);
    return x == 0;
}

/* out = t - p if t >= p else t (t < 2p, t fits N limbs). */
template <class P> CZ_FN void f_reduce_once(uint32_t *out, const uint32_t *t)
{
    constexpr int N = P::N;
    uint32_t s[N], br;
    s[0] = cz_sub_cc(t[0], P::p(0));
#pragma unroll
    for (int i = 1; i < N; i++) s[i] = cz_subc_cc(t[i], P::p(i));
    br = cz_subc(0, 0);
#pragma unroll
    for (int i = 0; i < N; i++) out[i] = br ? t[i] : s[i];
}

template <class P> __device__ __forceinline__ mont<P> operator+(const mont<P> &a, const mont<P> &b)
{
    constexpr int N = P::N;
    uint32_t s[N];
    mont<P> r;
    /* a + b < 2p < 2^(32N) for both moduli: no carry out of the top limb */
    CZ_ASM("add.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) CZ_ASM("addc.cc.u32 %0, %1, %2;" : "=r"(s[i]) : "r"(a.v[i]), "r"(b.v[i]));
    f_reduce_once<P>(r.v, s);
    return r;
}

template <class P> __device__ __forceinline__ mont<P> operator-(const mont<P> &a, const mont<P> &b)
{
    constexpr int N = P::N;
    uint32_t d[N], br;
    mont<P> r;
    CZ_ASM("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) CZ_ASM("subc.cc.u32 %0, %1, %2;" : "=r"(d[i]) : "r"(a.v[i]), "r"(b.v[i]));
    CZ_ASM("subc.u32 %0, %1, %1;" : "=r"(br) : "r"(0));
    /* add p back when it underflowed */
    CZ_ASM("add.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(d[0]), "r"(P::p(0) & br));
#pragma unroll
    for (int i = 1; i < N; i++)
        CZ_ASM("addc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(d[i]), "r"(P::p(i) & br));
    return r;
}

template <class P> __device__ __forceinline__ mont<P> f_neg(const mont<P> &a)
{
    return f_is_zero(a) ? a : f_zero<P>() - a;
}

template <class P> __device__ __forceinline__ mont<P> f_dbl(const mont<P> &a) { return a + a; }

/* The Montgomery factor m = t0 * n0 of a reduction row. Fr's n0 is 2^32 - 1, so the compiler
 * writes m = -t0, and ptxas then splits each lo/hi pair of the m * r rows into IMAD.X +
 * IMAD.HI.U32.X (6 cycles of the FMA-heavy pipe) instead of one IMAD.WIDE.U32.X (4 cycles), as
 * it does for the a * b_i rows and for every row of Fp: 48 split pairs per Fr product. With n0
 * read from memory, m is an ordinary product and every pair fuses (SASS per Fr product: 97
 * IMAD.WIDE.U32.X instead of 49 + 48 pairs; decisions.md "Fr's Montgomery factor m is a real
 * product"). The word is read by an inline PTX load, which neither NVVM (the variable is internal and
 * never written, so a plain load would fold) nor ptxas can see through; the compiler hoists it,
 * so it costs one cached load per kernel. Each translation unit has its own copy. */
#if defined(__CUDACC__)
static __device__ uint32_t cz_fr_n0_dev = 0xffffffffu;
#endif
template <class P> CZ_FN uint32_t mont_n0()
{
#if defined(__CUDA_ARCH__)
    if constexpr (P::n0 == 0xffffffffu) {
        uint32_t v;
        asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(__cvta_generic_to_global(&cz_fr_n0_dev)));
        return v;
    }
#endif
    return P::n0;
}

/* Montgomery product, CIOS over 32-bit words of b with the partial sum split in two
 * accumulators (the even/odd technique of Emmart et al. for NVIDIA GPUs): E takes the products
 * of the even limbs of a (and p), lo half at word j and hi half at j + 1, which never overlap,
 * so one alternating lo/hi carry chain adds a whole row; O takes the odd limbs the same way,
 * stored one word up (O[k] weighs word k + 1). A row is thus 2 chains of N instead of 4, with
 * no separate carry-propagation steps. After m*p is added, E[0] is zero and dividing by 2^32
 * makes O word-aligned: it becomes the next row's E, while the old E (E[k] now at word k - 1)
 * becomes the next O for free, since mad's destination may differ from its addend; only E[1],
 * now at word 0, is added separately. Bounds (a, b < p < 2^(32N-1)): the running value stays
 * below 2p, so O never carries out of its top word (its value is at most the total / 2^32);
 * E's carries out of word N - 1 go into O[N - 1]. */
template <class P> CZ_FN void f_mul_rows(uint32_t *res, const uint32_t *a, const uint32_t *b)
{
    constexpr int N = P::N;
    uint32_t e[N], o[N];
    /* row 0: plain products, no accumulation */
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        e[j] = cz_mul_lo(a[j], b[0]);
        e[j + 1] = cz_mul_hi(a[j], b[0]);
        o[j] = cz_mul_lo(a[j + 1], b[0]);
        o[j + 1] = cz_mul_hi(a[j + 1], b[0]);
    }
#pragma unroll
    for (int i = 0; i < N; i++) {
        if (i > 0) {
            /* (e, o) of the previous row, divided by 2^32: o is aligned (new e), e[k] weighs
             * word k - 1: e[1] joins word 0, e[k + 2] is the addend of new o[k]. */
            uint32_t ne[N], no[N];
            const uint32_t bi = b[i];
            ne[0] = cz_add_cc(o[0], e[1]);
#pragma unroll
            for (int j = 0; j < N - 2; j += 2) {
                no[j] = cz_madlo_c_cc(a[j + 1], bi, e[j + 2]);
                no[j + 1] = cz_madhi_c_cc(a[j + 1], bi, e[j + 3]);
            }
            no[N - 2] = cz_madlo_c_cc(a[N - 1], bi, 0);
            no[N - 1] = cz_madhi_c(a[N - 1], bi, 0);
            ne[0] = cz_madlo_cc(a[0], bi, ne[0]);
            ne[1] = cz_madhi_c_cc(a[0], bi, o[1]);
#pragma unroll
            for (int j = 2; j < N; j += 2) {
                ne[j] = cz_madlo_c_cc(a[j], bi, o[j]);
                ne[j + 1] = cz_madhi_c_cc(a[j], bi, o[j + 1]);
            }
            no[N - 1] = cz_addc(no[N - 1], 0);
#pragma unroll
            for (int j = 0; j < N; j++) {
                e[j] = ne[j];
                o[j] = no[j];
            }
        }
        /* + m p with m = e[0] * (-p^-1): odd limbs of p into o, even limbs into e */
        const uint32_t m = e[0] * mont_n0<P>();
        o[0] = cz_madlo_cc(P::p(1), m, o[0]);
        o[1] = cz_madhi_c_cc(P::p(1), m, o[1]);
#pragma unroll
        for (int j = 2; j < N - 2; j += 2) {
            o[j] = cz_madlo_c_cc(P::p(j + 1), m, o[j]);
            o[j + 1] = cz_madhi_c_cc(P::p(j + 1), m, o[j + 1]);
        }
        o[N - 2] = cz_madlo_c_cc(P::p(N - 1), m, o[N - 2]);
        o[N - 1] = cz_madhi_c(P::p(N - 1), m, o[N - 1]);
        e[0] = cz_madlo_cc(P::p(0), m, e[0]);
        e[1] = cz_madhi_c_cc(P::p(0), m, e[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            e[j] = cz_madlo_c_cc(P::p(j), m, e[j]);
            e[j + 1] = cz_madhi_c_cc(P::p(j), m, e[j + 1]);
        }
        o[N - 1] = cz_addc(o[N - 1], 0);
    }
    /* final division by 2^32: res = o + (e >> 32) < 2p */
    uint32_t t[N];
    t[0] = cz_add_cc(o[0], e[1]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) t[j] = cz_addc_cc(o[j], e[j + 1]);
    t[N - 1] = cz_addc(o[N - 1], 0);
    f_reduce_once<P>(res, t);
}

template <class P> CZ_FN mont<P> operator*(const mont<P> &a, const mont<P> &b)
{
    mont<P> r;
    f_mul_rows<P>(r.v, a.v, b.v);
    return r;
}

template <class P> __device__ __forceinline__ mont<P> f_sqr(const mont<P> &a) { return a * a; }

/* res = a * 2^-(32N) mod p for a < p (Montgomery reduction alone: N rows of t += m p,
 * t /= 2^32; about a third of a product's instructions). Each row: lo halves of m p at words
 * 0..N-1 (carry into the top word), hi halves at words 1..N. The value stays below
 * p + p = 2p < 2^(32N), so the top word never overflows; the result is <= p before the final
 * conditional subtraction. */
template <class P> CZ_FN void f_redc_rows(uint32_t *res, const uint32_t *a)
{
    constexpr int N = P::N;
    uint32_t t[N];
#pragma unroll
    for (int j = 0; j < N; j++) t[j] = a[j];
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint32_t m = t[0] * mont_n0<P>();
        t[0] = cz_madlo_cc(P::p(0), m, t[0]);   /* becomes 0 */
#pragma unroll
        for (int j = 1; j < N; j++) t[j] = cz_madlo_c_cc(P::p(j), m, t[j]);
        uint32_t top = cz_addc(0, 0);
        t[1] = cz_madhi_cc(P::p(0), m, t[1]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) t[j + 1] = cz_madhi_c_cc(P::p(j), m, t[j + 1]);
        top = cz_madhi_c(P::p(N - 1), m, top);
#pragma unroll
        for (int j = 0; j < N - 1; j++) t[j] = t[j + 1];
        t[N - 1] = top;
    }
    f_reduce_once<P>(res, t);
}

/* ---- Inversion: the CPU library's binary GCD (T. Pornin, ePrint 2020/972, Algorithm 2; its
 * batch of 31 steps and its matrix updates are src/ff/ff_bingcd.h, compiled here for the
 * device) in 64-bit limbs. In the batch-affine rounds one thread inverts for its whole block
 * (block_inv) while the other threads wait, so what counts is the latency of one thread:
 * Fermat's ~480 dependent products made every round launch idle the GPU for that long. ---- */
#define FF_GCD_FN static CZ_FN
#include "../ff/ff_bingcd.h"

/* The 64-bit stand-in of x: its low 31 bits, and above them bits [s, s + 33) (s = 0: x's low
 * word). Limbs are picked by selects, not by index, so the arrays stay in registers. */
template <int n> CZ_FN uint64_t inv_approx(const uint64_t *x, int s)
{
    const int w = s >> 6, sh = s & 63;
    uint64_t lo = 0, hi = 0;
#pragma unroll
    for (int i = 0; i < n; i++) {
        lo = i == w ? x[i] : lo;
        hi = i == w + 1 ? x[i] : hi;
    }
    if (s == 0) return lo;
    const uint64_t top = sh ? (lo >> sh) | (hi << (64 - sh)) : lo;
    return (x[0] & 0x7fffffff) | (top << 31);
}

CZ_FN int inv_clz64(uint64_t x)
{
#if defined(__CUDA_ARCH__)
    return __clzll((long long)x);
#else
    return __builtin_clzll(x);
#endif
}

/* out = y^-1 mod m (plain integers, 32-bit limbs), y in [1, m); false if the batches did not end
 * at gcd 1 (y = 0; never for y != 0 by the paper's bound). */
template <class P> CZ_FN bool inv_bingcd(uint32_t *out, const uint32_t *y)
{
    constexpr int n = P::N / 2;
    uint64_t a[n], b[n], u[n], v[n], m[n];
#pragma unroll
    for (int i = 0; i < n; i++) {
        a[i] = y[2 * i] | (uint64_t)y[2 * i + 1] << 32;
        m[i] = P::p(2 * i) | (uint64_t)P::p(2 * i + 1) << 32;
        b[i] = m[i];
        u[i] = i == 0;
        v[i] = 0;
    }
    for (int it = 0; it < P::inv_batches; it++) {
        int len = 0;
#pragma unroll
        for (int i = 0; i < n; i++) {
            const uint64_t h = a[i] | b[i];
            len = h ? 64 * i + 64 - inv_clz64(h) : len;
        }
        const int s = len <= 64 ? 0 : len - 33;
        uint64_t xa = inv_approx<n>(a, s), xb = inv_approx<n>(b, s);
        const ff__bingcd_mat mt = ff__bingcd_batch(xa, xb);
        int64_t f0 = mt.f0, g0 = mt.g0, f1 = mt.f1, g1 = mt.g1;
        uint64_t na[n], nb[n], nu[n];
        if (ff__lin_shift(na, a, b, f0, g0, n)) f0 = -f0, g0 = -g0;
        if (ff__lin_shift(nb, a, b, f1, g1, n)) f1 = -f1, g1 = -g1;
        /* only the low 31 bits of -m^-1 matter to the 31-bit division: P::n0 serves */
        ff__lin_mod(nu, u, v, f0, g0, m, (uint64_t)P::n0, n);
        ff__lin_mod(v, u, v, f1, g1, m, (uint64_t)P::n0, n);
#pragma unroll
        for (int i = 0; i < n; i++) {
            a[i] = na[i];
            b[i] = nb[i];
            u[i] = nu[i];
        }
    }
    uint64_t bad = b[0] ^ 1;
#pragma unroll
    for (int i = 0; i < n; i++) bad |= a[i] | (i ? b[i] : 0);
#pragma unroll
    for (int i = 0; i < n; i++) {
        out[2 * i] = (uint32_t)v[i];
        out[2 * i + 1] = (uint32_t)(v[i] >> 32);
    }
    return bad == 0;
}

/* res = a^-1 (Montgomery form in and out; 0 -> 0). a holds x R: the GCD gives (x R)^-1 and a
 * Montgomery product with R^3 makes it x^-1 R. Fermat (a^(p-2), square and multiply) stays as
 * the fallback the CPU library also keeps, for a nonzero a whose batches did not end at gcd 1
 * (never, by the paper's bound). */
template <class P> CZ_FN void f_inv_rows(uint32_t *res, const uint32_t *a)
{
    constexpr int N = P::N;
    uint32_t t[N], r3[N], z = 0;
    if (inv_bingcd<P>(t, a)) {
#pragma unroll
        for (int i = 0; i < N; i++) r3[i] = P::r3(i);
        f_mul_rows<P>(res, t, r3);
        return;
    }
#pragma unroll
    for (int i = 0; i < N; i++) z |= a[i];
    if (!z) {
#pragma unroll
        for (int i = 0; i < N; i++) res[i] = 0;
        return;
    }
    uint32_t e[N], r[N];
    uint32_t br = 2;   /* e = p - 2 */
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint32_t pi = P::p(i);
        e[i] = pi - br;
        br = pi < br ? 1u : 0u;
        r[i] = P::one(i);
    }
    for (int bit = 32 * N - 1; bit >= 0; bit--) {
        f_mul_rows<P>(r, r, r);
        if ((e[bit >> 5] >> (bit & 31)) & 1) f_mul_rows<P>(r, r, a);
    }
#pragma unroll
    for (int i = 0; i < N; i++) res[i] = r[i];
}

/* A call, not inlined: the GCD's registers must not raise the pressure of the kernels around
 * it (the G1 round kernel runs at its 128-register cap). */
template <class P> __device__ __noinline__ mont<P> f_inv(const mont<P> a)
{
    mont<P> r;
    f_inv_rows<P>(r.v, a.v);
    return r;
}

/* a * 2^-(32N): out of Montgomery form (canonical integer limbs). */
template <class P> __device__ __forceinline__ mont<P> f_from_mont(const mont<P> &a)
{
    mont<P> r;
    f_redc_rows<P>(r.v, a.v);
    return r;
}

/* ---- Fp2 = Fp[u]/(u^2 + 1) ---- */
struct dfp2 {
    dfp c0, c1;
};

__device__ __forceinline__ dfp2 operator+(const dfp2 &a, const dfp2 &b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
__device__ __forceinline__ dfp2 operator-(const dfp2 &a, const dfp2 &b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
__device__ __forceinline__ dfp2 f_dbl(const dfp2 &a) { return {a.c0 + a.c0, a.c1 + a.c1}; }
__device__ __forceinline__ dfp2 f_neg(const dfp2 &a) { return {f_neg(a.c0), f_neg(a.c1)}; }
__device__ __forceinline__ bool f_is_zero(const dfp2 &a) { return f_is_zero(a.c0) && f_is_zero(a.c1); }
__device__ __forceinline__ bool f_eq(const dfp2 &a, const dfp2 &b) { return f_eq(a.c0, b.c0) && f_eq(a.c1, b.c1); }

/* Karatsuba: 3 Fp products. */
__device__ __forceinline__ dfp2 operator*(const dfp2 &a, const dfp2 &b)
{
    dfp t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
    dfp t2 = (a.c0 + a.c1) * (b.c0 + b.c1);
    return {t0 - t1, t2 - t0 - t1};
}

/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: 2 Fp products. */
__device__ __forceinline__ dfp2 f_sqr(const dfp2 &a)
{
    dfp t = a.c0 * a.c1;
    return {(a.c0 + a.c1) * (a.c0 - a.c1), t + t};
}

/* (a0 + a1 u)^-1 = (a0 - a1 u) / (a0^2 + a1^2): one Fp inversion. */
__device__ __forceinline__ dfp2 f_inv(const dfp2 &a)
{
    dfp t = f_inv(a.c0 * a.c0 + a.c1 * a.c1);
    return {a.c0 * t, f_neg(a.c1) * t};
}

template <class F> struct field_traits;
template <> struct field_traits<dfp> {
    __device__ static dfp zero() { return f_zero<fp_params>(); }
    __device__ static dfp one() { return f_one<fp_params>(); }
};
template <> struct field_traits<dfp2> {
    __device__ static dfp2 zero() { return {f_zero<fp_params>(), f_zero<fp_params>()}; }
    __device__ static dfp2 one() { return {f_one<fp_params>(), f_zero<fp_params>()}; }
};

/* A field element from lane - d (UP) or lane + d of the warp (all 32 lanes take part). */
template <bool UP, class F> __device__ __forceinline__ F shfl_f(const F &a, unsigned d)
{
    F r;
    const uint32_t *s = (const uint32_t *)&a;
    uint32_t *o = (uint32_t *)&r;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(F) / 4); i++)
        o[i] = UP ? __shfl_up_sync(0xffffffffu, s[i], d) : __shfl_down_sync(0xffffffffu, s[i], d);
    return r;
}

#endif
