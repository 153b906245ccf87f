/* kind_post.c: the WINDOW_POST_PARTITION and WINNING_POST kinds of the engine's registry
 * (storage-proofs-post FallbackPoSt; registered PoSt proofs in Curio's Go numbering 0..14).
 * One circuit per request: a WindowPoSt request is one partition (up to S sectors, partition
 * k = partition_index), a WinningPoSt request one sector unrolled into 66 circuit sectors; the
 * proof is 192 bytes.
 *
 * On the RPC thread (engine_submit calls parse) only what is cheap at any size: the registered
 * proof and its kind and size, the randomness (32 bytes, canonical Fr), the number of sector
 * proofs, each blob's exact bincode size for the shape and its sector id (bytes 0..7: strictly
 * ascending for WindowPoSt); then the blobs are copied into the job. In a synthesis worker
 * (witness), on the thread pool: the full bincode parse (a 32 GiB partition is ~59 MB of
 * bincode), the native check of every sector (challenges from (randomness, sector id, k * S +
 * i), paths to comm_r_last, comm_r = Poseidon(comm_c, comm_r_last)), the witness in parallel
 * across sectors and the public inputs recomputed from the request's (sector_id, comm_r) list
 * that the self-check verifies the proof against. See docs/decisions.md ("PoSt in the engine").
 * SRS ids "wpost-2k" ... "wpost-64g", "winning-2k" ... "winning-64g" (fil_circuit.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/fil_circuit.h"
#include "cuzk/filecoin.h"
#include "cuzk/util.h"
#include "cuzk/vanilla.h"
#include "engine_internal.h"

struct post_input {
    const struct fil_post_proof *proof;
    struct post_config cfg;
    uint8_t randomness[32];
    unsigned k;                     /* partition_index (WindowPoSt) */
    size_t n, len;                  /* sector proofs, bytes of each */
    uint8_t *blobs;                 /* n * len, request order */
};

static void post_free_input(void *input)
{
    struct post_input *x = input;
    if (!x) return;
    cuzk_free(x->blobs);
    free(x);
}

