/* ctx.cu: per-device contexts (streams, scratch, resident proving key and shape), the
 * per-device mutexes, CUDA error mapping and the checked allocator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.cuh"
extern "C" {
#include "cuzk/gpu_plan.h"
}

/* One FIFO lock per device index for the whole process (the daemon's workers share a device):
 * tickets under one mutex, so a worker that unlocks and at once asks again queues behind the
 * workers already waiting. With a plain mutex it could take the lock straight back: a witness
 * staged from pinned memory is queued in microseconds, so one prover proved again and again
 * while the other's staged upload waited, and two provers lost the overlap's gain. Lock traffic is one pair per proof, so one mutex and one
 * condition variable serve every device. */
#define GPU_MAX_DEVICES 64
static pthread_mutex_t g_lock_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_lock_cv = PTHREAD_COND_INITIALIZER;
static uint64_t g_lock_next[GPU_MAX_DEVICES], g_lock_serving[GPU_MAX_DEVICES];

int gpu_fail_cuda(struct cuzk_error *err, cudaError_t e, const char *call, const char *file,
                  int line)
{
    (void)cudaGetLastError();   /* clear non-sticky errors so the context stays usable */
    int code = (e == cudaErrorMemoryAllocation) ? CUZK_E_GPU_NOMEM
             : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) ? CUZK_E_NO_GPU
             : CUZK_E_GPU;
    const char *base = strrchr(file, '/');
    return cuzk_fail(err, code, "%s:%d: %s: %s", base ? base + 1 : file, line, call,
                     cudaGetErrorString(e));
}

static void fmt_bytes(char *out, size_t cap, size_t b)
{
    if (b >= ((size_t)1 << 30)) snprintf(out, cap, "%.2f GiB", (double)b / (double)(1u << 30));
    else snprintf(out, cap, "%.1f MiB", (double)b / (double)(1u << 20));
}

extern "C" int gpu_device_count(int *n, struct cuzk_error *err)
{
    *n = 0;
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess || c == 0) {
        (void)cudaGetLastError();
        return cuzk_fail(err, CUZK_E_NO_GPU, "gpu: no CUDA device (%s)",
                         e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    }
    *n = c;
    return CUZK_OK;
}

extern "C" int gpu_device_name(int device, char *out, size_t cap, struct cuzk_error *err)
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, device));
    snprintf(out, cap, "%s, %d SMs, %.1f GiB, sm_%d%d", p.name, p.multiProcessorCount,
             (double)p.totalGlobalMem / (double)(1u << 30), p.major, p.minor);
    return CUZK_OK;
}

int gpu_set_device(struct gpu_ctx *ctx, struct cuzk_error *err)
{
    CK(cudaSetDevice(ctx->dev));
    return CUZK_OK;
}

extern "C" int gpu_ctx_new(struct gpu_ctx **out, int device, struct cuzk_error *err)
{
    *out = NULL;
    int n = 0;
    int rc = gpu_device_count(&n, err);
    if (rc) return rc;
    if (device < 0 || device >= n || device >= GPU_MAX_DEVICES)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu: device index %d out of range (0..%d)",
                         device, n - 1);
    struct gpu_ctx *c = (struct gpu_ctx *)calloc(1, sizeof *c);
    if (!c) return cuzk_fail(err, CUZK_E_NOMEM, "gpu: context allocation failed");
    c->dev = device;
    pthread_mutex_init(&c->wit_mu, NULL);
    pthread_mutex_init(&c->pf_mu, NULL);
    cudaDeviceProp p;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&p, device);
    for (int i = 0; e == cudaSuccess && i < 3; i++) e = cudaStreamCreateWithFlags(&c->st[i], cudaStreamNonBlocking);
    for (int i = 0; e == cudaSuccess && i < 4; i++) e = cudaEventCreateWithFlags(&c->ev[i], cudaEventDisableTiming);
    if (e != cudaSuccess) {
        rc = gpu_fail_cuda(err, e, "gpu_ctx_new", __FILE__, __LINE__);
        gpu_ctx_free(c);
        return rc;
    }
    c->sm_count = p.multiProcessorCount;
    c->total_mem = p.totalGlobalMem;
    size_t tot = 0;
    if (cudaMemGetInfo(&c->free0, &tot) != cudaSuccess) c->free0 = p.totalGlobalMem;
    *out = c;
    return CUZK_OK;
}

static void unload_pk(struct gpu_ctx *c)
{
    void *ptrs[] = {c->d_h, c->d_l, c->d_a, c->d_bg1, c->d_bg2};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) if (ptrs[i]) cudaFree(ptrs[i]);
    c->d_h = c->d_l = c->d_a = c->d_bg1 = c->d_bg2 = NULL;
    c->pk = NULL;
}

