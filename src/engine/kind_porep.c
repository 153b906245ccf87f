/* kind_porep.c: the POREP_SEAL_COMMIT kind of the engine's registry, everything the engine
 * does specially for PoRep: the C1 wrapper parsed once per job into partitions, per-partition
 * witness in the synthesis workers, the public inputs recomputed from the C1's commitments that
 * every partition proof is verified against, and its SRS entries ("porep-2k" ... "porep-64g"):
 * the v28 .params by its upstream name, the shape from the .shape next to it or built once
 * (and saved there). The circuit itself is src/circuits/porep.c; the C1 format, witness values
 * and public inputs are src/filecoin. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/log.h"
#include "cuzk/porep.h"
#include "cuzk/util.h"
#include "engine_internal.h"

#define MiB (1024.0 * 1024.0)

/* sector size -> circuit id; NULL for a size without a PoRep circuit. */
static const char *porep_circuit_id(uint64_t sector_size)
{
    switch (sector_size) {
    case 2048ull: return "porep-2k";
    case 8ull << 20: return "porep-8m";
    case 512ull << 20: return "porep-512m";
    case 32ull << 30: return "porep-32g";
    case 64ull << 30: return "porep-64g";
    default: return NULL;
    }
}

static void porep_free_input(void *input)
{
    struct fil_c1 *c = input;
    if (!c) return;
    fil_c1_free(c);
    free(c);
}

static bool all_zero(const uint8_t b[32])
{
    uint8_t acc = 0;
    for (int i = 0; i < 32; i++) acc |= b[i];
    return acc == 0;
}

static int porep_parse(struct job *j, const struct engine_request *r, struct cuzk_error *err)
{
    if (!r->vanilla_proof_len)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "POREP_SEAL_COMMIT needs vanilla_proof: the C1 output in Curio's wrapper "
                         "{\"SectorNum\",\"Phase1Out\",\"SectorSize\"} (got 0 bytes)");
    struct fil_c1 *c = calloc(1, sizeof *c);
    if (!c) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    struct cuzk_error perr = {0};
    int rc = fil_c1_parse_wrapper(c, r->vanilla_proof, r->vanilla_proof_len, &perr);
    if (rc) {
        free(c);
        /* every parser failure is a malformed request, whatever its code (an unknown
         * registered proof is CUZK_E_UNSUPPORTED there, not "kind not built in" here) */
        return cuzk_fail(err, rc == CUZK_E_NOMEM ? CUZK_E_NOMEM : CUZK_E_INVALID_ARG,
                         "vanilla_proof (C1 output): %s", perr.msg);
    }
    /* What upstream rejects besides the shape (cuzk-reference.md 3.1): all-zero values. */
    const char *zero = all_zero(c->comm_d) ? "comm_d" : all_zero(c->comm_r) ? "comm_r"
                     : all_zero(c->seed) ? "seed" : NULL;
    const char *id = porep_circuit_id(c->proof->sector_size);
    if (zero || !id) {
        if (zero) cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): Phase1Out.%s: is all "
                            "zero", zero);
        else cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): no PoRep circuit for "
                       "sector size %" PRIu64, c->proof->sector_size);
        porep_free_input(c);
        return CUZK_E_INVALID_ARG;
    }
    if (c->partitions == 0 || c->partitions > ENGINE_MAX_PARTITIONS) {
        cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): %u partitions (1..%d)",
                  c->partitions, ENGINE_MAX_PARTITIONS);
        porep_free_input(c);
        return CUZK_E_INVALID_ARG;
    }
    j->parts = calloc(c->partitions, sizeof *j->parts);
    if (!j->parts) {
        porep_free_input(c);
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    }
    j->n_parts = c->partitions;
    j->input = c;
    snprintf(j->circuit_id, sizeof j->circuit_id, "%s", id);
    return CUZK_OK;
}