static uint64_t rd_le64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static int post_parse(struct job *j, const struct engine_request *r, struct cuzk_error *err)
{
    const char *kname = engine_kind_name(j->kind);
    const struct fil_post_proof *p = fil_post_proof_by_id(r->registered_proof);
    enum post_kind want = j->kind == ENGINE_KIND_WINNING_POST ? POST_WINNING : POST_WINDOW;
    if (!p || p->kind != want)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: registered_proof %" PRIu64 " is %s (expected %s)", kname,
                         r->registered_proof, p ? p->go_name : "not a registered PoSt proof",
                         want == POST_WINNING ? "0-4: StackedDrgWinning{2KiB,8MiB,512MiB,32GiB,64GiB}V1"
                                              : "5-9: StackedDrgWindow*V1 or 10-14: StackedDrgWindow*V1_1");
    if (r->sector_size && r->sector_size != p->sector_size)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: sector_size %" PRIu64 " does not match registered_proof %"
                         PRIu64 " (%s: %" PRIu64 " bytes)", kname, r->sector_size, r->registered_proof, p->go_name,
                         p->sector_size);
    struct cuzk_error rerr = {0};
    if (fil_post_check_randomness(r->post.randomness, r->post.randomness_len, &rerr))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: randomness: %s", kname, rerr.msg);
    size_t n = r->n_vanilla_proofs;
    if (want == POST_WINNING && (n != 1 || r->post.partition_index))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s needs exactly 1 vanilla_proofs entry (the challenged sector's "
                         "FallbackPoStSectorProof) and partition_index 0, got %zu and %u", p->go_name, n,
                         r->post.partition_index);
    if (want == POST_WINDOW && (n == 0 || n > p->sector_count))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s needs 1..%u vanilla_proofs (one FallbackPoStSectorProof per "
                         "sector of the partition), got %zu", p->go_name, p->sector_count, n);
    struct post_input *x = calloc(1, sizeof *x);
    if (!x) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    x->proof = p;
    x->k = r->post.partition_index;
    x->n = n;
    memcpy(x->randomness, r->post.randomness, 32);
    int rc = fil_post_circuit_config(&x->cfg, p, err);
    x->len = fil_post_sector_proof_size(&x->cfg);
    for (size_t i = 0; i < n && !rc; i++) {
        if (r->vanilla_proofs_len[i] != x->len) {
            /* the parser names the field and offset where a blob of the wrong size goes wrong */
            struct fil_post_sector_proof sp;
            struct cuzk_error perr = {0};
            if (fil_post_sector_proof_parse(&sp, &x->cfg, r->vanilla_proofs[i], r->vanilla_proofs_len[i],
                                            (unsigned)i, &perr) == CUZK_OK) {
                fil_post_sector_proof_free(&sp);
                snprintf(perr.msg, sizeof perr.msg, "%zu bytes, expected %zu", r->vanilla_proofs_len[i], x->len);
            }
            rc = cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proofs[%zu] (%s, %zu bytes per sector): %s", i,
                           p->go_name, x->len, perr.msg);
        } else if (i && rd_le64(r->vanilla_proofs[i]) <= rd_le64(r->vanilla_proofs[i - 1])) {
            rc = cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proofs[%zu]: sector id %" PRIu64 " after %" PRIu64
                           ": a partition's sectors must be strictly ascending by id (the verifier orders them)", i,
                           rd_le64(r->vanilla_proofs[i]), rd_le64(r->vanilla_proofs[i - 1]));
        }
    }
    if (!rc && !(x->blobs = cuzk_malloc(n * x->len))) rc = cuzk_fail(err, CUZK_E_NOMEM, "vanilla proofs");
    for (size_t i = 0; i < n && !rc; i++) memcpy(x->blobs + i * x->len, r->vanilla_proofs[i], x->len);
    struct fil_circuit circ;
    if (!rc) rc = fil_circuit_init(&circ, want == POST_WINNING ? FIL_CIRCUIT_WINNING_POST : FIL_CIRCUIT_WINDOW_POST,
                                   p->sector_size, err);
    if (!rc && !(j->parts = calloc(1, sizeof *j->parts))) rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    if (rc) {
        post_free_input(x);
        return rc == CUZK_E_NOMEM ? rc : CUZK_E_INVALID_ARG;
    }
    j->n_parts = 1;
    j->input = x;
    fil_circuit_id(j->circuit_id, sizeof j->circuit_id, &circ);
    return CUZK_OK;
}

struct parse_ctx {
    const struct post_input *x;
    struct fil_post_sector_proof *sp;
    int *rc;
    struct cuzk_error *err;
};

static void parse_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct parse_ctx *c = ctx;
    for (size_t i = begin; i < end; i++)
        c->rc[i] = fil_post_sector_proof_parse(&c->sp[i], &c->x->cfg, c->x->blobs + i * c->x->len, c->x->len,
                                               (unsigned)i, &c->err[i]);
}