static void unload_shape(struct gpu_ctx *c)
{
    for (int m = 0; m < 3; m++) {
        if (c->shape_mapped) {
            for (int k = 0; k < 3; k++)
                gpu_host_free_pinned(c->h_mat[m][k]);
        } else {
            if (c->d_rowptr[m]) cudaFree(c->d_rowptr[m]);
            if (c->d_col[m]) cudaFree(c->d_col[m]);
            if (c->d_cidx[m]) cudaFree(c->d_cidx[m]);
        }
        for (int k = 0; k < 3; k++) c->h_mat[m][k] = NULL;
        c->d_rowptr[m] = NULL;
        c->d_col[m] = NULL;
        c->d_cidx[m] = NULL;
    }
    gpu_spmv_unload(c);
    if (c->d_coeffs) cudaFree(c->d_coeffs);
    if (c->d_a_sel) cudaFree(c->d_a_sel);
    if (c->d_b_sel) cudaFree(c->d_b_sel);
    c->d_coeffs = NULL;
    c->d_a_sel = c->d_b_sel = NULL;
    c->shape = NULL;
    c->shape_mapped = false;
    c->shape_mat_bytes = 0;
}

extern "C" void gpu_ctx_unload(struct gpu_ctx *c)
{
    if (!c) return;
    cudaSetDevice(c->dev);
    unload_pk(c);
    unload_shape(c);
    c->wit_hint = 0;   /* its shape may be freed now */
    c->wit_hint_shape = NULL;
}

extern "C" void gpu_ctx_free(struct gpu_ctx *c)
{
    if (!c) return;
    cudaSetDevice(c->dev);
    gpu_ctx_unload(c);
    for (int i = 0; i < SL__COUNT; i++) if (c->slot[i]) cudaFree(c->slot[i]);
    if (c->tw) cudaFree(c->tw);
    if (c->coset) cudaFree(c->coset);
    if (c->shift_tab) cudaFree(c->shift_tab);
    for (int i = 0; i < 3; i++) if (c->st[i]) cudaStreamDestroy(c->st[i]);
    for (int i = 0; i < 4; i++) if (c->ev[i]) cudaEventDestroy(c->ev[i]);
    for (int k = 0; k < GPU_WIT_SLOTS; k++) {
        if (c->wit[k].d) cudaFree(c->wit[k].d);
        if (c->wit[k].done) cudaEventDestroy(c->wit[k].done);
    }
    if (c->pf_st) cudaStreamDestroy(c->pf_st);
    gpu_wpack_free(c);
    pthread_mutex_destroy(&c->wit_mu);
    pthread_mutex_destroy(&c->pf_mu);
    for (int w = 0; w < GPU_STAGERS; w++)
        for (int i = 0; i < GPU_STAGE_N; i++) {
            gpu_host_free_pinned(c->stage[w].buf[i]);
            if (c->stage[w].ev[i]) cudaEventDestroy(c->stage[w].ev[i]);
        }
    if (c->up_st) cudaStreamDestroy(c->up_st);
    if (c->red_st) cudaStreamDestroy(c->red_st);
    for (int i = 0; i < 2; i++) {
        if (c->acc_ev[i]) cudaEventDestroy(c->acc_ev[i]);
        if (c->red_ev[i]) cudaEventDestroy(c->red_ev[i]);
    }
    free(c);
}

extern "C" int gpu_ctx_device(const struct gpu_ctx *ctx) { return ctx->dev; }
extern "C" bool gpu_ctx_shape_mapped(const struct gpu_ctx *ctx) { return ctx && ctx->shape_mapped; }
extern "C" void gpu_ctx_lock(struct gpu_ctx *ctx)
{
    pthread_mutex_lock(&g_lock_mu);
    const uint64_t ticket = g_lock_next[ctx->dev]++;
    while (g_lock_serving[ctx->dev] != ticket) pthread_cond_wait(&g_lock_cv, &g_lock_mu);
    pthread_mutex_unlock(&g_lock_mu);
}
extern "C" void gpu_ctx_unlock(struct gpu_ctx *ctx)
{
    pthread_mutex_lock(&g_lock_mu);
    g_lock_serving[ctx->dev]++;
    pthread_cond_broadcast(&g_lock_cv);
    pthread_mutex_unlock(&g_lock_mu);
}

extern "C" int gpu_mem_info(struct gpu_ctx *ctx, size_t *free_b, size_t *total_b,
                            struct cuzk_error *err)
{
    CK(cudaSetDevice(ctx->dev));
    CK(cudaMemGetInfo(free_b, total_b));
    return CUZK_OK;
}

int gpu_mem_usable(struct gpu_ctx *ctx, size_t *free_b, struct cuzk_error *err)
{
    size_t fr = 0, tot = 0;
    int rc = gpu_mem_info(ctx, &fr, &tot, err);
    if (rc) return rc;
    *free_b = fr > ctx->opt.reserve_bytes ? fr - ctx->opt.reserve_bytes : 0;
    if (ctx->opt.mem_limit_bytes) {   /* what this process took since the context opened */
        size_t used = ctx->free0 > fr ? ctx->free0 - fr : 0;
        size_t left = ctx->opt.mem_limit_bytes > used ? ctx->opt.mem_limit_bytes - used : 0;
        if (left < *free_b) *free_b = left;
    }
    return CUZK_OK;
}

