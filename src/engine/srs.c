/* srs.c: the engine's SRS cache, generic over proof kinds: circuit shape + proving key +
 * prepared verifying key per circuit id, loaded once by the id's kind (kinds.c), charged to
 * the memory budget, shared by reference, LRU-evicted when idle. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/fil_circuit.h"
#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_internal.h"

#define MiB (1024.0 * 1024.0)

/* ---------------------------------------------------------------- entries -- */

static struct srs_entry *find(struct engine *e, const char *id)
{
    for (struct srs_entry *s = e->srs; s; s = s->next)
        if (!strcmp(s->id, id)) return s;
    return NULL;
}

static void unlink_entry(struct engine *e, struct srs_entry *x)
{
    for (struct srs_entry **pp = &e->srs; *pp; pp = &(*pp)->next)
        if (*pp == x) { *pp = x->next; return; }
}

/* Free an entry that nobody can reach any more (e->mu NOT held). */
static void entry_free(struct engine *e, struct srs_entry *s)
{
    if (!s) return;
    dev_unload_entry(e, s);   /* device copies first: contexts know keys by pointer */
    dev_unpin_entry(e, s);
    if (s->has_shape) g16_shape_free(&s->shape);
    g16_pk_free(&s->pk);
    g16_pvk_free(s->pvk);
    free(s);
}

static const char *validation_name(int mode)
{
    return mode == G16_VALIDATE_NONE ? "none" : mode == G16_VALIDATE_CURVE ? "curve" : "full";
}

/* Read a .params file with the configured validation and the digest cache, and log how it
 * was checked (what an operator who chose "none" or "curve" needs to see). */
static int read_key(struct engine *e, struct srs_entry *x, struct g16_pk *pk, const char *path,
                    bool first, struct g16_params_read_report *rep, struct cuzk_error *err);

int srs_read_params(struct engine *e, struct srs_entry *x, const char *path, struct cuzk_error *err)
{
    struct g16_params_read_report rep;
    int rc = read_key(e, x, &x->pk, path, true, &rep, err);
    /* only a file with a digest can be read back later (validation "none" computes none) */
    if (!rc && rep.digest_valid && strlen(path) < sizeof x->key_path) {
        snprintf(x->key_path, sizeof x->key_path, "%s", path);
        memcpy(x->key_digest, rep.digest, sizeof x->key_digest);
    }
    return rc;
}

void srs_key_release(struct engine *e, struct srs_entry *x)
{
    const uint32_t all = dev_all_mask(e);
    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    pthread_mutex_lock(&e->mu);
    if (!e->be.ops->load_pk_copies || x->key_released || !x->key_path[0] || x->pinned ||
        (x->vram_mask & all) != all) {
        pthread_mutex_unlock(&e->mu);
        return;
    }
    uint64_t bytes = g16_pk_vectors(&x->pk, v, nb);
    x->pk.h = x->pk.l = x->pk.a = x->pk.b_g1 = NULL;
    x->pk.b_g2 = NULL;
    x->key_released = true;
    x->bytes = x->bytes > bytes ? x->bytes - bytes : 0;
    budget_release(e, bytes);
    pthread_mutex_unlock(&e->mu);
    for (int k = 0; k < G16_PK_VECTORS; k++) cuzk_free(v[k]);
    cuzk_log(CLOG_INFO, "SRS host copy released: circuit=%s bytes_mib=%.0f (every GPU holds the key; "
             "it is read again from %s if a GPU needs it)", x->id, (double)bytes / MiB, x->key_path);
}

int srs_key_reload(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    pthread_mutex_lock(&e->mu);
    bool need = x->key_released;
    pthread_mutex_unlock(&e->mu);
    if (!need) return CUZK_OK;
    uint64_t t0 = cuzk_now_ns();
    struct g16_pk tmp;
    struct g16_params_read_report rep;
    int rc = read_key(e, x, &tmp, x->key_path, false, &rep, err);
    if (rc) return cuzk_fail_prefix(err, rc, "reading the proving key of %s back", x->id);
    if (!rep.digest_valid || memcmp(rep.digest, x->key_digest, sizeof rep.digest) ||
        tmp.n_h != x->pk.n_h || tmp.n_l != x->pk.n_l || tmp.n_a != x->pk.n_a || tmp.n_b != x->pk.n_b) {
        g16_pk_free(&tmp);
        return cuzk_fail(err, CUZK_E_FORMAT, "%s: the file changed since SRS %s was loaded; evict "
                         "the SRS (or restart the daemon) to load the new one", x->key_path, x->id);
    }
    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    uint64_t bytes = g16_pk_vectors(&tmp, v, nb);
    pthread_mutex_lock(&e->mu);
    x->pk.h = tmp.h, x->pk.l = tmp.l, x->pk.a = tmp.a, x->pk.b_g1 = tmp.b_g1, x->pk.b_g2 = tmp.b_g2;
    tmp.h = tmp.l = tmp.a = tmp.b_g1 = NULL;
    tmp.b_g2 = NULL;
    x->key_released = false;
    x->bytes += bytes;
    budget_force(e, bytes);
    pthread_mutex_unlock(&e->mu);
    g16_pk_free(&tmp);   /* its vk: the entry keeps its own */
    cuzk_log(CLOG_INFO, "SRS host copy read back: circuit=%s elapsed_ms=%" PRIu64, x->id,
             (cuzk_now_ns() - t0) / 1000000);
    return CUZK_OK;
}