static int post_witness(const struct job *j, uint32_t p, struct part *pt, const struct srs_entry *s,
                        struct cuzk_error *err)
{
    (void)p;
    const struct post_input *x = j->input;
    size_t n = x->n;
    struct fil_post_sector_proof *sp = cuzk_calloc(n, sizeof *sp);
    struct parse_ctx pc = {x, sp, cuzk_calloc(n, sizeof(int)), cuzk_calloc(n, sizeof(struct cuzk_error))};
    uint64_t *ids = cuzk_malloc(n * sizeof *ids);
    fr_t *cr = cuzk_malloc(n * sizeof *cr);
    int rc = sp && pc.rc && pc.err && ids && cr ? CUZK_OK : cuzk_fail(err, CUZK_E_NOMEM, "%zu sector proofs", n);
    if (!rc) {
        pool_parallel_for(pool_default(), n, 8, parse_range, &pc);
        for (size_t i = 0; i < n && !rc; i++)
            if ((rc = pc.rc[i])) cuzk_fail(err, rc, "vanilla_proofs[%zu]: %s", i, pc.err[i].msg);
    }
    /* what a vanilla verifier checks, before a witness of up to 125M values is built from
     * sectors that could only give an unsatisfied circuit */
    if (!rc) rc = fil_post_request_check(x->proof, sp, n, x->randomness, x->k, pool_default(), err);
    uint32_t n_in = 0, n_aux = 0;
    if (!rc) rc = fil_post_witness_values(&pt->inputs, &pt->aux, &n_in, &n_aux, &x->cfg, sp, n, pool_default(), err);
    if (!rc && (n_in != s->shape.n_inputs || n_aux != s->shape.n_aux))
        rc = cuzk_fail(err, CUZK_E_INTERNAL, "witness has %u inputs and %u aux, the SRS's shape %u and %u", n_in,
                       n_aux, s->shape.n_inputs, s->shape.n_aux);
    /* verification uses inputs recomputed from the request's (sector_id, comm_r) list and the
     * randomness, never the witness's own copies */
    if (!rc) {
        for (size_t i = 0; i < n; i++) {
            ids[i] = sp[i].sector_id;
            cr[i] = sp[i].comm_r;
        }
        pt->n_pub = fil_post_num_inputs(x->proof) - 1;
        if (!(pt->pub = cuzk_malloc(pt->n_pub * sizeof *pt->pub))) rc = cuzk_fail(err, CUZK_E_NOMEM, "public inputs");
    }
    if (!rc) rc = fil_post_request_inputs(pt->pub, x->proof, x->randomness, ids, cr, n, x->k, err);
    if (sp)
        for (size_t i = 0; i < n; i++) fil_post_sector_proof_free(&sp[i]);
    cuzk_free(sp);
    cuzk_free(pc.rc);
    cuzk_free(pc.err);
    cuzk_free(ids);
    cuzk_free(cr);
    return rc;
}

/* ------------------------------------------------------------------- SRS -- */

static int match(enum fil_circuit_kind k, const char *id, uint64_t *arg, struct cuzk_error *err)
{
    struct fil_circuit c;
    int rc = fil_circuit_parse_id(&c, k, id, err);
    if (!rc) *arg = c.sector_size;
    return rc;
}
static int window_srs_match(const char *id, uint64_t *arg, struct cuzk_error *err)
{
    return match(FIL_CIRCUIT_WINDOW_POST, id, arg, err);
}
static int winning_srs_match(const char *id, uint64_t *arg, struct cuzk_error *err)
{
    return match(FIL_CIRCUIT_WINNING_POST, id, arg, err);
}

static int load(enum fil_circuit_kind k, struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    struct fil_circuit c;
    int rc = fil_circuit_init(&c, k, x->arg, err);
    return rc ? rc : srs_load_circuit(e, x, &c, err);
}
static int window_srs_load(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    return load(FIL_CIRCUIT_WINDOW_POST, e, x, err);
}
static int winning_srs_load(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    return load(FIL_CIRCUIT_WINNING_POST, e, x, err);
}

const struct kind_def kind_window_post = {   /* HIGH by default, as upstream */
    .kind = ENGINE_KIND_WINDOW_POST, .name = "window-post", .label = "window_post", .default_priority = 3,
    .parse = post_parse, .witness = post_witness, .free_input = post_free_input,
    .circuit_ids = "wpost-2k, wpost-8m, wpost-512m, wpost-32g, wpost-64g",
    .srs_match = window_srs_match, .srs_load = window_srs_load,
};
const struct kind_def kind_winning_post = {   /* CRITICAL by default: a late one loses the block */
    .kind = ENGINE_KIND_WINNING_POST, .name = "winning-post", .label = "winning_post", .default_priority = 4,
    .parse = post_parse, .witness = post_witness, .free_input = post_free_input,
    .circuit_ids = "winning-2k, winning-8m, winning-512m, winning-32g, winning-64g",
    .srs_match = winning_srs_match, .srs_load = winning_srs_load,
};
