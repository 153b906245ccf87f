/* witness.cu: the backend's witness on the device: packing (cuzk/wpack.h), upload, and the two
 * witness buffers with their prefetch (gpu_g16_stage_witness).
 * A 32 GiB PoRep partition's witness is ~0.5 GiB packed (4 GiB of field elements), a long
 * packing and copy under the device lock when the backend uploads it itself. With two prover
 * workers per GPU (the daemon's default), the next worker's upload can run on the copy engine
 * while the current proof's kernels run, so the witness lives in one of two device buffers:
 * the backend proves from one while gpu_g16_stage_witness fills the other. A staged copy is
 * matched by pointer identity and sizes, and lives only until the backend call that takes it
 * or gpu_g16_unstage_witness, so a later witness at a reused address is never taken for it. */
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.cuh"

static bool wit_match(const struct gpu_wit_slot *k, const struct g16_shape *s, const struct g16_assignment *w)
{
    return k->inputs == (const void *)w->inputs && k->aux == (const void *)w->aux &&
           k->n_in == s->n_inputs && k->n_aux == s->n_aux;
}

/* Under wit_mu: the staged copy of w, or NULL. */
struct gpu_wit_slot *gpu_wit_staged(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w)
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
size_t gpu_wit_alloc_size(size_t bytes)
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
    const size_t want = gpu_wit_alloc_size(bytes);
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
    struct gpu_wit_slot *k = gpu_wit_staged(ctx, s, w);
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
    bool hit = gpu_wit_staged(ctx, s, w) != NULL, any_room = false;
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
        else if (ctx->plan_wit == 1 && wit_others(ctx, k) + gpu_wit_alloc_size(bytes) > ctx->plan_wit_bytes)
            rc = cuzk_fail(err, CUZK_E_GPU_NOMEM, "gpu_g16_stage_witness: the memory plan of GPU %d has "
                           "room for one witness buffer, and this one would not fit beside the other in it", ctx->dev);
        else   /* the slot's smaller buffer is given back first */
            rc = gpu_mem_check(ctx, gpu_wit_alloc_size(bytes) + spare - k->cap,
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
    struct gpu_wit_slot *k = gpu_wit_staged(ctx, s, w);
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
int gpu_wit_acquire(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w,
                    const struct gpu_wit_packed *packed, cudaStream_t st, struct gpu_wit_slot **out,
                    struct cuzk_error *err)
{
    pthread_mutex_lock(&ctx->wit_mu);
    bool hit = gpu_wit_staged(ctx, s, w) != NULL;
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

void gpu_wit_release(struct gpu_ctx *ctx, struct gpu_wit_slot *k, bool proved)
{
    pthread_mutex_lock(&ctx->wit_mu);
    wit_forget(k);
    if (proved) ctx->proofs++;
    pthread_mutex_unlock(&ctx->wit_mu);
}
