/* porep_inputs.c: the circuit's view of a C1 partition (struct porep_witness of porep.h) and
 * the partition's public inputs recomputed from (replica_id, comm_d, comm_r, seed) exactly as
 * StackedCompound::generate_public_inputs orders them. */
#include <string.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/util.h"

void fil_sdr_label(uint8_t out[32], const uint8_t replica_id[32], uint32_t layer, uint64_t node,
                   const uint8_t parents[37][32])
{
    uint8_t hdr[64] = {0};
    memcpy(hdr, replica_id, 32);
    for (int i = 0; i < 4; i++) hdr[32 + i] = (uint8_t)(layer >> (24 - 8 * i));
    for (int i = 0; i < 8; i++) hdr[36 + i] = (uint8_t)(node >> (56 - 8 * i));
    struct cuzk_sha256 s;
    cuzk_sha256_init(&s);
    cuzk_sha256_update(&s, hdr, 64);
    cuzk_sha256_update(&s, parents, 37 * 32);
    cuzk_sha256_final(&s, out);
    out[31] &= 0x3f;
}

void fil_sdr_expand_parents(uint8_t out[37][32], const uint8_t (*drg)[32], const uint8_t (*exp)[32],
                            uint32_t layer)
{
    unsigned k = 0;
    if (layer == 1) {
        for (int r = 0; r < 6; r++)
            for (int i = 0; i < 6; i++) memcpy(out[k++], drg[i], 32);
        memcpy(out[k++], drg[0], 32);
        return;
    }
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 14 && k < 37; i++) memcpy(out[k++], i < 6 ? drg[i] : exp[i - 6], 32);
}

size_t fil_porep_num_inputs(const struct fil_seal_proof *p) { return 3 + 18 * (size_t)p->challenges; }

int fil_porep_public_inputs(fr_t *out, const struct fil_seal_proof *p, const uint8_t replica_id[32],
                            const uint8_t comm_d[32], const uint8_t comm_r[32],
                            const uint8_t seed[32], unsigned k, struct cuzk_error *err)
{
    if (fr_from_bytes_le(&out[0], replica_id))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING, "public inputs: replica_id is not a field element");
    if (fr_from_bytes_le(&out[1], comm_d))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING, "public inputs: comm_d is not a field element");
    if (fr_from_bytes_le(&out[2], comm_r))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING, "public inputs: comm_r is not a field element");
    uint64_t ch[32];
    if (p->challenges > 32) return cuzk_fail(err, CUZK_E_INTERNAL, "public inputs: %u challenges", p->challenges);
    int rc = fil_porep_challenges(ch, p, replica_id, comm_r, seed, k, err);
    if (rc) return rc;
    struct fil_graph g;
    fil_graph_init(&g, p);
    fr_t *o = out + 3;
    for (unsigned i = 0; i < p->challenges; i++) {
        uint32_t drg[FIL_DRG_PARENTS], exp[FIL_EXP_PARENTS];
        fil_graph_drg_parents(&g, (uint32_t)ch[i], drg);
        fil_graph_exp_parents(&g, (uint32_t)ch[i], exp);
        fr_from_u64(o++, ch[i]);                    /* tree-D path index */
        for (int j = 0; j < FIL_DRG_PARENTS; j++) fr_from_u64(o++, drg[j]);
        for (int j = 0; j < FIL_EXP_PARENTS; j++) fr_from_u64(o++, exp[j]);
        fr_from_u64(o++, ch[i]);                    /* the challenge as a packed UInt64 */
        fr_from_u64(o++, ch[i]);                    /* tree-R path index */
        fr_from_u64(o++, ch[i]);                    /* c_x tree-C path index */
    }
    return CUZK_OK;
}

/* Per-challenge storage behind the borrowed pointers of struct porep_challenge. */
struct ch_store {
    uint32_t idx[17][FIL_MAX_LEVELS];       /* 0 tree D, 1 tree R, 2 c_x, 3.. the 14 parents */
    fr_t sib[17][FIL_MAX_SIBS];
    fr_t rows[14][POREP_MAX_LAYERS];
};

