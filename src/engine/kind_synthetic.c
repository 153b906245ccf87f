/* kind_synthetic.c: the SYNTHETIC kind (an extension for benchmarks and tests): a circuit of
 * any size from the synthetic family (circuits.h), P partitions of consecutive seeds, and its
 * SRS "synthetic-<N>" read from param_cache/synthetic-<N>.params when present, else made by a
 * local setup (not for production). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/circuits.h"
#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_internal.h"

#define SYNTH_PUBLIC_INPUTS 2     /* public inputs of every synthetic circuit (besides ONE) */

static struct synth_params params_of(uint64_t n_constraints)
{
    struct synth_params sp;
    memset(&sp, 0, sizeof sp);
    sp.n_constraints = n_constraints;
    sp.n_public = SYNTH_PUBLIC_INPUTS;
    return sp;
}

static int parse_synthetic(struct job *j, const struct engine_request *r, struct cuzk_error *err)
{
    if (r->synthetic.constraints == 0)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "SYNTHETIC proof needs synthetic_constraints >= 1 (field 100)");
    if (r->synthetic.constraints > ENGINE_MAX_CONSTRAINTS)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "synthetic_constraints %" PRIu64 " is above the limit %llu",
                         r->synthetic.constraints, (unsigned long long)ENGINE_MAX_CONSTRAINTS);
    uint32_t np = r->synthetic.partitions ? r->synthetic.partitions : 1;
    if (np > ENGINE_MAX_PARTITIONS)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "synthetic_partitions %u is above the limit %d",
                         np, ENGINE_MAX_PARTITIONS);
    uint64_t seed;
    if (r->vanilla_proof_len == 8) {   /* optional instance seed, little-endian */
        seed = 0;
        for (int i = 7; i >= 0; i--) seed = seed << 8 | r->vanilla_proof[i];
    } else if (r->vanilla_proof_len == 0) {
        if (cuzk_os_random(&seed, sizeof seed, err)) return CUZK_E_IO;
    } else {
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "SYNTHETIC vanilla_proof must be empty or an 8-byte seed (got %zu bytes)",
                         r->vanilla_proof_len);
    }
    j->n_parts = np;
    snprintf(j->circuit_id, sizeof j->circuit_id, "synthetic-%" PRIu64, r->synthetic.constraints);
    j->parts = calloc(np, sizeof *j->parts);
    if (!j->parts) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    for (uint32_t p = 0; p < np; p++) j->parts[p].seed = seed + p;
    return CUZK_OK;
}

static int witness_synthetic(const struct job *j, uint32_t p, struct part *pt,
                             const struct srs_entry *s, struct cuzk_error *err)
{
    (void)j;
    (void)p;
    pt->inputs = cuzk_malloc((size_t)s->shape.n_inputs * sizeof(fr_t));
    pt->aux = cuzk_malloc((size_t)(s->shape.n_aux ? s->shape.n_aux : 1) * sizeof(fr_t));
    if (!pt->inputs || !pt->aux) return cuzk_fail(err, CUZK_E_NOMEM, "witness allocation");
    struct synth_params sp = params_of(s->arg);
    return synth_witness(pt->inputs, pt->aux, &s->shape, &sp, pt->seed, err);
}

/* "synthetic-<N>", 1 <= N <= ENGINE_MAX_CONSTRAINTS; arg = N */
static int match_synthetic(const char *id, uint64_t *arg, struct cuzk_error *err)
{
    if (strncmp(id, "synthetic-", 10)) return CUZK_E_NOT_FOUND;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(id + 10, &end, 10);
    if (errno || *end || id[10] < '1' || id[10] > '9' || n == 0 || n > ENGINE_MAX_CONSTRAINTS)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "circuit id '%s': expected synthetic-<N> with 1 <= N <= %llu", id,
                         (unsigned long long)ENGINE_MAX_CONSTRAINTS);
    *arg = n;
    return CUZK_OK;
}

static int load_synthetic(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    char path[ENGINE_PATH_MAX + 256];
    uint64_t fsize = 0;
    struct synth_params sp = params_of(x->arg);
    int rc = synth_build_shape(&x->shape, &sp, err);
    if (rc) return rc;
    x->has_shape = true;
    snprintf(path, sizeof path, "%s/%s.params", e->cfg.param_cache, x->id);
    bool from_file = srs_file_size(path, &fsize);
    /* charged before anything big exists: the key is the size of its shape's vectors */
    rc = srs_charge(e, x, srs_shape_bytes(&x->shape) + srs_pk_bytes(&x->shape), err);
    if (rc) return rc;
    if (from_file) {
        cuzk_log(CLOG_INFO, "loading SRS from disk: circuit=%s path=%s", x->id, path);
        rc = srs_read_params(e, x, path, err);
        if (!rc) rc = srs_pk_matches(&x->pk, &x->shape, path, err);
        return rc;
    }
    cuzk_log(CLOG_INFO, "generating SRS in memory (local setup, for tests and benchmarks): "
             "circuit=%s constraints=%" PRIu64, x->id, sp.n_constraints);
    return g16_setup(&x->pk, &x->shape, NULL, pool_default(), err);
}

const struct kind_def kind_synthetic = {
    .kind = ENGINE_KIND_SYNTHETIC, .name = "synthetic", .label = "synthetic",
    .default_priority = 2, .parse = parse_synthetic, .witness = witness_synthetic,
    .circuit_ids = "synthetic-<N>", .srs_match = match_synthetic, .srs_load = load_synthetic,
};