extern "C" int gpu_mem_check(struct gpu_ctx *ctx, size_t bytes, const char *what,
                             struct cuzk_error *err)
{
    size_t fr = 0;
    int rc = gpu_mem_usable(ctx, &fr, err);
    if (rc) return rc;
    if (bytes + GPU_MEM_MARGIN > fr) {
        char need[32], have[32];
        fmt_bytes(need, sizeof need, bytes);
        fmt_bytes(have, sizeof have, fr);
        return cuzk_fail(err, CUZK_E_GPU_NOMEM, "%s: not enough GPU memory: need %s, free %s%s%s",
                         what, need, have,
                         ctx->opt.reserve_bytes ? " (after [gpus] vram_reserve_mib)" : "",
                         ctx->opt.mem_limit_bytes ? " (within [gpus] memory_limit)" : "");
    }
    return CUZK_OK;
}

int gpu_malloc(struct gpu_ctx *ctx, void **p, size_t bytes, const char *what,
               struct cuzk_error *err)
{
    *p = NULL;
    if (bytes == 0) bytes = 16;
    int rc = gpu_mem_check(ctx, bytes, what, err);
    if (rc) return rc;
    cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess) {
        *p = NULL;
        (void)cudaGetLastError();
        char need[32];
        fmt_bytes(need, sizeof need, bytes);
        return cuzk_fail(err, e == cudaErrorMemoryAllocation ? CUZK_E_GPU_NOMEM : CUZK_E_GPU,
                         "%s: cudaMalloc(%s): %s", what, need, cudaGetErrorString(e));
    }
    if (ctx->opt.trace) {   /* every device allocation and the free memory after it */
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        fprintf(stderr, "cuzk gpu alloc: %s %.3f GiB, free after %.2f GiB\n", what, bytes / 1073741824.0,
                fr / 1073741824.0);
    }
    return CUZK_OK;
}

extern "C" int gpu_alloc_probe(struct gpu_ctx *ctx, size_t bytes, struct cuzk_error *err)
{
    CK(cudaSetDevice(ctx->dev));
    void *p = NULL;
    int rc = gpu_malloc(ctx, &p, bytes, "gpu_alloc_probe", err);
    if (rc) return rc;
    CK(cudaFree(p));
    return CUZK_OK;
}

int gpu_scratch(struct gpu_ctx *ctx, enum gpu_slot s, size_t bytes, void **out,
                struct cuzk_error *err)
{
    if (ctx->loan[s] && ctx->loan_size[s] >= bytes) {
        *out = ctx->loan[s];
        ctx->loan_used[s] = true;
        ctx->loans_taken++;
        return CUZK_OK;
    }
    if (ctx->slot_size[s] >= bytes && ctx->slot[s]) {
        *out = ctx->slot[s];
        return CUZK_OK;
    }
    if (ctx->slot[s]) {
        CK(cudaFree(ctx->slot[s]));   /* synchronises the device: growth is rare */
        ctx->slot[s] = NULL;
        ctx->slot_size[s] = 0;
    }
    /* round up so that slightly larger later requests reuse the buffer (by at most 256 MiB:
     * 1/16 of the multi-GiB buffers of a 2^27 MSM was ~3.5 GiB of a tight memory budget) */
    size_t sz = gpu_scratch_size(bytes);
    char what[48];
    snprintf(what, sizeof what, "gpu scratch %d", (int)s);
    int rc = gpu_malloc(ctx, &ctx->slot[s], sz, what, err);
    if (rc) {
        /* retry without the slack */
        if (sz == bytes) return rc;
        rc = gpu_malloc(ctx, &ctx->slot[s], bytes, what, err);
        if (rc) return rc;
        sz = bytes;
    }
    ctx->slot_size[s] = sz;
    *out = ctx->slot[s];
    return CUZK_OK;
}

void gpu_scratch_release(struct gpu_ctx *ctx)
{
    cudaSetDevice(ctx->dev);
    cudaDeviceSynchronize();   /* no kernel of the failed call still reads a slot */
    for (int s = 0; s < SL__COUNT; s++) {
        if (ctx->slot[s]) cudaFree(ctx->slot[s]);
        ctx->slot[s] = NULL;
        ctx->slot_size[s] = 0;
    }
}

/* ---- residency ---- */

static int upload(struct gpu_ctx *ctx, void **d, const void *h, size_t bytes, const char *what,
                  struct cuzk_error *err)
{
    int rc = gpu_malloc(ctx, d, bytes, what, err);
    if (!rc) rc = gpu_h2d(ctx, GPU_STAGER_MAIN, *d, h, bytes, ctx->st[0], NULL, err);
    if (rc) return rc;
    CK(cudaStreamSynchronize(ctx->st[0]));
    return CUZK_OK;
}

