/* setup.cu: the point work of a trusted setup and of a full key validation on the GPU:
 * fixed-base scalar multiplication (every point of a Groth16 key is s_i G for one generator G)
 * and the subgroup (and curve) check of every point of a loaded key. The CPU versions
 * (src/groth16/setup.c, src/ec) are the reference; tests/gpu/test_setup.c compares them
 * bit-exactly. Work goes in chunks through device buffers of this call only (a setup holds no
 * proving state), on the context's device. */
#include <stdio.h>
#include <string.h>

#include "gpu_internal.cuh"

#define FB_W 16u                                   /* window bits of the fixed-base table */
#define FB_ROW ((1u << FB_W) - 1u)                 /* nonzero digits per window */
#define FB_NWIN ((255u + FB_W - 1u) / FB_W)        /* windows of a 255-bit scalar */
#define CHUNK ((size_t)1 << 22)                    /* points per round trip */

/* |u| = 0xd201000000010000, the BLS12-381 parameter (u < 0). */
#define U_ABS 0xd201000000010000ull

template <class F> __device__ __forceinline__ d_aff<F> xyzz_to_aff(const d_xyzz<F> &p)
{
    d_aff<F> r;
    if (xyzz_is_inf(p)) {
        r.x = field_traits<F>::zero();
        r.y = field_traits<F>::zero();
        return r;
    }
    /* ZZ^3 = ZZZ^2, so 1/ZZ = (ZZ / ZZZ)^2: one inversion for both coordinates */
    F t = f_inv(p.zzz);
    F izz = f_sqr(p.zz * t);
    r.x = p.x * izz;
    r.y = p.y * t;
    return r;
}

/* k * q for a small k >= 1 (double and add from the top bit). */
template <class F> __device__ d_xyzz<F> mul_small(const d_aff<F> &q, uint64_t k)
{
    d_xyzz<F> acc;
    xyzz_set_inf(acc);
    for (int b = 63; b >= 0; b--) {
        if (!xyzz_is_inf(acc)) acc = xyzz_dbl_v(acc);
        if ((k >> b) & 1) xyzz_add_aff(acc, q);
    }
    return acc;
}

/* Table entry (win, d - 1) = d * bases[win], bases[win] = 2^(FB_W win) G. */
template <class F> __global__ void k_fb_table(d_aff<F> *table, const d_aff<F> *bases)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)FB_NWIN * FB_ROW) return;
    unsigned win = (unsigned)(i / FB_ROW), d = (unsigned)(i % FB_ROW) + 1;
    table[i] = xyzz_to_aff(mul_small(bases[win], d));
}

/* out[i] = sc[i] G: one mixed addition per nonzero window digit. */
template <class F> __global__ void k_fb_mul(d_aff<F> *out, const dfr *sc, const d_aff<F> *table, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    dfr s = f_from_mont(sc[i]);
    d_xyzz<F> acc;
    xyzz_set_inf(acc);
    for (unsigned win = 0; win < FB_NWIN; win++) {
        unsigned bit = win * FB_W, w = bit >> 5, sh = bit & 31;
        uint64_t v = s.v[w];
        if (w + 1 < 8) v |= (uint64_t)s.v[w + 1] << 32;
        uint32_t d = (uint32_t)(v >> sh) & FB_ROW;
        if (d) xyzz_add_aff(acc, ld_vec(&table[(size_t)win * FB_ROW + d - 1]));
    }
    st_vec(&out[i], xyzz_to_aff(acc));
}

/* ---- curve and subgroup membership ---- */

/* y^2 = x^3 + b with b = 4 (G1) or 4(u + 1) (G2); infinity (0, 0) counts as on the curve. */
__device__ __forceinline__ dfp curve_b(const dfp &x3)
{
    dfp b4 = f_dbl(f_dbl(f_one<fp_params>()));
    return x3 + b4;
}
__device__ __forceinline__ dfp2 curve_b(const dfp2 &x3)
{
    dfp b4 = f_dbl(f_dbl(f_one<fp_params>()));
    return {x3.c0 + b4, x3.c1 + b4};
}
template <class F> __device__ __forceinline__ bool on_curve(const d_aff<F> &p)
{
    if (aff_is_inf(p)) return true;
    return f_eq(f_sqr(p.y), curve_b(f_sqr(p.x) * p.x));
}

struct sub_consts {
    dfp beta;            /* G1: sigma(x, y) = (beta x, y) acts as -u^2 */
    dfp2 cx, cy;         /* G2: psi(x, y) = (conj(x) cx, conj(y) cy) acts as u */
};

