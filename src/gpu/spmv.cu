/* spmv.cu: a/b/c = (A|B|C) . w on the GPU from the resident shape's CSR matrices (one thread
 * per row; rows are short, coefficient 1 skips the multiplication). */
#include "gpu_internal.cuh"

__global__ void k_spmv(dfr *out, const uint64_t *rp, const uint32_t *col, const uint16_t *ci,
                       const dfr *coeffs, const dfr *w, uint64_t rows)
{
    uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    dfr acc = f_zero<fr_params>();
    for (uint64_t k = rp[r], e = rp[r + 1]; k < e; k++) {
        dfr c = coeffs[ci[k]];
        dfr x = w[col[k]];
        acc = acc + (f_is_one(c) ? x : c * x);
    }
    out[r] = acc;
}

int gpu_spmv_dev(struct gpu_ctx *ctx, dfr *out, int m, const dfr *w, cudaStream_t st,
                 struct cuzk_error *err)
{
    const struct g16_shape *s = ctx->shape;
    if (!s) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu spmv: no resident shape");
    uint64_t rows = s->n_constraints;
    if (!rows) return CUZK_OK;
    k_spmv<<<gpu_div_up(rows, 256), 256, 0, st>>>(out, ctx->d_rowptr[m], ctx->d_col[m], ctx->d_cidx[m],
                                                  ctx->d_coeffs, w, rows);
    CK_LAUNCH();
    return CUZK_OK;
}

extern "C" int gpu_eval_abc(struct gpu_ctx *ctx, fr_t *a, fr_t *b, fr_t *c,
                            const struct g16_shape *s, const struct g16_assignment *w,
                            struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (!rc) rc = gpu_ctx_load_shape(ctx, s, err);
    if (rc) return rc;
    const size_t rows = s->n_constraints, wb = gpu_wit_bytes(s);
    void *dw, *d[3];
    rc = gpu_scratch(ctx, SL_W, wb ? wb : sizeof(fr_t), &dw, err);
    for (int i = 0; !rc && i < 3; i++)
        rc = gpu_scratch(ctx, (enum gpu_slot)(SL_NTT_A + i), (rows ? rows : 1) * sizeof(fr_t), &d[i], err);
    if (rc) return rc;
    cudaStream_t st = ctx->st[0];
    rc = gpu_wit_upload(ctx, GPU_STAGER_MAIN, dw, s, w, st, err);
    if (rc) return rc;
    fr_t *h[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        rc = gpu_spmv_dev(ctx, (dfr *)d[i], i, (const dfr *)dw, st, err);
        if (rc) return rc;
        if (rows) CK(cudaMemcpyAsync(h[i], d[i], rows * sizeof(fr_t), cudaMemcpyDeviceToHost, st));
    }
    CK(cudaStreamSynchronize(st));
    return CUZK_OK;
}