/* The resident shape's matrices move to pinned host memory, read by the SpMV over PCIe (the
 * memory plan's shape_mapped): a copy into memory this context owns, since registering the
 * caller's arrays in place would page-lock pages they may share with other allocations. */
static int shape_map_host(struct gpu_ctx *ctx, struct cuzk_error *err)
{
    const struct g16_shape *s = ctx->shape;
    const struct g16_matrix *mats[3] = {&s->a, &s->b, &s->c};
    void **dev[3][3] = {{(void **)&ctx->d_rowptr[0], (void **)&ctx->d_col[0], (void **)&ctx->d_cidx[0]},
                        {(void **)&ctx->d_rowptr[1], (void **)&ctx->d_col[1], (void **)&ctx->d_cidx[1]},
                        {(void **)&ctx->d_rowptr[2], (void **)&ctx->d_col[2], (void **)&ctx->d_cidx[2]}};
    CK(cudaDeviceSynchronize());   /* no SpMV reads the device copies any more */
    for (int m = 0; m < 3; m++) {
        const void *src[3] = {mats[m]->row_ptr, mats[m]->col, mats[m]->coeff_idx};
        const size_t nb[3] = {(s->n_constraints + 1) * 8, mats[m]->nnz * 4, mats[m]->nnz * 2};
        for (int k = 0; k < 3; k++) {
            void *h = NULL, *d = NULL;
            int rc = gpu_host_alloc_pinned(&h, nb[k] ? nb[k] : 8, err);
            if (rc) return rc;
            memcpy(h, src[k], nb[k]);
            cudaError_t e = cudaHostGetDevicePointer(&d, h, 0);
            if (e != cudaSuccess) {
                gpu_host_free_pinned(h);
                return gpu_fail_cuda(err, e, "cudaHostGetDevicePointer(matrices)", __FILE__, __LINE__);
            }
            if (*dev[m][k]) cudaFree(*dev[m][k]);
            *dev[m][k] = d;
            ctx->h_mat[m][k] = h;
        }
    }
    ctx->shape_mapped = true;
    ctx->shape_dev_bytes -= ctx->shape_mat_bytes;
    ctx->shape_mat_bytes = 0;
    return CUZK_OK;
}

int gpu_shape_map_host(struct gpu_ctx *ctx, struct cuzk_error *err) { return shape_map_host(ctx, err); }

void gpu_shape_bytes(const struct g16_shape *s, size_t *matrices, size_t *rest)
{
    const struct g16_matrix *mats[3] = {&s->a, &s->b, &s->c};
    size_t m = 0;
    for (int i = 0; i < 3; i++) m += (s->n_constraints + 1) * 8 + mats[i]->nnz * 6;
    *matrices = m;
    *rest = s->n_coeffs * sizeof(fr_t) + ((size_t)s->n_inputs + s->a_aux_count + s->b_inp_count + s->b_aux_count) * 4;
}

void gpu_shape_set_aside(struct gpu_ctx *c, struct gpu_shape_state *st)
{
    memset(st, 0, sizeof *st);
    st->shape = c->shape;
    for (int m = 0; m < 3; m++) {
        st->d_rowptr[m] = c->d_rowptr[m];
        st->d_col[m] = c->d_col[m];
        st->d_cidx[m] = c->d_cidx[m];
        st->d_long[m] = c->d_long[m];
        st->n_long[m] = c->n_long[m];
        for (int k = 0; k < 3; k++) st->h_mat[m][k] = c->h_mat[m][k];
        c->d_rowptr[m] = NULL;
        c->d_col[m] = NULL;
        c->d_cidx[m] = NULL;
        c->d_long[m] = NULL;
        c->n_long[m] = 0;
        for (int k = 0; k < 3; k++) c->h_mat[m][k] = NULL;
    }
    st->d_coeffs = c->d_coeffs;
    st->d_a_sel = c->d_a_sel;
    st->d_b_sel = c->d_b_sel;
    st->spmv_lim = c->spmv_lim;
    st->shape_dev_bytes = c->shape_dev_bytes;
    st->shape_mat_bytes = c->shape_mat_bytes;
    st->shape_mapped = c->shape_mapped;
    st->plan_wit = c->plan_wit;
    st->plan_hvec = c->plan_hvec;
    st->plan_wit_bytes = c->plan_wit_bytes;
    st->stream_chunk = c->stream_chunk;
    st->wit_hint = c->wit_hint;
    st->wit_hint_shape = c->wit_hint_shape;
    c->d_coeffs = NULL;
    c->d_a_sel = c->d_b_sel = NULL;
    c->shape = NULL;
    c->shape_dev_bytes = c->shape_mat_bytes = 0;
    c->shape_mapped = false;
}

