/* srs.c: the engine's memory budget and SRS cache: circuit shape + proving key + prepared
 * verifying key per circuit id, loaded once (file or local setup), LRU-evicted when idle. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/log.h"
#include "cuzk/porep.h"
#include "cuzk/util.h"
#include "engine_internal.h"

#define MiB (1024.0 * 1024.0)

/* Filecoin circuit ids without a circuit here yet and their v28 parameter files (names as
 * published in parameters.json); PoRep ids ("porep-2k" ... "porep-64g") are resolved by
 * fil_porep_param_stem in porep_kind.c. */
static const struct { const char *id, *file; } fil_params[] = {
    {"wpost-32g", "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc.params"},
    {"winning-32g", "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e.params"},
    {"snap-32g", "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18.params"},
    {"snap-64g", "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7.params"},
};
#define N_FIL (sizeof fil_params / sizeof fil_params[0])

/* ------------------------------------------------------------ memory budget -- */

int mem_reserve(struct engine *e, uint64_t n, struct cuzk_error *err)
{
    if (n > e->mem_total)
        return cuzk_fail(err, CUZK_E_NOMEM,
                         "needs %.1f MiB of memory but the whole budget is %.1f MiB "
                         "([memory] total_budget)", (double)n / MiB, (double)e->mem_total / MiB);
    bool logged = false;
    while (e->mem_used + n > e->mem_total) {
        if (e->stopping) return cuzk_fail(err, CUZK_E_CANCELLED, "daemon shutting down");
        struct srs_entry *victims = NULL;
        uint64_t freed = srs_evict_lru(e, e->mem_used + n - e->mem_total, &victims);
        if (freed) {
            /* Freeing may wait for a device lock (GPU unload): not under the engine lock,
             * which callers already expect to be dropped here (as by the timed wait). */
            pthread_mutex_unlock(&e->mu);
            srs_free_list(e, victims);
            pthread_mutex_lock(&e->mu);
            mem_release(e, freed);
            continue;
        }
        if (!logged) {
            cuzk_log(CLOG_DEBUG, "waiting for memory: need %.1f MiB, %.1f of %.1f MiB in use",
                 (double)n / MiB, (double)e->mem_used / MiB, (double)e->mem_total / MiB);
            logged = true;
        }
        /* Timed wait: idle entries become evictable with time, not only on release. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&e->mem_cv, &e->mu, &ts);
    }
    e->mem_used += n;
    return CUZK_OK;
}

void mem_release(struct engine *e, uint64_t n)
{
    e->mem_used = n > e->mem_used ? 0 : e->mem_used - n;
    pthread_cond_broadcast(&e->mem_cv);
}

/* ---------------------------------------------------------------- entries -- */

int srs_parse_id(const char *id, bool *synthetic, struct synth_params *sp, uint64_t *porep_size,
                 struct cuzk_error *err)
{
    *porep_size = 0;
    static const uint64_t porep_sizes[] = {2048ull, 8ull << 20, 512ull << 20, 32ull << 30, 64ull << 30};
    for (size_t i = 0; i < sizeof porep_sizes / sizeof *porep_sizes; i++)
        if (!strcmp(id, porep_circuit_id(porep_sizes[i]))) {
            *synthetic = false;
            *porep_size = porep_sizes[i];
            return CUZK_OK;
        }
    if (!strncmp(id, "synthetic-", 10)) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(id + 10, &end, 10);
        if (errno || *end || id[10] < '1' || id[10] > '9' || n == 0 || n > ENGINE_MAX_CONSTRAINTS)
            return cuzk_fail(err, CUZK_E_INVALID_ARG,
                             "circuit id '%s': expected synthetic-<N> with 1 <= N <= %llu", id,
                             (unsigned long long)ENGINE_MAX_CONSTRAINTS);
        *synthetic = true;
        sp->n_constraints = n;
        sp->n_public = SYNTH_PUBLIC_INPUTS;
        return CUZK_OK;
    }
    for (size_t i = 0; i < N_FIL; i++)
        if (!strcmp(id, fil_params[i].id)) { *synthetic = false; return CUZK_OK; }
    return cuzk_fail(err, CUZK_E_INVALID_ARG,
                     "unknown circuit id '%s' (expected porep-2k, porep-8m, porep-512m, porep-32g, "
                     "porep-64g, wpost-32g, winning-32g, snap-32g, snap-64g or synthetic-<N>)", id);
}

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

/* [srs] validation -> the reader's mode (the configuration reader accepted only these). */
static enum g16_validate validation_mode(const struct engine *e)
{
    if (!strcmp(e->cfg.srs_validation, "none")) return G16_VALIDATE_NONE;
    if (!strcmp(e->cfg.srs_validation, "curve")) return G16_VALIDATE_CURVE;
    return G16_VALIDATE_FULL;
}

/* Read a .params file with the configured validation and the digest cache, and log how it
 * was checked (what an operator who chose "none" or "curve" needs to see). */
static int read_params(struct engine *e, struct srs_entry *x, const char *path, struct cuzk_error *err)
{
    struct g16_params_read_opts o = {validation_mode(e), true, -1};
    struct g16_params_read_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = g16_params_read_ex(&x->pk, path, &o, pool_default(), &rep, err);
    if (!rc)
        cuzk_log(CLOG_INFO, "SRS read: circuit=%s read_ms=%" PRIu64 " check_ms=%" PRIu64
                 " validation=%s checks=%s%s", x->id, rep.read_ns / 1000000, rep.check_ns / 1000000,
                 e->cfg.srs_validation,
                 rep.cache_hit ? "skipped (digest cache hit)"
                 : o.mode == G16_VALIDATE_FULL ? "curve+subgroup"
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

static uint64_t shape_bytes(const struct g16_shape *s)
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
static uint64_t pk_bytes(const struct g16_shape *s)
{
    uint64_t n = pow2_at_least(s->n_constraints);
    uint64_t n_b = s->b_inp_count + s->b_aux_count;
    return (n - 1 + s->n_aux + s->n_inputs + s->a_aux_count + n_b + s->n_inputs) * sizeof(g1_aff_t) +
           n_b * sizeof(g2_aff_t);
}

static bool file_exists(const char *path, uint64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    *size = (uint64_t)st.st_size;
    return true;
}

/* Check a proving key read from a file against the circuit it is meant for. */
static int pk_matches(const struct g16_pk *pk, const struct g16_shape *s, const char *path,
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

/* Synthesize the blank PoRep circuit in mode (0: counting only, GCS_SHAPE: into a builder). */
static int porep_blank(struct g16_shape *out, struct gcs *count, const struct porep_config *cfg,
                       struct cuzk_error *err)
{
    if (count) {
        int rc = gcs_init(count, 0, NULL, err);
        if (rc) return rc;
        porep_synthesize(count, cfg, NULL);
        return gcs_status(count, err);
    }
    struct g16_builder *b = g16_builder_new(false, err);
    if (!b) return err && err->code ? err->code : CUZK_E_NOMEM;
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    int rc = gcs_init(&cs, GCS_SHAPE, &sink, err);
    if (!rc) {
        porep_synthesize(&cs, cfg, NULL);
        rc = gcs_status(&cs, err);
        gcs_free(&cs);
    }
    if (!rc) rc = g16_builder_finish(b, out, err);
    g16_builder_free(b);
    return rc;
}

int srs_load_porep(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    char stem[256], path[CFG_STR_MAX + 300], spath[CFG_STR_MAX + 300], tmp[CFG_STR_MAX + 340];
    uint64_t fsize = 0, ssize = 0;
    struct porep_config cfg;
    int rc = fil_porep_param_stem(stem, sizeof stem, x->porep_size, err);
    if (!rc) rc = porep_config_for_size(&cfg, x->porep_size, err);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/%s.params", e->cfg.param_cache, stem);
    snprintf(spath, sizeof spath, "%s/%s.shape", e->cfg.param_cache, stem);
    if (!file_exists(path, &fsize))
        return cuzk_fail(err, CUZK_E_NOT_FOUND, "SRS file for %s not found: %s", x->id, path);
    pthread_mutex_lock(&e->mu);
    rc = mem_reserve(e, fsize, err);
    if (!rc) x->bytes = fsize;
    pthread_mutex_unlock(&e->mu);
    if (rc) return cuzk_fail_prefix(err, rc, "loading SRS %s", x->id);

    /* The circuit's counts (a counting pass: 2 s at 32 GiB) check a .shape found on disk. */
    struct gcs cnt;
    rc = porep_blank(NULL, &cnt, &cfg, err);
    uint64_t want_rows = cnt.n_constraints + cnt.n_inputs;
    uint32_t want_in = cnt.n_inputs, want_aux = cnt.n_aux;
    gcs_free(&cnt);
    if (rc) return rc;
    uint64_t t0 = cuzk_now_ns();
    if (file_exists(spath, &ssize)) {
        rc = g16_shape_load(&x->shape, spath, err);
        if (!rc) {
            x->has_shape = true;
            if (x->shape.n_constraints != want_rows || x->shape.n_inputs != want_in ||
                x->shape.n_aux != want_aux)
                return cuzk_fail(err, CUZK_E_FORMAT,
                                 "%s: shape of %" PRIu64 " constraints, %u inputs, %u aux is not the "
                                 "PoRep circuit (%" PRIu64 ", %u, %u); delete it to rebuild", spath,
                                 x->shape.n_constraints, x->shape.n_inputs, x->shape.n_aux,
                                 want_rows, want_in, want_aux);
            cuzk_log(CLOG_INFO, "PoRep shape loaded: circuit=%s path=%s elapsed_ms=%" PRIu64, x->id,
                     spath, (cuzk_now_ns() - t0) / 1000000);
        }
    } else {
        cuzk_log(CLOG_INFO, "building PoRep shape (once; saved next to the parameters): circuit=%s "
                 "constraints=%" PRIu64, x->id, want_rows);
        rc = porep_blank(&x->shape, NULL, &cfg, err);
        if (!rc) {
            x->has_shape = true;
            /* Best effort: a read-only param_cache only costs the rebuild next time. The
             * temporary name keeps a half-written file from ever being read as a shape. */
            struct cuzk_error serr = {0};
            snprintf(tmp, sizeof tmp, "%s.tmp.%ld", spath, (long)getpid());
            if (g16_shape_save(&x->shape, tmp, &serr) || rename(tmp, spath)) {
                cuzk_log(CLOG_WARN, "cannot cache the PoRep shape at %s: %s", spath,
                         serr.code ? serr.msg : strerror(errno));
                unlink(tmp);
            }
            cuzk_log(CLOG_INFO, "PoRep shape built: circuit=%s elapsed_ms=%" PRIu64, x->id,
                     (cuzk_now_ns() - t0) / 1000000);
        }
    }
    if (rc) return rc;
    uint64_t sb = shape_bytes(&x->shape);
    pthread_mutex_lock(&e->mu);
    rc = mem_reserve(e, sb, err);
    if (!rc) x->bytes += sb;
    pthread_mutex_unlock(&e->mu);
    if (rc) return cuzk_fail_prefix(err, rc, "loading SRS %s", x->id);

    cuzk_log(CLOG_INFO, "loading SRS from disk: circuit=%s path=%s size_mib=%.0f", x->id, path,
             (double)fsize / MiB);
    rc = read_params(e, x, path, err);
    if (!rc) rc = pk_matches(&x->pk, &x->shape, path, err);
    return rc;
}

/* Load entry x (state LOADING, not visible to evictors). Called without the lock. */
static int load_entry(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    char path[CFG_STR_MAX + 256];
    uint64_t fsize = 0;
    int rc;
    if (x->synthetic) {
        if ((rc = synth_build_shape(&x->shape, &x->sp, err))) return rc;
        x->has_shape = true;
        snprintf(path, sizeof path, "%s/%s.params", e->cfg.param_cache, x->id);
        bool from_file = file_exists(path, &fsize);
        uint64_t need = shape_bytes(&x->shape) + pk_bytes(&x->shape);
        pthread_mutex_lock(&e->mu);
        rc = mem_reserve(e, need, err);
        if (!rc) x->bytes = need;
        pthread_mutex_unlock(&e->mu);
        if (rc) return cuzk_fail_prefix(err, rc, "loading SRS %s", x->id);
        if (from_file) {
            cuzk_log(CLOG_INFO, "loading SRS from disk: circuit=%s path=%s", x->id, path);
            rc = read_params(e, x, path, err);
            if (!rc) rc = pk_matches(&x->pk, &x->shape, path, err);
        } else {
            cuzk_log(CLOG_INFO, "generating SRS in memory (local setup, for tests and benchmarks): "
                 "circuit=%s constraints=%" PRIu64, x->id, x->sp.n_constraints);
            rc = g16_setup(&x->pk, &x->shape, NULL, pool_default(), err);
        }
    } else if (x->porep_size) {
        rc = srs_load_porep(e, x, err);
    } else {
        size_t i = 0;
        while (i < N_FIL && strcmp(fil_params[i].id, x->id)) i++;
        snprintf(path, sizeof path, "%s/%s", e->cfg.param_cache, fil_params[i].file);
        if (!file_exists(path, &fsize))
            return cuzk_fail(err, CUZK_E_NOT_FOUND, "SRS file for %s not found: %s", x->id, path);
        pthread_mutex_lock(&e->mu);
        rc = mem_reserve(e, fsize, err);
        if (!rc) x->bytes = fsize;
        pthread_mutex_unlock(&e->mu);
        if (rc) return cuzk_fail_prefix(err, rc, "loading SRS %s", x->id);
        cuzk_log(CLOG_INFO, "loading SRS from disk: circuit=%s path=%s size_mib=%.0f", x->id, path,
             (double)fsize / MiB);
        rc = read_params(e, x, path, err);
    }
    if (!rc) {
        x->pvk = g16_pvk_new(&x->pk.vk, err);
        if (!x->pvk) rc = err && err->code ? err->code : CUZK_E_NOMEM;
    }
    return rc;
}

int srs_acquire(struct engine *e, const char *id, struct srs_entry **out, uint64_t *waited_ns,
                bool *was_loaded, struct cuzk_error *err)
{
    uint64_t t0 = cuzk_now_ns();
    bool synthetic = false;
    struct synth_params sp;
    memset(&sp, 0, sizeof sp);
    uint64_t porep_size = 0;
    int rc = srs_parse_id(id, &synthetic, &sp, &porep_size, err);
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
        x->synthetic = synthetic;
        x->sp = sp;
        x->porep_size = porep_size;
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
            if (x->bytes) mem_release(e, x->bytes);
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
    uint64_t min_idle = e->cfg.eviction_min_idle_ms * 1000000ull;
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
    bool synthetic;
    struct synth_params sp;
    uint64_t porep_size;
    int rc = srs_parse_id(id, &synthetic, &sp, &porep_size, err);
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
    mem_release(e, bytes);
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
