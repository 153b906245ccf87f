/* prover.cu: the Groth16 GPU backend (g16_backend_fn): SpMV a/b/c, the h pipeline, the H MSM
 * and the 0/1-split L, A, B_G1, B_G2 MSMs (bitmap sum of the ones + Pippenger on the rest),
 * with the proving key resident in VRAM (or uploaded per proof when it does not fit). */
#include <cub/cub.cuh>
#include <string.h>

#include "gpu_internal.cuh"
extern "C" {
#include "cuzk/gpu_plan.h"
}

/* Ones bitmap (bit i: scalar i == 1) and tail flags (scalar not 0 and not 1); scalar i is
 * w[sel[i]] (sel non-NULL) or w[off + i]. One warp writes one bitmap word. */
__global__ void k_split(uint32_t *ones, uint32_t *flags, dwit w, const uint32_t *sel,
                        uint32_t off, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    bool one = false, tail = false;
    if (i < n) {
        const uint32_t v = sel ? sel[i] : off + i;
        const unsigned c = wpack_class(&w.blk[v >> 5], v);   /* the packing's class is the split */
        one = c == WPACK_ONE;
        tail = c == WPACK_OTHER;
        flags[i] = tail;
    }
    uint32_t b = __ballot_sync(0xffffffffu, one);
    if ((threadIdx.x & 31) == 0 && i < n) ones[i >> 5] = b;
}

__global__ void k_gather_tail(uint32_t *tail_idx, dfr *tail_sc, uint32_t *num, const uint32_t *flags,
                              const uint32_t *pos, dwit w, const uint32_t *sel, uint32_t off,
                              uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (flags[i]) {
        uint32_t p = pos[i];
        tail_idx[p] = i;
        const uint32_t v = sel ? sel[i] : off + i;
        tail_sc[p] = w.val[wpack_rank(&w.blk[v >> 5], v)];
    }
    if (i == n - 1) *num = pos[i] + flags[i];
}

/* The 0/1 split of n scalars (scalar i is w[sel[i]], or w[off + i] when sel is NULL): the
 * ones bitmap and the compacted tail (point index, scalar) of the scalars that are neither 0
 * nor 1, in scratch slots that the MSMs do not touch, so B_G1 and B_G2 share one split. */
struct split {
    void *ones, *tidx, *tsc;
    size_t n;
    uint32_t tail;
};