static void conv_path(struct porep_path *dst, uint32_t *idx, fr_t *sib, const struct fil_merkle_proof *m)
{
    unsigned levels = (unsigned)m->n_base + m->n_sub + m->n_top, s = 0;
    for (unsigned l = 0; l < levels; l++) {
        idx[l] = m->index[l];
        for (unsigned j = 0; j + 1 < m->arity[l]; j++, s++) (void)fr_from_bytes_le(&sib[s], m->sib[s]);
    }
    dst->index = idx;
    dst->siblings = sib;
}

/* Leaf position a path proves (index bits level by level). */
static uint64_t path_position(const struct fil_merkle_proof *m)
{
    uint64_t pos = 0, mul = 1;
    unsigned levels = (unsigned)m->n_base + m->n_sub + m->n_top;
    for (unsigned l = 0; l < levels; l++) {
        pos += m->index[l] * mul;
        mul *= m->arity[l];
    }
    return pos;
}

/* Native checks of what the circuit does not read (see filecoin.h). */
static int check_vanilla(const struct fil_c1 *c, unsigned k, unsigned i, const struct fil_vproof *v,
                         const struct fil_graph *g, uint64_t want_node, struct cuzk_error *err)
{
    unsigned L = c->proof->layers;
    uint64_t node = v->labeling[0].node;
#define VP "vanilla_proofs[%u][%u]"
    if (node != want_node)
        return cuzk_fail(err, CUZK_E_FORMAT, VP ".labeling_proofs[0].node (partition %u, challenge %u): "
                         "node %llu, but %s give %llu", k, i, k, i, (unsigned long long)node,
                         fil_porep_challenge_rule(c->proof), (unsigned long long)want_node);
    if (path_position(&v->comm_d) != node || path_position(&v->comm_r_last) != node ||
        path_position(&v->c_x.proof) != node || v->c_x.index != node)
        return cuzk_fail(err, CUZK_E_FORMAT, VP ": a tree-D, tree-R or c_x path / column index is not at "
                         "challenge %llu", k, i, (unsigned long long)node);
    uint32_t par[14];
    fil_graph_drg_parents(g, (uint32_t)node, par);
    fil_graph_exp_parents(g, (uint32_t)node, par + 6);
    uint8_t drg[6][32], exp[8][32], exp_par[37][32], lab[32];
    for (unsigned j = 0; j < 14; j++) {
        const struct fil_column_proof *cp = j < 6 ? &v->drg[j] : &v->exp[j - 6];
        if (cp->index != par[j] || path_position(&cp->proof) != par[j])
            return cuzk_fail(err, CUZK_E_FORMAT, VP ".replica_column_proofs.%s[%u]: column of node %u "
                             "(path at %llu), but the graph's parent is %u", k, i,
                             j < 6 ? "drg_parents" : "exp_parents", j < 6 ? j : j - 6, cp->index,
                             (unsigned long long)path_position(&cp->proof), par[j]);
    }
    for (unsigned l = 1; l <= L; l++) {
        const struct fil_labeling_proof *lp = &v->labeling[l - 1];
        if (lp->node != node || lp->layer_index != l)
            return cuzk_fail(err, CUZK_E_FORMAT, VP ".labeling_proofs[%u]: node %llu layer %u (expected %llu, %u)",
                             k, i, l - 1, (unsigned long long)lp->node, lp->layer_index,
                             (unsigned long long)node, l);
        for (int j = 0; j < 6; j++) memcpy(drg[j], v->drg[j].rows[l - 1], 32);
        if (l > 1)
            for (int j = 0; j < 8; j++) memcpy(exp[j], v->exp[j].rows[l - 2], 32);
        fil_sdr_expand_parents(exp_par, (const uint8_t(*)[32])drg, (const uint8_t(*)[32])exp, l);
        for (unsigned j = 0; j < 37; j++)
            if (memcmp(exp_par[j], lp->parents[j], 32))
                return cuzk_fail(err, CUZK_E_FORMAT, VP ".labeling_proofs[%u].parents[%u]: does not match the "
                                 "parent columns", k, i, l - 1, j);
        fil_sdr_label(lab, c->replica_id, l, node, (const uint8_t(*)[32])exp_par);
        if (memcmp(lab, v->c_x.rows[l - 1], 32))
            return cuzk_fail(err, CUZK_E_FORMAT, VP ".replica_column_proofs.c_x.column.rows[%u]: not the "
                             "SHA-256 label of its parents", k, i, l - 1);
    }
    if (v->encoding.node != node || v->encoding.layer_index != L ||
        memcmp(v->encoding.parents, v->labeling[L - 1].parents, sizeof v->encoding.parents))
        return cuzk_fail(err, CUZK_E_FORMAT, VP ".encoding_proof: does not match the last labeling proof", k, i);
#undef VP
    return CUZK_OK;
}

