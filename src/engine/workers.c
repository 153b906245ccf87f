/* workers.c: the worker threads. Synthesis workers take partitions from the synthesis queue
 * (SRS, memory reservation, witness); provers take synthesized ones, run the backend and
 * verify the proof; GPU provers bind a job to their device and take turns on it (the device
 * turn, dev_turn_acquire). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_internal.h"

/* ---------------------------------------------------------------- workers -- */

/* A partition leaves the pipeline (e->mu held): bookkeeping shared by every exit path. */
static void part_leave(struct engine *e, struct job *j)
{
    j->parts_running--;
    j->refs--;
    e->parts_in_flight--;
    pthread_cond_broadcast(&e->drain_cv);
    /* provers: a partition waiting for this job's key to be free may go now (dev_must_wait) */
    pthread_cond_broadcast(&e->prove_cv);
    if (j->state == JOB_DONE && !j->refs) job_retention_gc(e);
}

static void part_fail(struct engine *e, struct job *j, uint32_t p, const char *stage,
                      const struct cuzk_error *perr)
{
    char msg[CUZK_ERR_MSG_MAX + 64];
    snprintf(msg, sizeof msg, "partition %u %s failed: %s", p, stage, perr->msg);
    j->parts[p].state = PART_FAILED;
    job_finish(e, j, ENGINE_FAILED, msg);
}

static void synth_one(struct engine *e, struct worker *w, struct job *j, uint32_t p)
{
    struct part *pt = &j->parts[p];
    struct cuzk_error perr;
    cuzk_error_clear(&perr);
    uint64_t wait_ns = 0;
    struct srs_entry *s = NULL;
    int rc = srs_acquire(e, j->circuit_id, j->priority, &s, &wait_ns, NULL, &perr);
    pthread_mutex_lock(&e->mu);
    if (wait_ns > j->srs_wait_ns && wait_ns > NS_PER_MS) j->srs_wait_ns = wait_ns;
    if (rc) {
        if (j->state != JOB_DONE) part_fail(e, j, p, "SRS load", &perr);
        else pt->state = PART_DROPPED;
        job_input_release(j);
        part_leave(e, j);
        pthread_mutex_unlock(&e->mu);
        return;
    }
    pt->srs = s;
    uint64_t mw, mp;
    budget_partition(&s->shape, &mw, &mp);
    if (j->state == JOB_DONE) goto drop_locked;
    if (budget_fits(e, s->bytes, mw + mp, &perr)) {
        /* it could never run: fail now rather than wait for memory that cannot come */
        part_fail(e, j, p, "memory reservation", &perr);
        goto drop_locked;
    }
    const struct qitem me = {j, p};
    rc = budget_reserve(e, mw + mp, j->priority, &me, &perr);
    if (rc == CUZK_E_BUSY && j->state != JOB_DONE) {
        /* a partition of a higher priority waits for a synthesis worker and none is idle:
         * this one goes back to the queue, and this worker takes that one */
        if (!q_push(&e->synth_q, j, p)) {
            pt->state = PART_PENDING;
            pt->srs = NULL;
            j->parts_queued++;
            pthread_cond_broadcast(&e->synth_cv);
            pthread_mutex_unlock(&e->mu);
            srs_release(e, s);
            clog_timeline("SYNTH_YIELD", j->id, "partition=%u,worker=%u", p, w->id);
            pthread_mutex_lock(&e->mu);
            part_leave(e, j);
            pthread_mutex_unlock(&e->mu);
            return;
        }
        rc = budget_reserve(e, mw + mp, j->priority, NULL, &perr);   /* cannot requeue: wait */
    }
    if (rc) {
        if (j->state != JOB_DONE) part_fail(e, j, p, "memory reservation", &perr);
        goto drop_locked;
    }
    pt->mem_witness = mw;
    pt->mem_prove = mp;
    if (j->state == JOB_DONE) goto drop_locked;   /* cancelled while waiting for memory */
    pthread_mutex_unlock(&e->mu);

    clog_timeline("SYNTH_START", j->id, "partition=%u,worker=%u", p, w->id);
    uint64_t t0 = cuzk_now_ns();
    rc = kind_get(j->kind)->witness(j, p, pt, s, &perr);
    const uint64_t synth_ns = cuzk_now_ns() - t0;
    clog_timeline("SYNTH_END", j->id, "partition=%u,synth_ms=%" PRIu64, p, ns_to_ms(synth_ns));

    pthread_mutex_lock(&e->mu);
    pt->synth_ns = synth_ns;   /* under the lock: the status snapshot reads it */
    history_span(j, HIST_SYNTH, t0, t0 + synth_ns);
    if (rc) {
        if (j->state != JOB_DONE) part_fail(e, j, p, "synthesis", &perr);
        goto drop_locked;
    }
    if (j->state == JOB_DONE) goto drop_locked;
    if (q_push(j->dev >= 0 ? &e->dev_q[j->dev] : &e->prove_q, j, p)) {
        cuzk_fail(&perr, CUZK_E_NOMEM, "out of memory queueing for the prover");
        part_fail(e, j, p, "queueing", &perr);
        goto drop_locked;
    }
    pt->state = PART_SYNTH_DONE;
    job_input_release(j);
    clog_timeline("GPU_QUEUE", j->id, "partition=%u", p);
    /* broadcast: with several GPUs only the provers of the job's device may take it */
    pthread_cond_broadcast(&e->prove_cv);
    pthread_mutex_unlock(&e->mu);
    return;

drop_locked:
    /* the job ended (cancel/failure) while this partition was in flight: discard it */
    budget_release(e, pt->mem_witness + pt->mem_prove);
    pt->mem_witness = pt->mem_prove = 0;
    if (pt->state != PART_FAILED) pt->state = PART_DROPPED;
    job_input_release(j);
    pthread_mutex_unlock(&e->mu);
    cuzk_free(pt->inputs);
    cuzk_free(pt->aux);
    cuzk_free(pt->pub);
    pt->inputs = pt->aux = pt->pub = NULL;
    srs_release(e, s);
    pt->srs = NULL;
    pthread_mutex_lock(&e->mu);
    part_leave(e, j);
    pthread_mutex_unlock(&e->mu);
}