static int split_scalars(struct gpu_ctx *ctx, struct split *sp, dwit w, const uint32_t *sel,
                         uint32_t off, size_t n, cudaStream_t st, struct cuzk_error *err)
{
    void *flags, *pos, *num, *cub;
    size_t nn = n ? n : 1, words = (n + 31) / 32;
    sp->n = n;
    sp->tail = 0;
    int rc = gpu_scratch(ctx, SL_ONES, (words ? words : 1) * 4, &sp->ones, err);
    if (!rc) rc = gpu_scratch(ctx, SL_FLAGS, nn * 4, &flags, err);
    if (!rc) rc = gpu_scratch(ctx, SL_POS, nn * 4, &pos, err);
    if (!rc) rc = gpu_scratch(ctx, SL_TAIL_IDX, nn * 4, &sp->tidx, err);
    if (!rc) rc = gpu_scratch(ctx, SL_TAIL_SC, nn * sizeof(fr_t), &sp->tsc, err);
    if (!rc) rc = gpu_scratch(ctx, SL_NUM, 4096, &num, err);
    if (rc || !n) return rc;
    k_split<<<gpu_div_up(words * 32, 256), 256, 0, st>>>((uint32_t *)sp->ones, (uint32_t *)flags, w, sel, off, (uint32_t)n);
    CK_LAUNCH();
    size_t bytes = 0;
    CK(cub::DeviceScan::ExclusiveSum(NULL, bytes, (uint32_t *)flags, (uint32_t *)pos, (int)n, st));
    rc = gpu_scratch(ctx, SL_CUB, bytes, &cub, err);
    if (rc) return rc;
    bytes = ctx->slot_size[SL_CUB];
    CK(cub::DeviceScan::ExclusiveSum(cub, bytes, (uint32_t *)flags, (uint32_t *)pos, (int)n, st));
    k_gather_tail<<<gpu_div_up(n, 256), 256, 0, st>>>((uint32_t *)sp->tidx, (dfr *)sp->tsc, (uint32_t *)num,
                                                      (uint32_t *)flags, (uint32_t *)pos, w, sel, off, (uint32_t)n);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(&sp->tail, num, 4, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    return CUZK_OK;
}

/* out (host g1_jac_t or g2_jac_t) = sum of the bases of the ones (bitmap sum) + Pippenger
 * over the tail. */
template <class F>
static int split_msm(struct gpu_ctx *ctx, void *out, const d_aff<F> *bases, const struct split *sp,
                     cudaStream_t st, struct cuzk_error *err)
{
    void *extra;
    int rc = gpu_scratch(ctx, SL_EXTRA, 4096, &extra, err);
    if (rc) return rc;
    d_xyzz<F> *ones_sum = (d_xyzz<F> *)extra;
    if (sizeof(F) == sizeof(dfp))
        rc = gpu_g1_sum_bitmap_dev(ctx, (g1x_d *)ones_sum, (const g1a_d *)bases, (const uint32_t *)sp->ones, sp->n, st, err);
    else
        rc = gpu_g2_sum_bitmap_dev(ctx, (g2x_d *)ones_sum, (const g2a_d *)bases, (const uint32_t *)sp->ones, sp->n, st, err);
    if (rc) return rc;
    if (sizeof(F) == sizeof(dfp))
        return gpu_g1_msm_dev(ctx, (g1_jac_t *)out, (const g1a_d *)bases, (const dfr *)sp->tsc,
                              (const uint32_t *)sp->tidx, sp->tail, (const g1x_d *)ones_sum, st, err);
    return gpu_g2_msm_dev(ctx, (g2_jac_t *)out, (const g2a_d *)bases, (const dfr *)sp->tsc,
                          (const uint32_t *)sp->tidx, sp->tail, (const g2x_d *)ones_sum, st, err);
}

/* ---- streamed key: a helper thread uploads the five key vectors in proof order (h, l, a,
 * b_g1, b_g2), in pieces of at most the memory plan's stream_chunk bytes (whole vectors when
 * the card has room for two of the largest), into nbuf (1..3) device buffers on ctx->up_st;
 * piece i goes to buffer i % nbuf once piece i - nbuf has been consumed, and each MSM runs
 * per piece and adds the results. Pageable host memory goes through the two pinned staging
 * chunks (memcpy into chunk j % 2 while chunk j - 1 is in DMA); pinned host memory is copied
 * directly. Hand-over is host-side (mutex + condition): the prover thread synchronises its
 * stream after every MSM anyway (lap), so "consumed" is exact. */
#define NVEC G16_PK_VECTORS

#define STREAM_MAX_PIECES 512

struct streamer {
    struct gpu_ctx *ctx;
    void *host[NVEC];
    size_t bytes[NVEC];
    /* Pieces, in proof order: vector k is pieces [first[k], first[k + 1]), each at most the
     * memory plan's stream_chunk bytes (whole vectors when two of the largest fit); piece i
     * of vector k holds its points [off[i], off[i] + pts[i]) and goes to buffer i % nbuf. */
    int npieces, first[NVEC + 1], vec[STREAM_MAX_PIECES];
    size_t off[STREAM_MAX_PIECES], pts[STREAM_MAX_PIECES], psize[NVEC];
    void *dev[3];
    size_t buf_bytes;   /* each of dev[0..nbuf) */
    int nbuf;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;      /* pieces [0, ready) are on the device */
    int consumed;   /* pieces [0, consumed) have been used by their MSM */
    bool stop;
    int rc;
    struct cuzk_error err;
    uint64_t t_start, t_end;
    uint64_t wait_ns;   /* prover thread blocked in bases_of */
    bool staged;
    pthread_t th;
    bool started;
};

static int stream_upload_piece(struct streamer *sm, int i, struct cuzk_error *err)
{
    struct gpu_ctx *ctx = sm->ctx;
    const int k = sm->vec[i];
    char *d = (char *)sm->dev[i % sm->nbuf];
    const char *h = (const char *)sm->host[k] + sm->off[i] * sm->psize[k];
    size_t n = sm->pts[i] * sm->psize[k];
    if (!n) return CUZK_OK;
    bool staged = false;
    int rc = gpu_h2d(ctx, GPU_STAGER_STREAM, d, h, n, ctx->up_st, &staged, err);
    if (rc) return rc;
    if (staged) sm->staged = true;
    CK(cudaStreamSynchronize(ctx->up_st));
    return CUZK_OK;
}

static void *streamer_main(void *arg)
{
    struct streamer *sm = (struct streamer *)arg;
    struct cuzk_error *err = &sm->err;
    int rc = CUZK_OK;
    cudaError_t e = cudaSetDevice(sm->ctx->dev);
    if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaSetDevice", __FILE__, __LINE__);
    sm->t_start = cuzk_now_ns();
    for (int i = 0; !rc && i < sm->npieces; i++) {
        pthread_mutex_lock(&sm->mu);
        while (!sm->stop && sm->consumed < i - sm->nbuf + 1) pthread_cond_wait(&sm->cv, &sm->mu);
        bool stop = sm->stop;
        pthread_mutex_unlock(&sm->mu);
        if (stop) break;
        rc = stream_upload_piece(sm, i, err);
        pthread_mutex_lock(&sm->mu);
        if (rc) sm->rc = rc;
        else sm->ready = i + 1;
        pthread_cond_broadcast(&sm->cv);
        pthread_mutex_unlock(&sm->mu);
    }
    if (rc) {
        pthread_mutex_lock(&sm->mu);
        sm->rc = rc;
        pthread_cond_broadcast(&sm->cv);
        pthread_mutex_unlock(&sm->mu);
    }
    sm->t_end = cuzk_now_ns();
    return NULL;
}

/* Buffers the streamer may take: stream.bufs, 1..3 (fewer than 3: tests and measurements). */
static int stream_bufs_max(void)
{
    const uint64_t v = gpu_tuning.stream_bufs;
    return v >= 1 && v <= 3 ? (int)v : 3;
}

/* Allocate the buffers and start the helper thread. Two buffers if VRAM allows, else one; a
 * third once the context has proved (its working memory is then at its steady size) and 6 GiB
 * stay free beside it (a second witness buffer and a spare): with three, vector k + 2 uploads
 * during vector k's MSM, so a 32 GiB PoRep key's a vector (12 GiB) arrives during the H MSM
 * instead of waiting behind the much shorter L MSM. */
static int streamer_start(struct streamer *sm, struct gpu_ctx *ctx, const struct g16_pk *pk,
                          struct cuzk_error *err)
{
    memset(sm, 0, sizeof *sm);
    sm->ctx = ctx;
    g16_pk_vectors(pk, sm->host, sm->bytes);
    const uint64_t npts[NVEC] = {pk->n_h, pk->n_l, pk->n_a, pk->n_b, pk->n_b};
    /* pieces of at most `chunk` bytes: the memory plan's, or stream.piece (test hook) */
    const size_t chunk = gpu_tuning.stream_piece ? (size_t)gpu_tuning.stream_piece : ctx->stream_chunk;
    size_t mx = 16;
    for (int k = 0; k < NVEC; k++) {
        sm->psize[k] = k == NVEC - 1 ? sizeof(g2_aff_t) : sizeof(g1_aff_t);
        size_t per = chunk ? chunk / sm->psize[k] : npts[k];
        if (per < 1) per = 1;
        if (npts[k] && (npts[k] + per - 1) / per > (uint64_t)(STREAM_MAX_PIECES / NVEC))
            per = (npts[k] + STREAM_MAX_PIECES / NVEC - 1) / (STREAM_MAX_PIECES / NVEC);
        sm->first[k] = sm->npieces;
        for (uint64_t o = 0; o < npts[k]; o += per) {
            const int i = sm->npieces++;
            sm->vec[i] = k;
            sm->off[i] = o;
            sm->pts[i] = npts[k] - o < per ? npts[k] - o : per;
            if (sm->pts[i] * sm->psize[k] > mx) mx = sm->pts[i] * sm->psize[k];
        }
    }
    sm->first[NVEC] = sm->npieces;
    sm->buf_bytes = mx;
    const int maxb = stream_bufs_max();
    int rc = gpu_stream_prepare(ctx, err);
    if (!rc) rc = gpu_scratch(ctx, SL_STREAM_BASES, mx, &sm->dev[0], err);
    if (rc) return rc;
    sm->nbuf = 1;   /* without a second buffer: upload after each MSM */
    if (maxb > 1) {
        rc = gpu_scratch(ctx, SL_STREAM_BASES2, mx, &sm->dev[1], err);
        if (!rc) sm->nbuf = 2;
        else if (rc != CUZK_E_GPU_NOMEM) return rc;
        else if (err) cuzk_error_clear(err);
    }
    pthread_mutex_lock(&ctx->wit_mu);
    const bool warm = ctx->proofs > 0;
    pthread_mutex_unlock(&ctx->wit_mu);
    if (sm->nbuf == 2 && maxb > 2 && warm) {
        const size_t spare = (size_t)6 << 30;
        if (ctx->slot_size[SL_STREAM_BASES3] >= mx || gpu_mem_check(ctx, mx + spare, "streamed key", NULL) == CUZK_OK)
            if (gpu_scratch(ctx, SL_STREAM_BASES3, mx, &sm->dev[2], NULL) == CUZK_OK) sm->nbuf = 3;
    }
    pthread_mutex_init(&sm->mu, NULL);
    pthread_cond_init(&sm->cv, NULL);
    if (pthread_create(&sm->th, NULL, streamer_main, sm) != 0) {
        pthread_cond_destroy(&sm->cv);
        pthread_mutex_destroy(&sm->mu);
        return cuzk_fail(err, CUZK_E_NOMEM, "gpu_g16_backend: cannot start the key upload thread");
    }
    sm->started = true;
    return CUZK_OK;
}

/* The pieces of vector k: [*i0, *i1) (resident: one piece, index k, the whole vector). */
static void pieces_of(const struct streamer *sm, int k, int *i0, int *i1)
{
    if (!sm) {
        *i0 = k, *i1 = k + 1;
        return;
    }
    *i0 = sm->first[k], *i1 = sm->first[k + 1];
}

/* Device bases of piece i: the resident vector (sm NULL: i is the vector; *off 0, *n all of
 * it), or wait for the helper thread's upload of piece i; *off, *n: its points. */
static int bases_of(struct streamer *sm, int i, const void **d, const void *resident, uint64_t n_all,
                    uint64_t *off, uint64_t *n, uint64_t *wait_ns, struct cuzk_error *err)
{
    if (!sm) {
        *d = resident;
        *off = 0, *n = n_all;
        return CUZK_OK;
    }
    uint64_t t0 = cuzk_now_ns();
    pthread_mutex_lock(&sm->mu);
    while (!sm->rc && sm->ready <= i) pthread_cond_wait(&sm->cv, &sm->mu);
    int rc = sm->rc;
    pthread_mutex_unlock(&sm->mu);
    *wait_ns += cuzk_now_ns() - t0;
    if (rc) {
        if (err) *err = sm->err;
        return rc;
    }
    *d = sm->dev[i % sm->nbuf];
    *off = sm->off[i], *n = sm->pts[i];
    return CUZK_OK;
}

/* A buffer that no piece from i on goes to (sm NULL or none: NULL): its last piece was consumed
 * before piece i's MSM, and nothing more is uploaded into it. */
static void *stream_idle_buffer(const struct streamer *sm, int i)
{
    for (int b = 0; sm && b < sm->nbuf; b++) {
        bool used = false;
        for (int p = i; p < sm->npieces && !used; p++) used = p % sm->nbuf == b;
        if (!used) return sm->dev[b];
    }
    return NULL;
}

static void stream_consumed(struct streamer *sm, int i)
{
    if (!sm) return;
    pthread_mutex_lock(&sm->mu);
    sm->consumed = i + 1;
    pthread_cond_broadcast(&sm->cv);
    pthread_mutex_unlock(&sm->mu);
}

static void streamer_stop(struct streamer *sm)
{
    if (!sm->started) return;
    pthread_mutex_lock(&sm->mu);
    sm->stop = true;
    pthread_cond_broadcast(&sm->cv);
    pthread_mutex_unlock(&sm->mu);
    pthread_join(sm->th, NULL);
    pthread_cond_destroy(&sm->cv);
    pthread_mutex_destroy(&sm->mu);
    sm->started = false;
}

static unsigned ceil_log2(uint64_t n)
{
    unsigned lg = 0;
    while (((uint64_t)1 << lg) < n) lg++;
    return lg;
}

static uint64_t lap(cudaStream_t st, uint64_t *t0)
{
    cudaStreamSynchronize(st);
    uint64_t now = cuzk_now_ns(), d = now - *t0;
    *t0 = now;
    return d;
}

static int prove_body(struct g16_msm_results *out, const struct g16_shape *s,
                      const struct g16_pk *pk, const struct g16_assignment *w,
                      const struct gpu_wit_packed *packed, struct gpu_ctx *ctx, struct streamer *sm,
                      struct g16_timings *t, struct cuzk_error *err);
static int prove_streamed(struct g16_msm_results *out, const struct g16_shape *s, const struct g16_pk *pk,
                          const struct g16_assignment *w, const struct gpu_wit_packed *packed,
                          struct gpu_ctx *ctx, struct g16_timings *t, struct cuzk_error *err);
static int prove_phases(struct g16_msm_results *out, const struct g16_shape *s, const struct g16_pk *pk,
                        struct gpu_ctx *ctx, struct streamer *sm, struct g16_timings *t, dwit dw,
                        void *d[3], unsigned lg, uint64_t N, uint64_t t0, struct cuzk_error *err);

/* ---- witness buffers and prefetch ----
 * A 32 GiB PoRep partition's witness is ~0.5 GiB packed (4 GiB of field elements), a long
 * packing and copy under the device lock when the backend uploads it itself. With two prover workers per GPU (the daemon's default), the next
 * worker's upload can run on the copy engine while the current proof's kernels run, so the
 * witness lives in one of two device buffers: the backend proves from one while
 * gpu_g16_stage_witness fills the other. A staged copy is matched by pointer identity and
 * sizes, and lives only until the backend call that takes it or gpu_g16_unstage_witness,
 * so a later witness at a reused address is never taken for it. */
static bool wit_match(const struct gpu_wit_slot *k, const struct g16_shape *s, const struct g16_assignment *w)
{
    return k->inputs == (const void *)w->inputs && k->aux == (const void *)w->aux &&
           k->n_in == s->n_inputs && k->n_aux == s->n_aux;
}

/* Under wit_mu: the staged copy of w, or NULL. */
static struct gpu_wit_slot *wit_staged(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w)
{
    for (int i = 0; i < GPU_WIT_SLOTS; i++)
        if (ctx->wit[i].state == WIT_READY && wit_match(&ctx->wit[i], s, w)) return &ctx->wit[i];
    return NULL;
}

static void wit_forget(struct gpu_wit_slot *k)
{
    k->state = WIT_FREE;
    k->inputs = k->aux = NULL;
    k->n_in = k->n_aux = 0;
    k->bytes = 0;
}

/* A packed witness's size varies a little from partition to partition: its buffer is
 * allocated with room to spare (a reallocation synchronises the device). */
static size_t wit_alloc_size(size_t bytes)
{
    const size_t g = (size_t)64 << 20, want = bytes + bytes / 16;
    return bytes <= g ? bytes : (want + g - 1) / g * g;
}

/* Grow slot k's buffer to `bytes` (its state is BUSY: no other thread touches it). */
static int wit_reserve(struct gpu_ctx *ctx, struct gpu_wit_slot *k, size_t bytes, struct cuzk_error *err)
{
    if (!k->done) CK(cudaEventCreateWithFlags(&k->done, cudaEventDisableTiming));
    if (k->cap >= bytes) return CUZK_OK;
    if (k->d) cudaFree(k->d);
    k->d = NULL;
    k->cap = 0;
    const size_t want = wit_alloc_size(bytes);
    int rc = gpu_malloc(ctx, &k->d, want, "witness buffer", err);
    if (!rc) k->cap = want;
    return rc;
}

/* Device bytes of the witness buffers other than k (caps change only under pf_mu or the
 * device lock). */
static size_t wit_others(const struct gpu_ctx *ctx, const struct gpu_wit_slot *k)
{
    size_t n = 0;
    for (int i = 0; i < GPU_WIT_SLOTS; i++)
        if (&ctx->wit[i] != k) n += ctx->wit[i].cap;
    return n;
}

/* Under wit_mu: the slot for witness w of `bytes`: its staged copy (*hit), else a free slot
 * that already has the room, else any free slot, else (evict) the oldest copy staged for
 * another witness; NULL when none. */
static struct gpu_wit_slot *wit_pick(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w,
                                     size_t bytes, bool evict, bool *hit)
{
    struct gpu_wit_slot *k = wit_staged(ctx, s, w);
    *hit = k != NULL;
    if (k) return k;
    for (int i = 0; i < GPU_WIT_SLOTS && !k; i++)
        if (ctx->wit[i].state == WIT_FREE && ctx->wit[i].cap >= bytes) k = &ctx->wit[i];
    for (int i = 0; i < GPU_WIT_SLOTS && !k; i++)
        if (ctx->wit[i].state == WIT_FREE) k = &ctx->wit[i];
    if (k || !evict) return k;
    for (int i = 0; i < GPU_WIT_SLOTS; i++)
        if (ctx->wit[i].state == WIT_READY && (!k || ctx->wit[i].seq < k->seq)) k = &ctx->wit[i];
    return k;
}

size_t gpu_wit_bytes(const struct g16_shape *s) { return ((size_t)s->n_inputs + s->n_aux) * sizeof(fr_t); }

/* Pinned buffer *p of at least `bytes` (grow-only, with an eighth to spare) */
static int wpack_grow(void **p, size_t *cap, size_t bytes, struct cuzk_error *err)
{
    if (*cap >= bytes) return CUZK_OK;
    gpu_host_free_pinned(*p);
    *p = NULL;
    *cap = 0;
    const size_t want = bytes + bytes / 8;
    int rc = gpu_host_alloc_pinned(p, want, err);
    if (!rc) *cap = want;
    return rc;
}

int gpu_wit_pack(struct gpu_ctx *ctx, int which, const struct g16_shape *s, const struct g16_assignment *w,
                 struct gpu_wit_packed *p, struct cuzk_error *err)
{
    struct gpu_wpack_buf *B = &ctx->wpack[which];
    const uint64_t n = (uint64_t)s->n_inputs + s->n_aux, nblk = wpack_blocks(n), groups = wpack_groups(n);
    if (n > UINT32_MAX)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu witness: %llu values, at most 2^32 - 1 are supported",
                         (unsigned long long)n);
    if (!B->done) CK(cudaEventCreateWithFlags(&B->done, cudaEventDisableTiming));
    CK(cudaEventSynchronize(B->done));   /* the buffers' last upload has read them */
    int rc = wpack_grow((void **)&B->blk, &B->blk_cap, (nblk ? nblk : 1) * sizeof(wpack_blk), err);
    if (!rc && B->group_cap < groups) {
        uint64_t *g = (uint64_t *)realloc(B->group, groups * sizeof *g);
        if (!g) rc = cuzk_fail(err, CUZK_E_NOMEM, "gpu witness: host allocation of %llu group offsets failed",
                               (unsigned long long)groups);
        else B->group = g, B->group_cap = groups;
    }
    if (rc) return rc;
    struct pool *pool = pool_default();
    const uint64_t others = wpack_classify(B->blk, B->group, w->inputs, s->n_inputs, w->aux, s->n_aux, pool);
    rc = wpack_grow((void **)&B->val, &B->val_cap, (others ? others : 1) * sizeof(fr_t), err);
    if (rc) return rc;
    wpack_fill(B->val, B->blk, B->group, w->inputs, s->n_inputs, w->aux, s->n_aux, pool);
    p->blk = B->blk;
    p->val = B->val;
    p->nblk = nblk;
    p->n_other = others;
    p->valoff = (nblk * sizeof(wpack_blk) + 255) & ~(size_t)255;
    p->bytes = p->valoff + (others ? others : 1) * sizeof(fr_t);
    return CUZK_OK;
}

