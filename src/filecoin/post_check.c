/* post_check.c: what a PoSt request's vanilla proofs must satisfy before synthesis (the
 * native check), the public inputs recomputed from the request, and the witness vectors of a
 * request (vanilla.h). The check re-derives the challenges (post_inputs.c) and re-hashes every
 * inclusion path with the native Poseidon, sectors in parallel: at 32 GiB a full WindowPoSt
 * partition is 23,490 paths of 10 Poseidon-8 hashes. */
#include <inttypes.h>
#include <string.h>

#include "cuzk/gadgets.h"
#include "cuzk/util.h"
#include "cuzk/vanilla.h"

#define SEC "FallbackPoStSectorProof (sector %u, id %" PRIu64 "): "

int fil_post_sector_proof_check(const struct fil_post_proof *p, const struct fil_post_sector_proof *sp,
                                const uint8_t randomness[32], uint64_t sector_index, unsigned pos,
                                struct cuzk_error *err)
{
    if (!p || !sp || !sp->arena || !randomness)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_sector_proof_check: NULL argument");
    struct post_config c;
    int rc = fil_post_circuit_config(&c, p, err);
    if (rc) return rc;
    unsigned ar[POREP_MAX_LEVELS], lv = post_tree_arities(&c, ar), C = p->challenge_count;
    unsigned ns = 0;
    for (unsigned l = 0; l < lv; l++) ns += ar[l] - 1;
    if (sp->challenges != C || sp->levels != lv || sp->siblings != ns || C > 128)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, SEC "%u inclusion proofs of %u levels do not fit %s", pos,
                         sp->sector_id, sp->challenges, sp->levels, p->name);
    uint64_t want[128];
    rc = fil_post_sector_challenges(want, p, randomness, sp->sector_id, sector_index, err);
    if (rc) return rc;
    const struct poseidon_consts *pc[9] = {0};
    for (unsigned l = 0; l < lv; l++)
        if (!pc[ar[l]] && !(pc[ar[l]] = poseidon_consts_get(ar[l], err))) return err ? err->code : CUZK_E_INTERNAL;
    for (unsigned n = 0; n < C; n++) {
        /* the challenged position first: a path to another leaf proves nothing */
        if (sp->leaf_index[n] != want[n])
            return cuzk_fail(err, CUZK_E_FORMAT, SEC "challenge %u (leaf %" PRIu64 "): inclusion_proofs[%u]: the "
                             "path's indices give leaf %" PRIu64 ", but (randomness, sector id %" PRIu64 ", sector "
                             "index %" PRIu64 ") challenge leaf %" PRIu64, pos, sp->sector_id, n, want[n], n,
                             sp->leaf_index[n], sp->sector_id, sector_index, want[n]);
        fr_t cur = sp->leaves[n];
        const uint32_t *idx = sp->paths[n].index;
        const fr_t *sib = sp->paths[n].siblings;
        for (unsigned l = 0; l < lv; l++) {
            fr_t in[8];
            unsigned a = ar[l], k = 0;
            for (unsigned j = 0; j < a; j++) in[j] = j == idx[l] ? cur : sib[k++];
            sib += a - 1;
            poseidon_hash(&cur, pc[a], in);
        }
        if (!fr_eq(&cur, &sp->comm_r_last))
            return cuzk_fail(err, CUZK_E_FORMAT, SEC "challenge %u (leaf %" PRIu64 "): inclusion_proofs[%u]: the leaf "
                             "and path do not reach comm_r_last", pos, sp->sector_id, n, want[n], n);
        if (!fr_eq(&sp->roots[n], &sp->comm_r_last))
            return cuzk_fail(err, CUZK_E_FORMAT, SEC "challenge %u (leaf %" PRIu64 "): inclusion_proofs[%u].root is "
                             "not comm_r_last", pos, sp->sector_id, n, want[n], n);
    }
    const struct poseidon_consts *p2 = poseidon_consts_get(2, err);
    if (!p2) return err ? err->code : CUZK_E_INTERNAL;
    fr_t in[2] = {sp->comm_c, sp->comm_r_last}, h;
    poseidon_hash(&h, p2, in);
    if (!fr_eq(&h, &sp->comm_r))
        return cuzk_fail(err, CUZK_E_FORMAT, SEC "comm_r is not Poseidon(comm_c, comm_r_last) (comm_c, comm_r_last "
                         "or comm_r is wrong)", pos, sp->sector_id);
    return CUZK_OK;
}

struct check_ctx {
    const struct fil_post_proof *p;
    const struct fil_post_sector_proof *sp;
    const uint8_t *randomness;
    uint64_t first_index;
    int *rc;
    struct cuzk_error *err;
};

static void check_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct check_ctx *x = ctx;
    for (size_t i = begin; i < end; i++) {
        uint64_t si = x->p->kind == POST_WINNING ? 0 : x->first_index + i;
        x->rc[i] = fil_post_sector_proof_check(x->p, &x->sp[i], x->randomness, si, (unsigned)i, &x->err[i]);
    }
}

static int request_shape(const struct fil_post_proof *p, const uint64_t *ids, size_t stride, size_t n, unsigned k,
                         struct cuzk_error *err)
{
    if (!n) return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: no sector proofs", p->name);
    if (p->kind == POST_WINNING) {
        if (n != 1)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: %zu sector proofs; WinningPoSt proves exactly the one "
                             "challenged sector", p->name, n);
        if (k) return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: partition %u of 1", p->name, k);
        return CUZK_OK;
    }
    if (n > p->sector_count)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: %zu sector proofs, more than a partition holds (%u)", p->name, n,
                         p->sector_count);
    for (size_t i = 1; i < n; i++) {
        uint64_t a = *(const uint64_t *)((const uint8_t *)ids + (i - 1) * stride);
        uint64_t b = *(const uint64_t *)((const uint8_t *)ids + i * stride);
        if (b <= a)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: sector ids must be strictly ascending (the verifier orders "
                             "them by id): sector %zu has id %" PRIu64 " after %" PRIu64, p->name, i, b, a);
    }
    return CUZK_OK;
}