void gpu_shape_put_back(struct gpu_ctx *c, const struct gpu_shape_state *st)
{
    unload_shape(c);   /* the other circuit's, if it was loaded */
    c->shape = st->shape;
    for (int m = 0; m < 3; m++) {
        c->d_rowptr[m] = st->d_rowptr[m];
        c->d_col[m] = st->d_col[m];
        c->d_cidx[m] = st->d_cidx[m];
        c->d_long[m] = st->d_long[m];
        c->n_long[m] = st->n_long[m];
        for (int k = 0; k < 3; k++) c->h_mat[m][k] = st->h_mat[m][k];
    }
    c->d_coeffs = st->d_coeffs;
    c->d_a_sel = st->d_a_sel;
    c->d_b_sel = st->d_b_sel;
    c->spmv_lim = st->spmv_lim;
    c->shape_dev_bytes = st->shape_dev_bytes;
    c->shape_mat_bytes = st->shape_mat_bytes;
    c->shape_mapped = st->shape_mapped;
    c->plan_wit = st->plan_wit;
    c->plan_hvec = st->plan_hvec;
    c->plan_wit_bytes = st->plan_wit_bytes;
    c->stream_chunk = st->stream_chunk;
    c->wit_hint = st->wit_hint;
    c->wit_hint_shape = st->wit_hint_shape;
}

extern "C" int gpu_ctx_load_pk(struct gpu_ctx *ctx, const struct g16_pk *pk,
                               struct cuzk_error *err)
{
    CK(cudaSetDevice(ctx->dev));
    if (ctx->pk == pk) return CUZK_OK;
    unload_pk(ctx);
    void *h[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    uint64_t need = g16_pk_vectors(pk, h, nb);
    void **d[G16_PK_VECTORS] = {&ctx->d_h, &ctx->d_l, &ctx->d_a, &ctx->d_bg1, &ctx->d_bg2};
    static const char *const names[G16_PK_VECTORS] = {"pk.h", "pk.l", "pk.a", "pk.b_g1", "pk.b_g2"};
    /* The memory plan (gpu_plan.h) decides resident or streamed, and whether a second
     * witness buffer fits: over the memory free now plus what this context already holds and
     * would reuse (the shape, scratch slots, witness buffers). A key that fits only by leaving
     * less than a proof's working set would make every proof fail for scratch (WindowPoSt 32
     * GiB's 56.6 GiB key on an 80 GB card), so it is streamed instead. */
    int rc = CUZK_OK;
    ctx->plan_wit = 0;
    ctx->plan_hvec = 0;
    ctx->plan_wit_bytes = 0;
    ctx->stream_chunk = 0;
    ctx->plan_refused[0] = 0;
    if (ctx->shape) {
        size_t fr = 0;
        rc = gpu_mem_usable(ctx, &fr, err);
        if (rc) return rc;
        uint64_t held = ctx->shape_dev_bytes;
        if (ctx->tw_lg) held += ((size_t)1 << (ctx->tw_lg - 1)) * sizeof(fr_t);   /* in the plan's work */
        for (int sl = 0; sl < SL__COUNT; sl++) held += ctx->slot_size[sl];
        pthread_mutex_lock(&ctx->wit_mu);
        for (int i = 0; i < GPU_WIT_SLOTS; i++) held += ctx->wit[i].cap;
        pthread_mutex_unlock(&ctx->wit_mu);
        struct gpu_plan_in in;
        memset(&in, 0, sizeof in);
        in.mem = fr > GPU_MEM_MARGIN ? fr - GPU_MEM_MARGIN + held : held;
        for (int k = 0; k < G16_PK_VECTORS; k++) in.key[k] = nb[k];
        in.shape = ctx->shape_mat_bytes;   /* the rest of the shape stays on the device */
        in.mem -= ctx->shape_dev_bytes - ctx->shape_mat_bytes;
        in.domain = 1;
        while (in.domain < ctx->shape->n_constraints) in.domain <<= 1;
        /* the packed size of the witness at hand (gpu_g16_backend), else unpacked */
        const bool hinted = ctx->wit_hint && ctx->wit_hint_shape == ctx->shape;
        in.witness = hinted ? ctx->wit_hint : gpu_wit_bytes(ctx->shape);
        struct gpu_plan plan;
        rc = gpu_plan_make(&in, &plan, err);
        if (rc && !hinted)
            /* a key loaded ahead of any proof (the daemon's preload) with an unpacked witness:
             * not a refusal yet, the first proof plans again with its packed witness */
            return cuzk_fail(err, CUZK_E_GPU_NOMEM, "gpu_ctx_load_pk: no memory plan fits with an unpacked "
                             "witness (%.2f GiB usable); the key is streamed and the first proof plans again "
                             "with its packed witness", (double)in.mem / 1073741824.0);
        ctx->plan_wit = rc ? 1 : plan.witness_buffers;
        ctx->plan_hvec = rc ? 0 : plan.h_vectors;
        ctx->plan_wit_bytes = in.witness;
        ctx->stream_chunk = !rc && plan.key_mode == GPU_KEY_STREAMED ? plan.stream_chunk : 0;
        /* no plan fits: proofs of this key fail at once with the plan's message (retrying
         * cannot make the card larger) */
        if (rc && err) snprintf(ctx->plan_refused, sizeof ctx->plan_refused, "%s", err->msg);
        else if (rc) snprintf(ctx->plan_refused, sizeof ctx->plan_refused, "GPU memory plan: the key does not fit");
        if (!rc && (plan.shape_mapped || gpu_tuning.shape_host) && !ctx->shape_mapped) rc = shape_map_host(ctx, err);
        if (!rc && plan.key_mode == GPU_KEY_STREAMED)
            rc = cuzk_fail(err, CUZK_E_GPU_NOMEM, "gpu_ctx_load_pk: the memory plan streams the key "
                           "(%.2f GiB for key, matrices and one proof; %.2f GiB usable)",
                           (double)(need + (plan.shape_mapped ? 0 : in.shape) + plan.work_bytes + in.witness) /
                               1073741824.0,
                           (double)in.mem / 1073741824.0);
    } else {
        rc = gpu_mem_check(ctx, need, "gpu_ctx_load_pk: proving key", err);
    }
    for (int k = 0; !rc && k < G16_PK_VECTORS; k++) rc = upload(ctx, d[k], h[k], nb[k], names[k], err);
    if (rc) {
        unload_pk(ctx);
        return rc;
    }
    ctx->pk = pk;
    return CUZK_OK;
}

/* Positions in w = inputs ++ aux of the A scalars (all inputs, then A-dense aux) and the B
 * scalars (B-dense inputs, then B-dense aux), in the key's point order. */
static uint32_t *density_positions(const struct g16_shape *s, bool is_a, size_t *count)
{
    size_t n = is_a ? s->n_inputs + s->a_aux_count : s->b_inp_count + s->b_aux_count;
    uint32_t *v = (uint32_t *)malloc((n ? n : 1) * sizeof *v);
    if (!v) return NULL;
    size_t k = 0;
    for (uint32_t i = 0; i < s->n_inputs; i++)
        if (is_a || ((s->b_inp_density[i / 64] >> (i % 64)) & 1)) v[k++] = i;
    const uint64_t *d = is_a ? s->a_aux_density : s->b_aux_density;
    for (uint32_t i = 0; i < s->n_aux && k < n; i++)
        if ((d[i / 64] >> (i % 64)) & 1) v[k++] = s->n_inputs + i;
    *count = k;
    return v;
}

extern "C" int gpu_ctx_load_shape(struct gpu_ctx *ctx, const struct g16_shape *s,
                                  struct cuzk_error *err)
{
    CK(cudaSetDevice(ctx->dev));
    if (ctx->shape == s) return CUZK_OK;
    unload_shape(ctx);