int gpu_wit_put(struct gpu_ctx *ctx, int which, void *d, const struct gpu_wit_packed *p, cudaStream_t st,
                struct cuzk_error *err)
{
    if (p->nblk) CK(cudaMemcpyAsync(d, p->blk, p->nblk * sizeof(wpack_blk), cudaMemcpyHostToDevice, st));
    if (p->n_other)
        CK(cudaMemcpyAsync((char *)d + p->valoff, p->val, p->n_other * sizeof(fr_t), cudaMemcpyHostToDevice, st));
    CK(cudaEventRecord(ctx->wpack[which].done, st));
    return CUZK_OK;
}

void gpu_wpack_free(struct gpu_ctx *ctx)
{
    for (int i = 0; i < GPU_STAGERS; i++) {
        struct gpu_wpack_buf *B = &ctx->wpack[i];
        gpu_host_free_pinned(B->blk);
        gpu_host_free_pinned(B->val);
        if (B->done) cudaEventDestroy(B->done);
        free(B->group);
        memset(B, 0, sizeof *B);
    }
}

extern "C" int gpu_g16_stage_witness(struct gpu_ctx *ctx, const struct g16_shape *s,
                                     const struct g16_assignment *w, struct cuzk_error *err)
{
    if (!ctx || !s || !w) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_g16_stage_witness: NULL argument");
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    pthread_mutex_lock(&ctx->pf_mu);
    pthread_mutex_lock(&ctx->wit_mu);
    bool hit = wit_staged(ctx, s, w) != NULL, any_room = false;
    for (int i = 0; i < GPU_WIT_SLOTS; i++)
        if (ctx->wit[i].state == WIT_FREE && ctx->wit[i].cap) any_room = true;
    const bool cold = ctx->proofs == 0;
    pthread_mutex_unlock(&ctx->wit_mu);
    if (hit) {
        pthread_mutex_unlock(&ctx->pf_mu);
        return CUZK_OK;   /* already staged */
    }
    if (cold && !any_room) {   /* declined below anyway: spare the packing */
        pthread_mutex_unlock(&ctx->pf_mu);
        return cuzk_fail(err, CUZK_E_UNSUPPORTED,
                         "gpu_g16_stage_witness: GPU %d has not proved yet (its working memory is not sized)", ctx->dev);
    }
    /* pack first (on the CPU, beside the kernels of the proof that holds the GPU): the slot
     * is chosen by the packed size */
    struct gpu_wit_packed pk;
    rc = gpu_wit_pack(ctx, GPU_STAGER_PREFETCH, s, w, &pk, err);
    if (rc) {
        pthread_mutex_unlock(&ctx->pf_mu);
        return rc;
    }
    const size_t bytes = pk.bytes;
    pthread_mutex_lock(&ctx->wit_mu);
    const bool warm = ctx->proofs > 0;
    struct gpu_wit_slot *k = wit_pick(ctx, s, w, bytes, false, &hit);
    if (k && !hit) k->state = WIT_BUSY;
    pthread_mutex_unlock(&ctx->wit_mu);
    if (hit) {
        pthread_mutex_unlock(&ctx->pf_mu);
        return CUZK_OK;   /* already staged */
    }
    if (!k) {
        pthread_mutex_unlock(&ctx->pf_mu);
        return cuzk_fail(err, CUZK_E_BUSY, "gpu_g16_stage_witness: both witness buffers of GPU %d are in use", ctx->dev);
    }
    if (k->cap < bytes) {
        /* a new buffer only once the context has proved (its scratch is then at its steady
         * size), and only with room to spare: the proofs' working memory comes first */
        const size_t spare = (size_t)1 << 30;
        if (!warm)
            rc = cuzk_fail(err, CUZK_E_UNSUPPORTED,
                           "gpu_g16_stage_witness: GPU %d has not proved yet (its working memory is not sized)", ctx->dev);
        else if (ctx->plan_wit == 1 && wit_others(ctx, k) + wit_alloc_size(bytes) > ctx->plan_wit_bytes)
            rc = cuzk_fail(err, CUZK_E_GPU_NOMEM, "gpu_g16_stage_witness: the memory plan of GPU %d has "
                           "room for one witness buffer, and this one would not fit beside the other in it", ctx->dev);
        else   /* the slot's smaller buffer is given back first */
            rc = gpu_mem_check(ctx, wit_alloc_size(bytes) + spare - k->cap,
                               "gpu_g16_stage_witness: second witness buffer (1 GiB spare included)", err);
    }
    if (!rc) rc = wit_reserve(ctx, k, bytes, err);   /* grows the buffer, creates its event */
    if (!rc && !ctx->pf_st) {
        cudaError_t e = cudaStreamCreateWithFlags(&ctx->pf_st, cudaStreamNonBlocking);
        if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaStreamCreate(prefetch)", __FILE__, __LINE__);
    }
    if (!rc) rc = gpu_wit_put(ctx, GPU_STAGER_PREFETCH, k->d, &pk, ctx->pf_st, err);
    if (!rc) {
        cudaError_t e = cudaEventRecord(k->done, ctx->pf_st);
        if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaEventRecord(witness)", __FILE__, __LINE__);
    }
    if (rc && ctx->pf_st) cudaStreamSynchronize(ctx->pf_st);   /* no partial copy left in flight */
    pthread_mutex_lock(&ctx->wit_mu);
    if (rc) {
        wit_forget(k);
    } else {
        k->state = WIT_READY;
        k->bytes = pk.bytes;
        k->valoff = pk.valoff;
        k->inputs = w->inputs;
        k->aux = w->aux;
        k->n_in = s->n_inputs;
        k->n_aux = s->n_aux;
        k->seq = ++ctx->wit_seq;
    }
    pthread_mutex_unlock(&ctx->wit_mu);
    pthread_mutex_unlock(&ctx->pf_mu);
    return rc;
}

