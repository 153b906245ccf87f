/* devices.c: the engine's side of the prover backend (engine.h, struct engine_backend): the
 * per-device lock around the backend call only, the witness prefetch before it, and the SRS
 * tiers (key resident in a device's VRAM, pinned or pageable host memory streamed per proof). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_internal.h"

#define DEV_NOMEM_TRIES 8   /* about 80 s of waiting for device memory, then the partition fails */

void dev_gpu_state(struct engine *e, unsigned dev, const char *job_id, unsigned part)
{
    if (!e->have_gpu || !e->cfg.telemetry.sample) return;
    const int ordinal = e->be.ordinals[dev];
    struct nvml_sample t;
    e->cfg.telemetry.sample(e->cfg.telemetry.ctx, ordinal, &t);
    if (!t.present) {
        clog_timeline("GPU_STATE", job_id, "partition=%u,gpu=%d,up=0", part, ordinal);
        return;
    }
    clog_timeline("GPU_STATE", job_id, "partition=%u,gpu=%d,up=1,util=%.2f,mem_used_mib=%llu,"
                  "temp_c=%.0f,power_w=%.1f,sm_mhz=%.0f,throttle=0x%llx", part, ordinal,
                  t.has_util ? t.util_gpu : -1.0, (unsigned long long)(t.mem_used >> 20),
                  t.has_temp ? t.temp_c : -1.0, t.has_power ? t.power_w : -1.0,
                  t.has_clock ? t.sm_clock_hz / 1e6 : -1.0, (unsigned long long)t.throttle);
}

static void dev_lock(struct engine *e, unsigned d)
{
    if (e->be.ops->lock) e->be.ops->lock(e->be.self, d);
    else pthread_mutex_lock(&e->dev_mu[d]);
}

static void dev_unlock(struct engine *e, unsigned d)
{
    if (e->be.ops->unlock) e->be.ops->unlock(e->be.self, d);
    else pthread_mutex_unlock(&e->dev_mu[d]);
}

const char *srs_tier(const struct srs_entry *s)
{
    if (s->state != SRS_READY) return "loading";
    return s->vram_mask ? "vram" : s->pinned ? "pinned" : "host";
}

/* A key that is streamed: page-lock it once (e->mu NOT held; a one-time cost of a few
 * seconds for a 44 GiB key, paid by the first proof that streams it). */
static void pin_streamed_key(struct engine *e, struct srs_entry *s)
{
    if (!e->be.ops->host_pin) return;
    pthread_mutex_lock(&e->mu);
    bool claim = !s->pin_tried;
    s->pin_tried = true;
    pthread_mutex_unlock(&e->mu);
    if (!claim) return;
    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    g16_pk_vectors(&s->pk, v, nb);
    struct cuzk_error perr;
    cuzk_error_clear(&perr);
    uint64_t t0 = cuzk_now_ns();
    int k = 0, rc = CUZK_OK;
    for (; k < G16_PK_VECTORS && !rc; k++)
        if (v[k] && nb[k]) rc = e->be.ops->host_pin(e->be.self, v[k], nb[k], &perr);
    if (rc) {
        for (int i = 0; i < k - 1; i++)
            if (v[i] && nb[i] && e->be.ops->host_unpin) e->be.ops->host_unpin(e->be.self, v[i]);
        cuzk_log(CLOG_WARN, "SRS %s: could not pin its host copy for direct GPU uploads (%s); each "
                 "proof copies it through staging buffers instead", s->id, perr.msg);
        return;
    }
    pthread_mutex_lock(&e->mu);
    s->pinned = true;
    pthread_mutex_unlock(&e->mu);
    cuzk_log(CLOG_INFO, "SRS pinned in host memory: circuit=%s pin_ms=%.0f", s->id,
             (double)(cuzk_now_ns() - t0) / 1e6);
}