static int read_key(struct engine *e, struct srs_entry *x, struct g16_pk *pk, const char *path,
                    bool first, struct g16_params_read_report *rep_out, struct cuzk_error *err)
{
    /* the first read (entry SRS_LOADING, one loader) shows its progress in the status; a read
     * back (several devices may read at once) keeps its own */
    struct g16_params_read_opts o = {.mode = (enum g16_validate)e->cfg.srs_validation,
                                     .use_cache = true, .progress = -1,
                                     .tracker = first ? &x->load_pr : NULL};
    /* with GPUs the subgroup checks run there: minutes instead of hours for a 32 GiB key */
    struct g16_point_checker gpu_check = {e->be.ops->check_g1, e->be.ops->check_g2, e->be.self};
    if (e->be.n_devices && gpu_check.g1 && gpu_check.g2) o.checker = &gpu_check;
    struct g16_params_read_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = g16_params_read_ex(pk, path, &o, pool_default(), &rep, err);
    *rep_out = rep;
    if (!rc)
        cuzk_log(CLOG_INFO, "SRS read: circuit=%s read_ms=%" PRIu64 " check_ms=%" PRIu64 " gpu_check_ms=%" PRIu64
                 " gpu_wait_ms=%" PRIu64 " validation=%s checks=%s%s", x->id, rep.read_ns / 1000000,
                 rep.check_ns / 1000000, rep.ext_check_ns / 1000000, rep.ext_wait_ns / 1000000,
                 validation_name(e->cfg.srs_validation),
                 rep.cache_hit ? "skipped (digest cache hit)"
                 : o.mode == G16_VALIDATE_FULL ? (o.checker ? "curve+subgroup (subgroups on the GPU)" : "curve+subgroup")
                 : o.mode == G16_VALIDATE_CURVE ? "curve" : "none (trusted file)",
                 rep.cache_written ? ", digest cache written" : "");
    return rc;
}