/* Give synthesized partition p of job j back to its prover queue (e->mu NOT held): false,
 * nothing done, when the job has ended or the queue cannot grow. */
static bool prover_requeue(struct engine *e, struct job *j, uint32_t p)
{
    pthread_mutex_lock(&e->mu);
    const bool back = j->state != JOB_DONE && !q_push(j->dev >= 0 ? &e->dev_q[j->dev] : &e->prove_q, j, p);
    if (back) {
        j->parts[p].state = PART_SYNTH_DONE;
        pthread_cond_broadcast(&e->prove_cv);
    }
    pthread_mutex_unlock(&e->mu);
    return back;
}

static void prove_one(struct engine *e, struct worker *w, struct job *j, uint32_t p)
{
    struct part *pt = &j->parts[p];
    struct srs_entry *s = pt->srs;
    struct cuzk_error perr;
    cuzk_error_clear(&perr);
    struct g16_proof proof;
    struct g16_timings t;
    memset(&t, 0, sizeof t);
    struct g16_assignment asg = {pt->inputs, pt->aux};
    /* the device whose telemetry follows this partition, sampled last (dev_gpu_state) */
    bool sample = false;
    char sample_id[ENGINE_ID_MAX];

    pthread_mutex_lock(&e->mu);
    bool skip = j->state == JOB_DONE;   /* cancelled or failed while it waited */
    pthread_mutex_unlock(&e->mu);
    int rc = CUZK_E_CANCELLED;
    uint64_t t1 = 0, gpu_ns = 0;
    if (!skip) {
        clog_timeline("GPU_PICKUP", j->id, "worker=%u,partition=%u", w->id, p);
        uint64_t t0 = cuzk_now_ns();
        /* dev_backend holds a GPU's lock around the backend's kernels only */
        if (w->gpu_ordinal < 0)
            clog_timeline("GPU_START", j->id, "worker=%u,partition=%u,gpu=cpu", w->id, p);
        struct dev_call dc = {e, w->dev, w->id, p, s, j->id, w, j, false, false};
        if (e->have_gpu) {
            /* the witness goes up before the turn, beside the kernels of the partition that
             * holds the device; the turn then goes in priority order */
            dev_stage(e, &dc, &s->shape, &asg);
            if (dev_turn_acquire(e, w, j, p, true) == CUZK_E_BUSY) {
                /* a partition of a higher priority is queued for this device and no prover is
                 * idle: give this one back (its witness stays in host memory) and take that */
                dev_unstage(e, &dc, &s->shape, &asg);
                if (prover_requeue(e, j, p)) {
                    clog_timeline("GPU_YIELD", j->id, "worker=%u,partition=%u", w->id, p);
                    return;
                }
                /* the job ended meanwhile, or the queue cannot grow: prove it after all */
                dev_stage(e, &dc, &s->shape, &asg);
                dev_turn_acquire(e, w, j, p, false);
            }
            dc.turn = true;
        }
        rc = g16_prove(&proof, &s->shape, &s->pk, &asg, 1, NULL, NULL, dev_backend, &dc, &t, &perr);
        if (dc.turn) dev_turn_release(e, w->dev);
        if (dc.deferred && prover_requeue(e, j, p)) {
            /* its key waits for the device's resident key to be free (dev_must_wait) */
            clog_timeline("GPU_DEFER", j->id, "worker=%u,partition=%u", w->id, p);
            return;
        }
        t1 = cuzk_now_ns();
        gpu_ns = t1 - t0;
        /* the backend's phases, so a timeline shows where a partition's GPU time went */
        clog_timeline("GPU_END", j->id, "worker=%u,partition=%u,gpu_ms=%" PRIu64 ",wit_ms=%" PRIu64 ",abc_ms=%" PRIu64
                      ",ntt_ms=%" PRIu64 ",h_ms=%" PRIu64 ",l_ms=%" PRIu64 ",a_ms=%" PRIu64
                      ",bg1_ms=%" PRIu64 ",bg2_ms=%" PRIu64, w->id, p, ns_to_ms(gpu_ns), ns_to_ms(t.wit_ns), ns_to_ms(t.abc_ns),
                      ns_to_ms(t.ntt_ns), ns_to_ms(t.msm_h_ns), ns_to_ms(t.msm_l_ns), ns_to_ms(t.msm_a_ns), ns_to_ms(t.msm_b_g1_ns),
                      ns_to_ms(t.msm_b_g2_ns));
        sample = true;   /* dev_gpu_state: no-op without a GPU */
        snprintf(sample_id, sizeof sample_id, "%s", j->id);
    }
    /* first release: the proving working set is gone */
    pthread_mutex_lock(&e->mu);
    if (!skip) {
        pt->gpu_ns = gpu_ns;   /* under the lock: the status snapshot reads it */
        history_span(j, HIST_GPU, t1 - gpu_ns, t1);
    }
    budget_release(e, pt->mem_prove);
    pt->mem_prove = 0;
    pthread_mutex_unlock(&e->mu);

    const char *stage = "prove";
    uint8_t bytes[G16_PROOF_BYTES];
    uint64_t t_verified = 0;
    if (!skip && !rc) {
        /* Verify the very bytes that will be returned (decompressed and subgroup-checked), against
         * the public inputs the kind recomputed from the request where it has them. */
        stage = "self-verification";
        g16_proof_to_bytes(bytes, &proof);
        struct g16_proof back;
        rc = g16_proof_from_bytes(&back, bytes, &perr);
        if (!rc && pt->pub)
            rc = g16_verify(s->pvk, &back, pt->pub, pt->n_pub, &perr);
        else if (!rc)
            rc = g16_verify(s->pvk, &back, pt->inputs + 1, s->shape.n_inputs - 1, &perr);
        /* an aggregating job keeps the inputs this proof verified against, for the
         * aggregate's verification (row p is this partition's alone) */
        if (!rc && j->agg_pub) {
            if (pt->pub && pt->n_pub == j->agg_n_pub)
                memcpy(j->agg_pub + (size_t)p * j->agg_n_pub, pt->pub, pt->n_pub * sizeof *pt->pub);
            else
                rc = cuzk_fail(&perr, CUZK_E_INTERNAL, "%zu recomputed public inputs, the "
                               "aggregate expects %zu", pt->pub ? pt->n_pub : 0, j->agg_n_pub);
        }
        t_verified = cuzk_now_ns();
        clog_timeline("VERIFY_END", j->id, "partition=%u,verify_ms=%" PRIu64 ",ok=%d", p,
                      ns_to_ms(t_verified - t1), rc == CUZK_OK);
    }
    cuzk_free(pt->inputs);
    cuzk_free(pt->aux);
    cuzk_free(pt->pub);
    pt->inputs = pt->aux = pt->pub = NULL;
    srs_release(e, s);

    pthread_mutex_lock(&e->mu);
    budget_release(e, pt->mem_witness);   /* second release */
    if (t_verified) history_span(j, HIST_VERIFY, t1, t_verified);
    pt->mem_witness = 0;
    pt->srs = NULL;
    bool aggregate = false;
    if (j->state != JOB_DONE) {
        if (rc) {
            part_fail(e, j, p, stage, &perr);
        } else {
            memcpy(j->proof + (size_t)p * G16_PROOF_BYTES, bytes, G16_PROOF_BYTES);
            pt->state = PART_DONE;
            j->parts_done++;
            if (j->parts_done == j->n_parts) {
                if (j->aggregate) aggregate = true;
                else job_finish(e, j, ENGINE_COMPLETED, NULL);
            }
        }
    } else if (pt->state != PART_FAILED) {
        pt->state = PART_DROPPED;
    }
    if (aggregate) {
        /* The last partition's worker aggregates, on this CPU thread and without the lock
         * (docs/decisions.md): the partition stays in flight meanwhile, so shutdown's grace
         * and the job's refs count it. An aggregate that does not verify fails the job. */
        pthread_mutex_unlock(&e->mu);
        clog_timeline("AGGREGATE_START", j->id, "proofs=%u", j->n_parts);
        uint8_t *agg = NULL;
        size_t agg_len = 0;
        cuzk_error_clear(&perr);
        rc = engine_aggregate_job(e, j, &agg, &agg_len, &perr);
        clog_timeline("AGGREGATE_END", j->id, "ok=%d,bytes=%zu", rc == CUZK_OK, agg_len);
        pthread_mutex_lock(&e->mu);
        if (j->state != JOB_DONE) {
            if (rc) {
                job_finish(e, j, ENGINE_FAILED, perr.msg);
            } else {
                j->agg_bytes = agg;
                j->agg_len = agg_len;
                agg = NULL;
                job_finish(e, j, ENGINE_COMPLETED, NULL);
            }
        }
        free(agg);
    }
    part_leave(e, j);
    pthread_mutex_unlock(&e->mu);
    if (sample) dev_gpu_state(e, w->dev, sample_id, p);
}

