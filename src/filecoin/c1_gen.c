/* c1_gen.c: synthetic but internally consistent C1 outputs (gen-vanilla). Only the nodes a
 * proof touches are materialized: challenged nodes get real SDR labels (SHA-256 over their
 * parents' values, recursively when a parent is itself challenged), every other node value,
 * data leaf and untouched subtree root is pseudo-random; sparse Merkle trees (SHA-256 tree D,
 * Poseidon trees R and C) are hashed bottom-up over the touched paths only. Any sector size
 * takes well under a second. */
#include <stdlib.h>
#include <string.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/util.h"

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

/* Pseudo-random 254-bit value (a valid Fr and a trimmed Sha256Domain alike). */
static void prf(uint8_t out[32], const uint8_t key[32], uint32_t tag, uint64_t a, uint64_t b)
{
    uint8_t in[52];
    memcpy(in, key, 32);
    for (int i = 0; i < 4; i++) in[32 + i] = (uint8_t)(tag >> (8 * i));
    for (int i = 0; i < 8; i++) {
        in[36 + i] = (uint8_t)(a >> (8 * i));
        in[44 + i] = (uint8_t)(b >> (8 * i));
    }
    fil_sha256(out, in, sizeof in);
    out[31] &= 0x3f;
}

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
        prf(out, G->key, TAG_NODE, node, layer);
        return;
    }
    uint16_t bit = (uint16_t)(1u << (layer - 1));
    if (!(G->done[i] & bit)) {
        compute_label(G, G->labels[i][layer - 1], node, layer);
        G->done[i] |= bit;
    }
    memcpy(out, G->labels[i][layer - 1], 32);
}

/* --------------------------------------------------------------- sparse trees -- */

struct entry { uint64_t idx; uint8_t v[32]; };

struct stree {
    unsigned levels, tag;
    unsigned arity[FIL_MAX_LEVELS];
    bool sha;
    const uint8_t *key;
    struct entry *lv[FIL_MAX_LEVELS + 1];
    size_t n[FIL_MAX_LEVELS + 1];
};

static int cmp_entry(const void *a, const void *b)
{
    return cmp_u64(&((const struct entry *)a)->idx, &((const struct entry *)b)->idx);
}

static void st_get(const struct stree *t, uint8_t out[32], unsigned level, uint64_t idx)
{
    size_t lo = 0, hi = t->n[level];
    const struct entry *e = t->lv[level];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e[mid].idx < idx) lo = mid + 1;
        else hi = mid;
    }
    if (lo < t->n[level] && e[lo].idx == idx) memcpy(out, e[lo].v, 32);
    else prf(out, t->key, t->tag, level, idx);
}

static int st_hash(uint8_t out[32], const struct stree *t, unsigned level, uint8_t (*ch)[32],
                   struct cuzk_error *err)
{
    unsigned a = t->arity[level];
    if (t->sha) {
        fil_sha256(out, ch, 64);
        out[31] &= 0x3f;
        return CUZK_OK;
    }
    const struct poseidon_consts *pc = poseidon_consts_get(a, err);
    if (!pc) return err ? err->code : CUZK_E_INTERNAL;
    fr_t in[8], h;
    for (unsigned j = 0; j < a; j++) (void)fr_from_bytes_le(&in[j], ch[j]);
    poseidon_hash(&h, pc, in);
    fr_to_bytes_le(out, &h);
    return CUZK_OK;
}

/* leaves: n entries (any order, duplicates with equal values allowed); takes ownership. */
static int st_build(struct stree *t, struct entry *leaves, size_t n, struct cuzk_error *err)
{
    qsort(leaves, n, sizeof *leaves, cmp_entry);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || leaves[m - 1].idx != leaves[i].idx) leaves[m++] = leaves[i];
    t->lv[0] = leaves;
    t->n[0] = m;
    for (unsigned l = 0; l < t->levels; l++) {
        unsigned a = t->arity[l];
        struct entry *up = cuzk_malloc((t->n[l] ? t->n[l] : 1) * sizeof *up);
        if (!up) return cuzk_fail(err, CUZK_E_NOMEM, "gen: sparse tree level %u", l);
        size_t k = 0;
        for (size_t i = 0; i < t->n[l]; i++) {
            uint64_t grp = t->lv[l][i].idx / a;
            if (k && up[k - 1].idx == grp) continue;
            uint8_t ch[8][32];
            for (unsigned j = 0; j < a; j++) st_get(t, ch[j], l, grp * a + j);
            up[k].idx = grp;
            int rc = st_hash(up[k].v, t, l, ch, err);
            if (rc) {
                cuzk_free(up);
                return rc;
            }
            k++;
        }
        t->lv[l + 1] = up;
        t->n[l + 1] = k;
    }
    return CUZK_OK;
}

static void st_free(struct stree *t)
{
    for (unsigned l = 0; l <= t->levels; l++) cuzk_free(t->lv[l]);
}