/* Jacobian arithmetic for the subgroup checks (x = X/Z^2, y = Y/Z^3, infinity: Z = 0). A check
 * is a chain of doublings (126 for G1, 63 for G2) with 5 additions per 63: Jacobian doubling
 * with a = 0 costs 2M + 5S against 6M + 3S in XYZZ, and the bodies are inlined into the one
 * loop so that the point stays in registers. */
template <class F> __device__ __forceinline__ void jac_dbl(d_jac<F> &p)
{
    F a = f_sqr(p.x), b = f_sqr(p.y);
    F c = f_sqr(b);
    F d = f_dbl(f_sqr(p.x + b) - a - c);
    F e = a + f_dbl(a);
    F z = p.y * p.z;
    p.x = f_sqr(e) - f_dbl(d);
    p.y = e * (d - p.x) - f_dbl(f_dbl(f_dbl(c)));
    p.z = f_dbl(z);
}

/* p += q (q_affine: q.z == 1, the mixed addition with fewer products); complete: infinity on
 * either side, p == q (doubling), p == -q. Points outside the subgroup can have small order,
 * so these cases are reachable. */
template <class F> __device__ __forceinline__ void jac_add(d_jac<F> &p, const d_jac<F> &q, bool q_affine)
{
    if (f_is_zero(q.z)) return;
    if (f_is_zero(p.z)) { p = q; return; }
    F z1z1 = f_sqr(p.z);
    F u1 = p.x, s1 = p.y, z2z2;
    if (!q_affine) {
        z2z2 = f_sqr(q.z);
        u1 = u1 * z2z2;
        s1 = s1 * q.z * z2z2;
    }
    F u2 = q.x * z1z1, s2 = q.y * p.z * z1z1;
    F h = u2 - u1, r = s2 - s1;
    if (f_is_zero(h)) {
        if (f_is_zero(r)) jac_dbl(p);
        else p.z = field_traits<F>::zero();
        return;
    }
    r = f_dbl(r);
    F i = f_sqr(f_dbl(h));
    F j = h * i, v = u1 * i;
    F x3 = f_sqr(r) - j - f_dbl(v);
    p.y = r * (v - x3) - f_dbl(s1 * j);
    p.x = x3;
    /* Z3 = 2 Z1 Z2 H */
    p.z = f_dbl(q_affine ? p.z * h : p.z * q.z * h);
}

/* |u| q (u = -|u| is the BLS parameter): double and add from the bit below the top one. */
template <class F> __device__ __forceinline__ d_jac<F> jac_mul_u(const d_jac<F> &q, bool q_affine)
{
    d_jac<F> acc = q;
#pragma unroll 1
    for (int b = 62; b >= 0; b--) {
        jac_dbl(acc);
        if ((U_ABS >> b) & 1) jac_add(acc, q, q_affine);
    }
    return acc;
}

/* Scott, eprint 2021/1130, as src/ec/g1.c: P in G1 iff sigma(P) == -u^2 P. */
__device__ __forceinline__ bool in_subgroup(const g1a_d &p, const sub_consts &k)
{
    if (aff_is_inf(p)) return true;
    d_jac<dfp> q = {p.x, p.y, f_one<fp_params>()};
    d_jac<dfp> t = jac_mul_u(jac_mul_u(q, true), false);   /* u^2 P; -u^2 P = (X, -Y, Z) */
    if (f_is_zero(t.z)) return false;
    dfp zz = f_sqr(t.z);
    return f_eq(k.beta * p.x * zz, t.x) && f_eq(p.y * zz * t.z, f_neg(t.y));
}
/* As src/ec/g2.c: P in G2 iff psi(P) == u P = -(|u| P). */
__device__ __forceinline__ bool in_subgroup(const g2a_d &p, const sub_consts &k)
{
    if (aff_is_inf(p)) return true;
    d_jac<dfp2> q = {p.x, p.y, field_traits<dfp2>::one()};
    d_jac<dfp2> t = jac_mul_u(q, true);
    if (f_is_zero(t.z)) return false;
    dfp2 zz = f_sqr(t.z);
    dfp2 px = {p.x.c0, f_neg(p.x.c1)}, py = {p.y.c0, f_neg(p.y.c1)};
    return f_eq(px * k.cx * zz, t.x) && f_eq(py * k.cy * zz * t.z, f_neg(t.y));
}

/* bad[0] = min index (offset + i) of a point off the curve or outside the subgroup. */
template <class F> __global__ void k_check(unsigned long long *bad, const d_aff<F> *pts, size_t n,
                                           unsigned long long offset, sub_consts k, int subgroup)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    d_aff<F> p = ld_vec(&pts[i]);
    bool ok = on_curve(p) && (!subgroup || in_subgroup(p, k));
    if (!ok) atomicMin(bad, offset + i);
}