void dev_unpin_entry(struct engine *e, struct srs_entry *s)
{
    if (!s->pinned || !e->be.ops->host_unpin) return;
    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    g16_pk_vectors(&s->pk, v, nb);
    for (int k = 0; k < G16_PK_VECTORS; k++)
        if (v[k] && nb[k]) e->be.ops->host_unpin(e->be.self, v[k]);
    pthread_mutex_lock(&e->mu);
    s->pinned = false;
    s->pin_tried = false;   /* streamed again later: pinned again */
    pthread_mutex_unlock(&e->mu);
}

/* A key pinned for streaming that every device now holds is unpinned, so its host copy can be
 * released: a preload plans before any witness exists, so a key can be streamed at the
 * preload and made resident by the first proof's plan (the GPU backend plans again with the
 * witness's packed size). No device streams it once all hold it. */
static void unpin_if_everywhere(struct engine *e, struct srs_entry *s)
{
    const uint32_t all = dev_all_mask(e);
    pthread_mutex_lock(&e->mu);
    bool go = s->pinned && (s->vram_mask & all) == all;
    pthread_mutex_unlock(&e->mu);
    if (!go) return;
    dev_unpin_entry(e, s);
    cuzk_log(CLOG_INFO, "SRS unpinned in host memory: circuit=%s (every GPU holds the key)", s->id);
}

/* The entry whose key device d holds, if any (e->mu held). */
static struct srs_entry *resident_on(const struct engine *e, unsigned d)
{
    for (struct srs_entry *x = e->srs; x; x = x->next)
        if (x->vram_mask & (1u << d)) return x;
    return NULL;
}

static bool ranks_before(const struct job *a, const struct job *b)
{
    return a->priority != b->priority ? a->priority > b->priority : a->seq < b->seq;
}

/* Does an unfinished job other than j, bound to device d, prove x's circuit? (e->mu held)
 * *ahead: one of them ranks before j and has partitions that hold their memory (being
 * synthesized with their reservation made, queued for a prover, or proving). */
static bool users_on(const struct engine *e, unsigned d, const struct srs_entry *x, const struct job *j,
                     bool *ahead)
{
    bool any = false;
    *ahead = false;
    for (const struct job *q = e->head; q; q = q->next) {
        if (q == j || q->state == JOB_DONE || q->dev != (int)d || strcmp(q->circuit_id, x->id)) continue;
        any = true;
        if (!ranks_before(q, j)) continue;
        for (uint32_t p = 0; p < q->n_parts && !*ahead; p++) {
            const struct part *pt = &q->parts[p];
            *ahead = pt->state == PART_SYNTH_DONE || pt->state == PART_PROVING ||
                     (pt->state == PART_SYNTHESIZING && pt->mem_witness);
        }
        if (*ahead) break;
    }
    return any;
}

bool dev_must_wait(const struct engine *e, unsigned d, const struct job *j, const struct srs_entry *s)
{
    if (!e->have_gpu || !s || j->state == JOB_DONE) return false;
    const struct srs_entry *x = resident_on(e, d);
    if (!x || x == s) return false;
    if (e->be.ops->prove_beside && !(s->beside_nofit & (1u << d))) return false;
    bool ahead = false;
    users_on(e, d, x, j, &ahead);
    return ahead;
}

/* Make entry s resident on device d (device lock held, e->mu not held): shape, then key.
 * A context holds one shape and one key and recognises them by pointer, so loading s
 * replaces (or, when the key does not fit, just drops) what another entry had there. A key
 * that does not fit is not an error: the backend streams it from host memory per proof. */
