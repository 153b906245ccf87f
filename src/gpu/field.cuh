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

/* s = t - p if t >= p else t (t < 2p, t fits N limbs). */
template <class P> __device__ __forceinline__ void f_reduce_once(uint32_t *out, const uint32_t *t)
{
    constexpr int N = P::N;
    uint32_t s[N], br;
    CZ_ASM("sub.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(t[0]), "r"(P::p(0)));
#pragma unroll
    for (int i = 1; i < N; i++) CZ_ASM("subc.cc.u32 %0, %1, %2;" : "=r"(s[i]) : "r"(t[i]), "r"(P::p(i)));
    CZ_ASM("subc.u32 %0, %1, %1;" : "=r"(br) : "r"(0));
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

/* Montgomery product, CIOS with 32-bit words: per word of b, add a*b_i (low halves then high
 * halves, each as one carry chain), then add m*p with m = t0 * n0 and drop the zero word. The
 * running value stays below 2p, so N + 2 words are plenty. */
template <class P> __device__ __forceinline__ mont<P> operator*(const mont<P> &a, const mont<P> &b)
{
    constexpr int N = P::N;
    uint32_t t[N + 2];
#pragma unroll
    for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint32_t bi = b.v[i];
        CZ_ASM("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
        for (int j = 1; j < N; j++) CZ_ASM("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a.v[j]), "r"(bi));
        CZ_ASM("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
        CZ_ASM("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        CZ_ASM("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
        for (int j = 1; j < N; j++) CZ_ASM("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a.v[j]), "r"(bi));
        CZ_ASM("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));

        const uint32_t m = t[0] * P::n0;
        CZ_ASM("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(P::p(0)), "r"(m));
#pragma unroll
        for (int j = 1; j < N; j++) CZ_ASM("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(P::p(j)), "r"(m));
        CZ_ASM("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
        CZ_ASM("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        CZ_ASM("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(P::p(0)), "r"(m));
#pragma unroll
        for (int j = 1; j < N; j++) CZ_ASM("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(P::p(j)), "r"(m));
        CZ_ASM("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        /* t[0] is now zero: shift down one word */
#pragma unroll
        for (int j = 0; j <= N; j++) t[j] = t[j + 1];
        t[N + 1] = 0;
    }
    mont<P> r;
    f_reduce_once<P>(r.v, t);
    return r;
}

template <class P> __device__ __forceinline__ mont<P> f_sqr(const mont<P> &a) { return a * a; }

/* a * 2^-(32N): out of Montgomery form (canonical integer limbs). */
template <class P> __device__ __forceinline__ mont<P> f_from_mont(const mont<P> &a)
{
    mont<P> one_plain;
#pragma unroll
    for (int i = 0; i < P::N; i++) one_plain.v[i] = i == 0 ? 1u : 0u;
    return a * one_plain;
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

template <class F> struct field_traits;
template <> struct field_traits<dfp> {
    __device__ static dfp zero() { return f_zero<fp_params>(); }
    __device__ static dfp one() { return f_one<fp_params>(); }
};
template <> struct field_traits<dfp2> {
    __device__ static dfp2 zero() { return {f_zero<fp_params>(), f_zero<fp_params>()}; }
    __device__ static dfp2 one() { return {f_one<fp_params>(), f_zero<fp_params>()}; }
};

#endif