extern "C" void gpu_g16_unstage_witness(struct gpu_ctx *ctx, const struct g16_shape *s,
                                        const struct g16_assignment *w)
{
    if (!ctx || !s || !w) return;
    pthread_mutex_lock(&ctx->wit_mu);
    struct gpu_wit_slot *k = wit_staged(ctx, s, w);
    if (k) {
        /* a pinned source is read by the DMA itself: the caller may free it on return */
        cudaEventSynchronize(k->done);
        wit_forget(k);
    }
    pthread_mutex_unlock(&ctx->wit_mu);
}

extern "C" bool gpu_ctx_last_witness_staged(const struct gpu_ctx *ctx) { return ctx && ctx->last_wit_staged; }

/* The backend's witness on the device: the staged copy of w if there is one (st waits for its
 * upload), else a free buffer (or the oldest staged copy of another witness) filled on st from
 * *packed (w packed into GPU_STAGER_MAIN's buffers by the caller), or from a packing made here. */
static int wit_acquire(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w,
                       const struct gpu_wit_packed *packed, cudaStream_t st, struct gpu_wit_slot **out,
                       struct cuzk_error *err)
{
    pthread_mutex_lock(&ctx->wit_mu);
    bool hit = wit_staged(ctx, s, w) != NULL;
    pthread_mutex_unlock(&ctx->wit_mu);
    /* not staged: packed here, under the device lock (the staged path packs beside the
     * previous proof's kernels) */
    struct gpu_wit_packed pk;
    memset(&pk, 0, sizeof pk);
    if (!hit && packed) {
        pk = *packed;
    } else if (!hit) {
        int rc = gpu_wit_pack(ctx, GPU_STAGER_MAIN, s, w, &pk, err);
        if (rc) return rc;
    }
    pthread_mutex_lock(&ctx->wit_mu);
    struct gpu_wit_slot *k = wit_pick(ctx, s, w, pk.bytes, true, &hit);
    if (k) {
        if (!hit) wit_forget(k);
        k->state = WIT_BUSY;
    }
    ctx->last_wit_staged = hit;
    pthread_mutex_unlock(&ctx->wit_mu);
    if (!k)
        return cuzk_fail(err, CUZK_E_BUSY,
                         "gpu_g16_backend: both witness buffers of GPU %d are in use (one backend call per "
                         "context at a time: serialise callers with gpu_ctx_lock)", ctx->dev);
    int rc = wit_reserve(ctx, k, pk.bytes, err);   /* (creates the event; a hit has the room) */
    /* st waits for the buffer's last staged upload: the copy it proves from, or an evicted
     * copy still in flight that the new upload must not race (no-op when none was recorded) */
    if (!rc) {
        cudaError_t e = cudaStreamWaitEvent(st, k->done, 0);
        if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaStreamWaitEvent(witness)", __FILE__, __LINE__);
    }
    if (!rc && !hit) {
        rc = gpu_wit_put(ctx, GPU_STAGER_MAIN, k->d, &pk, st, err);
        k->bytes = pk.bytes;
        k->valoff = pk.valoff;
    }
    ctx->wit_cur_bytes = k->bytes;   /* packed bytes, staged or not: the MSM reserve sizes by them */
    if (rc) {
        pthread_mutex_lock(&ctx->wit_mu);
        wit_forget(k);
        pthread_mutex_unlock(&ctx->wit_mu);
        return rc;
    }
    *out = k;
    return CUZK_OK;
}

