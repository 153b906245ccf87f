/* spmv.cu: a/b/c = (A|B|C) . w on the GPU from the resident shape's CSR matrices.
 *
 * Almost every row is short (one to three terms), but a few are long: a PoRep shape's packing
 * and SHA-256 rows reach hundreds of terms, and those few rows hold over a third of A's terms.
 * With one thread per row, a warp that holds one such row runs its whole length while the
 * other 31 lanes wait, and the kernel's time is that of its longest rows. So rows of up to
 * spmv.long terms take one thread each, and the longer ones (listed when the shape is loaded)
 * take a whole warp each: its lanes stride over the row and add up by shuffles. Coefficient 1
 * skips the multiplication. spmv.long is a tuning knob (gpu_tuning.h). */
#include <stdlib.h>

#include "gpu_internal.cuh"

/* one term: the witness value (packed: zero and one cost no gather of a value) times its
 * coefficient (coefficient 1: no multiplication) */
__device__ __forceinline__ void spmv_add(dfr &acc, const uint32_t *col, const uint16_t *ci, const dfr *coeffs,
                                         const dwit &w, uint64_t k)
{
    const uint32_t v = col[k];
    const wpack_blk b = w.blk[v >> 5];
    const unsigned cl = wpack_class(&b, v);
    if (cl == WPACK_ZERO) return;
    const dfr c = coeffs[ci[k]];
    if (cl == WPACK_ONE) {
        acc = acc + c;
        return;
    }
    const dfr x = w.val[wpack_rank(&b, v)];
    acc = acc + (f_is_one(c) ? x : c * x);
}

/* rows of at most `lim` terms; the long ones are left to k_spmv_long */
__global__ void k_spmv_short(dfr *out, const uint64_t *rp, const uint32_t *col, const uint16_t *ci,
                             const dfr *coeffs, dwit w, uint64_t rows, uint64_t lim)
{
    uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const uint64_t k0 = rp[r], k1 = rp[r + 1];
    if (k1 - k0 > lim) return;
    dfr acc = f_zero<fr_params>();
    for (uint64_t k = k0; k < k1; k++) spmv_add(acc, col, ci, coeffs, w, k);
    out[r] = acc;
}

/* one warp per listed long row */
__global__ void k_spmv_long(dfr *out, const uint64_t *rp, const uint32_t *col, const uint16_t *ci,
                            const dfr *coeffs, dwit w, const uint32_t *long_rows, uint32_t n_long)
{
    const uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t lane = threadIdx.x & 31;
    if (g / 32 >= n_long) return;   /* whole warps leave together: blockDim is a multiple of 32 */
    const uint32_t r = long_rows[g / 32];
    dfr acc = f_zero<fr_params>();
    for (uint64_t k = rp[r] + lane, e = rp[r + 1]; k < e; k += 32) spmv_add(acc, col, ci, coeffs, w, k);
#pragma unroll
    for (unsigned d = 16; d; d >>= 1) acc = acc + shfl_f<false>(acc, d);
    if (!lane) out[r] = acc;
}

void gpu_spmv_unload(struct gpu_ctx *ctx)
{
    for (int m = 0; m < 3; m++) {
        if (ctx->d_long[m]) cudaFree(ctx->d_long[m]);
        ctx->d_long[m] = NULL;
        ctx->n_long[m] = 0;
    }
}