static void st_root(const struct stree *t, uint8_t out[32]) { st_get(t, out, t->levels, 0); }

/* MerkleProof of leaf idx (base / sub / top split from the config). */
static void st_proof(const struct stree *t, struct fil_merkle_proof *m, uint64_t idx, unsigned nb,
                     unsigned ns, unsigned nt)
{
    memset(m, 0, sizeof *m);
    st_get(t, m->leaf, 0, idx);
    st_root(t, m->root);
    m->n_base = (uint8_t)nb;
    m->n_sub = (uint8_t)ns;
    m->n_top = (uint8_t)nt;
    unsigned s = 0;
    for (unsigned l = 0; l < t->levels; l++) {
        unsigned a = t->arity[l];
        uint64_t grp = idx / a;
        m->arity[l] = (uint8_t)a;
        m->index[l] = (uint32_t)(idx % a);
        for (unsigned j = 0; j < a; j++)
            if (j != idx % a) st_get(t, m->sib[s++], l, grp * a + j);
        idx = grp;
    }
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
    (void)miner_id;

    out->proof = p;
    out->sector_num = sector_num;
    out->sector_size = p->sector_size;
    out->partitions = p->partitions;
    out->challenges = p->challenges;
    /* The replica id is random: deriving it from (prover_id, sector, ticket, comm_d) would
     * need comm_d first, but a sparse tree D's root depends on the challenged leaves, which
     * depend on the replica id. C2 never re-derives it. */
    prf(out->replica_id, G.key, TAG_MISC, 1, 0);
    prf(out->ticket, G.key, TAG_MISC, 2, 0);
    prf(out->seed, G.key, TAG_MISC, 3, 0);
    memcpy(G.replica_id, out->replica_id, 32);

    unsigned L = G.cfg.layers, P = p->partitions, C = p->challenges;
    size_t total = (size_t)P * C;
    uint64_t *all = cuzk_malloc(total * sizeof *all);
    G.chal = cuzk_malloc(total * sizeof *G.chal);
    out->vp = cuzk_calloc(total, sizeof *out->vp);
    struct entry *ld = cuzk_malloc(total * sizeof *ld), *lr = cuzk_malloc(total * sizeof *lr),
                 *lc = cuzk_malloc(total * 15 * sizeof *lc);
    struct stree td = {0}, tr = {0}, tc = {0};
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
        prf(data, G.key, TAG_DATA, c, 0);
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
    td.levels = G.cfg.tree_d_depth;
    td.sha = true;
    td.tag = TAG_TREE_D;
    td.key = G.key;
    for (unsigned l = 0; l < td.levels; l++) td.arity[l] = 2;
    unsigned nb = G.cfg.base_levels, ns = G.cfg.sub_arity ? 1 : 0, nt = G.cfg.top_arity ? 1 : 0;
    tr.levels = tc.levels = nb + ns + nt;
    tr.key = tc.key = G.key;
    tr.tag = TAG_TREE_R;
    tc.tag = TAG_TREE_C;
    for (unsigned l = 0; l < nb; l++) tr.arity[l] = tc.arity[l] = G.cfg.base_arity;
    if (ns) tr.arity[nb] = tc.arity[nb] = G.cfg.sub_arity;
    if (nt) tr.arity[nb + ns] = tc.arity[nb + ns] = G.cfg.top_arity;
    rc = st_build(&td, ld, total, err);
    ld = NULL;
    if (!rc) rc = st_build(&tr, lr, total, err);
    lr = NULL;
    if (!rc) rc = st_build(&tc, lc, nc, err);
    lc = NULL;
    if (rc) goto done;

    uint8_t comm_c[32], comm_r_last[32];
    st_root(&td, out->comm_d);
    st_root(&tc, comm_c);
    st_root(&tr, comm_r_last);
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
        st_proof(&td, &v->comm_d, c, td.levels, 0, 0);
        st_proof(&tr, &v->comm_r_last, c, nb, ns, nt);
        v->c_x.index = (uint32_t)c;
        column_of(&G, v->c_x.rows, c);
        st_proof(&tc, &v->c_x.proof, c, nb, ns, nt);
        uint32_t par[14];
        fil_graph_drg_parents(&G.g, (uint32_t)c, par);
        fil_graph_exp_parents(&G.g, (uint32_t)c, par + 6);
        for (int j = 0; j < 14; j++) {
            struct fil_column_proof *cp = j < 6 ? &v->drg[j] : &v->exp[j - 6];
            cp->index = par[j];
            column_of(&G, cp->rows, par[j]);
            st_proof(&tc, &cp->proof, par[j], nb, ns, nt);
        }
        for (unsigned l = 1; l <= L; l++) {
            label_parents(&G, v->labeling[l - 1].parents, c, l);
            v->labeling[l - 1].layer_index = l;
            v->labeling[l - 1].node = c;
        }
        v->encoding = v->labeling[L - 1];
    }
done:
    st_free(&td);
    st_free(&tr);
    st_free(&tc);
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