static void wit_release(struct gpu_ctx *ctx, struct gpu_wit_slot *k, bool proved)
{
    pthread_mutex_lock(&ctx->wit_mu);
    wit_forget(k);
    if (proved) ctx->proofs++;
    pthread_mutex_unlock(&ctx->wit_mu);
}

/* The checks every backend call makes before it touches the device, which it selects. */
static int backend_args(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_pk *pk,
                        struct cuzk_error *err)
{
    if (!ctx) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_g16_backend: ctx is NULL (pass a struct gpu_ctx *)");
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    unsigned lg = ceil_log2(pk->n_h);
    uint64_t N = (uint64_t)1 << lg;
    if (lg > 28 || s->n_constraints > N || pk->n_h > N)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_g16_backend: %llu constraints do not fit the key's domain 2^%u",
                         (unsigned long long)s->n_constraints, lg);
    if (pk->n_l != s->n_aux || pk->n_a != s->n_inputs + s->a_aux_count ||
        pk->n_b != s->b_inp_count + s->b_aux_count)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "gpu_g16_backend: key does not match shape (l %llu vs aux %u, a %llu vs %llu, b %llu vs %llu)",
                         (unsigned long long)pk->n_l, s->n_aux, (unsigned long long)pk->n_a,
                         (unsigned long long)(s->n_inputs + s->a_aux_count), (unsigned long long)pk->n_b,
                         (unsigned long long)(s->b_inp_count + s->b_aux_count));
    return CUZK_OK;
}

extern "C" int gpu_g16_backend(struct g16_msm_results *out, const struct g16_shape *s,
                               const struct g16_pk *pk, const struct g16_assignment *w, void *vctx,
                               struct g16_timings *t, struct cuzk_error *err)
{
    struct gpu_ctx *ctx = (struct gpu_ctx *)vctx;
    int rc = backend_args(ctx, s, pk, err);
    if (rc) return rc;
    rc = gpu_ctx_load_shape(ctx, s, err);
    if (rc) return rc;
    bool resident = false;
    struct gpu_wit_packed wp;
    const struct gpu_wit_packed *packed = NULL;   /* w's packing, when made here */
    if (!ctx->opt.stream_key) {
        if (ctx->pk != pk && ctx->wit_hint_shape != s) {
            /* a new circuit's key is planned in units of this witness's packed size (with the
             * slack its buffer gets); the proof uploads this packing unless w is staged */
            rc = gpu_wit_pack(ctx, GPU_STAGER_MAIN, s, w, &wp, err);
            if (rc) return rc;
            packed = &wp;
            ctx->wit_hint = wit_alloc_size(wp.bytes);
            ctx->wit_hint_shape = s;
        }
        rc = gpu_ctx_load_pk(ctx, pk, err);
        resident = rc == CUZK_OK;
        if (rc == CUZK_E_GPU_NOMEM && ctx->plan_refused[0])
            return cuzk_fail(err, CUZK_E_UNSUPPORTED, "GPU %d is too small for this circuit: %s", ctx->dev,
                             ctx->plan_refused);
        if (rc == CUZK_E_GPU_NOMEM) rc = CUZK_OK;   /* stream the key instead */
        if (rc) return rc;
    }
    if (err) cuzk_error_clear(err);
    memset(&ctx->stream_stats, 0, sizeof ctx->stream_stats);
    rc = resident ? prove_body(out, s, pk, w, packed, ctx, NULL, t, err)
                  : prove_streamed(out, s, pk, w, packed, ctx, t, err);
    if (rc == CUZK_E_GPU_NOMEM) gpu_scratch_release(ctx);   /* a retry plans its scratch afresh */
    return rc;
}

/* A proof of another circuit beside the resident key and shape, which stay as they are: the
 * engine's prove_beside (a deadline proof during a batch does not evict the batch's key). The
 * other circuit's key is streamed and its shape loaded for this call only, as the memory plan
 * (gpu_plan.h) places them in what the context may use beside the resident ones; scratch and
 * witness buffers are shared. CUZK_E_GPU_NOMEM, nothing changed, when no plan fits beside
 * them. Afterwards what only this circuit needed goes back (its shape, the streaming buffers,
 * a witness buffer grown past the resident plan's room), so the resident key's proofs find
 * the memory their plan counted on. */
static const enum gpu_slot stream_slots[3] = {SL_STREAM_BASES, SL_STREAM_BASES2, SL_STREAM_BASES3};