    const struct g16_matrix *mats[3] = {&s->a, &s->b, &s->c};
    size_t need = s->n_coeffs * sizeof(fr_t);
    for (int m = 0; m < 3; m++)
        need += (s->n_constraints + 1) * 8 + mats[m]->nnz * 6;
    int rc = gpu_mem_check(ctx, need, "gpu_ctx_load_shape: constraint matrices", err);
    ctx->shape_dev_bytes = need + ((size_t)s->n_inputs + s->a_aux_count + s->b_inp_count + s->b_aux_count) * 4;
    ctx->shape_mat_bytes = need - s->n_coeffs * sizeof(fr_t);
    for (int m = 0; !rc && m < 3; m++) {
        if (!mats[m]->row_ptr) {
            rc = cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_ctx_load_shape: matrix %c not recorded (count-only shape)", "ABC"[m]);
            break;
        }
        rc = upload(ctx, (void **)&ctx->d_rowptr[m], mats[m]->row_ptr, (s->n_constraints + 1) * 8, "shape.row_ptr", err);
        if (!rc) rc = upload(ctx, (void **)&ctx->d_col[m], mats[m]->col, mats[m]->nnz * 4, "shape.col", err);
        if (!rc) rc = upload(ctx, (void **)&ctx->d_cidx[m], mats[m]->coeff_idx, mats[m]->nnz * 2, "shape.coeff_idx", err);
    }
    if (!rc) rc = upload(ctx, (void **)&ctx->d_coeffs, s->coeffs, s->n_coeffs * sizeof(fr_t), "shape.coeffs", err);
    size_t long_bytes = 0;
    if (!rc) rc = gpu_spmv_prepare(ctx, s, &long_bytes, err);
    ctx->shape_dev_bytes += long_bytes;
    for (int which = 0; !rc && which < 2; which++) {
        size_t cnt = 0;
        uint32_t *v = density_positions(s, which == 0, &cnt);
        if (!v) { rc = cuzk_fail(err, CUZK_E_NOMEM, "gpu_ctx_load_shape: host allocation failed"); break; }
        rc = upload(ctx, (void **)(which == 0 ? &ctx->d_a_sel : &ctx->d_b_sel), v, cnt * 4, "shape.density", err);
        free(v);
    }
    if (rc) {
        unload_shape(ctx);
        return rc;
    }
    ctx->shape = s;
    return CUZK_OK;
}

/* ---- pinned host memory and the streamed-key resources ---- */

/* A failed page-locking call (cudaMallocHost, cudaHostRegister) as a cuzk error. */
static int host_mem_fail(struct cuzk_error *err, cudaError_t e, const char *call, size_t bytes,
                         const char *hint)
{
    (void)cudaGetLastError();
    char need[32];
    fmt_bytes(need, sizeof need, bytes);
    int code = e == cudaErrorMemoryAllocation ? CUZK_E_NOMEM
             : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) ? CUZK_E_NO_GPU
             : CUZK_E_GPU;
    return cuzk_fail(err, code, "%s(%s): %s%s", call, need, cudaGetErrorString(e), hint);
}