int fil_post_request_check(const struct fil_post_proof *p, const struct fil_post_sector_proof *sp, size_t n,
                           const uint8_t randomness[32], unsigned k, struct pool *pool, struct cuzk_error *err)
{
    if (!p || (!sp && n) || !randomness)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_request_check: NULL argument");
    int rc = fil_post_check_randomness(randomness, 32, err);
    if (!rc) rc = request_shape(p, n ? &sp[0].sector_id : NULL, sizeof *sp, n, k, err);
    if (rc) return rc;
    struct check_ctx x = {p, sp, randomness, (uint64_t)k * p->sector_count, cuzk_calloc(n, sizeof(int)),
                          cuzk_calloc(n, sizeof(struct cuzk_error))};
    if (!x.rc || !x.err) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: check of %zu sectors", p->name, n);
    } else {
        if (pool) pool_parallel_for(pool, n, 1, check_range, &x);
        else check_range(&x, 0, n, 0);
        for (size_t i = 0; i < n && !rc; i++)
            if ((rc = x.rc[i]) && err) *err = x.err[i];
    }
    cuzk_free(x.rc);
    cuzk_free(x.err);
    return rc;
}

int fil_post_request_inputs(fr_t *out, const struct fil_post_proof *p, const uint8_t randomness[32],
                            const uint64_t *sector_ids, const fr_t *comm_r, size_t n, unsigned k,
                            struct cuzk_error *err)
{
    if (!out || !p || !randomness || !sector_ids || !comm_r)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_request_inputs: NULL argument");
    struct post_config c;
    int rc = fil_post_circuit_config(&c, p, err);
    if (!rc) rc = fil_post_check_randomness(randomness, 32, err);
    if (!rc) rc = request_shape(p, sector_ids, sizeof *sector_ids, n, k, err);
    if (rc) return rc;
    size_t ni = fil_post_num_inputs(p);
    fr_t *all = cuzk_malloc(ni * sizeof *all), *cr = cuzk_malloc(c.sectors * sizeof *cr);
    uint64_t *leaf = cuzk_malloc((size_t)c.sectors * c.challenges * sizeof *leaf);
    if (!all || !cr || !leaf) rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: public inputs", p->name);
    /* Circuit sector j: request sector min(j, n - 1) (padding repeats the last, with its
     * challenges: compound.rs copies the last sector's inputs), challenged with sector index
     * k * S + that position. WinningPoSt: sector 0 with the 66 challenge indices 0..65, one per
     * circuit sector (66 x 1). */
    uint64_t ch[128];
    for (unsigned j = 0; j < c.sectors && !rc; j++) {
        if (p->kind == POST_WINNING) {
            if (j == 0) rc = fil_post_sector_challenges(ch, p, randomness, sector_ids[0], 0, err);
            cr[j] = comm_r[0];
            leaf[j] = ch[j];
            continue;
        }
        size_t src = j < n ? j : n - 1;
        if (j < n)                  /* padded slots keep sector n - 1's challenges in ch */
            rc = fil_post_sector_challenges(ch, p, randomness, sector_ids[src],
                                            (uint64_t)k * c.sectors + src, err);
        cr[j] = comm_r[src];
        memcpy(leaf + (size_t)j * c.challenges, ch, c.challenges * sizeof *ch);
    }
    if (!rc) rc = post_public_inputs(all, &c, cr, leaf, err);
    if (!rc) memcpy(out, all + 1, (ni - 1) * sizeof *out);
    cuzk_free(all);
    cuzk_free(cr);
    cuzk_free(leaf);
    return rc;
}

int fil_post_witness_values(fr_t **inputs, fr_t **aux, uint32_t *n_inputs, uint32_t *n_aux,
                            const struct post_config *c, const struct fil_post_sector_proof *sp, size_t n,
                            struct pool *pool, struct cuzk_error *err)
{
    if (!inputs || !aux || !n_inputs || !n_aux)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_witness_values: NULL argument");
    *inputs = *aux = NULL;
    struct post_layout l;
    int rc = post_layout_get(&l, c, err);
    if (rc) return rc;
    struct fil_post_partition part;
    rc = fil_post_partition_build(&part, c, sp, n, err);
    if (rc) return rc;
    fr_t *in = cuzk_malloc((size_t)l.n_inputs * sizeof *in), *ax = cuzk_malloc(((size_t)l.n_aux + 1) * sizeof *ax);
    if (!in || !ax) rc = cuzk_fail(err, CUZK_E_NOMEM, "%s witness: %u aux", post_kind_name(c->kind), l.n_aux);
    if (!rc) cuzk_advise_huge(ax, (size_t)l.n_aux * sizeof(fr_t));   /* 4 GB at 32 GiB */
    if (!rc) rc = post_witness_values(in, ax, c, &part.w, pool, err);
    fil_post_partition_free(&part);
    if (rc) {
        cuzk_free(in);
        cuzk_free(ax);
        return rc;
    }
    *inputs = in;
    *aux = ax;
    *n_inputs = l.n_inputs;
    *n_aux = l.n_aux;
    return CUZK_OK;
}
