/* prover.cu: the Groth16 GPU backend (g16_backend_fn): SpMV a/b/c, the h pipeline, the H MSM
 * and the 0/1-split L, A, B_G1, B_G2 MSMs (bitmap sum of the ones + Pippenger on the rest),
 * with the proving key resident in VRAM (or streamed per proof when it does not fit: stream.cu),
 * the witness from its device buffers (witness.cu). */
#include <cub/cub.cuh>
#include <string.h>

#include "stream.cuh"
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
            ctx->wit_hint = gpu_wit_alloc_size(wp.bytes);
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
    const struct gpu_wit_slot *staged = gpu_wit_staged(ctx, s, w);
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
        in.witness = gpu_wit_alloc_size(wp.bytes);
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
    int rc = gpu_stream_start(&sm, ctx, pk, err);
    if (rc) return rc;
    if (!gpu_tuning.stream_after_wit) gpu_stream_go(&sm);
    rc = prove_body(out, s, pk, w, packed, ctx, &sm, t, err);
    gpu_stream_stop(&sm);
    struct gpu_stream_stats *ss = &ctx->stream_stats;
    for (int k = 0; k < NVEC; k++) ss->bytes += sm.bytes[k];
    ss->upload_ns = sm.t_end > sm.t_start ? sm.t_end - sm.t_start : 0;
    ss->wait_ns = sm.wait_ns;
    ss->buffers = sm.nbuf;
    ss->staged = sm.staged;
    return rc;
}

/* SpMV, h pipeline and the five MSMs; sm non-NULL: the key is streamed by sm; packed
 * (nullable): w already packed by the caller (gpu_wit_acquire). */
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
    rc = gpu_wit_acquire(ctx, s, w, packed, st, &ws, err);
    if (rc) return rc;
    /* apart from abc: a witness staged just before the lock still crosses PCIe under it
     * (~4 GiB for a 32 GiB WindowPoSt partition), which the next worker's staging hides; with
     * stream.after_wit a streamed key's upload starts only now, so that the two do not share
     * the link (an experiment: docs/decisions.md) */
    const uint64_t dw = lap(st, &t0);
    if (t) t->wit_ns += dw;
    gpu_stream_go(sm);
    rc = prove_phases(out, s, pk, ctx, sm, t, gpu_wit_dev(ws->d, ws->valoff), d, lg, N, t0, err);
    if (!rc) {
        cudaError_t e = cudaStreamSynchronize(st);
        if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaStreamSynchronize", __FILE__, __LINE__);
    } else {
        cudaDeviceSynchronize();   /* no kernel of this proof may still read the buffer */
    }
    gpu_wit_release(ctx, ws, rc == CUZK_OK);
    return rc;
}

static void msm_loan(struct gpu_ctx *ctx, enum gpu_slot sl, void *p, size_t bytes);

/* A streamed key's buffer that its last pieces no longer need (the whole-vector plan's b_g1
 * buffer during B_G2) holds the batch-affine rounds of the tail MSMs: their first and second
 * points and prefix products, in the rounds' 2 : 1 : 1 proportion of bytes. A 90 M-point G2
 * MSM beside a streamed WindowPoSt key has no other room for them (gpu.md). */
static void msm_loan_idle_buffer(struct gpu_ctx *ctx, const struct streamer *sm, int i)
{
    char *b = (char *)gpu_stream_idle_buffer(sm, i);
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
    gpu_stream_pieces(sm, k, &i0, &i1);
    uint64_t *wait_ns = sm ? &sm->wait_ns : NULL, unused = 0;
    for (int i = i0; !rc && i < i1; i++) {
        const void *b;
        uint64_t p0, np;
        rc = gpu_stream_bases(sm, i, &b, resident, n_all, &p0, &np, wait_ns ? wait_ns : &unused, err);
        if (!rc) msm_loan_idle_buffer(ctx, sm, i);
        if (!rc && !(reuse && i1 - i0 == 1))
            rc = split_scalars(ctx, sp, dw, sel ? sel + p0 : NULL, sel ? 0 : off + (uint32_t)p0, np, st, err);
        J part;
        if (!rc) rc = split_msm<F>(ctx, i == i0 ? (void *)out : (void *)&part, (const d_aff<F> *)b, sp, st, err);
        if (!rc && i > i0) jac_add(out, &part);
        if (!rc) CK(cudaStreamSynchronize(st));   /* the piece's buffer is free once its MSM ran */
        gpu_stream_consumed(sm, i);
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
    gpu_stream_pieces(sm, 3, &i0, &i1);
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
    const size_t wb = gpu_wit_alloc_size(ctx->wit_cur_bytes);
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
        gpu_stream_pieces(sm, k, &i0, &i1);
        for (int i = i0; i < i1; i++) {
            uint64_t np = sm ? sm->pts[i] : tail_n[k - 1];
            if (np > tail_pts) tail_pts = np;
        }
    }
    rc = msm_loans_give(ctx, d, hc, lg, tail_pts, err);
    int i0, i1;
    gpu_stream_pieces(sm, 0, &i0, &i1);
    uint64_t unused = 0;
    ctx->msm_sc_dead = true;   /* h is dead after the H MSM: its word planes go in place */
    for (int i = i0; !rc && i < i1; i++) {
        const void *b;
        uint64_t p0, np;
        g1_jac_t part;
        rc = gpu_stream_bases(sm, i, &b, ctx->d_h, pk->n_h, &p0, &np, wait_ns ? wait_ns : &unused, err);
        if (!rc) rc = gpu_g1_msm_dev(ctx, i == i0 ? &out->h : &part, (const g1a_d *)b, hc + p0, NULL, np, NULL, st, err);
        if (!rc && i > i0) g1_jac_add(&out->h, &out->h, &part);
        if (!rc && sm) {   /* no early return (CK): the flag and the loans are undone below */
            const cudaError_t e = cudaStreamSynchronize(st);
            if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaStreamSynchronize(h piece)", __FILE__, __LINE__);
        }
        gpu_stream_consumed(sm, i);
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