/* Every live page-locked block (allocated or registered) with its size, so that a free knows
 * what it gives back: a few dozen blocks at most (staging chunks, witness buffers, a key). */
struct pin_block {
    const void *p;
    size_t bytes;
};
static pthread_mutex_t pin_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pin_block *pin_tab;
static size_t pin_n, pin_cap;
static uint64_t pin_now, pin_peak;

static void pin_note(const void *p, size_t bytes)
{
    pthread_mutex_lock(&pin_mu);
    if (pin_n == pin_cap) {
        size_t cap = pin_cap ? 2 * pin_cap : 32;
        struct pin_block *t = (struct pin_block *)realloc(pin_tab, cap * sizeof *t);
        if (t) pin_tab = t, pin_cap = cap;
    }
    if (pin_n < pin_cap) {   /* without room the block goes uncounted rather than miscounted */
        pin_tab[pin_n].p = p;
        pin_tab[pin_n].bytes = bytes;
        pin_n++;
        pin_now += bytes;
        if (pin_now > pin_peak) pin_peak = pin_now;
    }
    pthread_mutex_unlock(&pin_mu);
}

static void pin_forget(const void *p)
{
    pthread_mutex_lock(&pin_mu);
    for (size_t i = 0; i < pin_n; i++)
        if (pin_tab[i].p == p) {
            pin_now -= pin_tab[i].bytes;
            pin_tab[i] = pin_tab[--pin_n];
            break;
        }
    pthread_mutex_unlock(&pin_mu);
}

extern "C" void gpu_host_pinned_bytes(uint64_t *now, uint64_t *peak)
{
    pthread_mutex_lock(&pin_mu);
    *now = pin_now;
    *peak = pin_peak;
    pthread_mutex_unlock(&pin_mu);
}

extern "C" int gpu_host_alloc_pinned(void **out, size_t bytes, struct cuzk_error *err)
{
    *out = NULL;
    const size_t sz = bytes ? bytes : 16;
    cudaError_t e = cudaMallocHost(out, sz);
    if (e != cudaSuccess) {
        *out = NULL;
        return host_mem_fail(err, e, "gpu_host_alloc_pinned: cudaMallocHost", bytes, "");
    }
    pin_note(*out, sz);
    return CUZK_OK;
}

extern "C" void gpu_host_free_pinned(void *p)
{
    if (!p) return;
    pin_forget(p);
    cudaFreeHost(p);
}

extern "C" void gpu_ctx_set_options(struct gpu_ctx *ctx, const struct gpu_options *opt)
{
    if (ctx) ctx->opt = opt ? *opt : (struct gpu_options){0, false, false};
}

extern "C" void gpu_ctx_msm_plan(const struct gpu_ctx *ctx, unsigned *window_bits, unsigned *windows_per_group)
{
    *window_bits = ctx ? ctx->msm_last_c : 0;
    *windows_per_group = ctx ? ctx->msm_last_g : 0;
}

extern "C" unsigned gpu_ctx_msm_aff_rounds(const struct gpu_ctx *ctx)
{
    return ctx ? ctx->msm_last_aff : 0;
}

extern "C" unsigned gpu_ctx_msm_parts(const struct gpu_ctx *ctx)
{
    return ctx ? ctx->msm_last_parts : 0;
}

extern "C" bool gpu_ctx_h_shift_table(const struct gpu_ctx *ctx)
{
    return ctx && ctx->h_last_tab;
}

extern "C" unsigned gpu_ctx_sum_aff_rounds(const struct gpu_ctx *ctx)
{
    return ctx ? ctx->sum_last_aff : 0;
}

extern "C" bool gpu_ctx_msm_digit_planes(const struct gpu_ctx *ctx)
{
    return ctx ? ctx->msm_last_planes : false;
}

