/* test_engine_gpu.c: the engine's GPU worker logic with fake devices behind the engine's
 * backend interface (struct engine_backend; CI has no GPU): the
 * backend runs only under its device's lock and never twice at once on a device, every
 * partition of a job runs on one device, the SRS tiers (VRAM after PreloadSRS, host when the
 * key does not fit, one resident key per device), unload on evict, contexts freed, and the
 * status snapshot (each GPU once, name, memory, workers). The fake backend computes with the
 * CPU backend and every proof is verified by the engine, so wrong plumbing fails the jobs. */
#include "test.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(engine_gpu_needs_daemon_build) { test_skip("built with CUZK_CLIENT=0: no daemon engine"); }
#else
#include <pthread.h>
#include <unistd.h>

#include "cuzk/circuits.h"
#include "cuzk/engine.h"
#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_kit.h"

#define NDEV 2

struct fake_gpu {
    int ordinal;
    pthread_mutex_t mu;
    volatile int held, inside;
    const struct g16_pk *pk;            /* "resident" key */
    const struct g16_shape *shape;
    bool nomem;                         /* load_pk answers CUZK_E_GPU_NOMEM */
    unsigned delay_us;                  /* extra time per prove: a slower card */
    unsigned prove_nomem;               /* the next N prove calls answer CUZK_E_GPU_NOMEM */
    unsigned calls, unloads, freed;
};

static struct fake_gpu fakes[NDEV];
static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
/* The order in which the devices ran backend calls (by shape: one circuit per job in the tests
 * that read it), and a gate that holds every backend call while closed, so a test can fill the
 * queues while a partition holds the device. */
static const struct g16_shape *order[256];
static unsigned n_order;
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_closed;
static bool stage_gate_closed;
static unsigned stage_hold_at;   /* the stage call of this number (1, 2, ...) waits for the stage gate */
static void stage_gate_set(bool closed)
{
    pthread_mutex_lock(&gate_mu);
    stage_gate_closed = closed;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}
static void gate_set(bool closed)
{
    pthread_mutex_lock(&gate_mu);
    gate_closed = closed;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}
static unsigned violations_unlocked, violations_overlap, violations_mixed;
static struct { const struct g16_shape *shape; int dev; } seen[64];
static unsigned n_seen;

/* the backend's self is the fakes array; device d is fakes[d] */
static int f_info(void *self, unsigned d, char *name, size_t cap, uint64_t *total, uint64_t *free_b)
{
    struct fake_gpu *g = &((struct fake_gpu *)self)[d];
    snprintf(name, cap, "Fake GPU %d", g->ordinal);
    *total = 16ull << 30;
    *free_b = 8ull << 30;
    return CUZK_OK;
}
static void f_destroy(void *self)
{
    for (int d = 0; d < NDEV; d++) ((struct fake_gpu *)self)[d].freed++;
}
static __thread int t_holds;   /* this thread holds a device lock */
static void f_lock(void *self, unsigned d)
{
    struct fake_gpu *g = &((struct fake_gpu *)self)[d];
    pthread_mutex_lock(&g->mu);
    g->held = 1;
    t_holds = 1;
}
static void f_unlock(void *self, unsigned d)
{
    struct fake_gpu *g = &((struct fake_gpu *)self)[d];
    t_holds = 0;
    g->held = 0;
    pthread_mutex_unlock(&g->mu);
}

/* witness prefetch: staged witnesses by aux pointer; the backend takes (removes) its own */
#define MAX_STAGED 64
static const void *staged[MAX_STAGED];
static unsigned n_stage, n_taken, n_dropped, violations_stage;
static bool stage_take(const void *aux)
{
    for (unsigned i = 0; i < MAX_STAGED; i++)
        if (staged[i] == aux) {
            staged[i] = NULL;
            return true;
        }
    return false;
}
static int f_stage(void *self, unsigned d, const struct g16_shape *s, const struct g16_assignment *w,
                   struct cuzk_error *err)
{
    (void)self, (void)d, (void)s, (void)err;
    pthread_mutex_lock(&rec_mu);
    if (t_holds) violations_stage++;   /* the upload must not hold the device lock */
    const unsigned call = ++n_stage;
    unsigned i = 0;
    while (i < MAX_STAGED && staged[i]) i++;
    if (i < MAX_STAGED) staged[i] = w->aux;
    else violations_stage++;
    pthread_mutex_unlock(&rec_mu);
    pthread_mutex_lock(&gate_mu);
    while (call == stage_hold_at && stage_gate_closed) pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    return CUZK_OK;
}
static void f_unstage(void *self, unsigned d, const struct g16_shape *s, const struct g16_assignment *w)
{
    (void)self, (void)d, (void)s;
    pthread_mutex_lock(&rec_mu);
    if (t_holds) violations_stage++;
    if (stage_take(w->aux)) n_dropped++;
    pthread_mutex_unlock(&rec_mu);
}
static int f_load_shape(void *self, unsigned d, const struct g16_shape *s, struct cuzk_error *err)
{
    (void)err;
    struct fake_gpu *g = &((struct fake_gpu *)self)[d];
    if (!g->held) violations_unlocked++;
    g->shape = s;
    return CUZK_OK;
}
/* Copy mode (ops load_pk_copies): like the real context, load_pk copies the key's points and
 * prove reads only that copy, so the engine may free the host copy; a load_pk that finds the
 * host points gone counts as a violation. */
static bool copy_mode;
static struct g16_pk copies[NDEV];
static unsigned violations_no_host_key;
static void copy_free(int d)
{
    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    g16_pk_vectors(&copies[d], v, nb);
    for (int k = 0; k < G16_PK_VECTORS; k++) free(v[k]);
    memset(&copies[d], 0, sizeof copies[d]);
}
/* every key upload (a load_pk that replaced the device's key), in order */
static const struct g16_pk *uploaded[64];
static unsigned n_uploads;
static unsigned uploads_of(const struct g16_pk *pk)
{
    pthread_mutex_lock(&rec_mu);
    unsigned n = 0;
    for (unsigned i = 0; i < n_uploads; i++) n += uploaded[i] == pk;
    pthread_mutex_unlock(&rec_mu);
    return n;
}
static int f_load_pk(void *self, unsigned d, const struct g16_pk *pk, struct cuzk_error *err)
{
    struct fake_gpu *g = &((struct fake_gpu *)self)[d];
    if (!g->held) violations_unlocked++;
    if (g->pk == pk) return CUZK_OK;
    g->pk = NULL;   /* like the real context: the old key goes first */
    if (copy_mode) copy_free((int)d);
    if (g->nomem) return cuzk_fail(err, CUZK_E_GPU_NOMEM, "fake: not enough GPU memory");
    pthread_mutex_lock(&rec_mu);
    if (n_uploads < 64) uploaded[n_uploads++] = pk;
    pthread_mutex_unlock(&rec_mu);
    if (copy_mode) {
        void *v[G16_PK_VECTORS], *c[G16_PK_VECTORS];
        size_t nb[G16_PK_VECTORS];
        g16_pk_vectors(pk, v, nb);
        copies[d] = *pk;
        memset(&copies[d].vk, 0, sizeof copies[d].vk);   /* the backend reads only its size */
        copies[d].vk.n_ic = pk->vk.n_ic;
        for (int k = 0; k < G16_PK_VECTORS; k++) {
            if (nb[k] && !v[k]) violations_no_host_key++;
            c[k] = malloc(nb[k] ? nb[k] : 1);
            ASSERT(c[k]);
            if (nb[k] && v[k]) memcpy(c[k], v[k], nb[k]);
        }
        copies[d].h = c[0], copies[d].l = c[1], copies[d].a = c[2], copies[d].b_g1 = c[3], copies[d].b_g2 = c[4];
    }
    g->pk = pk;
    return CUZK_OK;
}
static void f_unload(void *self, unsigned d)
{
    struct fake_gpu *g = &((struct fake_gpu *)self)[d];
    if (!g->held) violations_unlocked++;
    g->pk = NULL;
    g->shape = NULL;
    g->unloads++;
    if (copy_mode) copy_free((int)d);
}
/* The bookkeeping of a backend call on device d (both kinds): the lock, overlap, its staged
 * witness, one device per job, the call order, then the gate. */