int gpu_spmv_prepare(struct gpu_ctx *ctx, const struct g16_shape *s, size_t *bytes, struct cuzk_error *err)
{
    const struct g16_matrix *mats[3] = {&s->a, &s->b, &s->c};
    const uint64_t lim = gpu_tuning.spmv_long;
    *bytes = 0;
    ctx->spmv_lim = lim;
    if (s->n_constraints > UINT32_MAX)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu spmv: %llu constraints, at most 2^32 - 1 are supported",
                         (unsigned long long)s->n_constraints);
    for (int m = 0; m < 3; m++) {
        const uint64_t *rp = mats[m]->row_ptr;
        uint32_t n = 0;
        for (uint64_t r = 0; r < s->n_constraints; r++) n += rp[r + 1] - rp[r] > lim;
        if (!n) continue;
        uint32_t *v = (uint32_t *)malloc((size_t)n * 4);
        if (!v) return cuzk_fail(err, CUZK_E_NOMEM, "gpu spmv: host allocation of %u long-row indices failed", n);
        n = 0;
        for (uint64_t r = 0; r < s->n_constraints; r++)
            if (rp[r + 1] - rp[r] > lim) v[n++] = (uint32_t)r;
        int rc = gpu_malloc(ctx, (void **)&ctx->d_long[m], (size_t)n * 4, "shape.long_rows", err);
        if (!rc) rc = gpu_h2d(ctx, GPU_STAGER_MAIN, ctx->d_long[m], v, (size_t)n * 4, ctx->st[0], NULL, err);
        if (!rc) {
            cudaError_t e = cudaStreamSynchronize(ctx->st[0]);
            if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaStreamSynchronize", __FILE__, __LINE__);
        }
        free(v);
        if (rc) return rc;
        ctx->n_long[m] = n;
        *bytes += (size_t)n * 4;
    }
    return CUZK_OK;
}

int gpu_spmv_dev(struct gpu_ctx *ctx, dfr *out, int m, dwit w, cudaStream_t st,
                 struct cuzk_error *err)
{
    const struct g16_shape *s = ctx->shape;
    if (!s) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu spmv: no resident shape");
    uint64_t rows = s->n_constraints;
    if (!rows) return CUZK_OK;
    k_spmv_short<<<gpu_div_up(rows, 256), 256, 0, st>>>(out, ctx->d_rowptr[m], ctx->d_col[m], ctx->d_cidx[m],
                                                        ctx->d_coeffs, w, rows, ctx->spmv_lim);
    CK_LAUNCH();
    if (ctx->n_long[m]) {
        k_spmv_long<<<gpu_div_up((size_t)ctx->n_long[m] * 32, 256), 256, 0, st>>>(
            out, ctx->d_rowptr[m], ctx->d_col[m], ctx->d_cidx[m], ctx->d_coeffs, w, ctx->d_long[m], ctx->n_long[m]);
        CK_LAUNCH();
    }
    return CUZK_OK;
}

extern "C" int gpu_eval_abc(struct gpu_ctx *ctx, fr_t *a, fr_t *b, fr_t *c,
                            const struct g16_shape *s, const struct g16_assignment *w,
                            struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (!rc) rc = gpu_ctx_load_shape(ctx, s, err);
    if (rc) return rc;
    const size_t rows = s->n_constraints;
    struct gpu_wit_packed p;
    void *dw, *d[3];
    rc = gpu_wit_pack(ctx, GPU_STAGER_MAIN, s, w, &p, err);
    if (!rc) rc = gpu_scratch(ctx, SL_W, p.bytes, &dw, err);
    for (int i = 0; !rc && i < 3; i++)
        rc = gpu_scratch(ctx, (enum gpu_slot)(SL_NTT_A + i), (rows ? rows : 1) * sizeof(fr_t), &d[i], err);
    if (rc) return rc;
    cudaStream_t st = ctx->st[0];
    rc = gpu_wit_put(ctx, GPU_STAGER_MAIN, dw, &p, st, err);
    if (rc) return rc;
    fr_t *h[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        rc = gpu_spmv_dev(ctx, (dfr *)d[i], i, gpu_wit_dev(dw, p.valoff), st, err);
        if (rc) return rc;
        if (rows) CK(cudaMemcpyAsync(h[i], d[i], rows * sizeof(fr_t), cudaMemcpyDeviceToHost, st));
    }
    CK(cudaStreamSynchronize(st));
    return CUZK_OK;
}