/* May prover w take queued partition it now? (e->mu held) Not a GPU prover when the
 * partition must wait for its device's resident key to be free (dev_must_wait). */
static bool prover_may_take(const struct engine *e, const struct worker *w, const struct qitem *it)
{
    return w->gpu_ordinal < 0 || !dev_must_wait(e, w->dev, it->job, it->job->parts[it->part].srs);
}

/* The position of the first partition of q in queue order that w may take, -1 if none. The
 * top is almost always it; partitions that wait for a device's key are passed over. */
static long q_first_for(const struct engine *e, const struct worker *w, const struct pqueue *q)
{
    if (!q->n || prover_may_take(e, w, &q->v[0])) return q->n ? 0 : -1;
    long best = -1;
    const struct job *no = q->v[0].job;   /* a job's partitions share the answer */
    for (size_t i = 1; i < q->n; i++) {
        const struct qitem *it = &q->v[i];
        if (it->job == no || (best >= 0 && !q_before(it, &q->v[best]))) continue;
        if (prover_may_take(e, w, it)) best = (long)i;
        else no = it->job;
    }
    return best;
}

/* Work for worker w (e->mu held)? A GPU prover takes its device's queue and the shared one. */
static bool has_work(const struct engine *e, const struct worker *w)
{
    if (!w->prover) return e->synth_q.n > 0;
    return q_first_for(e, w, &e->prove_q) >= 0 ||
           (w->gpu_ordinal >= 0 && q_first_for(e, w, &e->dev_q[w->dev]) >= 0);
}

