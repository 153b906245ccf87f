/* c1_gen.c: synthetic but internally consistent C1 outputs (gen-vanilla).
 *
 * Interactive PoRep (V1 / V1_1): the generator picks the seed itself, so the challenges are
 * known before any tree exists and only the nodes a proof touches are materialized:
 * challenged nodes get real SDR labels (SHA-256 over their parents' values, recursively when a
 * parent is itself challenged), every other node value and untouched subtree root of trees R
 * and C is pseudo-random, the data is zero (a CC sector, so comm_d is known first and
 * replica_id is derived as upstream); sparse Merkle trees (SHA-256 tree D, Poseidon trees R
 * and C) are hashed bottom-up over the touched paths only. Any sector size takes well under a
 * second.
 *
 * Synthetic PoRep (V1_1_Feat_SyntheticPoRep) and NI-PoRep (V1_2_Feat_NonInteractivePoRep):
 * their challenges are derived from comm_r = Poseidon(comm_c, comm_r_last) (Fiat-Shamir), so
 * the trees must be fixed before the challenges are known, and every node must then be able
 * to answer a challenge: its label must be the real SHA-256 of its parents' committed labels.
 * That is a full SDR of the sector (the soundness of PoRep: no sparse shortcut exists), done
 * here densely, layer by layer, with full trees R and C; affordable up to 512 MiB (2 layers),
 * refused for 32 / 64 GiB (11 layers x 2^30 nodes: a real PreCommit). Facts from upstream
 * (rust-fil-proofs filecoin-proofs api/seal.rs, storage-proofs-porep stacked/vanilla
 * proof.rs, challenges.rs, filecoin-proofs constants.rs) this relies on:
 *  - the C1 layout is the interactive one for both: vanilla_proofs = partitions x challenges
 *    per partition (partition-major), under the same "StackedDrg<size>V1" tag; synthetic C1
 *    holds the proofs of the challenges selected by the seed (read_porep_proofs_from_synth:
 *    partition k's synthetic indices, in order), NI those of NiChallenges::derive(k);
 *  - partitions: interactive and synthetic 1 (test sizes) / 10 (32, 64 GiB); NI 13 / 126;
 *    challenges per partition 2 / 18 for all three (the same circuit and parameters);
 *  - NI ignores the seed for its challenges, but C2 refuses an all-zero seed, so the C1
 *    carries a nonzero one;
 *  - C2 output: one 192-byte Groth16 proof per partition, concatenated in partition order
 *    (seal_commit_phase2_circuit_proofs; NI's SnarkPack aggregate is built over those). */
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
    uint8_t (*dense)[32];       /* synthetic / NI: every label, layer-major (layer l at
                                 * (l - 1) * nodes); NULL for the sparse generator */
    uint64_t nodes;
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
    if (G->dense) {
        memcpy(out, G->dense[(uint64_t)(layer - 1) * G->nodes + node], 32);
        return;
    }
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

/* Sparse (interactive): the challenges first (the seed is ours, comm_r is not needed), then
 * labels of the challenged nodes and the touched leaves of trees R and C. all[] receives the
 * partition-major challenges. */
static int sparse_trees(struct gen *G, struct fil_c1 *out, uint64_t *all, struct fil_stree *tr,
                        struct fil_stree *tc, struct cuzk_error *err)
{
    const struct fil_seal_proof *p = G->p;
    unsigned L = G->cfg.layers, P = p->partitions, C = p->challenges;
    size_t total = (size_t)P * C;
    int rc = CUZK_OK;
    G->chal = cuzk_malloc(total * sizeof *G->chal);
    struct fil_stree_entry *lr = cuzk_malloc(total * sizeof *lr), *lc = cuzk_malloc(total * 15 * sizeof *lc);
    if (!G->chal || !lr || !lc) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "gen: %zu challenges", total);
        goto done;
    }
    for (unsigned k = 0; k < P && !rc; k++)
        rc = fil_porep_challenges(all + (size_t)k * C, p, out->replica_id, out->comm_r, out->seed, k, err);
    if (rc) goto done;
    memcpy(G->chal, all, total * sizeof *all);
    qsort(G->chal, total, sizeof *G->chal, cmp_u64);
    for (size_t i = 0; i < total; i++)
        if (!G->n_chal || G->chal[G->n_chal - 1] != G->chal[i]) G->chal[G->n_chal++] = G->chal[i];
    G->labels = cuzk_calloc(G->n_chal, sizeof *G->labels);
    G->done = cuzk_calloc(G->n_chal, sizeof *G->done);
    if (!G->labels || !G->done) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "gen: labels");
        goto done;
    }
    size_t nc = 0;
    for (size_t i = 0; i < total; i++) {
        uint64_t c = all[i];
        uint8_t rows[POREP_MAX_LAYERS][32];
        column_of(G, rows, c);
        fr_t a;
        (void)fr_from_bytes_le(&a, rows[L - 1]);    /* encode: label + data, data zero */
        lr[i].idx = c;
        fr_to_bytes_le(lr[i].v, &a);
        lc[nc].idx = c;
        if ((rc = column_hash(lc[nc++].v, (const uint8_t(*)[32])rows, L, err))) goto done;
        uint32_t par[14];
        fil_graph_drg_parents(&G->g, (uint32_t)c, par);
        fil_graph_exp_parents(&G->g, (uint32_t)c, par + 6);
        for (int j = 0; j < 14; j++) {
            column_of(G, rows, par[j]);
            lc[nc].idx = par[j];
            if ((rc = column_hash(lc[nc++].v, (const uint8_t(*)[32])rows, L, err))) goto done;
        }
    }
    rc = fil_stree_build(tr, lr, total, err);
    lr = NULL;
    if (!rc) rc = fil_stree_build(tc, lc, nc, err);
    lc = NULL;