static int make_resident(struct engine *e, unsigned d, struct srs_entry *s, struct cuzk_error *err)
{
    const uint32_t bit = 1u << d;
    const struct engine_backend_ops *ops = e->be.ops;
    pthread_mutex_lock(&e->mu);
    s->dev_mask |= bit;   /* from here on s may have something on d */
    bool was = (s->vram_mask & bit) != 0;
    pthread_mutex_unlock(&e->mu);

    int rc = ops->load_shape ? ops->load_shape(e->be.self, d, &s->shape, err) : CUZK_OK;
    if (rc) return cuzk_fail_prefix(err, rc, "GPU %d: circuit matrices of %s", e->be.ordinals[d], s->id);
    /* not resident here and its host copy released: read it back first (upload or stream) */
    if (!was) {
        rc = srs_key_reload(e, s, err);
        if (rc) return cuzk_fail_prefix(err, rc, "GPU %d", e->be.ordinals[d]);
    }
    struct cuzk_error kerr;
    cuzk_error_clear(&kerr);
    int krc = ops->load_pk ? ops->load_pk(e->be.self, d, &s->pk, &kerr) : CUZK_E_UNSUPPORTED;
    bool fits = krc == CUZK_OK;
    bool log_stream = false;
    pthread_mutex_lock(&e->mu);
    for (struct srs_entry *x = e->srs; x; x = x->next) {
        if (!was) x->beside_nofit &= ~bit;   /* the device's key changed: what fits beside it too */
        if (x == s) continue;
        x->vram_mask &= ~bit;   /* any other key was unloaded before this one was tried */
        if (fits || krc == CUZK_E_GPU_NOMEM) x->dev_mask &= ~bit;
    }
    if (!was) pthread_cond_broadcast(&e->prove_cv);   /* partitions waiting for the old key's jobs */
    if (fits) {
        s->vram_mask |= bit;
    } else {
        s->vram_mask &= ~bit;
        log_stream = !(s->stream_logged & bit);
        s->stream_logged |= bit;
    }
    pthread_mutex_unlock(&e->mu);
    if (fits && !was) {
        cuzk_log(CLOG_INFO, "SRS resident in VRAM: circuit=%s gpu=%d", s->id, e->be.ordinals[d]);
        unpin_if_everywhere(e, s);
        srs_key_release(e, s);   /* when every device now holds it */
    }
    if (krc == CUZK_E_GPU_NOMEM || krc == CUZK_E_UNSUPPORTED) {
        if (krc == CUZK_E_GPU_NOMEM) pin_streamed_key(e, s);
        if (log_stream)
            cuzk_log(CLOG_WARN, "SRS %s stays in host memory for GPU %d (%s); its key is streamed "
                     "to the GPU for each proof", s->id, e->be.ordinals[d],
                     krc == CUZK_E_UNSUPPORTED ? "no residency support" : kerr.msg);
        return CUZK_OK;
    }
    if (krc) {
        if (err) *err = kerr;
        return cuzk_fail_prefix(err, krc, "GPU %d: proving key of %s", e->be.ordinals[d], s->id);
    }
    return CUZK_OK;
}

/* Prove c's partition on its device (device lock and turn held, e->mu not held). When another
 * entry's key is resident there and a running job still proves with it, the partition is
 * proved beside it (ops prove_beside: this entry's key streamed, the resident one kept), so
 * a deadline proof during a batch costs the batch no key reload (44 GiB for PoRep 32 GiB,
 * read back from its file when its host copy was released). When that does not fit, a job
 * that ranks before every job of the resident key replaces it; another waits
 * (c->deferred, CUZK_E_BUSY): dev_must_wait keeps it queued until those jobs are done. */
