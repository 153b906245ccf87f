/* stream.cu: the streamed key's helper thread and buffers (stream.cuh): the prover's MSMs take
 * their bases piece by piece from here when the key is not resident in VRAM. */
#include <string.h>

#include "stream.cuh"

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
    pthread_mutex_lock(&sm->mu);
    while (!sm->stop && !sm->go) pthread_cond_wait(&sm->cv, &sm->mu);
    pthread_mutex_unlock(&sm->mu);
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
int gpu_stream_start(struct streamer *sm, struct gpu_ctx *ctx, const struct g16_pk *pk,
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
void gpu_stream_pieces(const struct streamer *sm, int k, int *i0, int *i1)
{
    if (!sm) {
        *i0 = k, *i1 = k + 1;
        return;
    }
    *i0 = sm->first[k], *i1 = sm->first[k + 1];
}

/* Device bases of piece i: the resident vector (sm NULL: i is the vector; *off 0, *n all of
 * it), or wait for the helper thread's upload of piece i; *off, *n: its points. */
int gpu_stream_bases(struct streamer *sm, int i, const void **d, const void *resident, uint64_t n_all,
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

void *gpu_stream_idle_buffer(const struct streamer *sm, int i)
{
    for (int b = 0; sm && b < sm->nbuf; b++) {
        bool used = false;
        for (int p = i; p < sm->npieces && !used; p++) used = p % sm->nbuf == b;
        if (!used) return sm->dev[b];
    }
    return NULL;
}

void gpu_stream_go(struct streamer *sm)
{
    if (!sm) return;
    pthread_mutex_lock(&sm->mu);
    sm->go = true;
    pthread_cond_broadcast(&sm->cv);
    pthread_mutex_unlock(&sm->mu);
}

void gpu_stream_consumed(struct streamer *sm, int i)
{
    if (!sm) return;
    pthread_mutex_lock(&sm->mu);
    sm->consumed = i + 1;
    pthread_cond_broadcast(&sm->cv);
    pthread_mutex_unlock(&sm->mu);
}

void gpu_stream_stop(struct streamer *sm)
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