static void fake_enter(struct fake_gpu *g, int dev, const struct g16_shape *s, const struct g16_assignment *w)
{
    if (__atomic_add_fetch(&g->inside, 1, __ATOMIC_SEQ_CST) != 1) violations_overlap++;
    pthread_mutex_lock(&rec_mu);
    if (!g->held) violations_unlocked++;
    g->calls++;
    if (stage_take(w->aux)) n_taken++;   /* its own witness, staged before the lock */
    else violations_stage++;
    unsigned i = 0;
    while (i < n_seen && seen[i].shape != s) i++;   /* one circuit per job: shape = job */
    if (i == n_seen && n_seen < 64) {
        seen[i].shape = s;
        seen[i].dev = dev;
        n_seen++;
    } else if (i < n_seen && seen[i].dev != dev) {
        violations_mixed++;
    }
    if (n_order < 256) order[n_order++] = s;
    pthread_mutex_unlock(&rec_mu);
    pthread_mutex_lock(&gate_mu);
    while (gate_closed) pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
}

static int f_prove(void *self, unsigned d, struct g16_msm_results *out, const struct g16_shape *s,
                   const struct g16_pk *pk, const struct g16_assignment *w, struct g16_timings *t,
                   struct cuzk_error *err)
{
    struct fake_gpu *g = &((struct fake_gpu *)self)[d];
    fake_enter(g, (int)d, s, w);
    usleep(3000 + g->delay_us);   /* widen the window in which a second worker could overlap */
    if (g->prove_nomem) {   /* another process holds the memory: nothing computed */
        g->prove_nomem--;
        __atomic_sub_fetch(&g->inside, 1, __ATOMIC_SEQ_CST);
        return cuzk_fail(err, CUZK_E_GPU_NOMEM, "fake: cudaMalloc: out of memory");
    }
    if (copy_mode && g->pk != pk) violations_no_host_key++;   /* proved a key it does not hold */
    int rc = g16_backend_cpu(out, s, copy_mode ? &copies[d] : pk, w, NULL, t, err);
    __atomic_sub_fetch(&g->inside, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* Beside the resident key: proves from the host key (the real backend streams it), leaves the
 * device's key and shape as they are. beside_nomem: it does not fit (nothing happens). */
static bool beside_nomem;
static unsigned n_beside, n_beside_refused, violations_beside;
static int f_prove_beside(void *self, unsigned d, struct g16_msm_results *out, const struct g16_shape *s,
                          const struct g16_pk *pk, const struct g16_assignment *w, struct g16_timings *t,
                          struct cuzk_error *err)
{
    struct fake_gpu *g = &((struct fake_gpu *)self)[d];
    pthread_mutex_lock(&rec_mu);
    const bool refuse = beside_nomem;
    if (!g->held) violations_unlocked++;
    if (refuse) n_beside_refused++;
    else n_beside++;
    pthread_mutex_unlock(&rec_mu);
    if (refuse) return cuzk_fail(err, CUZK_E_GPU_NOMEM, "fake: does not fit beside the resident key");
    const struct g16_pk *res_pk = g->pk;
    const struct g16_shape *res_shape = g->shape;
    fake_enter(g, (int)d, s, w);
    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    g16_pk_vectors(pk, v, nb);
    pthread_mutex_lock(&rec_mu);
    for (int k = 0; k < G16_PK_VECTORS; k++)
        if (nb[k] && !v[k]) violations_no_host_key++;   /* streamed from a host copy that is gone */
    if (g->pk == pk) violations_beside++;               /* beside its own resident key */
    pthread_mutex_unlock(&rec_mu);
    usleep(3000 + g->delay_us);
    int rc = g16_backend_cpu(out, s, pk, w, NULL, t, err);
    pthread_mutex_lock(&rec_mu);
    if (g->pk != res_pk || g->shape != res_shape) violations_beside++;   /* the resident ones stay */
    pthread_mutex_unlock(&rec_mu);
    __atomic_sub_fetch(&g->inside, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* host pinning: count what is pinned and unpinned (and the bytes held, as the GPU library's
 * table does); pin_fail makes the next pins fail */
static unsigned n_pins, n_unpins;
static size_t pinned_bytes, pinned_now, pinned_peak;
static struct { void *p; size_t bytes; } pin_held[16];
static bool pin_fail;
static int f_pin(void *self, void *p, size_t bytes, struct cuzk_error *err)
{
    (void)self;
    ASSERT(p && bytes);
    pthread_mutex_lock(&rec_mu);
    bool fail = pin_fail;
    if (!fail) {
        n_pins++, pinned_bytes += bytes;
        for (int i = 0; i < 16; i++)
            if (!pin_held[i].p) {
                pin_held[i].p = p, pin_held[i].bytes = bytes;
                pinned_now += bytes;
                if (pinned_now > pinned_peak) pinned_peak = pinned_now;
                break;
            }
    }
    pthread_mutex_unlock(&rec_mu);
    return fail ? cuzk_fail(err, CUZK_E_GPU, "fake: cudaHostRegister: out of locked memory") : CUZK_OK;
}
static void f_unpin(void *self, void *p)
{
    (void)self;
    ASSERT(p);
    pthread_mutex_lock(&rec_mu);
    n_unpins++;
    for (int i = 0; i < 16; i++)
        if (pin_held[i].p == p) {
            pinned_now -= pin_held[i].bytes;
            pin_held[i].p = NULL;
            break;
        }
    pthread_mutex_unlock(&rec_mu);
}
static void f_pinned(void *self, uint64_t *now, uint64_t *peak)
{
    (void)self;
    pthread_mutex_lock(&rec_mu);
    *now = pinned_now, *peak = pinned_peak;
    pthread_mutex_unlock(&rec_mu);
}

static const int ordinals[NDEV] = {3, 5};
static const struct engine_backend_ops fake_ops = {
    .prove = f_prove, .info = f_info, .lock = f_lock, .unlock = f_unlock,
    .load_shape = f_load_shape, .load_pk = f_load_pk, .unload = f_unload, .stage = f_stage,
    .unstage = f_unstage, .host_pin = f_pin, .host_unpin = f_unpin, .destroy = f_destroy,
};

static const struct engine_backend_ops fake_copy_ops = {
    .prove = f_prove, .info = f_info, .lock = f_lock, .unlock = f_unlock,
    .load_shape = f_load_shape, .load_pk = f_load_pk, .unload = f_unload, .stage = f_stage,
    .unstage = f_unstage, .host_pin = f_pin, .host_unpin = f_unpin, .host_pinned = f_pinned,
    .destroy = f_destroy, .load_pk_copies = true,
};

static uint64_t budget_next;   /* the next engine's memory budget (0: 1 GiB) */
static struct engine_telemetry telemetry_next;   /* the next engine's GPU telemetry */
static unsigned workers_next;  /* the next engine's prover workers per device (0: 2) */

/* An engine on the first ndev fake devices (workers_next or 2 prover workers each, 2
 * synthesis workers, budget_next or 1 GiB). */
static struct engine *start_n(const struct engine_backend_ops *ops, const char *param_cache, unsigned ndev)
{
    for (int d = 0; d < NDEV; d++) {
        memset(&fakes[d], 0, sizeof fakes[d]);
        fakes[d].ordinal = ordinals[d];
        pthread_mutex_init(&fakes[d].mu, NULL);
    }
    struct engine_backend be;
    memset(&be, 0, sizeof be);
    be.ops = ops;
    be.self = fakes;
    copy_mode = ops->load_pk_copies;
    violations_no_host_key = 0;
    be.n_devices = ndev;
    memcpy(be.ordinals, ordinals, sizeof ordinals);
    n_order = 0;
    gate_set(false);
    stage_gate_set(false);
    stage_hold_at = 0;
    n_uploads = 0;
    beside_nomem = false;
    n_beside = n_beside_refused = violations_beside = 0;
    memset(staged, 0, sizeof staged);
    n_stage = n_taken = n_dropped = violations_stage = 0;
    n_pins = n_unpins = 0;
    pinned_bytes = pinned_now = pinned_peak = 0;
    memset(pin_held, 0, sizeof pin_held);
    pin_fail = false;
    struct engine_config cfg;
    engine_config_defaults(&cfg);
    cfg.mem_auto = false;
    cfg.mem_budget = budget_next ? budget_next : 1ull << 30;
    budget_next = 0;
    cfg.workers_per_device = workers_next ? workers_next : 2;
    workers_next = 0;
    cfg.synthesis_workers = 2;
    snprintf(cfg.param_cache, sizeof cfg.param_cache, "%s", param_cache);
    cfg.srs_validation = G16_VALIDATE_CURVE;
    cfg.telemetry = telemetry_next;
    memset(&telemetry_next, 0, sizeof telemetry_next);
    clog_set_level(CLOG_WARN);
    struct cuzk_error err_s, *err = &err_s;
    struct engine *e = engine_new(&cfg, &be, err);
    ASSERT_MSG(e, "engine_new: %s", err->msg);
    return e;
}

static const struct engine_backend_ops fake_beside_ops = {
    .prove = f_prove, .info = f_info, .lock = f_lock, .unlock = f_unlock,
    .load_shape = f_load_shape, .load_pk = f_load_pk, .unload = f_unload, .stage = f_stage,
    .unstage = f_unstage, .host_pin = f_pin, .host_unpin = f_unpin, .host_pinned = f_pinned,
    .destroy = f_destroy, .load_pk_copies = true, .prove_beside = f_prove_beside,
};

static struct engine *start_with(const struct engine_backend_ops *ops, const char *param_cache)
{
    return start_n(ops, param_cache, NDEV);
}

static struct engine *start(void)
{
    return start_with(&fake_ops, "/nonexistent-cuzk-test");   /* local setups */
}

static const struct engine_srs_snap *find_srs(const struct engine_snapshot *s, const char *id)
{
    for (size_t i = 0; i < s->n_srs; i++)
        if (!strcmp(s->srs[i].circuit_id, id)) return &s->srs[i];
    return NULL;
}

/* partitions of job id in state st (enum engine_part_state), from the status snapshot */
static unsigned parts_in(struct engine *e, const char *id, int st)
{
    struct cuzk_error err_s, *err = &err_s;
    struct engine_snapshot s;
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    unsigned n = 0;
    for (size_t i = 0; i < s.n_jobs; i++)
        if (!strcmp(s.jobs[i].id, id))
            for (uint32_t p = 0; p < s.jobs[i].n_parts; p++) n += s.jobs[i].parts[p].state == st;
    engine_snapshot_free(&s);
    return n;
}

/* a counter the fakes write under rec_mu */
static unsigned rec_read(const unsigned *v)
{
    pthread_mutex_lock(&rec_mu);
    unsigned x = *v;
    pthread_mutex_unlock(&rec_mu);
    return x;
}

static void await_ok(struct engine *e, const char *id, uint32_t parts)
{
    struct cuzk_error err_s, *err = &err_s;
    struct engine_result res;
    ASSERT_OK(engine_await(e, id, 120000, &res, err), err);
    ASSERT_MSG(res.status == ENGINE_COMPLETED, "job %s: %s %s", id, engine_status_name(res.status), res.error);
    ASSERT_EQ_U64(res.proof_len, (uint64_t)parts * G16_PROOF_BYTES);
    engine_result_free(&res);
}

TEST_T(fake_gpus_lock_affinity_tiers_status, 120)
{
    struct cuzk_error err_s, *err = &err_s;
    struct engine *e = start();
    struct engine_snapshot s;

    /* PreloadSRS puts the key into VRAM on every GPU */
    bool already;
    uint64_t ms;
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    ASSERT_EQ_U64(s.n_gpus, NDEV);
    ASSERT_STR_CONTAINS(s.prover, "gpu");
    const struct engine_srs_snap *x = find_srs(&s, "synthetic-64");
    ASSERT(x);
    ASSERT_STR_CONTAINS(x->tier, "vram");
    ASSERT_EQ_U64(x->vram_mask, 3);
    engine_snapshot_free(&s);
    ASSERT(fakes[0].pk && fakes[0].pk == fakes[1].pk);

    /* four jobs of distinct circuits, several partitions each, on 2 GPUs x 2 workers */
    static const uint64_t sizes[4] = {64, 96, 128, 160};
    char ids[4][16];
    for (int i = 0; i < 4; i++) {
        snprintf(ids[i], sizeof ids[i], "job-%d", i);
        submit(e, ids[i], sizes[i], 5);
    }
    for (int i = 0; i < 4; i++) await_ok(e, ids[i], 5);
    ASSERT_EQ_U64(fakes[0].calls + fakes[1].calls, 20);
    ASSERT_EQ_U64(n_seen, 4);
    ASSERT_EQ_U64(violations_unlocked, 0);   /* backend and residency only under the lock */
    ASSERT_EQ_U64(violations_overlap, 0);    /* one kernel sequence per GPU at a time */
    ASSERT_EQ_U64(violations_mixed, 0);      /* a job's partitions never change GPU */
    /* every proof's witness was staged outside the lock and taken by its own backend call */
    ASSERT_EQ_U64(violations_stage, 0);
    ASSERT_EQ_U64(n_stage, 20);
    ASSERT_EQ_U64(n_taken, 20);
    ASSERT_EQ_U64(n_dropped, 0);

    /* status: each GPU once, with its name, memory and workers; at most one key per GPU */
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    ASSERT_EQ_U64(s.n_gpus, NDEV);
    for (int d = 0; d < NDEV; d++) {
        ASSERT_EQ_INT(s.gpus[d].ordinal, ordinals[d]);
        char want[32];
        snprintf(want, sizeof want, "Fake GPU %d", ordinals[d]);
        ASSERT_STR_CONTAINS(s.gpus[d].name, want);
        ASSERT_EQ_U64(s.gpus[d].vram_total, 16ull << 30);
        ASSERT_EQ_U64(s.gpus[d].workers, 2);
        unsigned keys = 0;
        for (size_t i = 0; i < s.n_srs; i++) keys += (s.srs[i].vram_mask >> d) & 1;
        ASSERT_MSG(keys == (fakes[d].pk ? 1u : 0u), "GPU %d: %u entries claim VRAM", d, keys);
    }
    size_t gpu_workers = 0;
    for (size_t i = 0; i < s.n_workers; i++) gpu_workers += s.workers[i].gpu_ordinal >= 0;
    ASSERT_EQ_U64(gpu_workers, 4);
    engine_snapshot_free(&s);

    /* evict: the VRAM copies are unloaded on the GPUs that held anything of the entry */
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);   /* resident again */
    unsigned u0 = fakes[0].unloads, u1 = fakes[1].unloads;
    bool was;
    uint64_t freed;
    ASSERT_OK(engine_evict(e, "synthetic-64", &was, &freed, err), err);
    ASSERT(was && freed > 0);
    ASSERT_EQ_U64(fakes[0].unloads, u0 + 1);
    ASSERT_EQ_U64(fakes[1].unloads, u1 + 1);
    ASSERT(!fakes[0].pk && !fakes[1].pk);

    /* a key that does not fit stays in host memory and is streamed, pinned once for direct
     * DMA (both devices tried it: one pin per key vector); proofs still complete */
    ASSERT_EQ_U64(n_pins, 0);   /* resident keys are never pinned */
    fakes[0].nomem = fakes[1].nomem = true;
    ASSERT_OK(engine_preload(e, "synthetic-32", &already, &ms, err), err);
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    x = find_srs(&s, "synthetic-32");
    ASSERT(x);
    ASSERT_STR_CONTAINS(x->tier, "pinned");
    ASSERT_EQ_U64(x->vram_mask, 0);
    engine_snapshot_free(&s);
    ASSERT_EQ_U64(n_pins, 5);
    ASSERT(pinned_bytes > 0);
    pthread_mutex_lock(&rec_mu);
    n_seen = 0;   /* the new entry may sit at the evicted one's address: shape pointers repeat */
    pthread_mutex_unlock(&rec_mu);
    submit(e, "streamed", 32, 2);
    await_ok(e, "streamed", 2);
    ASSERT_EQ_U64(violations_unlocked, 0);
    ASSERT_EQ_U64(violations_overlap, 0);
    ASSERT_EQ_U64(violations_mixed, 0);

    /* evicting the pinned entry unpins every vector; a key whose pinning fails stays "host" */
    ASSERT_OK(engine_evict(e, "synthetic-32", &was, &freed, err), err);
    ASSERT_EQ_U64(n_unpins, 5);
    pin_fail = true;
    ASSERT_OK(engine_preload(e, "synthetic-16", &already, &ms, err), err);
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    x = find_srs(&s, "synthetic-16");
    ASSERT(x);
    ASSERT_STR_CONTAINS(x->tier, "host");
    engine_snapshot_free(&s);
    ASSERT_EQ_U64(n_pins, 5);

    engine_shutdown(e, 5000);
    engine_free(e);
    ASSERT_EQ_U64(n_unpins, 5);   /* the failed entry had nothing to unpin */
    ASSERT_EQ_U64(fakes[0].freed, 1);   /* the engine owned and freed both contexts */
    ASSERT_EQ_U64(fakes[1].freed, 1);
}

/* Two cards of different speeds (the second 15x slower per partition): every job completes,
 * the fast card takes most partitions and the slow one still takes some; neither starves. */
TEST_T(fake_gpus_of_different_speeds_both_prove, 120)
{
    struct engine *e = start();
    fakes[1].delay_us = 45000;
    char ids[24][16];
    for (int i = 0; i < 24; i++) {
        snprintf(ids[i], sizeof ids[i], "mix-%d", i);
        submit(e, ids[i], 64, 1);
    }
    for (int i = 0; i < 24; i++) await_ok(e, ids[i], 1);
    ASSERT_EQ_U64(fakes[0].calls + fakes[1].calls, 24);
    ASSERT_MSG(fakes[1].calls >= 1, "the slow card proved nothing (fast %u, slow %u)", fakes[0].calls,
               fakes[1].calls);
    ASSERT_MSG(fakes[0].calls > fakes[1].calls, "the fast card did not take more (fast %u, slow %u)",
               fakes[0].calls, fakes[1].calls);
    ASSERT_EQ_U64(violations_unlocked, 0);
    ASSERT_EQ_U64(violations_overlap, 0);
    engine_shutdown(e, 5000);
    engine_free(e);
}

/* Deadlines under load (issue 48): one device whose two prover workers are both busy with a
 * NORMAL job of several partitions (one holds the device, the other has staged its witness and
 * waits for the device, the rest are synthesized and queued). A CRITICAL job that arrives then
 * must be the device's next backend call: neither a queued NORMAL partition nor the NORMAL
 * witness staged ahead may get the device first. The oracle is the fake device's own record
 * of the order of its backend calls. */
TEST_T(critical_job_is_the_next_on_a_busy_device, 60)
{
    struct engine *e = start_n(&fake_ops, "/nonexistent-cuzk-test", 1);
    gate_set(true);   /* the first backend call holds the device until the gate opens */
    submit(e, "bulk", 64, 6);
    for (int i = 0; i < 10000 && !(rec_read(&n_order) == 1 && rec_read(&n_stage) == 2 &&
                                   parts_in(e, "bulk", PART_SYNTH_DONE) == 4); i++)
        usleep(1000);
    ASSERT_EQ_U64(rec_read(&n_order), 1);   /* one partition on the device */
    ASSERT_EQ_U64(rec_read(&n_stage), 2);   /* the second one staged, waiting for the device */
    ASSERT_EQ_U64(parts_in(e, "bulk", PART_SYNTH_DONE), 4);   /* four queued for a prover */
    const struct g16_shape *bulk_shape = order[0];

    submit_prio(e, "winning", 32, 1, 4);
    for (int i = 0; i < 10000 && parts_in(e, "winning", PART_PENDING) + parts_in(e, "winning", PART_SYNTHESIZING); i++)
        usleep(1000);
    ASSERT_EQ_U64(parts_in(e, "winning", PART_PENDING) + parts_in(e, "winning", PART_SYNTHESIZING), 0);
    /* give a waiting worker the time to take it over (a third witness staged): the old engine
     * never does, and the gate then opens after 2 s */
    for (int i = 0; i < 2000 && rec_read(&n_stage) < 3; i++) usleep(1000);
    gate_set(false);
    await_ok(e, "winning", 1);
    await_ok(e, "bulk", 6);

    pthread_mutex_lock(&rec_mu);
    unsigned calls = n_order, normal_before = 0;
    for (unsigned i = 1; i < calls && order[i] == bulk_shape; i++) normal_before++;
    pthread_mutex_unlock(&rec_mu);
    ASSERT_EQ_U64(calls, 7);
    ASSERT_MSG(normal_before == 0, "%u NORMAL partition(s) got the device after the CRITICAL job was "
               "ready and before it (backend calls in order: the running NORMAL one, then %u NORMAL)",
               normal_before, normal_before);
    /* every witness staged was proved or dropped by its own partition, none under the lock */
    ASSERT_EQ_U64(violations_stage, 0);
    ASSERT_EQ_U64(n_taken, 7);
    ASSERT_EQ_U64(n_stage, n_taken + n_dropped);
    ASSERT_EQ_U64(violations_unlocked, 0);
    ASSERT_EQ_U64(violations_overlap, 0);
    engine_shutdown(e, 5000);
    engine_free(e);
}

/* The shutdown line counts every partition on a prover, also those of jobs that cannot finish
 * within the grace (issue 49: "0 partition(s) on a prover" while provers ran). Of a
 * six-partition job, one partition holds the device (the gate) and the other worker's waits for
 * it with its witness staged when the engine shuts down; the log line, captured from stderr,
 * must count both (the engine's own partition states are the oracle). */
TEST_T(shutdown_counts_every_partition_on_a_prover, 60)
{
    struct engine *e = start_n(&fake_ops, "/nonexistent-cuzk-test", 1);
    gate_set(true);
    submit(e, "bulk", 64, 6);
    for (int i = 0; i < 10000 && !(rec_read(&n_order) == 1 && rec_read(&n_stage) == 2); i++) usleep(1000);
    ASSERT_EQ_U64(rec_read(&n_order), 1);   /* one partition on the device, held there */
    ASSERT_EQ_U64(rec_read(&n_stage), 2);   /* the other worker's staged, waiting for the device */
    const unsigned proving = parts_in(e, "bulk", PART_PROVING);
    ASSERT_EQ_U64(proving, 2);
    char path[] = "/tmp/cuzk-shutdown-log-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    clog_set_level(CLOG_INFO);
    engine_shutdown(e, 200);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    clog_set_level(CLOG_WARN);
    gate_set(false);
    engine_free(e);
    char buf[8192];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    ASSERT(n > 0);
    buf[n] = 0;
    const char *line = strstr(buf, "shutting down cuzk engine: ");
    ASSERT_MSG(line, "no shutdown line in: %s", buf);
    unsigned on_prover = 99, finishing = 99;
    ASSERT(sscanf(line, "shutting down cuzk engine: %u partition(s) on a prover (%u job(s)", &on_prover,
                  &finishing) == 2);
    ASSERT_MSG(on_prover == proving, "%u partition(s) counted on a prover, %u were", on_prover, proving);
    ASSERT_EQ_U64(finishing, 0);   /* five more partitions: it cannot finish within the grace */
    ASSERT_STR_CONTAINS(buf, "1 unfinished job(s) cancelled");   /* no journal: cancelled at once */
}

/* The memory budget a SYNTHETIC partition of n constraints reserves (budget_partition: the
 * witness, and 4 domain vectors for proving), from the circuit's own shape. */
static uint64_t working_set(uint64_t n)
{
    struct cuzk_error err_s, *err = &err_s;
    struct synth_params sp = {.n_constraints = n, .n_public = 2};
    struct g16_shape shape;
    ASSERT_OK(synth_build_shape(&shape, &sp, err), err);
    uint64_t dom = 1;
    while (dom < shape.n_constraints) dom <<= 1;
    uint64_t w = ((uint64_t)shape.n_inputs + shape.n_aux) * sizeof(fr_t) + 4 * dom * sizeof(fr_t);
    g16_shape_free(&shape);
    return w;
}

/* The same under memory pressure: the budget holds both keys and two NORMAL partitions, so the
 * two synthesis workers wait for memory with NORMAL partitions of their own while the first two
 * are on the provers. A CRITICAL partition (which fits the memory left) must be synthesized
 * and proved next all the same, not after a NORMAL partition's memory comes back. */
TEST_T(critical_job_is_synthesized_while_normal_ones_wait_for_memory, 60)
{
    struct cuzk_error err_s, *err = &err_s;
    bool already;
    uint64_t ms;
    /* the keys' budget charge, from an engine that loads them */
    struct engine *e = start_n(&fake_ops, "/nonexistent-cuzk-test", 1);
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    ASSERT_OK(engine_preload(e, "synthetic-32", &already, &ms, err), err);
    struct engine_snapshot s;
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    const uint64_t keys = s.mem_used;
    engine_snapshot_free(&s);
    engine_shutdown(e, 5000);
    engine_free(e);
    const uint64_t w64 = working_set(64), w32 = working_set(32);
    ASSERT(w32 < w64);
    budget_next = keys + 2 * w64 + w32;   /* a third NORMAL partition does not fit, a CRITICAL one does */

    e = start_n(&fake_ops, "/nonexistent-cuzk-test", 1);
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    ASSERT_OK(engine_preload(e, "synthetic-32", &already, &ms, err), err);
    gate_set(true);
    submit(e, "bulk", 64, 6);
    for (int i = 0; i < 10000 && !(rec_read(&n_order) == 1 && rec_read(&n_stage) == 2 &&
                                   parts_in(e, "bulk", PART_SYNTHESIZING) == 2); i++)
        usleep(1000);
    ASSERT_EQ_U64(rec_read(&n_order), 1);
    ASSERT_EQ_U64(rec_read(&n_stage), 2);
    ASSERT_EQ_U64(parts_in(e, "bulk", PART_SYNTHESIZING), 2);   /* both synthesis workers wait for memory */
    ASSERT_EQ_U64(parts_in(e, "bulk", PART_PENDING), 2);
    const struct g16_shape *bulk_shape = order[0];

    submit_prio(e, "winning", 32, 1, 4);
    /* synthesized while the device is still held (the gate is closed) */
    for (int i = 0; i < 3000 && parts_in(e, "winning", PART_PENDING) + parts_in(e, "winning", PART_SYNTHESIZING); i++)
        usleep(1000);
    unsigned waiting = parts_in(e, "winning", PART_PENDING) + parts_in(e, "winning", PART_SYNTHESIZING);
    for (int i = 0; i < 2000 && !waiting && rec_read(&n_stage) < 3; i++) usleep(1000);
    gate_set(false);
    await_ok(e, "winning", 1);
    await_ok(e, "bulk", 6);
    ASSERT_MSG(!waiting, "the CRITICAL partition was not synthesized while NORMAL partitions waited for memory");
    pthread_mutex_lock(&rec_mu);
    unsigned calls = n_order, normal_before = 0;
    for (unsigned i = 1; i < calls && order[i] == bulk_shape; i++) normal_before++;
    pthread_mutex_unlock(&rec_mu);
    ASSERT_EQ_U64(calls, 7);
    ASSERT_MSG(normal_before == 0, "%u NORMAL partition(s) got the device before the CRITICAL one", normal_before);
    ASSERT_EQ_U64(violations_stage, 0);
    ASSERT_EQ_U64(n_taken, 7);
    ASSERT_EQ_U64(n_stage, n_taken + n_dropped);
    engine_shutdown(e, 5000);
    engine_free(e);
}

static bool host_copy(struct engine *e, const char *id)
{
    struct cuzk_error err_s, *err = &err_s;
    struct engine_snapshot s;
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    const struct engine_srs_snap *x = find_srs(&s, id);
    ASSERT_MSG(x, "%s not loaded", id);
    bool h = x->host_key;
    engine_snapshot_free(&s);
    return h;
}

/* A backend that keeps its own copy of the key (the GPU's VRAM): once every device holds a key
 * read from a file, the engine frees the host copy; when a device lost it (another circuit's
 * key took its place) the next proof reads it back from the file first, and a file that
 * changed meanwhile is refused by name. Every proof is verified by the engine. */
TEST_T(host_copy_of_a_resident_key_is_released_and_read_back, 120)
{
    struct cuzk_error err_s, *err = &err_s;
    char dir[] = "/tmp/cuzk-test-release-XXXXXX";
    ASSERT(mkdtemp(dir));
    static const uint64_t sizes[2] = {64, 32};
    char path[2][96];
    for (int i = 0; i < 2; i++) {
        struct synth_params sp = {.n_constraints = sizes[i], .n_public = 2};
        struct g16_shape shape;
        struct g16_pk pk;
        ASSERT_OK(synth_build_shape(&shape, &sp, err), err);
        ASSERT_OK(g16_setup(&pk, &shape, NULL, pool_default(), err), err);
        snprintf(path[i], sizeof path[i], "%s/synthetic-%llu.params", dir, (unsigned long long)sizes[i]);
        ASSERT_OK(g16_params_write(&pk, path[i], err), err);
        g16_pk_free(&pk);
        g16_shape_free(&shape);
    }
    struct engine *e = start_with(&fake_copy_ops, dir);
    bool already;
    uint64_t ms;
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    ASSERT(!host_copy(e, "synthetic-64"));   /* both devices hold it: host copy freed */
    submit(e, "r-0", 64, 4);
    await_ok(e, "r-0", 4);

    /* synthetic-32 takes both devices; then a synthetic-64 job needs its key read back */
    ASSERT_OK(engine_preload(e, "synthetic-32", &already, &ms, err), err);
    ASSERT(!host_copy(e, "synthetic-32"));
    submit(e, "r-1", 64, 3);
    await_ok(e, "r-1", 3);
    ASSERT(host_copy(e, "synthetic-64"));   /* on one device only: the host copy stays */
    submit(e, "r-2", 32, 2);
    await_ok(e, "r-2", 2);
    ASSERT_EQ_U64(violations_no_host_key, 0);
    ASSERT_EQ_U64(violations_unlocked, 0);

    /* the file changes under a released key: the job fails naming the file, nothing is proved
     * with a key the engine did not load */
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    ASSERT_OK(engine_preload(e, "synthetic-32", &already, &ms, err), err);
    ASSERT(!host_copy(e, "synthetic-32"));
    {
        struct synth_params sp = {.n_constraints = 32, .n_public = 2};
        struct g16_shape shape;
        struct g16_pk pk;
        ASSERT_OK(synth_build_shape(&shape, &sp, err), err);
        ASSERT_OK(g16_setup(&pk, &shape, NULL, pool_default(), err), err);
        sleep(1);   /* a new mtime */
        ASSERT_OK(g16_params_write(&pk, path[1], err), err);
        g16_pk_free(&pk);
        g16_shape_free(&shape);
        ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);   /* evicts 32 from both */
        submit(e, "r-3", 32, 1);
        struct engine_result res;
        ASSERT_OK(engine_await(e, "r-3", 60000, &res, err), err);
        ASSERT_EQ_INT(res.status, ENGINE_FAILED);
        ASSERT_STR_CONTAINS(res.error, "changed since");
        engine_result_free(&res);
    }
    engine_shutdown(e, 5000);
    engine_free(e);
    for (int i = 0; i < 2; i++) {
        unlink(path[i]);
        char v[256];
        snprintf(v, sizeof v, "%s.validated", path[i]);
        unlink(v);
    }
    rmdir(dir);
}

/* A key the devices could not hold at its preload is pinned and streamed; once every device
 * holds it (the GPU backend's first proof plans again with the packed witness and finds room)
 * the pinned host copy is unpinned and released, not kept for nothing. While one device still
 * streams it, it stays pinned. */
TEST_T(pinned_key_is_unpinned_once_every_device_holds_it, 120)
{
    struct cuzk_error err_s, *err = &err_s;
    char dir[] = "/tmp/cuzk-test-unpin-XXXXXX";
    ASSERT(mkdtemp(dir));
    char path[96];
    {
        struct synth_params sp = {.n_constraints = 64, .n_public = 2};
        struct g16_shape shape;
        struct g16_pk pk;
        ASSERT_OK(synth_build_shape(&shape, &sp, err), err);
        ASSERT_OK(g16_setup(&pk, &shape, NULL, pool_default(), err), err);
        snprintf(path, sizeof path, "%s/synthetic-64.params", dir);
        ASSERT_OK(g16_params_write(&pk, path, err), err);
        g16_pk_free(&pk);
        g16_shape_free(&shape);
    }
    struct engine *e = start_with(&fake_copy_ops, dir);
    bool already;
    uint64_t ms;
    fakes[0].nomem = fakes[1].nomem = true;
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    ASSERT_EQ_U64(n_pins, 5);
    ASSERT(host_copy(e, "synthetic-64"));
    struct engine_snapshot s;
    ASSERT_OK(engine_snapshot(e, &s, err), err);   /* the status reports what the backend holds */
    ASSERT(s.host_pinned > 0);
    ASSERT_EQ_U64(s.host_pinned, pinned_bytes);
    ASSERT_EQ_U64(s.host_pinned_peak, pinned_bytes);
    engine_snapshot_free(&s);

    fakes[0].nomem = false;   /* device 0 holds it now, device 1 still streams it */
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    ASSERT_EQ_U64(n_unpins, 0);
    ASSERT(host_copy(e, "synthetic-64"));

    fakes[1].nomem = false;
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    ASSERT_EQ_U64(n_unpins, 5);
    ASSERT(!host_copy(e, "synthetic-64"));
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    ASSERT_EQ_U64(s.host_pinned, 0);                 /* unpinned: nothing held */
    ASSERT_EQ_U64(s.host_pinned_peak, pinned_bytes);   /* the peak stays */
    const struct engine_srs_snap *x = find_srs(&s, "synthetic-64");
    ASSERT(x);
    ASSERT_STR_CONTAINS(x->tier, "vram");
    ASSERT_EQ_U64(x->vram_mask, 3);
    engine_snapshot_free(&s);
    submit(e, "u-0", 64, 3);   /* proved from the devices' copies, verified by the engine */
    await_ok(e, "u-0", 3);
    ASSERT_EQ_U64(violations_no_host_key, 0);
    ASSERT_EQ_U64(violations_unlocked, 0);
    engine_shutdown(e, 5000);
    engine_free(e);
    ASSERT_EQ_U64(n_unpins, 5);   /* nothing unpinned twice */
    unlink(path);
    char v[128];
    snprintf(v, sizeof v, "%s.validated", path);
    unlink(v);
    rmdir(dir);
}

static void remove_params(const char *dir, uint64_t n)
{
    char path[200];
    snprintf(path, sizeof path, "%s/synthetic-%llu.params", dir, (unsigned long long)n);
    unlink(path);
    snprintf(path, sizeof path, "%s/synthetic-%llu.params.validated", dir, (unsigned long long)n);
    unlink(path);
}

/* What the device did in one run of the case below. */
struct key_run {
    unsigned calls;                       /* backend calls that proved */
    const struct g16_shape *order[8];     /* their circuits in order */
    const struct g16_shape *bulk;         /* the running job's circuit */
    unsigned bulk_key_uploads, late_key_uploads;
    bool bulk_host_copy;                  /* the running job's key was read back from its file */
};

/* One device with three prover workers; keys read from files in dir, so a resident key's host
 * copy is released. A NORMAL job of synthetic-64 (two partitions) runs with its key resident:
 * its first partition holds the device, its second is still being staged by a second worker.
 * Then a job of another circuit (synthetic-32, priority prio) arrives and its partition waits
 * for the device on the third worker. The device is let go for the first partition (the
 * waiting partition may have it now), and after that the staging of the second ends. */
static void run_late_key(const char *dir, const struct engine_backend_ops *ops, int prio, bool nomem,
                         struct key_run *r)
{
    struct cuzk_error err_s, *err = &err_s;
    memset(r, 0, sizeof *r);
    workers_next = 3;
    struct engine *e = start_n(ops, dir, 1);
    bool already;
    uint64_t ms;
    ASSERT_OK(engine_preload(e, "synthetic-64", &already, &ms, err), err);
    const struct g16_pk *bulk_pk = fakes[0].pk;
    ASSERT(bulk_pk);
    ASSERT(!host_copy(e, "synthetic-64"));   /* resident: its host copy was released */
    beside_nomem = nomem;
    gate_set(true);
    stage_hold_at = 2;
    stage_gate_set(true);
    submit(e, "bulk", 64, 2);
    for (int i = 0; i < 10000 && !(rec_read(&n_order) == 1 && rec_read(&n_stage) == 2); i++) usleep(1000);
    ASSERT_EQ_U64(rec_read(&n_order), 1);   /* partition 0 holds the device */
    ASSERT_EQ_U64(rec_read(&n_stage), 2);   /* partition 1 is being staged */
    submit_prio(e, "late", 32, 1, prio);
    for (int i = 0; i < 10000 && parts_in(e, "late", PART_PENDING) + parts_in(e, "late", PART_SYNTHESIZING); i++)
        usleep(1000);
    ASSERT_EQ_U64(parts_in(e, "late", PART_PENDING) + parts_in(e, "late", PART_SYNTHESIZING), 0);
    /* the third worker stages it and waits for the device (unless the engine already knows it
     * must wait for the running job: then it stays queued) */
    for (int i = 0; i < 500 && rec_read(&n_stage) < 3; i++) usleep(1000);
    gate_set(false);
    for (int i = 0; i < 1000 && rec_read(&n_order) < 2 && rec_read(&n_beside_refused) < 1; i++) usleep(1000);
    stage_gate_set(false);
    await_ok(e, "late", 1);
    await_ok(e, "bulk", 2);
    pthread_mutex_lock(&rec_mu);
    r->calls = n_order;
    for (unsigned i = 0; i < n_order && i < 8; i++) r->order[i] = order[i];
    pthread_mutex_unlock(&rec_mu);
    r->bulk = r->order[0];
    r->bulk_key_uploads = uploads_of(bulk_pk);
    r->late_key_uploads = rec_read(&n_uploads) - r->bulk_key_uploads;
    r->bulk_host_copy = host_copy(e, "synthetic-64");
    ASSERT_EQ_U64(violations_unlocked, 0);
    ASSERT_EQ_U64(violations_overlap, 0);
    ASSERT_EQ_U64(violations_no_host_key, 0);
    ASSERT_EQ_U64(violations_beside, 0);
    ASSERT_EQ_U64(violations_stage, 0);
    ASSERT_EQ_U64(n_stage, n_taken + n_dropped);
    engine_shutdown(e, 5000);
    engine_free(e);
}

/* Deadlines under load (issue 48): a CRITICAL proof that arrives while a job proves with the
 * device's resident key is proved beside it (its own key streamed), next on the device, and
 * the running job's key is neither replaced nor read back from its file. */
TEST_T(deadline_proof_goes_beside_the_running_jobs_key, 60)
{
    char dir[] = "/tmp/cuzk-test-beside-XXXXXX";
    ASSERT(mkdtemp(dir));
    char path[160];
    write_params(dir, 64, path, sizeof path);
    write_params(dir, 32, path, sizeof path);
    struct key_run r;
    run_late_key(dir, &fake_beside_ops, 4, false, &r);
    ASSERT_EQ_U64(r.calls, 3);
    ASSERT_MSG(r.order[1] != r.bulk, "the CRITICAL proof was not the device's next call");
    ASSERT_MSG(r.bulk_key_uploads == 1, "the running job's key was uploaded %u times (once at its preload "
               "is right; more means the CRITICAL proof replaced it)", r.bulk_key_uploads);
    ASSERT_EQ_U64(r.late_key_uploads, 0);   /* streamed beside, never made resident */
    ASSERT_EQ_U64(n_beside, 1);
    ASSERT(!r.bulk_host_copy);              /* never read back from its file */
    remove_params(dir, 64);
    remove_params(dir, 32);
    rmdir(dir);
}

/* A NORMAL job of another circuit that reaches the device while an earlier job still proves
 * with the resident key, and cannot be proved beside it (it does not fit there, or the backend
 * has no such call), waits until that job is done instead of replacing its key; then its own
 * key is loaded once. A CRITICAL one in the same place replaces the key (a deadline never waits
 * for a batch) and the batch's key is read back after it. */
TEST_T(a_later_job_waits_for_the_running_jobs_key, 60)
{
    char dir[] = "/tmp/cuzk-test-wait-XXXXXX";
    ASSERT(mkdtemp(dir));
    char path[160];
    write_params(dir, 64, path, sizeof path);
    write_params(dir, 32, path, sizeof path);
    static const struct { const struct engine_backend_ops *ops; bool nomem; const char *what; } cases[] = {
        {&fake_beside_ops, true, "does not fit beside"}, {&fake_copy_ops, false, "no prove_beside"}};
    for (int c = 0; c < 2; c++) {
        struct key_run r;
        run_late_key(dir, cases[c].ops, 0, cases[c].nomem, &r);
        ASSERT_EQ_U64(r.calls, 3);
        ASSERT_MSG(r.order[1] == r.bulk && r.order[2] != r.bulk, "%s: the later NORMAL job was proved before "
                   "the running job's last partition", cases[c].what);
        ASSERT_MSG(r.bulk_key_uploads == 1, "%s: the running job's key was uploaded %u times (once at its "
                   "preload is right)", cases[c].what, r.bulk_key_uploads);
        ASSERT_EQ_U64(r.late_key_uploads, 1);
        ASSERT(!r.bulk_host_copy);
    }
    struct key_run r;
    run_late_key(dir, &fake_beside_ops, 4, true, &r);
    ASSERT_EQ_U64(r.calls, 3);
    ASSERT(r.order[1] != r.bulk);            /* the deadline first */
    ASSERT_EQ_U64(r.bulk_key_uploads, 2);    /* replaced, then loaded again for the batch */
    ASSERT_EQ_U64(r.late_key_uploads, 1);
    remove_params(dir, 64);
    remove_params(dir, 32);
    rmdir(dir);
}

/* A real out-of-memory at prove time (another process took the card's memory): the
 * partition waits with the device lock released and tries again; the job completes. */
TEST_T(out_of_memory_at_prove_waits_and_retries, 60)
{
    struct engine *e = start();
    fakes[0].prove_nomem = fakes[1].prove_nomem = 2;
    submit(e, "oom-0", 64, 1);
    await_ok(e, "oom-0", 1);
    ASSERT_EQ_U64(fakes[0].calls + fakes[1].calls, 3);   /* two refusals, then the proof */
    ASSERT_EQ_U64(violations_unlocked, 0);
    engine_shutdown(e, 5000);
    engine_free(e);
}

TEST_T(no_gpu_means_cpu_provers_with_reason, 60)
{
    struct cuzk_error err_s, *err = &err_s;
    struct engine_backend be;
    engine_backend_cpu(&be, "no GPU found (test)");
    struct engine_config cfg;
    engine_config_defaults(&cfg);
    cfg.mem_auto = false;
    cfg.mem_budget = 1ull << 30;
    cfg.workers_per_device = 3;
    clog_set_level(CLOG_WARN);
    struct engine *e = engine_new(&cfg, &be, err);
    ASSERT_MSG(e, "engine_new: %s", err->msg);
    struct engine_snapshot s;
    ASSERT_OK(engine_snapshot(e, &s, err), err);
    ASSERT_EQ_U64(s.n_gpus, 0);
    ASSERT_STR_CONTAINS(s.prover, "cpu");
    ASSERT_STR_CONTAINS(s.cpu_reason, "no GPU found (test)");
    ASSERT_EQ_U64(s.n_workers, 3);   /* gpu_workers_per_device CPU provers */
    for (size_t i = 0; i < s.n_workers; i++) ASSERT_EQ_INT(s.workers[i].gpu_ordinal, -1);
    engine_snapshot_free(&s);
    engine_shutdown(e, 1000);
    engine_free(e);
}
#endif

/* GPU telemetry on the timeline (issue 50): after each partition leaves its GPU a TIMELINE
 * GPU_STATE line carries that GPU's figures. The fake telemetry derives them from the ordinal
 * (GPU 5, the second fake, vanished: up=0), so each line can be checked against its gpu=. */
static void fake_telemetry(void *ctx, int ordinal, struct nvml_sample *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
    if (ordinal == 5) return;
    out->present = out->has_util = out->has_mem = out->has_temp = out->has_power = true;
    out->has_clock = out->has_throttle = true;
    out->util_gpu = 0.5 + ordinal / 100.0;
    out->mem_used = (uint64_t)(1000 + ordinal) << 20;
    out->temp_c = 60 + ordinal;
    out->power_w = 300.5 + ordinal;
    out->sm_clock_hz = (1800.0 + ordinal) * 1e6;
    out->throttle = NVML_THROTTLE_SW_POWER_CAP;
}

/* A fresh NVML sample takes ~40 ms (two 20 ms PCIe windows). Taken while the partition still
 * held its device turn, it delayed the next partition on that device by as much: every
 * 32 GiB PoRep partition's turn went from 1066 to 1105 ms on an H100. The slow fake
 * telemetry counts the proofs that begin on the device during each of its samples; with the
 * turn held through the sample, none could. */
static unsigned starts_during_sample;
static void slow_telemetry(void *ctx, int ordinal, struct nvml_sample *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
    const unsigned before = rec_read(&fakes[0].calls);
    usleep(150000);
    const unsigned began = rec_read(&fakes[0].calls) - before;
    pthread_mutex_lock(&rec_mu);
    starts_during_sample += began;
    pthread_mutex_unlock(&rec_mu);
    out->present = out->has_util = true;
    out->util_gpu = ordinal / 100.0;
}

TEST_T(telemetry_sample_does_not_hold_the_device, 60)
{
    starts_during_sample = 0;
    telemetry_next.sample = slow_telemetry;
    struct engine *e = start_n(&fake_ops, "/nonexistent-cuzk-test", 1);   /* one device, 2 provers */
    submit(e, "slowtele", 64, 6);
    await_ok(e, "slowtele", 6);
    engine_shutdown(e, 5000);
    engine_free(e);
    ASSERT_EQ_INT(rec_read(&fakes[0].calls), 6);
    ASSERT_MSG(rec_read(&starts_during_sample) >= 1,
               "no partition began on the device while another's telemetry was sampled: the "
               "sample holds the device turn");
}

/* ... nor the partition's answer: the sample of a one-partition job's device comes after the
 * job is answered (engine_await, 1 ms, finds it COMPLETED from inside the sample). */
static struct engine *tele_engine;
static int answered_before_sample = -1;
static void answer_first_telemetry(void *ctx, int ordinal, struct nvml_sample *out)
{
    (void)ctx;
    struct engine_result res;
    struct cuzk_error er;
    if (tele_engine && engine_await(tele_engine, "tele1", 1, &res, &er) == CUZK_OK) {
        __atomic_store_n(&answered_before_sample, res.status == ENGINE_COMPLETED, __ATOMIC_SEQ_CST);
        engine_result_free(&res);
    }
    memset(out, 0, sizeof *out);
    out->present = out->has_util = true;
    out->util_gpu = ordinal / 100.0;
}

TEST_T(telemetry_sample_follows_the_answer, 60)
{
    answered_before_sample = -1;
    telemetry_next.sample = answer_first_telemetry;
    struct engine *e = start_n(&fake_ops, "/nonexistent-cuzk-test", 1);
    tele_engine = e;
    submit(e, "tele1", 64, 1);
    await_ok(e, "tele1", 1);
    /* the sample comes after the answer: wait for it before the engine stops */
    for (int i = 0; i < 500 && __atomic_load_n(&answered_before_sample, __ATOMIC_SEQ_CST) < 0; i++) usleep(10000);
    engine_shutdown(e, 5000);
    engine_free(e);
    tele_engine = NULL;
    ASSERT_MSG(answered_before_sample == 1, "at the device's telemetry sample the job was %s",
               answered_before_sample < 0 ? "not found" : "not yet answered");
}

TEST_T(timeline_shows_each_partitions_gpu_state, 60)
{
    telemetry_next.sample = fake_telemetry;
    char path[] = "/tmp/cuzk-gpu-state-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    struct engine *e = start_n(&fake_ops, "/nonexistent-cuzk-test", NDEV);
    submit(e, "tele", 64, 6);
    await_ok(e, "tele", 6);
    engine_shutdown(e, 5000);
    engine_free(e);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    static char buf[1 << 16];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    ASSERT(n > 0);
    buf[n] = 0;
    unsigned lines = 0, parts_seen = 0;
    for (const char *l = strstr(buf, ",GPU_STATE,\"tele\","); l; l = strstr(l + 1, ",GPU_STATE,\"tele\",")) {
        unsigned part, up;
        int gpu;
        ASSERT_MSG(sscanf(l, ",GPU_STATE,\"tele\",partition=%u,gpu=%d,up=%u", &part, &gpu, &up) == 3,
                   "GPU_STATE line: %.200s", l);
        ASSERT(part < 6);
        parts_seen |= 1u << part;
        lines++;
        ASSERT(gpu == 3 || gpu == 5);
        if (gpu == 5) { ASSERT_EQ_INT(up, 0); continue; }
        char want[200];
        snprintf(want, sizeof want, ",GPU_STATE,\"tele\",partition=%u,gpu=%d,up=1,util=%.2f,mem_used_mib=%d,"
                 "temp_c=%d,power_w=%.1f,sm_mhz=%d,throttle=0x4\n", part, gpu, 0.5 + gpu / 100.0,
                 1000 + gpu, 60 + gpu, 300.5 + gpu, 1800 + gpu);
        ASSERT_MSG(!strncmp(l, want, strlen(want)), "GPU_STATE line: %.200s\nexpected: %s", l, want);
    }
    ASSERT_MSG(parts_seen == 0x3f && lines >= 6, "GPU_STATE for partitions 0x%x (%u lines)", parts_seen, lines);
}