static uint64_t pow2_at_least(uint64_t n)
{
    uint64_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

uint64_t srs_shape_bytes(const struct g16_shape *s)
{
    uint64_t b = 0;
    const struct g16_matrix *m[3] = {&s->a, &s->b, &s->c};
    for (int i = 0; i < 3; i++)
        b += (s->n_constraints + 1) * sizeof(uint64_t) + m[i]->nnz * (sizeof(uint32_t) + sizeof(uint16_t));
    b += (uint64_t)s->n_coeffs * sizeof(fr_t);
    b += 2 * ((s->n_aux + 63) / 64) * 8 + ((s->n_inputs + 63) / 64) * 8;
    return b;
}

/* Proving-key bytes for a shape: H (N-1), L (aux), A (inputs + A-dense aux), B in G1 and G2. */
uint64_t srs_pk_bytes(const struct g16_shape *s)
{
    uint64_t n = pow2_at_least(s->n_constraints);
    uint64_t n_b = s->b_inp_count + s->b_aux_count;
    return (n - 1 + s->n_aux + s->n_inputs + s->a_aux_count + n_b + s->n_inputs) * sizeof(g1_aff_t) +
           n_b * sizeof(g2_aff_t);
}

bool srs_file_size(const char *path, uint64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    *size = (uint64_t)st.st_size;
    return true;
}

/* Check a proving key read from a file against the circuit it is meant for. */
int srs_pk_matches(const struct g16_pk *pk, const struct g16_shape *s, const char *path,
                      struct cuzk_error *err)
{
    uint64_t n = pow2_at_least(s->n_constraints);
    if (pk->n_l != s->n_aux || pk->vk.n_ic != s->n_inputs || pk->n_a != s->n_inputs + s->a_aux_count ||
        pk->n_b != s->b_inp_count + s->b_aux_count || pk->n_h + 1 != n)
        return cuzk_fail(err, CUZK_E_FORMAT,
                         "%s: parameters do not match the circuit (l %" PRIu64 " vs %u aux, "
                         "ic %u vs %u inputs, h %" PRIu64 " vs %" PRIu64 ")", path, pk->n_l,
                         s->n_aux, pk->vk.n_ic, s->n_inputs, pk->n_h, n - 1);
    return CUZK_OK;
}

int srs_charge(struct engine *e, struct srs_entry *x, uint64_t bytes, struct cuzk_error *err)
{
    pthread_mutex_lock(&e->mu);
    int rc = budget_reserve(e, bytes, x->load_prio, NULL, err);
    if (!rc) x->bytes += bytes;
    pthread_mutex_unlock(&e->mu);
    return rc ? cuzk_fail_prefix(err, rc, "loading SRS %s", x->id) : CUZK_OK;
}

int srs_load_file(struct engine *e, struct srs_entry *x, const char *file, struct cuzk_error *err)
{
    char path[ENGINE_PATH_MAX + 256];
    uint64_t fsize = 0;
    snprintf(path, sizeof path, "%s/%s", e->cfg.param_cache, file);
    if (!srs_file_size(path, &fsize))
        return cuzk_fail(err, CUZK_E_NOT_FOUND, "SRS file for %s not found: %s", x->id, path);
    int rc = srs_charge(e, x, fsize, err);
    if (rc) return rc;
    cuzk_log(CLOG_INFO, "loading SRS from disk: circuit=%s path=%s size_mib=%.0f", x->id, path,
             (double)fsize / MiB);
    return srs_read_params(e, x, path, err);
}

/* A .shape found on disk, loaded and checked against the circuit's counts (a blank synthesis
 * that only counts: 2 s for PoRep 32 GiB, plus ~6 s to read its 7.5 GB shape). Neither uses the
 * CPU pool, so it runs on a thread of its own beside the .params read, which does: the first
 * load of a 32 GiB key no longer waits for the shape first. */
struct shape_load {
    struct srs_entry *x;
    const struct fil_circuit *c;
    const char *spath;
    int rc;
    struct cuzk_error err;
    uint64_t ms;
};

static void *shape_load_run(void *arg)
{
    struct shape_load *j = arg;
    struct srs_entry *x = j->x;
    const uint64_t t0 = cuzk_now_ns();
    uint64_t want_rows = 0;
    uint32_t want_in = 0, want_aux = 0;
    j->rc = fil_circuit_count(j->c, &want_rows, &want_in, &want_aux, &j->err);
    if (!j->rc) j->rc = g16_shape_load(&x->shape, j->spath, &j->err);
    if (!j->rc) {
        x->has_shape = true;
        if (x->shape.n_constraints != want_rows || x->shape.n_inputs != want_in || x->shape.n_aux != want_aux)
            j->rc = cuzk_fail(&j->err, CUZK_E_FORMAT,
                              "%s: shape of %" PRIu64 " constraints, %u inputs, %u aux is not the "
                              "%s circuit (%" PRIu64 ", %u, %u); delete it to rebuild", j->spath,
                              x->shape.n_constraints, x->shape.n_inputs, x->shape.n_aux,
                              fil_circuit_kind_name(j->c->kind), want_rows, want_in, want_aux);
    }
    j->ms = (cuzk_now_ns() - t0) / 1000000;
    return NULL;
}

/* The shape built from the circuit (no .shape on disk) and saved next to the parameters. */
static int shape_build(struct srs_entry *x, const struct fil_circuit *c, const char *spath, struct cuzk_error *err)
{
    char tmp[ENGINE_PATH_MAX + 340];
    const char *kname = fil_circuit_kind_name(c->kind);
    const uint64_t t0 = cuzk_now_ns();
    cuzk_log(CLOG_INFO, "building the %s shape (once; saved next to the parameters): circuit=%s", kname, x->id);
    int rc = fil_circuit_shape(&x->shape, c, pool_default(), err);
    if (rc) return rc;
    x->has_shape = true;
    /* Best effort: a read-only param_cache only costs the rebuild next time. The temporary
     * name keeps a half-written file from ever being read as a shape. */
    struct cuzk_error serr = {0};
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", spath, (long)getpid());
    if (g16_shape_save(&x->shape, tmp, &serr) || rename(tmp, spath)) {
        cuzk_log(CLOG_WARN, "cannot cache the %s shape at %s: %s", kname, spath,
                 serr.code ? serr.msg : strerror(errno));
        unlink(tmp);
    }
    cuzk_log(CLOG_INFO, "shape built: circuit=%s constraints=%" PRIu64 " elapsed_ms=%" PRIu64, x->id,
             x->shape.n_constraints, (cuzk_now_ns() - t0) / 1000000);
    return CUZK_OK;
}

int srs_load_circuit(struct engine *e, struct srs_entry *x, const struct fil_circuit *c,
                     struct cuzk_error *err)
{
    char stem[256], path[ENGINE_PATH_MAX + 300], spath[ENGINE_PATH_MAX + 300];
    uint64_t fsize = 0, ssize = 0;
    int rc = fil_circuit_param_stem(stem, sizeof stem, c, err);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/%s.params", e->cfg.param_cache, stem);
    snprintf(spath, sizeof spath, "%s/%s.shape", e->cfg.param_cache, stem);
    if (!srs_file_size(path, &fsize))
        return cuzk_fail(err, CUZK_E_NOT_FOUND, "SRS file for %s not found: %s", x->id, path);
    rc = srs_charge(e, x, fsize, err);
    if (rc) return rc;

    struct shape_load j = {.x = x, .c = c, .spath = spath};
    pthread_t th;
    bool beside = false;
    const bool on_disk = srs_file_size(spath, &ssize);
    if (on_disk) {
        beside = pthread_create(&th, NULL, shape_load_run, &j) == 0;
        if (!beside) shape_load_run(&j);   /* no thread to spare: one after the other */
    } else {
        j.rc = shape_build(x, c, spath, &j.err);
    }
    /* a shape that failed before the read started spares the read */
    if (!beside && j.rc) return cuzk_fail(err, j.rc, "%s", j.err.msg);
    cuzk_log(CLOG_INFO, "loading SRS from disk: circuit=%s path=%s size_mib=%.0f", x->id, path,
             (double)fsize / MiB);
    rc = srs_read_params(e, x, path, err);
    if (beside) pthread_join(th, NULL);
    if (j.rc) return cuzk_fail(err, j.rc, "%s", j.err.msg);   /* the shape's error first */
    if (on_disk)
        cuzk_log(CLOG_INFO, "shape loaded: circuit=%s path=%s elapsed_ms=%" PRIu64 "%s", x->id, spath, j.ms,
                 beside ? " (beside the parameters' read)" : "");
    if (rc) return rc;
    rc = srs_charge(e, x, srs_shape_bytes(&x->shape), err);
    if (!rc) rc = srs_pk_matches(&x->pk, &x->shape, path, err);
    return rc;
}

/* Load entry x (state LOADING, not visible to evictors) through its kind, then prepare the
 * verifying key every proof is checked against. Called without the lock. */
static int load_entry(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    int rc = x->kind->srs_load(e, x, err);
    if (!rc) {
        x->pvk = g16_pvk_new(&x->pk.vk, err);
        if (!x->pvk) rc = err && err->code ? err->code : CUZK_E_NOMEM;
    }
    return rc;
}

int srs_acquire(struct engine *e, const char *id, int prio, struct srs_entry **out,
                uint64_t *waited_ns, bool *was_loaded, struct cuzk_error *err)
{
    uint64_t t0 = cuzk_now_ns();
    const struct kind_def *kind = NULL;
    uint64_t arg = 0;
    int rc = kind_for_circuit(id, &kind, &arg, err);
    if (rc) return rc;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        struct srs_entry *x = find(e, id);
        if (x && x->state == SRS_READY) {
            x->refs++;
            x->last_used_ns = cuzk_now_ns();
            pthread_mutex_unlock(&e->mu);
            *out = x;
            if (waited_ns) *waited_ns = cuzk_now_ns() - t0;
            if (was_loaded) *was_loaded = cuzk_now_ns() - t0 < 1000000 || x->load_ns == 0;
            return CUZK_OK;
        }
        if (x) {   /* someone else is loading it: wait, then look again */
            pthread_cond_wait(&e->srs_cv, &e->mu);
            continue;
        }
        if (e->stopping) {
            pthread_mutex_unlock(&e->mu);
            return cuzk_fail(err, CUZK_E_CANCELLED, "daemon shutting down");
        }
        x = calloc(1, sizeof *x);
        if (!x) {
            pthread_mutex_unlock(&e->mu);
            return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
        }
        snprintf(x->id, sizeof x->id, "%s", id);
        x->state = SRS_LOADING;
        x->kind = kind;
        x->arg = arg;
        x->load_prio = prio;
        x->refs = 1;
        x->next = e->srs;
        e->srs = x;
        pthread_mutex_unlock(&e->mu);

        uint64_t l0 = cuzk_now_ns();
        rc = load_entry(e, x, err);
        uint64_t l1 = cuzk_now_ns();
        pthread_mutex_lock(&e->mu);
        if (rc) {
            unlink_entry(e, x);
            if (x->bytes) budget_release(e, x->bytes);
            pthread_cond_broadcast(&e->srs_cv);
            pthread_mutex_unlock(&e->mu);
            cuzk_log(CLOG_ERROR, "SRS load failed: circuit=%s: %s", id, err ? err->msg : "");
            entry_free(e, x);
            return rc;
        }
        x->state = SRS_READY;
        x->load_ns = l1 - l0;
        x->last_used_ns = l1;
        pthread_cond_broadcast(&e->srs_cv);
        pthread_mutex_unlock(&e->mu);
        cuzk_log(CLOG_INFO, "SRS loaded successfully: circuit=%s elapsed_ms=%" PRIu64 " size_mib=%.1f",
             id, (l1 - l0) / 1000000, (double)x->bytes / MiB);
        *out = x;
        if (waited_ns) *waited_ns = cuzk_now_ns() - t0;
        if (was_loaded) *was_loaded = false;
        return CUZK_OK;
    }
}