/* The next partition for w (has_work true). A GPU prover takes whichever of its device's
 * queue and the shared queue is ahead in (priority, job, partition) order, among those it may
 * take; taking a job's first partition from the shared queue binds the job to this device, so
 * every partition of a job is proved on the same GPU (its kernels never mix devices). */
static struct qitem take_work(struct engine *e, const struct worker *w)
{
    if (!w->prover) return q_pop(&e->synth_q);
    struct pqueue *sq = &e->prove_q;
    if (w->gpu_ordinal < 0) return q_pop(sq);
    struct pqueue *dq = &e->dev_q[w->dev];
    const long di = q_first_for(e, w, dq), si = q_first_for(e, w, sq);
    if (di >= 0 && (si < 0 || q_before(&dq->v[di], &sq->v[si]))) return q_take_at(dq, (size_t)di);
    struct qitem it = q_take_at(sq, (size_t)si);
    if (it.job->dev < 0) {
        if (q_move_job(dq, sq, it.job)) it.job->dev = (int)w->dev;
        else cuzk_log(CLOG_WARN, "out of memory binding job %s to GPU %d; its partitions may "
                      "use several GPUs", CLOG_ID(it.job->id), w->gpu_ordinal);
    }
    return it;
}

/* ----------------------------------------------------------- device turn -- */