extern "C" int gpu_g16_backend_beside(struct g16_msm_results *out, const struct g16_shape *s,
                                      const struct g16_pk *pk, const struct g16_assignment *w, void *vctx,
                                      struct g16_timings *t, struct cuzk_error *err)
{
    struct gpu_ctx *ctx = (struct gpu_ctx *)vctx;
    int rc = backend_args(ctx, s, pk, err);
    if (rc) return rc;
    if (!ctx->pk || ctx->pk == pk || ctx->shape == s)   /* nothing of another circuit to keep */
        return gpu_g16_backend(out, s, pk, w, ctx, t, err);
    /* the plan: the memory free now plus the scratch and witness buffers the proof reuses */
    size_t fr = 0;
    rc = gpu_mem_usable(ctx, &fr, err);
    if (rc) return rc;
    uint64_t held = 0;
    if (ctx->tw_lg) held += ((size_t)1 << (ctx->tw_lg - 1)) * sizeof(fr_t);
    for (int sl = 0; sl < SL__COUNT; sl++) held += ctx->slot_size[sl];
    pthread_mutex_lock(&ctx->wit_mu);
    for (int i = 0; i < GPU_WIT_SLOTS; i++) held += ctx->wit[i].cap;
    const struct gpu_wit_slot *staged = wit_staged(ctx, s, w);
    const size_t staged_bytes = staged ? staged->cap : 0;
    pthread_mutex_unlock(&ctx->wit_mu);
    size_t mat = 0, rest = 0;
    gpu_shape_bytes(s, &mat, &rest);
    struct gpu_plan_in in;
    memset(&in, 0, sizeof in);
    in.mem = fr > GPU_MEM_MARGIN ? fr - GPU_MEM_MARGIN + held : held;
    in.mem = in.mem > rest ? in.mem - rest : 0;   /* the coefficient table and positions stay on the device */
    void *hv[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    g16_pk_vectors(pk, hv, nb);
    size_t largest = 0;
    for (int k = 0; k < G16_PK_VECTORS; k++) {
        in.key[k] = nb[k];
        if (nb[k] > largest) largest = nb[k];
    }
    in.shape = mat;
    in.domain = (uint64_t)1 << ceil_log2(pk->n_h);
    /* the witness as it is on the device: its staged copy, else its packing (made now, and
     * uploaded by the proof) */
    struct gpu_wit_packed wp;
    const struct gpu_wit_packed *packed = NULL;
    if (staged_bytes) {
        in.witness = staged_bytes;
    } else {
        rc = gpu_wit_pack(ctx, GPU_STAGER_MAIN, s, w, &wp, err);
        if (rc) return rc;
        packed = &wp;
        in.witness = wit_alloc_size(wp.bytes);
    }
    struct gpu_plan plan;
    rc = gpu_plan_make(&in, &plan, err);
    if (rc) return cuzk_fail_prefix(err, rc, "GPU %d: beside the resident key", ctx->dev);
    struct gpu_shape_state resident;
    gpu_shape_set_aside(ctx, &resident);
    ctx->plan_wit = plan.witness_buffers;
    ctx->plan_hvec = plan.h_vectors;
    ctx->plan_wit_bytes = in.witness;
    /* streamed whatever the plan says: a key that would fit whole is still not kept */
    ctx->stream_chunk = plan.key_mode == GPU_KEY_STREAMED ? plan.stream_chunk : largest;
    ctx->wit_hint = 0;
    ctx->wit_hint_shape = NULL;
    rc = gpu_ctx_load_shape(ctx, s, err);
    if (!rc && plan.shape_mapped) rc = gpu_shape_map_host(ctx, err);
    if (!rc) {
        if (err) cuzk_error_clear(err);
        memset(&ctx->stream_stats, 0, sizeof ctx->stream_stats);
        rc = prove_streamed(out, s, pk, w, packed, ctx, t, err);
    }
    cudaDeviceSynchronize();   /* nothing of this proof still reads what goes back now */
    gpu_shape_put_back(ctx, &resident);
    if (!ctx->opt.stream_key)   /* the resident key is not streamed: its buffers are dead weight */
        for (const enum gpu_slot sl : stream_slots)
            if (ctx->slot[sl]) {
                cudaFree(ctx->slot[sl]);
                ctx->slot[sl] = NULL;
                ctx->slot_size[sl] = 0;
            }
    pthread_mutex_lock(&ctx->wit_mu);
    for (int i = 0; i < GPU_WIT_SLOTS; i++) {
        struct gpu_wit_slot *k = &ctx->wit[i];
        if (k->state == WIT_FREE && k->d && ctx->plan_wit_bytes && k->cap > ctx->plan_wit_bytes) {
            cudaFree(k->d);
            k->d = NULL;
            k->cap = 0;
        }
    }
    pthread_mutex_unlock(&ctx->wit_mu);
    if (rc == CUZK_E_GPU_NOMEM) gpu_scratch_release(ctx);   /* a retry plans its scratch afresh */
    return rc;
}

/* prove_body with the key streamed by a helper thread; its figures in ctx->stream_stats. */
static int prove_streamed(struct g16_msm_results *out, const struct g16_shape *s, const struct g16_pk *pk,
                          const struct g16_assignment *w, const struct gpu_wit_packed *packed,
                          struct gpu_ctx *ctx, struct g16_timings *t, struct cuzk_error *err)
{
    struct streamer sm;
    int rc = streamer_start(&sm, ctx, pk, err);
    if (rc) return rc;
    rc = prove_body(out, s, pk, w, packed, ctx, &sm, t, err);
    streamer_stop(&sm);
    struct gpu_stream_stats *ss = &ctx->stream_stats;
    for (int k = 0; k < NVEC; k++) ss->bytes += sm.bytes[k];
    ss->upload_ns = sm.t_end > sm.t_start ? sm.t_end - sm.t_start : 0;
    ss->wait_ns = sm.wait_ns;
    ss->buffers = sm.nbuf;
    ss->staged = sm.staged;
    return rc;
}

/* SpMV, h pipeline and the five MSMs; sm non-NULL: the key is streamed by sm; packed
 * (nullable): w already packed by the caller (wit_acquire). */
static int prove_body(struct g16_msm_results *out, const struct g16_shape *s,
                      const struct g16_pk *pk, const struct g16_assignment *w,
                      const struct gpu_wit_packed *packed, struct gpu_ctx *ctx, struct streamer *sm,
                      struct g16_timings *t, struct cuzk_error *err)
{
    int rc = CUZK_OK;
    unsigned lg = ceil_log2(pk->n_h);
    uint64_t N = (uint64_t)1 << lg;
    cudaStream_t st = ctx->st[0];
    uint64_t t0 = cuzk_now_ns();
    /* the h pipeline's domain vectors: three, or two when the memory plan says so (c is then
     * formed in b's vector once a = a b) */
    const int nv = ctx->plan_hvec == 2 || gpu_tuning.h_two ? 2 : 3;
    void *d[3] = {NULL, NULL, NULL};
    for (int i = 0; !rc && i < nv; i++) rc = gpu_scratch(ctx, (enum gpu_slot)(SL_NTT_A + i), N * sizeof(fr_t), &d[i], err);
    if (rc) return rc;
    /* the witness (~0.5 GiB packed for a 32 GiB PoRep partition): already staged by
     * gpu_g16_stage_witness, or packed and uploaded now */
    struct gpu_wit_slot *ws = NULL;
    rc = wit_acquire(ctx, s, w, packed, st, &ws, err);
    if (rc) return rc;
    rc = prove_phases(out, s, pk, ctx, sm, t, gpu_wit_dev(ws->d, ws->valoff), d, lg, N, t0, err);
    if (!rc) {
        cudaError_t e = cudaStreamSynchronize(st);
        if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaStreamSynchronize", __FILE__, __LINE__);
    } else {
        cudaDeviceSynchronize();   /* no kernel of this proof may still read the buffer */
    }
    wit_release(ctx, ws, rc == CUZK_OK);
    return rc;
}

static void msm_loan(struct gpu_ctx *ctx, enum gpu_slot sl, void *p, size_t bytes);

/* A streamed key's buffer that its last pieces no longer need (the whole-vector plan's b_g1
 * buffer during B_G2) holds the batch-affine rounds of the tail MSMs: their first and second
 * points and prefix products, in the rounds' 2 : 1 : 1 proportion of bytes. A 90 M-point G2
 * MSM beside a streamed WindowPoSt key has no other room for them (gpu.md). */
static void msm_loan_idle_buffer(struct gpu_ctx *ctx, const struct streamer *sm, int i)
{
    char *b = (char *)stream_idle_buffer(sm, i);
    if (!b) return;
    const size_t q = sm->buf_bytes / 4 / 256 * 256;
    msm_loan(ctx, SL_AFF_PTS0, b, 2 * q);
    msm_loan(ctx, SL_AFF_PTS1, b + 2 * q, q);
    msm_loan(ctx, SL_AFF_PRE, b + 3 * q, q);
}

static void jac_add(g1_jac_t *out, const g1_jac_t *p) { g1_jac_add(out, out, p); }
static void jac_add(g2_jac_t *out, const g2_jac_t *p) { g2_jac_add(out, out, p); }

/* One MSM of the L, A, B_G1 or B_G2 kind over key vector k (bases resident, or streamed in
 * pieces whose results are added up): scalars w[sel[j]] (sel NULL: w[off + j]) for its points
 * j; every piece splits its own scalars into 0/1 and the rest. *sp, when given and the vector
 * is one piece, is a split of the whole vector to reuse (B_G2 takes B_G1's); otherwise the
 * split is made here and left in *sp. */
template <class F, class J>
static int vec_msm(struct gpu_ctx *ctx, struct streamer *sm, int k, J *out, const void *resident,
                   uint64_t n_all, dwit dw, const uint32_t *sel, uint32_t off, struct split *sp,
                   bool reuse, cudaStream_t st, struct cuzk_error *err)
{
    int i0, i1, rc = CUZK_OK;
    pieces_of(sm, k, &i0, &i1);
    uint64_t *wait_ns = sm ? &sm->wait_ns : NULL, unused = 0;
    for (int i = i0; !rc && i < i1; i++) {
        const void *b;
        uint64_t p0, np;
        rc = bases_of(sm, i, &b, resident, n_all, &p0, &np, wait_ns ? wait_ns : &unused, err);
        if (!rc) msm_loan_idle_buffer(ctx, sm, i);
        if (!rc && !(reuse && i1 - i0 == 1))
            rc = split_scalars(ctx, sp, dw, sel ? sel + p0 : NULL, sel ? 0 : off + (uint32_t)p0, np, st, err);
        J part;
        if (!rc) rc = split_msm<F>(ctx, i == i0 ? (void *)out : (void *)&part, (const d_aff<F> *)b, sp, st, err);
        if (!rc && i > i0) jac_add(out, &part);
        if (!rc) CK(cudaStreamSynchronize(st));   /* the piece's buffer is free once its MSM ran */
        stream_consumed(sm, i);
    }
    return rc;
}

/* The L, A, B_G1 and B_G2 MSMs (they need the witness, not h), in proof order on stream st;
 * with sm the key's vectors 1..4 come from the streamer. */
static int prove_tail(struct g16_msm_results *out, const struct g16_shape *s, const struct g16_pk *pk,
                      struct gpu_ctx *ctx, struct streamer *sm, struct g16_timings *t, dwit dw,
                      cudaStream_t st, struct cuzk_error *err)
{
    uint64_t t0 = cuzk_now_ns(), dt;
    struct split sp;
    int rc = vec_msm<dfp>(ctx, sm, 1, &out->l, ctx->d_l, pk->n_l, dw, NULL, s->n_inputs, &sp, false, st, err);
    if (rc) return rc;
    dt = lap(st, &t0);
    if (t) t->msm_l_ns += dt;

    rc = vec_msm<dfp>(ctx, sm, 2, &out->a, ctx->d_a, pk->n_a, dw, ctx->d_a_sel, 0, &sp, false, st, err);
    if (rc) return rc;
    dt = lap(st, &t0);
    if (t) t->msm_a_ns += dt;

    /* B_G1 and B_G2 have the same scalars: one split for both when each is one piece */
    rc = vec_msm<dfp>(ctx, sm, 3, &out->b_g1, ctx->d_bg1, pk->n_b, dw, ctx->d_b_sel, 0, &sp, false, st, err);
    if (rc) return rc;
    dt = lap(st, &t0);
    if (t) t->msm_b_g1_ns += dt;

    int i0, i1;
    pieces_of(sm, 3, &i0, &i1);
    const bool one = i1 - i0 == 1;
    rc = vec_msm<dfp2>(ctx, sm, 4, &out->b_g2, ctx->d_bg2, pk->n_b, dw, ctx->d_b_sel, 0, &sp, one, st, err);
    if (rc) return rc;
    dt = lap(st, &t0);
    if (t) t->msm_b_g2_ns += dt;
    CK(cudaStreamSynchronize(st));
    return CUZK_OK;
}

/* Loans for the prover's MSMs: GPU memory that is dead from the H MSM on, handed out by
 * gpu_scratch for named scratch slots instead of slots of their own (decisions.md, "The
 * prover's MSMs borrow the h pipeline's dead memory"). Beside a resident 32 GiB-PoRep key the
 * H MSM's 4-window sort group does not fit without them: it would sort 2 windows at a time,
 * and a card of 80 GB has even less to spare.
 * - the two h pipeline vectors other than h (16 N bytes per half): the sort's keys and values;
 * - h's own vector, once the H MSM has read it: the 0/1 split's tail scalars (L, A, B);
 * - the first half of the h pipeline's coset factor table (32 N bytes; the next h pipeline
 *   rebuilds that half in place if a loan of it was taken, a short kernel): the rounds' pairs
 *   and the split's flags, positions and tail indices.
 * They last through the L, A and B MSMs: every kernel of them runs on st, in order, before the
 * next proof's SpMV and h pipeline write these buffers again. A slot's own buffer of 256 MiB or
 * more that a loan at least as large replaces is given back (it would be dead weight; small
 * ones stay, so alternating small and large circuits do not re-allocate).
 * The reserve: a large window group must leave room for what the prover still allocates: the
 * second witness buffer (staged from the first proof on, with 1 GiB spare) unless it exists,
 * and 1 GiB for the later MSMs' own growth; the generic 8 GiB reserve does not know that. */
static void msm_loan(struct gpu_ctx *ctx, enum gpu_slot sl, void *p, size_t bytes)
{
    ctx->loan[sl] = p;
    ctx->loan_size[sl] = bytes;
    ctx->loan_used[sl] = false;
}

/* The bytes of h pipeline vector v (its scratch slot's size, which may exceed N elements). */
static size_t vec_bytes(const struct gpu_ctx *ctx, const void *v, uint64_t N)
{
    for (int s = SL_NTT_A; s <= SL_NTT_C; s++)
        if (ctx->slot[s] == v) return ctx->slot_size[s];
    return (size_t)N * sizeof(fr_t);
}

static int msm_loans_give(struct gpu_ctx *ctx, void *d[3], const dfr *hc, unsigned lg, uint64_t tail_pts,
                          struct cuzk_error *err)
{
    const uint64_t N = (uint64_t)1 << lg;
    const size_t half = (size_t)N * sizeof(fr_t) / 2;
    void *idle[2];
    int k = 0;
    for (int i = 0; i < 3 && k < 2; i++)
        if (d[i] && (const void *)d[i] != (const void *)hc) idle[k++] = d[i];
    const bool tab = ctx->shift_tab && ctx->shift_lg == lg && !ctx->shift_stale;
    if (k >= 1) {
        /* keys in one idle vector, values in the other; with two h vectors only the keys are
         * lent (the values come from free memory). Without the coset table (a card without
         * room for it) the sort buffers get one window's worth each (4 N bytes) and the rest
         * of each vector holds the batch-affine rounds' second points and prefix products:
         * the H MSM's rounds then need only their first points and pairs from free memory,
         * which on an 80 GB card beside the resident key is what lets them run at all. */
        const size_t q = tab || k < 2 ? half : (size_t)N * 4;
        msm_loan(ctx, SL_KEYS0, idle[0], q);
        msm_loan(ctx, SL_KEYS1, (char *)idle[0] + q, q);
        if (k == 2) {
            msm_loan(ctx, SL_VALS0, idle[1], q);
            msm_loan(ctx, SL_VALS1, (char *)idle[1] + q, q);
            if (q < half) {
                msm_loan(ctx, SL_AFF_PTS1, (char *)idle[0] + 2 * q, vec_bytes(ctx, idle[0], N) - 2 * q);
                msm_loan(ctx, SL_AFF_PRE, (char *)idle[1] + 2 * q, vec_bytes(ctx, idle[1], N) - 2 * q);
            }
        }
        /* split_scalars asks for it only in the tail, after the H MSM's kernels on st */
        msm_loan(ctx, SL_TAIL_SC, (void *)hc, (size_t)N * sizeof(fr_t));
        if (tab) {
            /* the shift half, 32 N bytes: pairs 17 N (o1 <= (m + buckets) / 2 pairs of 8
             * bytes, m <= 4 N), flags, positions and tail indices 4 N each */
            char *t = (char *)ctx->shift_tab;
            msm_loan(ctx, SL_AFF_PAIR, t, 17 * N);
            msm_loan(ctx, SL_FLAGS, t + 17 * N, 4 * N);
            msm_loan(ctx, SL_POS, t + 21 * N, 4 * N);
            msm_loan(ctx, SL_TAIL_IDX, t + 25 * N, 4 * N);
        }
        for (int sl = 0; sl < SL__COUNT; sl++)
            if (ctx->loan[sl] && ctx->slot[sl] && ctx->slot_size[sl] >= ((size_t)256 << 20) &&
                ctx->loan_size[sl] >= ctx->slot_size[sl]) {
                CK(cudaFree(ctx->slot[sl]));   /* synchronises the device: once per such history */
                ctx->slot[sl] = NULL;
                ctx->slot_size[sl] = 0;
            }
    }
    const size_t wb = wit_alloc_size(ctx->wit_cur_bytes);
    bool both = true;
    pthread_mutex_lock(&ctx->wit_mu);
    for (int i = 0; i < GPU_WIT_SLOTS; i++) both = both && ctx->wit[i].cap >= wb;
    pthread_mutex_unlock(&ctx->wit_mu);
    /* Without the coset table's shift half to lend (a tight or capped card), the 0/1 splits
     * and sums of the L, A and B MSMs take ~14 bytes per point of their largest piece from
     * free memory (flags, positions, tail indices, the sums' counts and partials): the MSM
     * plan leaves that room, or the H MSM's scratch takes it and every tail fails (a capped
     * card streaming the key, where the H MSM sorts one window at a time). */
    ctx->msm_reserve = ((size_t)1 << 30) + (both ? 0 : wb + ((size_t)1 << 30));
    ctx->msm_split_pts = ctx->loan[SL_FLAGS] ? 0 : tail_pts;
    return CUZK_OK;
}

static void msm_loans_end(struct gpu_ctx *ctx)
{
    /* a loan of the coset factor table's shift half that was taken leaves that half stale */
    const char *t0 = (const char *)ctx->shift_tab;
    const size_t hb = t0 ? ((size_t)1 << ctx->shift_lg) * sizeof(fr_t) : 0;
    for (int sl = 0; sl < SL__COUNT; sl++) {
        const char *p = (const char *)ctx->loan[sl];
        if (t0 && ctx->loan_used[sl] && p >= t0 && p < t0 + hb) ctx->shift_stale = true;
        ctx->loan[sl] = NULL;
        ctx->loan_size[sl] = 0;
        ctx->loan_used[sl] = false;
    }
    ctx->msm_reserve = 0;
    ctx->msm_split_pts = 0;
}

/* One matrix's SpMV into a domain vector, its padding zeroed; the two-vector h pipeline makes
 * c with it after a = a b (spmv_make_c). */
struct spmv_c {
    struct gpu_ctx *ctx;
    dwit w;
    uint64_t rows, N;
};

static int spmv_into(const struct spmv_c *m, dfr *out, int mat, cudaStream_t st, struct cuzk_error *err)
{
    struct gpu_ctx *ctx = m->ctx;
    if (m->N > m->rows) CK(cudaMemsetAsync((fr_t *)out + m->rows, 0, (m->N - m->rows) * sizeof(fr_t), st));
    return gpu_spmv_dev(ctx, out, mat, m->w, st, err);
}

static int spmv_make_c(void *arg, dfr *c, cudaStream_t st, struct cuzk_error *err)
{
    return spmv_into((const struct spmv_c *)arg, c, 2, st, err);
}

/* Everything after the witness upload: SpMV, h pipeline and the five MSMs. */
static int prove_phases(struct g16_msm_results *out, const struct g16_shape *s, const struct g16_pk *pk,
                        struct gpu_ctx *ctx, struct streamer *sm, struct g16_timings *t, dwit dw,
                        void *d[3], unsigned lg, uint64_t N, uint64_t t0, struct cuzk_error *err)
{
    int rc;
    uint64_t *wait_ns = sm ? &sm->wait_ns : NULL;
    cudaStream_t st = ctx->st[0];
    struct spmv_c mc = {ctx, dw, s->n_constraints, N};
    for (int i = 0; i < 3 && d[i]; i++) {
        rc = spmv_into(&mc, (dfr *)d[i], i, st, err);
        if (rc) return rc;
    }
    uint64_t dt = lap(st, &t0);
    if (t) t->abc_ns += dt;

    dfr *hc = NULL;   /* h's coefficients: one of d[0], d[1] */
    rc = gpu_compute_h_dev(ctx, (dfr *)d[0], (dfr *)d[1], (dfr *)d[2], lg, &hc, d[2] ? NULL : spmv_make_c, &mc, err);
    if (rc) return rc;
    dt = lap(st, &t0);
    if (t) t->ntt_ns += dt;

    /* each MSM writes its result into out (its last step runs on the CPU) */
    /* the largest 0/1 split of the tail MSMs: a whole vector, or a streamed piece */
    uint64_t tail_pts = 0;
    const uint64_t tail_n[4] = {pk->n_l, pk->n_a, pk->n_b, pk->n_b};
    for (int k = 1; k < NVEC; k++) {
        int i0, i1;
        pieces_of(sm, k, &i0, &i1);
        for (int i = i0; i < i1; i++) {
            uint64_t np = sm ? sm->pts[i] : tail_n[k - 1];
            if (np > tail_pts) tail_pts = np;
        }
    }
    rc = msm_loans_give(ctx, d, hc, lg, tail_pts, err);
    int i0, i1;
    pieces_of(sm, 0, &i0, &i1);
    uint64_t unused = 0;
    ctx->msm_sc_dead = true;   /* h is dead after the H MSM: its word planes go in place */
    for (int i = i0; !rc && i < i1; i++) {
        const void *b;
        uint64_t p0, np;
        g1_jac_t part;
        rc = bases_of(sm, i, &b, ctx->d_h, pk->n_h, &p0, &np, wait_ns ? wait_ns : &unused, err);
        if (!rc) rc = gpu_g1_msm_dev(ctx, i == i0 ? &out->h : &part, (const g1a_d *)b, hc + p0, NULL, np, NULL, st, err);
        if (!rc && i > i0) g1_jac_add(&out->h, &out->h, &part);
        if (!rc && sm) {   /* no early return (CK): the flag and the loans are undone below */
            const cudaError_t e = cudaStreamSynchronize(st);
            if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaStreamSynchronize(h piece)", __FILE__, __LINE__);
        }
        stream_consumed(sm, i);
    }
    ctx->msm_sc_dead = false;
    if (!rc) {
        dt = lap(st, &t0);
        if (t) t->msm_h_ns += dt;
        /* the L, A and B MSMs after it, in proof order (the streamed key arrives in that order;
         * on a stream of their own beside the h pipeline they gained nothing: decisions.md) */
        rc = prove_tail(out, s, pk, ctx, sm, t, dw, st, err);
    }
    msm_loans_end(ctx);
    return rc;
}
