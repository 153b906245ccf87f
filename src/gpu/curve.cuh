/* curve.cuh: device point arithmetic for G1 (over Fp) and G2 (over Fp2), y^2 = x^3 + b (a = 0):
 * affine inputs ((0,0) = infinity, as in ec.h), XYZZ accumulators (x = X/ZZ, y = Y/ZZZ,
 * infinity: ZZ = ZZZ = 0) and the conversion to the CPU library's Jacobian layout. */
#ifndef CUZK_GPU_CURVE_CUH
#define CUZK_GPU_CURVE_CUH

#include "field.cuh"

template <class F> struct d_aff {
    F x, y;
};
template <class F> struct d_xyzz {
    F x, y, zz, zzz;
};
template <class F> struct d_jac {
    F x, y, z;
};

typedef d_aff<dfp> g1a_d;
typedef d_xyzz<dfp> g1x_d;
typedef d_aff<dfp2> g2a_d;
typedef d_xyzz<dfp2> g2x_d;

/* Vectorised global loads/stores: every point type is a multiple of 16 bytes and cudaMalloc
 * memory is 256-byte aligned. */
template <class T> __device__ __forceinline__ T ld_vec(const T *p)
{
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    T r;
    const uint4 *s = reinterpret_cast<const uint4 *>(p);
    uint4 *d = reinterpret_cast<uint4 *>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = __ldg(s + i);
    return r;
}
template <class T> __device__ __forceinline__ void st_vec(T *p, const T &v)
{
    uint4 *d = reinterpret_cast<uint4 *>(p);
    const uint4 *s = reinterpret_cast<const uint4 *>(&v);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = s[i];
}

template <class F> __device__ __forceinline__ void xyzz_set_inf(d_xyzz<F> &p)
{
    p.x = field_traits<F>::zero();
    p.y = field_traits<F>::zero();
    p.zz = field_traits<F>::zero();
    p.zzz = field_traits<F>::zero();
}
template <class F> __device__ __forceinline__ bool xyzz_is_inf(const d_xyzz<F> &p) { return f_is_zero(p.zz); }
template <class F> __device__ __forceinline__ bool aff_is_inf(const d_aff<F> &p)
{
    return f_is_zero(p.x) && f_is_zero(p.y);
}

template <class F> __device__ __forceinline__ d_aff<F> aff_neg(const d_aff<F> &p)
{
    return {p.x, f_neg(p.y)};
}

/* dbl-2008-s-1 with a = 0: U = 2Y, V = U^2, W = U V, S = X V, M = 3 X^2,
 * X3 = M^2 - 2S, Y3 = M (S - X3) - W Y, ZZ3 = V ZZ, ZZZ3 = W ZZZ. */
template <class F> __device__ __noinline__ void xyzz_dbl(d_xyzz<F> &r, const d_xyzz<F> &p)
{
    if (xyzz_is_inf(p)) { r = p; return; }
    F u = f_dbl(p.y);
    F v = f_sqr(u);
    F w = u * v;
    F s = p.x * v;
    F x2 = f_sqr(p.x);
    F m = x2 + f_dbl(x2);
    F x3 = f_sqr(m) - f_dbl(s);
    F y3 = m * (s - x3) - w * p.y;
    r.zz = v * p.zz;
    r.zzz = w * p.zzz;
    r.x = x3;
    r.y = y3;
}

/* Doubling of an affine point (mdbl-2008-s-1): as above with ZZ = ZZZ = 1. */
template <class F> __device__ __noinline__ void xyzz_dbl_aff(d_xyzz<F> &r, const d_aff<F> &q)
{
    F u = f_dbl(q.y);
    F v = f_sqr(u);
    F w = u * v;
    F s = q.x * v;
    F x2 = f_sqr(q.x);
    F m = x2 + f_dbl(x2);
    F x3 = f_sqr(m) - f_dbl(s);
    r.y = m * (s - x3) - w * q.y;
    r.x = x3;
    r.zz = v;
    r.zzz = w;
}

template <class F> __device__ __noinline__ d_xyzz<F> xyzz_mdbl_v(const d_aff<F> q)
{
    d_xyzz<F> r;
    xyzz_dbl_aff(r, q);
    return r;
}

/* p += q (affine), madd-2008-s; complete (handles infinity, P == Q and P == -Q). The body is
 * force-inlined into the hot accumulation loops (the accumulator then stays in registers
 * instead of being passed through local memory); everything else calls the out-of-line
 * xyzz_add_aff below. */
