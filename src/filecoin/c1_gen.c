/* c1_gen.c: synthetic but internally consistent C1 outputs (gen-vanilla). Only the nodes a
 * proof touches are materialized: challenged nodes get real SDR labels (SHA-256 over their
 * parents' values, recursively when a parent is itself challenged), every other node value
 * and untouched subtree root of trees R and C is pseudo-random, the data is zero (a CC sector,
 * so comm_d is known first and replica_id is derived as upstream); sparse Merkle trees (SHA-256 tree D,
 * Poseidon trees R and C) are hashed bottom-up over the touched paths only. Any sector size
 * takes well under a second. */
#include <stdlib.h>
#include <string.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/util.h"
#include "stree.h"

struct gen {
    const struct fil_seal_proof *p;
    struct porep_config cfg;
    struct fil_graph g;
    uint8_t key[32];            /* PRF key (from the seed) */
    uint8_t replica_id[32];
    uint64_t *chal;             /* sorted unique challenged nodes */
    size_t n_chal;
    uint8_t (*labels)[POREP_MAX_LAYERS][32];    /* per challenged node */
    uint16_t *done;             /* bit l-1 set: label of layer l computed */
    int depth;
    struct cuzk_error *err;
    int rc;
};

enum { TAG_NODE = 1, TAG_DATA = 2, TAG_TREE_D = 3, TAG_TREE_C = 4, TAG_TREE_R = 5, TAG_MISC = 6 };

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static ptrdiff_t chal_find(const struct gen *G, uint64_t node)
{
    size_t lo = 0, hi = G->n_chal;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (G->chal[mid] < node) lo = mid + 1;
        else hi = mid;
    }
    return lo < G->n_chal && G->chal[lo] == node ? (ptrdiff_t)lo : -1;
}

static void node_value(struct gen *G, uint8_t out[32], uint64_t node, unsigned layer);

/* The 37 parent values of node's label at layer (1-based), upstream's expansion order. */
static void label_parents(struct gen *G, uint8_t par[37][32], uint64_t node, unsigned layer)
{
    uint32_t drg[FIL_DRG_PARENTS], exp[FIL_EXP_PARENTS];
    uint8_t v[14][32];
    fil_graph_drg_parents(&G->g, (uint32_t)node, drg);
    fil_graph_exp_parents(&G->g, (uint32_t)node, exp);
    for (int i = 0; i < FIL_DRG_PARENTS; i++) node_value(G, v[i], drg[i], layer);
    if (layer > 1)
        for (int i = 0; i < FIL_EXP_PARENTS; i++) node_value(G, v[6 + i], exp[i], layer - 1);
    fil_sdr_expand_parents(par, (const uint8_t(*)[32])v, (const uint8_t(*)[32])(v + 6), layer);
}

static void compute_label(struct gen *G, uint8_t out[32], uint64_t node, unsigned layer)
{
    uint8_t par[37][32];
    label_parents(G, par, node, layer);
    fil_sdr_label(out, G->replica_id, layer, node, (const uint8_t(*)[32])par);
}

static void node_value(struct gen *G, uint8_t out[32], uint64_t node, unsigned layer)
{
    ptrdiff_t i = chal_find(G, node);
    if (i < 0) {
        fil_prf(out, G->key, TAG_NODE, node, layer);
        return;
    }
    uint16_t bit = (uint16_t)(1u << (layer - 1));
    if (!(G->done[i] & bit)) {
        compute_label(G, G->labels[i][layer - 1], node, layer);
        G->done[i] |= bit;
    }
    memcpy(out, G->labels[i][layer - 1], 32);
}

/* ------------------------------------------------------------------ generate -- */

static int column_hash(uint8_t out[32], const uint8_t (*rows)[32], unsigned L, struct cuzk_error *err)
{
    const struct poseidon_consts *pc = poseidon_consts_get(L, err);
    if (!pc) return err ? err->code : CUZK_E_INTERNAL;
    fr_t in[POREP_MAX_LAYERS], h;
    for (unsigned r = 0; r < L; r++) (void)fr_from_bytes_le(&in[r], rows[r]);
    poseidon_hash(&h, pc, in);
    fr_to_bytes_le(out, &h);
    return CUZK_OK;
}