int fil_c1_check_challenges(const struct fil_c1 *c, struct cuzk_error *err)
{
    uint64_t want[32];
    if (c->challenges > 32 || c->challenges != c->proof->challenges || c->partitions != c->proof->partitions)
        return cuzk_fail(err, CUZK_E_FORMAT, "vanilla_proofs: %u partitions x %u challenges, but %s has "
                         "%u x %u", c->partitions, c->challenges, c->proof->name, c->proof->partitions,
                         c->proof->challenges);
    for (unsigned k = 0; k < c->partitions; k++) {
        int rc = fil_porep_challenges(want, c->proof, c->replica_id, c->comm_r, c->seed, k, err);
        if (rc) return rc;
        for (unsigned i = 0; i < c->challenges; i++) {
            const struct fil_vproof *v = &c->vp[(size_t)k * c->challenges + i];
            if (v->labeling[0].node != want[i])
                return cuzk_fail(err, CUZK_E_FORMAT, "vanilla_proofs[%u][%u] (partition %u, challenge %u) "
                                 "proves node %llu, but %s give %llu: the vanilla proofs are not those "
                                 "of this C1's challenges", k, i, k, i,
                                 (unsigned long long)v->labeling[0].node,
                                 fil_porep_challenge_rule(c->proof), (unsigned long long)want[i]);
        }
    }
    return CUZK_OK;
}