template <class F> __device__ __forceinline__ void xyzz_add_aff_i(d_xyzz<F> &p, const d_aff<F> &q)
{
    if (aff_is_inf(q)) return;
    if (xyzz_is_inf(p)) {
        p.x = q.x;
        p.y = q.y;
        p.zz = field_traits<F>::one();
        p.zzz = field_traits<F>::one();
        return;
    }
    F u2 = q.x * p.zz;
    F s2 = q.y * p.zzz;
    F pp_ = u2 - p.x;
    F r_ = s2 - p.y;
    if (f_is_zero(pp_)) {
        /* value semantics for the rare out-of-line call, so that p's address never escapes
         * and it can stay in registers when this body is inlined */
        if (f_is_zero(r_)) p = xyzz_mdbl_v(q);
        else xyzz_set_inf(p);
        return;
    }
    F pp = f_sqr(pp_);
    F ppp = pp_ * pp;
    F qq = p.x * pp;
    F x3 = f_sqr(r_) - ppp - f_dbl(qq);
    p.y = r_ * (qq - x3) - p.y * ppp;
    p.x = x3;
    p.zz = p.zz * pp;
    p.zzz = p.zzz * ppp;
}
template <class F> __device__ __noinline__ void xyzz_add_aff(d_xyzz<F> &p, const d_aff<F> &q)
{
    xyzz_add_aff_i(p, q);
}

template <class F> __device__ __noinline__ d_xyzz<F> xyzz_dbl_v(const d_xyzz<F> p);

/* p += q, add-2008-s; complete. Force-inlined body (for the G1 bucket reductions, where it
 * keeps both points in registers); xyzz_add below is the out-of-line call. */
template <class F> __device__ __forceinline__ void xyzz_add_i(d_xyzz<F> &p, const d_xyzz<F> &q)
{
    if (xyzz_is_inf(q)) return;
    if (xyzz_is_inf(p)) { p = q; return; }
    F u1 = p.x * q.zz;
    F u2 = q.x * p.zz;
    F s1 = p.y * q.zzz;
    F s2 = q.y * p.zzz;
    F pp_ = u2 - u1;
    F r_ = s2 - s1;
    if (f_is_zero(pp_)) {
        /* by value, so that p's address never escapes when this body is inlined */
        if (f_is_zero(r_)) p = xyzz_dbl_v(p);
        else xyzz_set_inf(p);
        return;
    }
    F pp = f_sqr(pp_);
    F ppp = pp_ * pp;
    F qq = u1 * pp;
    F x3 = f_sqr(r_) - ppp - f_dbl(qq);
    p.y = r_ * (qq - x3) - s1 * ppp;
    p.x = x3;
    p.zz = p.zz * q.zz * pp;
    p.zzz = p.zzz * q.zzz * ppp;
}
template <class F> __device__ __noinline__ void xyzz_add(d_xyzz<F> &p, const d_xyzz<F> &q)
{
    xyzz_add_i(p, q);
}
template <class F> __device__ __noinline__ d_xyzz<F> xyzz_dbl_v(const d_xyzz<F> p)
{
    d_xyzz<F> r;
    xyzz_dbl(r, p);
    return r;
}

/* The four point operations above are __noinline__: each inlines ~10-40 field products, and
 * inlining them into every kernel call site made compile times explode (minutes per file) and
 * thrashed the instruction cache; a call costs a few register moves. */
template <class F> __device__ __forceinline__ d_xyzz<F> xyzz_neg(const d_xyzz<F> &p)
{
    d_xyzz<F> r = p;
    r.y = f_neg(p.y);
    return r;
}

/* XYZZ -> Jacobian (X ZZ, Y ZZZ, ZZ); infinity -> (1, 1, 0) (ec.h only requires Z = 0). */
template <class F> __device__ __forceinline__ d_jac<F> xyzz_to_jac(const d_xyzz<F> &p)
{
    d_jac<F> r;
    if (xyzz_is_inf(p)) {
        r.x = field_traits<F>::one();
        r.y = field_traits<F>::one();
        r.z = field_traits<F>::zero();
        return r;
    }
    r.x = p.x * p.zz;
    r.y = p.y * p.zzz;
    r.z = p.zz;
    return r;
}

#endif