done:
    cuzk_free(lr);
    cuzk_free(lc);
    return rc;
}

/* The parallel parts of the dense generator (pool_parallel_for ranges over nodes): the
 * expander parents (3 BLAKE2b rounds each, the same on every layer, so computed once) and
 * the leaves of trees R and C (a Poseidon column hash per node). The labels themselves are
 * sequential: a node's DRG parents are earlier nodes of the same layer. */
struct dense_ctx {
    struct gen *G;
    uint32_t (*exp)[FIL_EXP_PARENTS];
    struct fil_stree_entry *lr, *lc;
    const struct poseidon_consts *pc;
};

static void dense_exp_range(void *ctx, size_t b, size_t e, unsigned w)
{
    (void)w;
    struct dense_ctx *d = ctx;
    for (size_t n = b; n < e; n++) fil_graph_exp_parents(&d->G->g, (uint32_t)n, d->exp[n]);
}

static void dense_leaf_range(void *ctx, size_t b, size_t e, unsigned w)
{
    (void)w;
    struct dense_ctx *d = ctx;
    unsigned L = d->G->cfg.layers;
    for (size_t n = b; n < e; n++) {
        uint8_t rows[POREP_MAX_LAYERS][32];
        column_of(d->G, rows, n);
        d->lr[n].idx = d->lc[n].idx = n;
        memcpy(d->lr[n].v, rows[L - 1], 32);       /* encode: label + data, data zero */
        fr_t in[POREP_MAX_LAYERS], h;
        for (unsigned r = 0; r < L; r++) (void)fr_from_bytes_le(&in[r], rows[r]);
        poseidon_hash(&h, d->pc, in);
        fr_to_bytes_le(d->lc[n].v, &h);
    }
}

/* Dense (synthetic / NI): every label of every layer, as upstream's create_label computes it
 * (node 0 hashes the 64-byte header alone), then full trees R and C over every node. */
static int dense_trees(struct gen *G, struct fil_stree *tr, struct fil_stree *tc, struct cuzk_error *err)
{
    uint64_t N = G->nodes;
    unsigned L = G->cfg.layers;
    G->dense = cuzk_malloc((size_t)L * N * 32);
    struct fil_stree_entry *lr = cuzk_malloc(N * sizeof *lr), *lc = cuzk_malloc(N * sizeof *lc);
    struct dense_ctx d = {.G = G, .lr = lr, .lc = lc, .exp = cuzk_malloc(N * sizeof *d.exp)};
    int rc = CUZK_OK;
    if (!G->dense || !lr || !lc || !d.exp) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "gen: labels of %llu nodes x %u layers", (unsigned long long)N, L);
        goto done;
    }
    if (!(d.pc = poseidon_consts_get(L, err))) {
        rc = err ? err->code : CUZK_E_INTERNAL;
        goto done;
    }
    pool_parallel_for(pool_default(), N, 4096, dense_exp_range, &d);
    for (unsigned l = 1; l <= L; l++) {
        uint8_t (*cur)[32] = G->dense + (uint64_t)(l - 1) * N, (*prev)[32] = l > 1 ? cur - N : NULL;
        uint8_t hdr[64] = {0};
        memcpy(hdr, G->replica_id, 32);
        for (int i = 0; i < 4; i++) hdr[32 + i] = (uint8_t)(l >> (24 - 8 * i));
        cuzk_sha256(cur[0], hdr, 64);
        cur[0][31] &= 0x3f;
        for (uint64_t n = 1; n < N; n++) {
            uint32_t drg[FIL_DRG_PARENTS];
            uint8_t v[14][32], par[37][32];
            fil_graph_drg_parents(&G->g, (uint32_t)n, drg);
            for (int j = 0; j < FIL_DRG_PARENTS; j++) {
                if (drg[j] >= n) {
                    rc = cuzk_fail(err, CUZK_E_INTERNAL, "gen: DRG parent %u of node %llu is not earlier",
                                   drg[j], (unsigned long long)n);
                    goto done;
                }
                memcpy(v[j], cur[drg[j]], 32);
            }
            if (prev)
                for (int j = 0; j < FIL_EXP_PARENTS; j++) memcpy(v[6 + j], prev[d.exp[n][j]], 32);
            fil_sdr_expand_parents(par, (const uint8_t(*)[32])v, (const uint8_t(*)[32])(v + 6), l);
            fil_sdr_label(cur[n], G->replica_id, l, n, (const uint8_t(*)[32])par);
        }
    }
    pool_parallel_for(pool_default(), N, 1024, dense_leaf_range, &d);
    rc = fil_stree_build(tr, lr, N, err);
    lr = NULL;
    if (!rc) rc = fil_stree_build(tc, lc, N, err);
    lc = NULL;