extern "C" size_t gpu_ctx_scratch_bytes(const struct gpu_ctx *ctx)
{
    size_t t = 0;
    for (int s = 0; ctx && s < SL__COUNT; s++) t += ctx->slot[s] ? ctx->slot_size[s] : 0;
    return t;
}

extern "C" uint64_t gpu_ctx_msm_loans(const struct gpu_ctx *ctx) { return ctx ? ctx->loans_taken : 0; }

extern "C" void gpu_ctx_stream_stats(const struct gpu_ctx *ctx, struct gpu_stream_stats *out)
{
    memset(out, 0, sizeof *out);
    if (ctx) *out = ctx->stream_stats;
}

int gpu_stream_prepare(struct gpu_ctx *ctx, struct cuzk_error *err)
{
    if (!ctx->up_st) CK(cudaStreamCreateWithFlags(&ctx->up_st, cudaStreamNonBlocking));
    return CUZK_OK;
}

extern "C" int gpu_host_register(void *p, size_t bytes, struct cuzk_error *err)
{
    if (!p || !bytes) return CUZK_OK;
    cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
    if (e != cudaSuccess)
        return host_mem_fail(err, e, "gpu_host_register: cudaHostRegister", bytes,
                             " (is RLIMIT_MEMLOCK high enough? systemd: LimitMEMLOCK=infinity)");
    pin_note(p, bytes);
    return CUZK_OK;
}

extern "C" void gpu_host_unregister(void *p)
{
    if (!p) return;
    pin_forget(p);
    if (cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
}

bool gpu_host_is_pinned(const void *p, size_t bytes)
{
    cudaPointerAttributes a;
    const char *c = (const char *)p;
    if (!p || !bytes) return false;
    for (int k = 0; k < 2; k++) {
        if (cudaPointerGetAttributes(&a, k ? c + bytes - 1 : c) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        if (a.type != cudaMemoryTypeHost) return false;
    }
    return true;
}

/* Pinned buffers and events of stager w, created on first use. */
static int stager_prepare(struct gpu_ctx *ctx, int w, struct cuzk_error *err)
{
    struct gpu_stager *g = &ctx->stage[w];
    for (int i = 0; i < GPU_STAGE_N; i++) {
        if (!g->ev[i]) CK(cudaEventCreateWithFlags(&g->ev[i], cudaEventDisableTiming));
        if (!g->buf[i]) {
            int rc = gpu_host_alloc_pinned(&g->buf[i], GPU_STAGE_CHUNK, err);
            if (rc) return rc;
        }
    }
    /* stage.chunk below 64 MiB (a test hook) makes small test keys take several chunks, so
     * the rotation through the staging buffers is exercised */
    g->chunk = gpu_tuning.stage_chunk >= 4096 && gpu_tuning.stage_chunk < GPU_STAGE_CHUNK
                   ? (size_t)gpu_tuning.stage_chunk : GPU_STAGE_CHUNK;
    return CUZK_OK;
}

struct par_copy { char *dst; const char *src; size_t n; };
#define PAR_COPY_GRAIN ((size_t)2 << 20)

static void par_copy_fn(void *vctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct par_copy *c = (struct par_copy *)vctx;
    size_t lo = begin * PAR_COPY_GRAIN, hi = end * PAR_COPY_GRAIN;
    if (hi > c->n) hi = c->n;
    memcpy(c->dst + lo, c->src + lo, hi - lo);
}

int gpu_h2d(struct gpu_ctx *ctx, int which, void *d, const void *h, size_t n, cudaStream_t st,
            bool *staged, struct cuzk_error *err)
{
    if (!n) return CUZK_OK;
    if (gpu_host_is_pinned(h, n)) {
        CK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, st));
        return CUZK_OK;
    }
    if (staged) *staged = true;
    int rc = stager_prepare(ctx, which, err);
    if (rc) return rc;
    struct gpu_stager *g = &ctx->stage[which];
    /* a single-threaded memcpy into pinned memory runs at ~5 GB/s, a fraction of PCIe: the
     * shared CPU pool copies each chunk in 2 MiB pieces while the previous chunks' DMAs run */
    struct pool *pool = pool_default();
    for (size_t off = 0, j = 0; off < n; off += g->chunk, j++) {
        size_t len = n - off < g->chunk ? n - off : g->chunk;
        int b = (int)(j % GPU_STAGE_N);
        CK(cudaEventSynchronize(g->ev[b]));   /* buffer b's previous DMA is done */
        struct par_copy pc = {(char *)g->buf[b], (const char *)h + off, len};
        size_t pieces = (len + PAR_COPY_GRAIN - 1) / PAR_COPY_GRAIN;
        if (pieces > 1 && pool) pool_parallel_for(pool, pieces, 1, par_copy_fn, &pc);
        else memcpy(pc.dst, pc.src, len);
        CK(cudaMemcpyAsync((char *)d + off, g->buf[b], len, cudaMemcpyHostToDevice, st));
        CK(cudaEventRecord(g->ev[b], st));
    }
    return CUZK_OK;
}
