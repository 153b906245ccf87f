/* ntt_bench.cu: benchmarks of the NTT and the h pipeline (gpu_bench.h) on device-resident
 * pseudo-random inputs, timed on CUDA events. */
#include "bench.cuh"

static int time_ms(cudaEvent_t e0, cudaEvent_t e1, double *ms, struct cuzk_error *err)
{
    float f = 0;
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&f, e0, e1));
    *ms = f;
    return CUZK_OK;
}

/* order: 0 natural out (in place + bit-reversal pass), 1 bit-reversed out, 2 out of place */
static int bench_ntt(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, int order,
                     struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    size_t n = (size_t)1 << lg;
    void *d = NULL, *o = NULL;
    rc = gpu_scratch(ctx, SL_NTT_A, n * sizeof(fr_t), &d, err);
    if (!rc && order == 2) rc = gpu_scratch(ctx, SL_NTT_B, n * sizeof(fr_t), &o, err);
    if (rc) return rc;
    cudaStream_t st = ctx->st[0];
    k_fill_field<dfr><<<gpu_div_up(n, 256), 256, 0, st>>>((dfr *)d, (uint32_t)n, 12345);
    CK_LAUNCH();
    return gpu_time_reps(st, reps, ms, [&]() {
        return gpu_ntt_run(ctx, (dfr *)d, (dfr *)o, lg, false, false, order == 0, st, err);
    }, err);
}

/* forward NTT, natural order in and out (with the bit-reversal pass) */
extern "C" int gpu_bench_ntt(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms,
                             struct cuzk_error *err)
{
    return bench_ntt(ctx, lg, reps, ms, 0, err);
}

/* forward NTT, natural in, bit-reversed out (sppark's "NR" order) */
extern "C" int gpu_bench_ntt_nr(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms,
                                struct cuzk_error *err)
{
    return bench_ntt(ctx, lg, reps, ms, 1, err);
}

/* forward NTT, natural order in and out, out of place (no bit-reversal pass) */
extern "C" int gpu_bench_ntt_oop(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms,
                                 struct cuzk_error *err)
{
    return bench_ntt(ctx, lg, reps, ms, 2, err);
}

extern "C" int gpu_bench_h(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms,
                           struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    size_t n = (size_t)1 << lg;
    void *d[3];
    for (int i = 0; i < 3; i++) {
        rc = gpu_scratch(ctx, (enum gpu_slot)(SL_NTT_A + i), n * sizeof(fr_t), &d[i], err);
        if (rc) return rc;
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = -1; r < reps && !rc; r++) {
        for (int i = 0; i < 3; i++)
            k_fill_field<dfr><<<gpu_div_up(n, 256), 256, 0, ctx->st[0]>>>((dfr *)d[i], (uint32_t)n, 77 + i);
        CK(cudaStreamSynchronize(ctx->st[0]));
        CK(cudaEventRecord(e0, ctx->st[0]));
        CK(cudaStreamWaitEvent(ctx->st[1], e0, 0));
        CK(cudaStreamWaitEvent(ctx->st[2], e0, 0));
        dfr *dh = NULL;
        rc = gpu_compute_h_dev(ctx, (dfr *)d[0], (dfr *)d[1], (dfr *)d[2], lg, &dh, NULL, NULL, err);
        CK(cudaEventRecord(e1, ctx->st[0]));
        double t = 0;
        if (!rc) rc = time_ms(e0, e1, &t, err);
        if (r >= 0) ms[r] = t;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return rc;
}