static int prove_placed(struct engine *e, struct dev_call *c, struct g16_msm_results *out,
                        const struct g16_shape *s, const struct g16_pk *pk, const struct g16_assignment *w,
                        struct g16_timings *t, struct cuzk_error *err)
{
    const struct engine_backend_ops *ops = e->be.ops;
    const unsigned d = c->dev;
    const uint32_t bit = 1u << d;
    struct srs_entry *me = c->srs;
    char resident_id[sizeof me->id] = "";
    pthread_mutex_lock(&e->mu);
    struct srs_entry *x = resident_on(e, d);
    bool ahead = false;
    const bool in_use = x && x != me && users_on(e, d, x, c->job, &ahead);
    const bool beside = in_use && ops->prove_beside && !(me->beside_nofit & bit);
    if (x) snprintf(resident_id, sizeof resident_id, "%s", x->id);
    pthread_mutex_unlock(&e->mu);
    int rc;
    if (beside) {
        rc = srs_key_reload(e, me, err);   /* streamed from its host copy */
        if (rc) return cuzk_fail_prefix(err, rc, "GPU %d", e->be.ordinals[d]);
        /* no dev_mask bit: a beside proof leaves nothing of this entry on the device (an
         * unload for it would drop the resident key it was kept beside) */
        pin_streamed_key(e, me);   /* once: direct DMA for every streamed proof */
        rc = ops->prove_beside(e->be.self, d, out, s, pk, w, t, err);
        if (rc != CUZK_E_GPU_NOMEM) return rc;
        pthread_mutex_lock(&e->mu);
        me->beside_nofit |= bit;
        pthread_mutex_unlock(&e->mu);
        cuzk_log(CLOG_WARN, "SRS %s does not fit beside %s on GPU %d (%s)", me->id, resident_id,
                 e->be.ordinals[d], err ? err->msg : "");
        if (err) cuzk_error_clear(err);
    }
    if (in_use) {
        pthread_mutex_lock(&e->mu);
        const bool wait = dev_must_wait(e, d, c->job, me);
        pthread_mutex_unlock(&e->mu);
        if (wait) {
            c->deferred = true;
            return cuzk_fail(err, CUZK_E_BUSY, "waits for the jobs of SRS %s on GPU %d", resident_id,
                             e->be.ordinals[d]);
        }
        cuzk_log(CLOG_INFO, "SRS %s replaces %s on GPU %d for job %s (priority %d), which ranks before "
                 "the jobs still proving %s there", me->id, resident_id, e->be.ordinals[d], CLOG_ID(c->job_id),
                 c->job->priority, resident_id);
    }
    rc = make_resident(e, d, me, err);
    if (!rc) rc = ops->prove(e->be.self, d, out, s, pk, w, t, err);
    return rc;
}

void dev_stage(struct engine *e, const struct dev_call *c, const struct g16_shape *s,
               const struct g16_assignment *w)
{
    const struct engine_backend_ops *ops = e->be.ops;
    if (!e->have_gpu || !ops->stage) return;
    struct cuzk_error serr;
    cuzk_error_clear(&serr);
    uint64_t t0 = cuzk_now_ns();
    int src = ops->stage(e->be.self, c->dev, s, w, &serr);
    if (src)
        cuzk_log(CLOG_DEBUG, "witness not prefetched (worker=%u partition=%u): %s", c->worker, c->part, serr.msg);
    else
        clog_timeline("WITNESS_STAGED", c->job_id, "worker=%u,partition=%u,ms=%" PRIu64, c->worker, c->part,
                      (cuzk_now_ns() - t0) / 1000000);
}

void dev_unstage(struct engine *e, const struct dev_call *c, const struct g16_shape *s,
                 const struct g16_assignment *w)
{
    if (e->have_gpu && e->be.ops->unstage) e->be.ops->unstage(e->be.self, c->dev, s, w);
}

