/* bench.cuh: device helpers of the benchmark entry points (bench/{ntt,msm,spmv}_bench.cu): the
 * timing loop and the pseudo-random inputs. Only those files include it; the library never times. */
#ifndef CUZK_GPU_BENCH_CUH
#define CUZK_GPU_BENCH_CUH

#include "../gpu_internal.cuh"
#include "gpu_bench.h"

/* Benchmarks: run() (a cuzk code; its work queued on st, or done when it returns) reps + 1
 * times, the first a warm-up; ms[r] = CUDA-event time of run r on st. */
template <class Run> int gpu_time_reps(cudaStream_t st, int reps, double *ms, Run run, struct cuzk_error *err)
{
    cudaEvent_t ev[2] = {NULL, NULL};
    cudaError_t e = cudaEventCreate(&ev[0]);
    if (e == cudaSuccess) e = cudaEventCreate(&ev[1]);
    int rc = CUZK_OK;
    for (int r = -1; r < reps && !rc && e == cudaSuccess; r++) {
        float f = 0;
        e = cudaEventRecord(ev[0], st);
        if (e == cudaSuccess) rc = run();
        if (!rc && e == cudaSuccess) e = cudaEventRecord(ev[1], st);
        if (!rc && e == cudaSuccess) e = cudaEventSynchronize(ev[1]);
        if (!rc && e == cudaSuccess) e = cudaEventElapsedTime(&f, ev[0], ev[1]);
        if (r >= 0) ms[r] = f;
    }
    for (int i = 0; i < 2; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    if (!rc && e != cudaSuccess) rc = gpu_fail_cuda(err, e, "benchmark timing events", __FILE__, __LINE__);
    return rc;
}

/* Benchmarks: v[i] = pseudo-random field element (xorshift from seed and i), top word masked so
 * that it is below the modulus (< 2^252 < r for Fr, < 2^380 < p for Fp). */
template <class F> __global__ void k_fill_field(F *v, uint32_t n, uint32_t seed)
{
    constexpr int W = sizeof(F) / 4;
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    F x;
    uint32_t s = seed ^ (i * 0x9e3779b9u);
#pragma unroll
    for (int j = 0; j < W; j++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        x.v[j] = s;
    }
    x.v[W - 1] &= 0x0fffffffu;
    v[i] = x;
}

#endif
