/* spmv_bench.cu: benchmark of the three SpMVs of a shape (gpu_bench.h). */
#include "bench.cuh"

extern "C" int gpu_bench_spmv(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w,
                              int reps, double *ms, struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (!rc) rc = gpu_ctx_load_shape(ctx, s, err);
    if (rc) return rc;
    gpu_spmv_unload(ctx);
    size_t lb;
    rc = gpu_spmv_prepare(ctx, s, &lb, err);
    const size_t rows = s->n_constraints ? s->n_constraints : 1;
    struct gpu_wit_packed p;
    void *dw = NULL, *d[3];
    if (!rc) rc = gpu_wit_pack(ctx, GPU_STAGER_MAIN, s, w, &p, err);
    if (!rc) rc = gpu_scratch(ctx, SL_W, p.bytes, &dw, err);
    for (int i = 0; !rc && i < 3; i++) rc = gpu_scratch(ctx, (enum gpu_slot)(SL_NTT_A + i), rows * sizeof(fr_t), &d[i], err);
    cudaStream_t st = ctx->st[0];
    if (!rc) rc = gpu_wit_put(ctx, GPU_STAGER_MAIN, dw, &p, st, err);
    if (rc) return rc;
    return gpu_time_reps(st, reps, ms, [&]() {
        int r = CUZK_OK;
        for (int i = 0; !r && i < 3; i++) r = gpu_spmv_dev(ctx, (dfr *)d[i], i, gpu_wit_dev(dw, p.valoff), st, err);
        return r;
    }, err);
}