/* Should prover w, waiting for its device with a partition of priority prio, give the
 * partition back? (e->mu held) When a partition of a higher priority is queued that w could
 * take (its device's queue, or the shared one) and no idle prover can take it instead. */
static bool turn_should_yield(const struct engine *e, const struct worker *w, int prio)
{
    const struct pqueue *dq = &e->dev_q[w->dev], *sq = &e->prove_q;
    const bool dev_better = dq->n && dq->v[0].job->priority > prio;
    const bool shared_better = sq->n && sq->v[0].job->priority > prio;
    bool idle_here = false, idle_any = false;
    for (unsigned i = e->n_synth; i < e->n_workers; i++)
        if (!e->workers[i].busy) {
            idle_any = true;
            idle_here |= e->workers[i].dev == w->dev;
        }
    return (dev_better && !idle_here) || (shared_better && !idle_any);
}

/* The prover first in (priority, job, partition) order among those waiting for device d. */
static const struct worker *turn_first(const struct engine *e, unsigned d)
{
    const struct worker *best = NULL;
    for (unsigned i = e->n_synth; i < e->n_workers; i++) {
        const struct worker *o = &e->workers[i];
        if (o->turn_wait && o->dev == d && (!best || q_before(&o->turn_item, &best->turn_item))) best = o;
    }
    return best;
}

int dev_turn_acquire(struct engine *e, struct worker *w, struct job *j, uint32_t part, bool may_yield)
{
    pthread_mutex_lock(&e->mu);
    w->turn_item = (struct qitem){j, part};
    w->turn_wait = true;
    int rc = CUZK_OK;
    for (;;) {
        if (may_yield && !e->stopping && j->state != JOB_DONE && turn_should_yield(e, w, j->priority)) {
            rc = CUZK_E_BUSY;
            break;
        }
        if (!e->dev_busy[w->dev] && turn_first(e, w->dev) == w) {
            e->dev_busy[w->dev] = true;
            break;
        }
        /* woken by a turn's release and by every partition queued for a prover */
        pthread_cond_wait(&e->prove_cv, &e->mu);
    }
    w->turn_wait = false;
    if (rc) pthread_cond_broadcast(&e->prove_cv);   /* the next waiter may be first now */
    pthread_mutex_unlock(&e->mu);
    return rc;
}

void dev_turn_release(struct engine *e, unsigned d)
{
    pthread_mutex_lock(&e->mu);
    e->dev_busy[d] = false;
    pthread_cond_broadcast(&e->prove_cv);
    pthread_mutex_unlock(&e->mu);
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct engine *e = w->e;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        pthread_cond_t *cv = w->prover ? &e->prove_cv : &e->synth_cv;
        /* On shutdown synthesis workers leave once their queue is empty; provers stay while
         * any partition is in flight, since a synthesized one may still arrive. */
        while (!has_work(e, w) && !(e->stopping && (!w->prover || e->parts_in_flight == 0)))
            pthread_cond_wait(cv, &e->mu);
        if (!has_work(e, w)) break;
        struct qitem it = take_work(e, w);
        struct job *j = it.job;
        struct part *pt = &j->parts[it.part];
        if (!w->prover) {
            j->parts_queued--;
            j->parts_running++;
            j->refs++;
            e->parts_in_flight++;
            pt->state = PART_SYNTHESIZING;
            if (j->state == JOB_QUEUED) {
                j->state = JOB_RUNNING;
                j->start_ns = cuzk_now_ns();
                cuzk_log(CLOG_DEBUG, "job dequeued for proving: job=%s", CLOG_ID(j->id));
            }
        } else {
            pt->state = PART_PROVING;
        }
        w->busy = true;
        w->busy_since_ns = cuzk_now_ns();
        snprintf(w->job_id, sizeof w->job_id, "%s", j->id);
        w->kind = j->kind;
        w->partition = (int)it.part;
        pthread_mutex_unlock(&e->mu);
        if (w->prover) prove_one(e, w, j, it.part);
        else synth_one(e, w, j, it.part);
        pthread_mutex_lock(&e->mu);
        w->busy = false;
        w->job_id[0] = 0;
    }
    e->n_live--;
    pthread_cond_broadcast(&e->drain_cv);
    pthread_mutex_unlock(&e->mu);
    return NULL;
}