int fil_porep_witness_build(struct fil_porep_witness *out, const struct fil_c1 *c, unsigned k,
                            struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    if (k >= c->partitions)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "witness: partition %u of %u", k, c->partitions);
    int rc = porep_config_for_size(&out->cfg, c->proof->sector_size, err);
    if (rc) return rc;
    unsigned n = c->challenges, L = out->cfg.layers;
    if (n != out->cfg.challenges)
        return cuzk_fail(err, CUZK_E_FORMAT, "witness: %u challenges per partition (expected %u)", n,
                         out->cfg.challenges);
    size_t bytes = n * (sizeof(struct porep_challenge) + sizeof(struct ch_store));
    void *arena = cuzk_calloc(1, bytes);
    if (!arena) return cuzk_fail(err, CUZK_E_NOMEM, "witness: %zu bytes", bytes);
    struct porep_challenge *ch = arena;
    struct ch_store *st = (struct ch_store *)(ch + n);
    const struct fil_vproof *vp = &c->vp[(size_t)k * n];
    struct porep_witness *w = &out->w;
    (void)fr_from_bytes_le(&w->replica_id, c->replica_id);
    (void)fr_from_bytes_le(&w->comm_d, c->comm_d);
    (void)fr_from_bytes_le(&w->comm_r, c->comm_r);
    (void)fr_from_bytes_le(&w->comm_r_last, vp[0].comm_r_last.root);
    (void)fr_from_bytes_le(&w->comm_c, vp[0].c_x.proof.root);
    uint64_t nodes = c->proof->sector_size / 32, want[32];
    struct fil_graph g;
    fil_graph_init(&g, c->proof);
    if (n > 32) rc = cuzk_fail(err, CUZK_E_INTERNAL, "witness: %u challenges", n);
    if (!rc) rc = fil_porep_challenges(want, c->proof, c->replica_id, c->comm_r, c->seed, k, err);
    if (rc) {
        cuzk_free(arena);
        return rc;
    }
    for (unsigned i = 0; i < n; i++) {
        const struct fil_vproof *v = &vp[i];
        if ((rc = check_vanilla(c, k, i, v, &g, want[i], err))) {
            cuzk_free(arena);
            return rc;
        }
        const char *bad = NULL;
        if (memcmp(v->comm_r_last.root, vp[0].comm_r_last.root, 32)) bad = "comm_r_last_proof root";
        else if (memcmp(v->c_x.proof.root, vp[0].c_x.proof.root, 32)) bad = "c_x inclusion_proof root";
        if (bad) {
            cuzk_free(arena);
            return cuzk_fail(err, CUZK_E_FORMAT, "vanilla_proofs[%u][%u]: %s differs from challenge 0's",
                             k, i, bad);
        }
        if (v->labeling[0].node >= nodes) {
            cuzk_free(arena);
            return cuzk_fail(err, CUZK_E_FORMAT,
                             "vanilla_proofs[%u][%u].labeling_proofs[0].node: %llu is not below %llu nodes",
                             k, i, (unsigned long long)v->labeling[0].node, (unsigned long long)nodes);
        }
        ch[i].node = v->labeling[0].node;
        (void)fr_from_bytes_le(&ch[i].data_leaf, v->comm_d.leaf);
        conv_path(&ch[i].comm_d_path, st[i].idx[0], st[i].sib[0], &v->comm_d);
        conv_path(&ch[i].comm_r_last_path, st[i].idx[1], st[i].sib[1], &v->comm_r_last);
        conv_path(&ch[i].comm_c_path, st[i].idx[2], st[i].sib[2], &v->c_x.proof);
        for (unsigned p = 0; p < 14; p++) {
            const struct fil_column_proof *cp = p < 6 ? &v->drg[p] : &v->exp[p - 6];
            struct porep_column *col = p < 6 ? &ch[i].drg[p] : &ch[i].exp[p - 6];
            for (unsigned r = 0; r < L; r++) (void)fr_from_bytes_le(&st[i].rows[p][r], cp->rows[r]);
            col->rows = st[i].rows[p];
            conv_path(&col->path, st[i].idx[3 + p], st[i].sib[3 + p], &cp->proof);
        }
    }
    w->ch = ch;
    out->arena = arena;
    return CUZK_OK;
}

void fil_porep_witness_free(struct fil_porep_witness *w)
{
    if (!w) return;
    cuzk_free(w->arena);
    w->arena = NULL;
    w->w.ch = NULL;
}

int fil_porep_witness_values_ex(fr_t **inputs, fr_t **aux, uint32_t *n_inputs, uint32_t *n_aux,
                                const struct fil_c1 *c, unsigned k, struct pool *pool,
                                struct cuzk_error *err)
{
    *inputs = *aux = NULL;
    *n_inputs = *n_aux = 0;
    struct fil_porep_witness w;
    int rc = fil_porep_witness_build(&w, c, k, err);
    if (rc) return rc;
    struct porep_layout l;
    rc = porep_layout_get(&l, &w.cfg, err);
    fr_t *in = NULL, *ax = NULL;
    if (!rc) {
        in = cuzk_malloc((size_t)l.n_inputs * sizeof(fr_t));
        ax = cuzk_malloc((size_t)l.n_aux * sizeof(fr_t));
        if (!in || !ax)
            rc = cuzk_fail(err, CUZK_E_NOMEM, "witness: %u aux values", l.n_aux);
    }
    if (!rc) cuzk_advise_huge(ax, (size_t)l.n_aux * sizeof(fr_t));
    if (!rc) rc = porep_witness_values(in, ax, &w.cfg, &w.w, pool, err);
    fil_porep_witness_free(&w);
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

int fil_porep_witness_values(fr_t **inputs, fr_t **aux, uint32_t *n_inputs, uint32_t *n_aux,
                             const struct fil_c1 *c, unsigned k, struct cuzk_error *err)
{
    return fil_porep_witness_values_ex(inputs, aux, n_inputs, n_aux, c, k, pool_default(), err);
}