done:
    cuzk_free(d.exp);
    cuzk_free(lr);
    cuzk_free(lc);
    return rc;
}

int fil_c1_generate(struct fil_c1 *out, const struct fil_seal_proof *p, uint64_t miner_id,
                    uint64_t sector_num, uint64_t seed, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    bool dense = p->kind != FIL_POREP_INTERACTIVE;
    if (dense && p->sector_size > (512ull << 20))
        return cuzk_fail(err, CUZK_E_UNSUPPORTED,
                         "gen: %s: synthetic and NI-PoRep challenges are derived from comm_r, so every "
                         "label must be real before they are known: a full SDR (%u layers x %llu nodes, "
                         "i.e. a real PreCommit), which this generator does only up to 512 MiB",
                         p->name, p->layers, (unsigned long long)(p->sector_size / 32));
    struct gen G = {.p = p, .err = err, .nodes = p->sector_size / 32};
    int rc = porep_config_for_size(&G.cfg, p->sector_size, err);
    if (rc) return rc;
    fil_graph_init(&G.g, p);
    uint8_t sb[8];
    for (int i = 0; i < 8; i++) sb[i] = (uint8_t)(seed >> (8 * i));
    cuzk_sha256(G.key, sb, 8);

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
    /* nonzero for NI too: upstream's C2 refuses an all-zero seed although NI ignores it */
    fil_prf(out->seed, G.key, TAG_MISC, 3, 0);
    memcpy(G.replica_id, out->replica_id, 32);

    unsigned L = G.cfg.layers, P = p->partitions, C = p->challenges;
    size_t total = (size_t)P * C;
    uint64_t *all = cuzk_malloc(total * sizeof *all);
    out->vp = cuzk_calloc(total, sizeof *out->vp);
    struct fil_stree_entry *ld = cuzk_malloc(total * sizeof *ld);
    struct fil_stree td = {0}, tr = {0}, tc = {0};
    if (!all || !out->vp || !ld) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "gen: %zu challenges", total);
        goto done;
    }
    unsigned nb = G.cfg.base_levels;
    fil_stree_init_poseidon(&tr, G.key, TAG_TREE_R, G.cfg.base_arity, nb, G.cfg.sub_arity, G.cfg.top_arity);
    fil_stree_init_poseidon(&tc, G.key, TAG_TREE_C, G.cfg.base_arity, nb, G.cfg.sub_arity, G.cfg.top_arity);
    rc = dense ? dense_trees(&G, &tr, &tc, err) : sparse_trees(&G, out, all, &tr, &tc, err);
    if (rc) goto done;

    uint8_t comm_c[32], comm_r_last[32];
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
    /* synthetic / NI: the challenges exist only now */
    for (unsigned k = 0; dense && k < P && !rc; k++)
        rc = fil_porep_challenges(all + (size_t)k * C, p, out->replica_id, out->comm_r, out->seed, k, err);
    if (rc) goto done;
    for (size_t i = 0; i < total; i++) {
        ld[i].idx = all[i];
        memset(ld[i].v, 0, 32);         /* zero data: see the replica id above */
    }
    fil_stree_init_sha_zeros(&td, G.cfg.tree_d_depth);
    rc = fil_stree_build(&td, ld, total, err);
    ld = NULL;
    if (rc) goto done;
    fil_stree_root(&td, out->comm_d);

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
    cuzk_free(all);
    cuzk_free(G.chal);
    cuzk_free(G.labels);
    cuzk_free(G.done);
    cuzk_free(G.dense);
    if (rc) fil_c1_free(out);
    return rc;
}