static int porep_witness(const struct job *j, uint32_t p, struct part *pt,
                         const struct srs_entry *s, struct cuzk_error *err)
{
    const struct fil_c1 *c = j->input;
    const struct g16_shape *shape = &s->shape;
    uint32_t n_in = 0, n_aux = 0;
    int rc = fil_porep_witness_values(&pt->inputs, &pt->aux, &n_in, &n_aux, c, p, err);
    if (rc) return rc;
    if (n_in != shape->n_inputs || n_aux != shape->n_aux)
        return cuzk_fail(err, CUZK_E_INTERNAL, "witness has %u inputs and %u aux, the SRS's shape "
                         "%u and %u", n_in, n_aux, shape->n_inputs, shape->n_aux);
    /* Verification uses inputs recomputed from (replica_id, comm_d, comm_r, seed) and the
     * graph, never the witness's own copies: a witness that drifted from the request would
     * otherwise verify against itself. */
    size_t n_pub = fil_porep_num_inputs(c->proof);
    if (n_pub + 1 != shape->n_inputs)
        return cuzk_fail(err, CUZK_E_INTERNAL, "%s has %zu public inputs, the shape %u",
                         c->proof->name, n_pub, shape->n_inputs - 1);
    pt->pub = cuzk_malloc(n_pub * sizeof *pt->pub);
    if (!pt->pub) return cuzk_fail(err, CUZK_E_NOMEM, "public inputs");
    pt->n_pub = n_pub;
    return fil_porep_public_inputs(pt->pub, c->proof, c->replica_id, c->comm_d, c->comm_r, c->seed,
                                   p, err);
}

/* ------------------------------------------------------------------- SRS -- */

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

/* "porep-2k" ... "porep-64g"; arg = the sector size */
static int porep_srs_match(const char *id, uint64_t *arg, struct cuzk_error *err)
{
    (void)err;
    static const uint64_t sizes[] = {2048ull, 8ull << 20, 512ull << 20, 32ull << 30, 64ull << 30};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (!strcmp(id, porep_circuit_id(sizes[i]))) {
            *arg = sizes[i];
            return CUZK_OK;
        }
    return CUZK_E_NOT_FOUND;
}

static int porep_srs_load(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    char stem[256], path[ENGINE_PATH_MAX + 300], spath[ENGINE_PATH_MAX + 300];
    char tmp[ENGINE_PATH_MAX + 340];
    uint64_t fsize = 0, ssize = 0;
    struct porep_config cfg;
    int rc = fil_porep_param_stem(stem, sizeof stem, x->arg, err);
    if (!rc) rc = porep_config_for_size(&cfg, x->arg, err);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/%s.params", e->cfg.param_cache, stem);
    snprintf(spath, sizeof spath, "%s/%s.shape", e->cfg.param_cache, stem);
    if (!srs_file_size(path, &fsize))
        return cuzk_fail(err, CUZK_E_NOT_FOUND, "SRS file for %s not found: %s", x->id, path);
    rc = srs_charge(e, x, fsize, err);
    if (rc) return rc;

    /* The circuit's counts (a counting pass: 2 s at 32 GiB) check a .shape found on disk. */
    struct gcs cnt;
    rc = porep_blank(NULL, &cnt, &cfg, err);
    uint64_t want_rows = cnt.n_constraints + cnt.n_inputs;
    uint32_t want_in = cnt.n_inputs, want_aux = cnt.n_aux;
    gcs_free(&cnt);
    if (rc) return rc;
    uint64_t t0 = cuzk_now_ns();
    if (srs_file_size(spath, &ssize)) {
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
    rc = srs_charge(e, x, srs_shape_bytes(&x->shape), err);
    if (rc) return rc;

    cuzk_log(CLOG_INFO, "loading SRS from disk: circuit=%s path=%s size_mib=%.0f", x->id, path,
             (double)fsize / MiB);
    rc = srs_read_params(e, x, path, err);
    if (!rc) rc = srs_pk_matches(&x->pk, &x->shape, path, err);
    return rc;
}

const struct kind_def kind_porep = {
    .kind = ENGINE_KIND_POREP, .name = "porep-c2", .label = "porep_c2", .default_priority = 2,
    .parse = porep_parse, .witness = porep_witness, .free_input = porep_free_input,
    .circuit_ids = "porep-2k, porep-8m, porep-512m, porep-32g, porep-64g",
    .srs_match = porep_srs_match, .srs_load = porep_srs_load,
};