/* ---- host side ---- */

static unsigned blocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

template <class F, class A> static int fixed_base(struct gpu_ctx *ctx, A *out, const A *base,
                                                  const fr_t *sc, size_t n, const A *bases_host,
                                                  struct cuzk_error *err)
{
    (void)base;
    typedef d_aff<F> P;
    CK(cudaSetDevice(ctx->dev));
    P *table = NULL, *bases = NULL, *d_out = NULL;
    dfr *d_sc = NULL;
    size_t chunk = n < CHUNK ? (n ? n : 1) : CHUNK;
    int rc = CUZK_OK;
    cudaError_t e;
#define TRY(call)                                                                  \
    do {                                                                           \
        if ((e = (call)) != cudaSuccess) {                                         \
            rc = gpu_fail_cuda(err, e, #call, __FILE__, __LINE__);                 \
            goto out;                                                              \
        }                                                                          \
    } while (0)
    TRY(cudaMalloc(&table, (size_t)FB_NWIN * FB_ROW * sizeof(P)));
    TRY(cudaMalloc(&bases, FB_NWIN * sizeof(P)));
    TRY(cudaMalloc(&d_out, chunk * sizeof(P)));
    TRY(cudaMalloc(&d_sc, chunk * sizeof(dfr)));
    TRY(cudaMemcpy(bases, bases_host, FB_NWIN * sizeof(P), cudaMemcpyHostToDevice));
    k_fb_table<F><<<blocks((size_t)FB_NWIN * FB_ROW, 128), 128>>>(table, bases);
    TRY(cudaGetLastError());
    for (size_t off = 0; off < n; off += chunk) {
        size_t m = n - off < chunk ? n - off : chunk;
        TRY(cudaMemcpy(d_sc, sc + off, m * sizeof(dfr), cudaMemcpyHostToDevice));
        k_fb_mul<F><<<blocks(m, 128), 128>>>(d_out, d_sc, table, m);
        TRY(cudaGetLastError());
        TRY(cudaMemcpy(out + off, d_out, m * sizeof(P), cudaMemcpyDeviceToHost));
    }
out:
#undef TRY
    cudaFree(table);
    cudaFree(bases);
    cudaFree(d_out);
    if (d_sc) cudaMemset(d_sc, 0, chunk * sizeof(dfr));   /* the scalars are the toxic waste's polynomials at tau */
    cudaFree(d_sc);
    return rc;
}

/* bases[w] = 2^(FB_W w) G on the host (FB_NWIN points: negligible). */
extern "C" int gpu_g1_fixed_base(struct gpu_ctx *ctx, g1_aff_t *out, const g1_aff_t *gen,
                                 const fr_t *sc, size_t n, struct cuzk_error *err)
{
    static_assert(sizeof(g1_aff_t) == sizeof(g1a_d), "layout");
    g1_aff_t bases[FB_NWIN];
    g1_jac_t p;
    g1_jac_from_aff(&p, gen);
    for (unsigned w = 0; w < FB_NWIN; w++) {
        g1_jac_to_aff(&bases[w], &p);
        for (unsigned i = 0; i < FB_W; i++) g1_jac_dbl(&p, &p);
    }
    return fixed_base<dfp>(ctx, out, gen, sc, n, bases, err);
}

extern "C" int gpu_g2_fixed_base(struct gpu_ctx *ctx, g2_aff_t *out, const g2_aff_t *gen,
                                 const fr_t *sc, size_t n, struct cuzk_error *err)
{
    static_assert(sizeof(g2_aff_t) == sizeof(g2a_d), "layout");
    g2_aff_t bases[FB_NWIN];
    g2_jac_t p;
    g2_jac_from_aff(&p, gen);
    for (unsigned w = 0; w < FB_NWIN; w++) {
        g2_jac_to_aff(&bases[w], &p);
        for (unsigned i = 0; i < FB_W; i++) g2_jac_dbl(&p, &p);
    }
    return fixed_base<dfp2>(ctx, out, gen, sc, n, bases, err);
}

/* The endomorphism constants, in Montgomery form (the values of src/ec/g1.c and g2.c; the
 * GPU tests compare this check with the CPU's on points in and outside the subgroups). */
static sub_consts make_consts()
{
    static const uint64_t beta[6] = {0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
                                     0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL};
    static const uint64_t cx1[6] = {0x890dc9e4867545c3ULL, 0x2af322533285a5d5ULL, 0x50880866309b7e2cULL,
                                    0xa20d1b8c7e881024ULL, 0x14e4f04fe2db9068ULL, 0x14e56d3f1564853aULL};
    static const uint64_t cy0[6] = {0x3e2f585da55c9ad1ULL, 0x4294213d86c18183ULL, 0x382844c88b623732ULL,
                                    0x92ad2afd19103e18ULL, 0x1d794e4fac7cf0b9ULL, 0x0bd592fc7d825ec8ULL};
    static const uint64_t cy1[6] = {0x7bcfa7a25aa30fdaULL, 0xdc17dec12a927e7cULL, 0x2f088dd86b4ebef1ULL,
                                    0xd1ca2087da74d4a7ULL, 0x2da2596696cebc1dULL, 0x0e2b7eedbbfd87d2ULL};
    sub_consts k;
    memset(&k, 0, sizeof k);
    memcpy(k.beta.v, beta, 48);
    memcpy(k.cx.c1.v, cx1, 48);
    memcpy(k.cy.c0.v, cy0, 48);
    memcpy(k.cy.c1.v, cy1, 48);
    return k;
}

template <class F, class A> static int check_points(struct gpu_ctx *ctx, const A *pts, size_t n,
                                                    bool subgroup, size_t *bad, struct cuzk_error *err)
{
    typedef d_aff<F> P;
    *bad = n;
    if (!n) return CUZK_OK;
    CK(cudaSetDevice(ctx->dev));
    size_t chunk = n < CHUNK ? n : CHUNK;
    P *d_pts[2] = {NULL, NULL};
    cudaEvent_t copied[2] = {NULL, NULL}, checked[2] = {NULL, NULL};
    unsigned long long *d_bad = NULL, h_bad = ~0ull;
    /* the copy of chunk j + 1 (from pageable memory: the host thread stages it) runs beside
     * the kernel of chunk j; a buffer is refilled once its kernel is done */
    cudaStream_t run = ctx->st[0], up = ctx->st[1];
    int rc = CUZK_OK;
    cudaError_t e;
    sub_consts k = make_consts();
#define TRY(call)                                                                  \
    do {                                                                           \
        if ((e = (call)) != cudaSuccess) {                                         \
            rc = gpu_fail_cuda(err, e, #call, __FILE__, __LINE__);                 \
            goto out;                                                              \
        }                                                                          \
    } while (0)
    for (int b = 0; b < 2; b++) {
        TRY(cudaMalloc(&d_pts[b], chunk * sizeof(P)));
        TRY(cudaEventCreateWithFlags(&copied[b], cudaEventDisableTiming));
        TRY(cudaEventCreateWithFlags(&checked[b], cudaEventDisableTiming));
    }
    TRY(cudaMalloc(&d_bad, sizeof *d_bad));
    TRY(cudaMemcpyAsync(d_bad, &h_bad, sizeof h_bad, cudaMemcpyHostToDevice, run));
    for (size_t off = 0, j = 0; off < n; off += chunk, j++) {
        size_t m = n - off < chunk ? n - off : chunk;
        int b = (int)(j & 1);
        if (j >= 2) TRY(cudaStreamWaitEvent(up, checked[b], 0));
        TRY(cudaMemcpyAsync(d_pts[b], pts + off, m * sizeof(P), cudaMemcpyHostToDevice, up));
        TRY(cudaEventRecord(copied[b], up));
        TRY(cudaStreamWaitEvent(run, copied[b], 0));
        k_check<F><<<blocks(m, 128), 128, 0, run>>>(d_bad, d_pts[b], m, off, k, subgroup);
        TRY(cudaGetLastError());
        TRY(cudaEventRecord(checked[b], run));
    }
    TRY(cudaMemcpyAsync(&h_bad, d_bad, sizeof h_bad, cudaMemcpyDeviceToHost, run));
    TRY(cudaStreamSynchronize(run));
    if (h_bad < n) *bad = (size_t)h_bad;
out:
#undef TRY
    if (rc) {
        cudaStreamSynchronize(up);
        cudaStreamSynchronize(run);
    }
    for (int b = 0; b < 2; b++) {
        cudaFree(d_pts[b]);
        if (copied[b]) cudaEventDestroy(copied[b]);
        if (checked[b]) cudaEventDestroy(checked[b]);
    }
    cudaFree(d_bad);
    return rc;
}

extern "C" int gpu_g1_check_points(struct gpu_ctx *ctx, const g1_aff_t *pts, size_t n, bool subgroup,
                                   size_t *bad, struct cuzk_error *err)
{
    return check_points<dfp>(ctx, pts, n, subgroup, bad, err);
}

extern "C" int gpu_g2_check_points(struct gpu_ctx *ctx, const g2_aff_t *pts, size_t n, bool subgroup,
                                   size_t *bad, struct cuzk_error *err)
{
    return check_points<dfp2>(ctx, pts, n, subgroup, bad, err);
}