void srs_release(struct engine *e, struct srs_entry *s)
{
    if (!s) return;
    pthread_mutex_lock(&e->mu);
    if (s->refs) s->refs--;
    s->last_used_ns = cuzk_now_ns();
    pthread_cond_broadcast(&e->mem_cv);   /* an idle entry may now be evictable */
    pthread_mutex_unlock(&e->mu);
}

uint64_t srs_evict_lru(struct engine *e, uint64_t need, struct srs_entry **victims)
{
    uint64_t now = cuzk_now_ns(), freed = 0;
    uint64_t min_idle = e->cfg.srs_min_idle_ms * 1000000ull;
    while (freed < need) {
        struct srs_entry *victim = NULL;
        for (struct srs_entry *s = e->srs; s; s = s->next)
            if (s->state == SRS_READY && s->refs == 0 && now - s->last_used_ns >= min_idle &&
                (!victim || s->last_used_ns < victim->last_used_ns))
                victim = s;
        if (!victim) break;
        unlink_entry(e, victim);
        freed += victim->bytes;
        cuzk_log(CLOG_INFO, "evicted for memory pressure: circuit=%s tier=%s freed_mib=%.1f idle_s=%.0f",
             victim->id, srs_tier(victim), (double)victim->bytes / MiB,
             (double)(now - victim->last_used_ns) / 1e9);
        victim->next = *victims;
        *victims = victim;
    }
    return freed;
}