int dev_backend(struct g16_msm_results *out, const struct g16_shape *s, const struct g16_pk *pk,
                const struct g16_assignment *w, void *dev_call, struct g16_timings *t,
                struct cuzk_error *err)
{
    struct dev_call *c = dev_call;
    struct engine *e = c->e;
    const struct engine_backend_ops *ops = e->be.ops;
    if (!e->have_gpu) return ops->prove(e->be.self, 0, out, s, pk, w, t, err);
    /* Only the kernels run under the device lock: the witness was computed before and staged
     * (dev_stage) before the device turn, and the proof assembly (g16_prove) and verification
     * run after this returns. The caller holds the device turn (dev_turn_acquire), which puts
     * the provers of a device in priority order; the lock itself also serialises preloads,
     * evictions and key checks. */
    if (!c->turn) {
        dev_turn_acquire(e, c->w, c->job, c->part, false);
        c->turn = true;
    }
    /* Out of device memory (another process took the card's memory, or the plan was off):
     * the partition waits with the lock and the turn released and tries again, so the memory
     * can come back; after DEV_NOMEM_TRIES it fails with the GPU's message. */
    int rc;
    for (unsigned attempt = 1;; attempt++) {
        dev_lock(e, c->dev);
        clog_timeline("GPU_START", c->job_id, "worker=%u,partition=%u,gpu=%d", c->worker, c->part,
                      e->be.ordinals[c->dev]);
        rc = prove_placed(e, c, out, s, pk, w, t, err);
        dev_unlock(e, c->dev);
        dev_turn_release(e, c->dev);
        c->turn = false;
        if (rc != CUZK_E_GPU_NOMEM || attempt >= DEV_NOMEM_TRIES) break;
        unsigned wait_s = attempt < 5 ? 1u << (attempt - 1) : 15;
        cuzk_log(CLOG_WARN, "GPU %d out of memory for partition %u of job %s (%s); retrying in %u s "
                 "(attempt %u of %u)", e->be.ordinals[c->dev], c->part, CLOG_ID(c->job_id),
                 err ? err->msg : "", wait_s, attempt + 1, DEV_NOMEM_TRIES);
        bool stop = false;
        for (unsigned i = 0; i < wait_s * 10 && !stop; i++) {
            usleep(100000);
            pthread_mutex_lock(&e->mu);
            stop = e->stopping;
            pthread_mutex_unlock(&e->mu);
        }
        if (stop) break;
        if (t) memset(t, 0, sizeof *t);
        dev_turn_acquire(e, c->w, c->job, c->part, false);
        c->turn = true;
    }
    dev_unstage(e, c, s, w);
    return rc;
}

void dev_upload_all(struct engine *e, struct srs_entry *s)
{
    if (!e->have_gpu) return;
    for (unsigned d = 0; d < e->n_dev; d++) {
        struct cuzk_error err;
        cuzk_error_clear(&err);
        dev_lock(e, d);
        int rc = make_resident(e, d, s, &err);
        dev_unlock(e, d);
        if (rc)
            cuzk_log(CLOG_WARN, "SRS %s not uploaded to GPU %d: %s (it is uploaded at its first "
                     "proof there)", s->id, e->be.ordinals[d], err.msg);
    }
}

void dev_unload_entry(struct engine *e, struct srs_entry *s)
{
    if (!e->have_gpu) return;
    pthread_mutex_lock(&e->mu);
    uint32_t mask = s->dev_mask;
    pthread_mutex_unlock(&e->mu);
    for (unsigned d = 0; d < e->n_dev; d++) {
        const uint32_t bit = 1u << d;
        if (!(mask & bit)) continue;
        /* Contexts know keys by pointer: drop the device copy before the host copy goes, so a
         * later entry allocated at the same address is never taken for this one. */
        dev_lock(e, d);
        if (e->be.ops->unload) e->be.ops->unload(e->be.self, d);
        pthread_mutex_lock(&e->mu);
        s->dev_mask &= ~bit;
        s->vram_mask &= ~bit;
        for (struct srs_entry *x = e->srs; x; x = x->next) {   /* the unload dropped theirs too */
            x->dev_mask &= ~bit;
            x->vram_mask &= ~bit;
            x->beside_nofit &= ~bit;
        }
        pthread_cond_broadcast(&e->prove_cv);
        pthread_mutex_unlock(&e->mu);
        dev_unlock(e, d);
        cuzk_log(CLOG_DEBUG, "SRS unloaded from GPU: circuit=%s gpu=%d", s->id, e->be.ordinals[d]);
    }
}