static void column_of(struct gen *G, uint8_t (*rows)[32], uint64_t node)
{
    for (unsigned l = 1; l <= G->cfg.layers; l++) node_value(G, rows[l - 1], node, l);
}

int fil_c1_generate(struct fil_c1 *out, const struct fil_seal_proof *p, uint64_t miner_id,
                    uint64_t sector_num, uint64_t seed, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    if (p->kind != FIL_POREP_INTERACTIVE)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED,
                         "gen: %s: only interactive PoRep (V1 / V1_1) can be generated: NI and synthetic "
                         "challenges depend on comm_r, which a sparse tree cannot fix in advance", p->name);
    struct gen G = {.p = p, .err = err};
    int rc = porep_config_for_size(&G.cfg, p->sector_size, err);
    if (rc) return rc;
    fil_graph_init(&G.g, p);
    uint8_t sb[8];
    for (int i = 0; i < 8; i++) sb[i] = (uint8_t)(seed >> (8 * i));
    fil_sha256(G.key, sb, 8);

    out->proof = p;
    out->sector_num = sector_num;
    out->sector_size = p->sector_size;
    out->partitions = p->partitions;
    out->challenges = p->challenges;
    /* The sector holds zero data (a CC sector): tree D's root is then known before the
     * challenges, so the replica id is derived as upstream does, from (prover_id, sector,
     * ticket, comm_d, porep_id), and the daemon's replica-id check accepts the C1. (A sparse
     * tree of random data would need the replica id first: its root depends on the
     * challenged leaves.) */
    fil_prf(out->ticket, G.key, TAG_MISC, 2, 0);
    struct fil_stree td0;
    fil_stree_init_sha_zeros(&td0, G.cfg.tree_d_depth);
    fil_stree_root(&td0, out->comm_d);
    uint8_t prover[32], porep_id[32];
    fil_prover_id(prover, miner_id);
    fil_porep_id(porep_id, p);
    fil_replica_id(out->replica_id, prover, sector_num, out->ticket, out->comm_d, porep_id);
    fil_prf(out->seed, G.key, TAG_MISC, 3, 0);
    memcpy(G.replica_id, out->replica_id, 32);

    unsigned L = G.cfg.layers, P = p->partitions, C = p->challenges;
    size_t total = (size_t)P * C;
    uint64_t *all = cuzk_malloc(total * sizeof *all);
    G.chal = cuzk_malloc(total * sizeof *G.chal);
    out->vp = cuzk_calloc(total, sizeof *out->vp);
    struct fil_stree_entry *ld = cuzk_malloc(total * sizeof *ld), *lr = cuzk_malloc(total * sizeof *lr),
                 *lc = cuzk_malloc(total * 15 * sizeof *lc);
    struct fil_stree td = {0}, tr = {0}, tc = {0};
    if (!all || !G.chal || !out->vp || !ld || !lr || !lc) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "gen: %zu challenges", total);
        goto done;
    }
    for (unsigned k = 0; k < P && !rc; k++)
        rc = fil_porep_challenges(all + (size_t)k * C, p, out->replica_id, out->comm_r, out->seed, k, err);
    if (rc) goto done;
    memcpy(G.chal, all, total * sizeof *all);
    qsort(G.chal, total, sizeof *G.chal, cmp_u64);
    for (size_t i = 0; i < total; i++)
        if (!G.n_chal || G.chal[G.n_chal - 1] != G.chal[i]) G.chal[G.n_chal++] = G.chal[i];
    G.labels = cuzk_calloc(G.n_chal, sizeof *G.labels);
    G.done = cuzk_calloc(G.n_chal, sizeof *G.done);
    if (!G.labels || !G.done) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "gen: labels");
        goto done;
    }

    /* leaves of the three trees */
    size_t nc = 0;
    for (size_t i = 0; i < total; i++) {
        uint64_t c = all[i];
        uint8_t rows[POREP_MAX_LAYERS][32], data[32];
        memset(data, 0, sizeof data);   /* zero data: see the replica id above */
        column_of(&G, rows, c);
        ld[i].idx = c;
        memcpy(ld[i].v, data, 32);
        fr_t a, b;
        (void)fr_from_bytes_le(&a, rows[L - 1]);
        (void)fr_from_bytes_le(&b, data);
        fr_add(&a, &a, &b);                             /* encode: label + data */
        lr[i].idx = c;
        fr_to_bytes_le(lr[i].v, &a);
        lc[nc].idx = c;
        if ((rc = column_hash(lc[nc++].v, (const uint8_t(*)[32])rows, L, err))) goto done;
        uint32_t par[14];
        fil_graph_drg_parents(&G.g, (uint32_t)c, par);
        fil_graph_exp_parents(&G.g, (uint32_t)c, par + 6);
        for (int j = 0; j < 14; j++) {
            column_of(&G, rows, par[j]);
            lc[nc].idx = par[j];
            if ((rc = column_hash(lc[nc++].v, (const uint8_t(*)[32])rows, L, err))) goto done;
        }
    }
    fil_stree_init_sha_zeros(&td, G.cfg.tree_d_depth);
    unsigned nb = G.cfg.base_levels;
    fil_stree_init_poseidon(&tr, G.key, TAG_TREE_R, G.cfg.base_arity, nb, G.cfg.sub_arity, G.cfg.top_arity);
    fil_stree_init_poseidon(&tc, G.key, TAG_TREE_C, G.cfg.base_arity, nb, G.cfg.sub_arity, G.cfg.top_arity);
    rc = fil_stree_build(&td, ld, total, err);
    ld = NULL;
    if (!rc) rc = fil_stree_build(&tr, lr, total, err);
    lr = NULL;
    if (!rc) rc = fil_stree_build(&tc, lc, nc, err);
    lc = NULL;
    if (rc) goto done;

    uint8_t comm_c[32], comm_r_last[32];
    fil_stree_root(&td, out->comm_d);
    fil_stree_root(&tc, comm_c);
    fil_stree_root(&tr, comm_r_last);
    {
        const struct poseidon_consts *p2 = poseidon_consts_get(2, err);
        if (!p2) {
            rc = err ? err->code : CUZK_E_INTERNAL;
            goto done;
        }
        fr_t in[2], h;
        (void)fr_from_bytes_le(&in[0], comm_c);
        (void)fr_from_bytes_le(&in[1], comm_r_last);
        poseidon_hash(&h, p2, in);
        fr_to_bytes_le(out->comm_r, &h);
    }

    for (size_t i = 0; i < total; i++) {
        uint64_t c = all[i];
        struct fil_vproof *v = &out->vp[i];
        fil_stree_proof(&td, &v->comm_d, c);
        fil_stree_proof(&tr, &v->comm_r_last, c);
        v->c_x.index = (uint32_t)c;
        column_of(&G, v->c_x.rows, c);
        fil_stree_proof(&tc, &v->c_x.proof, c);
        uint32_t par[14];
        fil_graph_drg_parents(&G.g, (uint32_t)c, par);
        fil_graph_exp_parents(&G.g, (uint32_t)c, par + 6);
        for (int j = 0; j < 14; j++) {
            struct fil_column_proof *cp = j < 6 ? &v->drg[j] : &v->exp[j - 6];
            cp->index = par[j];
            column_of(&G, cp->rows, par[j]);
            fil_stree_proof(&tc, &cp->proof, par[j]);
        }
        for (unsigned l = 1; l <= L; l++) {
            label_parents(&G, v->labeling[l - 1].parents, c, l);
            v->labeling[l - 1].layer_index = l;
            v->labeling[l - 1].node = c;
        }
        v->encoding = v->labeling[L - 1];
    }
done:
    fil_stree_free(&td);
    fil_stree_free(&tr);
    fil_stree_free(&tc);
    cuzk_free(ld);
    cuzk_free(lr);
    cuzk_free(lc);
    cuzk_free(all);
    cuzk_free(G.chal);
    cuzk_free(G.labels);
    cuzk_free(G.done);
    if (rc) fil_c1_free(out);
    return rc;
}