void srs_free_list(struct engine *e, struct srs_entry *victims)
{
    while (victims) {
        struct srs_entry *next = victims->next;
        entry_free(e, victims);
        victims = next;
    }
}

int srs_evict(struct engine *e, const char *id, bool *was_loaded, uint64_t *freed,
              struct cuzk_error *err)
{
    const struct kind_def *kind;
    uint64_t arg;
    int rc = kind_for_circuit(id, &kind, &arg, err);
    if (rc) return rc;
    *was_loaded = false;
    *freed = 0;
    pthread_mutex_lock(&e->mu);
    struct srs_entry *x = find(e, id);
    if (!x) {
        pthread_mutex_unlock(&e->mu);
        return CUZK_OK;
    }
    if (x->state != SRS_READY || x->refs) {
        unsigned refs = x->refs;
        bool loading = x->state != SRS_READY;
        pthread_mutex_unlock(&e->mu);
        if (loading) return cuzk_fail(err, CUZK_E_BUSY, "SRS %s is still loading; evict it later", id);
        return cuzk_fail(err, CUZK_E_BUSY,
                         "SRS %s is in use by %u partition(s) in flight; it can be evicted when "
                         "they finish", id, refs);
    }
    unlink_entry(e, x);
    *was_loaded = true;
    *freed = x->bytes;
    const char *tier = srs_tier(x);
    pthread_mutex_unlock(&e->mu);
    cuzk_log(CLOG_INFO, "SRS evicted: circuit=%s tier=%s freed_mib=%.1f", id, tier,
             (double)x->bytes / MiB);
    uint64_t bytes = x->bytes;
    entry_free(e, x);   /* VRAM copies are unloaded first */
    pthread_mutex_lock(&e->mu);
    budget_release(e, bytes);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

void srs_free_all(struct engine *e)
{
    while (e->srs) {
        struct srs_entry *x = e->srs;
        e->srs = x->next;
        entry_free(e, x);
    }
}
