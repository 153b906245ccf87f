/* snap_vanilla.c: bincode storage_proofs_update PartitionProof (the SnapDeals vanilla proof
 * of one partition) into the SnapDeals witness of snap.h. Layout: docs/formats.md
 * ("Vanilla proofs (bincode)"). */
#include <string.h>

#include "bincode.h"
#include "cuzk/util.h"
#include "cuzk/vanilla.h"

void fil_snap_partition_proof_free(struct fil_snap_partition_proof *p)
{
    if (!p) return;
    cuzk_free(p->arena);
    memset(p, 0, sizeof *p);
}

int fil_snap_partition_proof_parse(struct fil_snap_partition_proof *out, const struct snap_config *c,
                                   const void *data, size_t len, unsigned partition,
                                   struct cuzk_error *err)
{
    if (!out || !c || (!data && len))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_snap_partition_proof_parse: NULL argument");
    memset(out, 0, sizeof *out);
    struct bc_tree tr, td;
    bc_tree_init(&tr, "tree R", c->base_arity, c->base_levels, c->sub_arity, c->top_arity);
    bc_tree_init(&td, "tree D", 2, c->nodes_log2, 0, 0);
    unsigned K = c->challenges, A = c->apex_leaves, L = c->nodes_log2;
    unsigned rl = bc_tree_levels(&tr), rs = bc_tree_siblings(&tr);
    if (!K || !A || !L || L > 63 || rl > SNAP_MAX_LEVELS || c->base_arity < 2 ||
        c->tree_d_levels + c->partition_bits > L)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_snap_partition_proof_parse: bad snap_config");
    size_t fk = bc_round(K * sizeof(fr_t));
    size_t sz = bc_round(A * sizeof(fr_t)) + 4 * fk + bc_round(K * sizeof(uint64_t)) +
                2 * bc_round((size_t)K * rl * sizeof(uint32_t)) + bc_round((size_t)K * L * sizeof(uint32_t)) +
                2 * bc_round((size_t)K * rs * sizeof(fr_t)) + bc_round((size_t)K * L * sizeof(fr_t)) +
                bc_round(K * sizeof(struct snap_challenge));
    uint8_t *cur = cuzk_malloc(sz);
    if (!cur) return cuzk_fail(err, CUZK_E_NOMEM, "PartitionProof (partition %u): %zu bytes", partition, sz);
    struct fil_snap_partition_proof p = {
        .apex_leaves = A, .challenges = K, .r_levels = rl, .r_siblings = rs, .d_levels = L, .arena = cur};
    p.apex = bc_carve(&cur, A * sizeof(fr_t));
    p.root_r_old = bc_carve(&cur, K * sizeof(fr_t));
    p.root_r_new = bc_carve(&cur, K * sizeof(fr_t));
    p.root_d = bc_carve(&cur, K * sizeof(fr_t));
    p.leaf_r_new = bc_carve(&cur, K * sizeof(fr_t));
    p.node = bc_carve(&cur, K * sizeof(uint64_t));
    p.idx_r_old = bc_carve(&cur, (size_t)K * rl * sizeof(uint32_t));
    p.idx_r_new = bc_carve(&cur, (size_t)K * rl * sizeof(uint32_t));
    p.idx_d = bc_carve(&cur, (size_t)K * L * sizeof(uint32_t));
    p.sib_r_old = bc_carve(&cur, (size_t)K * rs * sizeof(fr_t));
    p.sib_r_new = bc_carve(&cur, (size_t)K * rs * sizeof(fr_t));
    p.sib_d = bc_carve(&cur, (size_t)K * L * sizeof(fr_t));
    p.ch = bc_carve(&cur, K * sizeof(struct snap_challenge));

    struct bc r;
    bc_init(&r, data, len, err, "PartitionProof (partition %u)", partition);
    bc_fr(&r, "comm_c", &p.comm_c);
    bc_count(&r, "apex_leafs", A, "apex leaves");
    for (unsigned i = 0; i < A && !r.rc; i++) {
        size_t s = bc_push(&r, "apex_leafs[%u]", i);
        bc_fr(&r, NULL, &p.apex[i]);
        bc_pop(&r, s);
    }
    bc_count(&r, "challenge_proofs", K, "challenge proofs");
    for (unsigned i = 0; i < K && !r.rc; i++) {
        struct snap_challenge *ch = &p.ch[i];
        fr_t *so = p.sib_r_old + (size_t)i * rs, *sn = p.sib_r_new + (size_t)i * rs, *sd = p.sib_d + (size_t)i * L;
        size_t s = bc_push(&r, "challenge_proofs[%u].proof_r_old", i);
        bc_merkle_proof(&r, &tr, &p.root_r_old[i], &ch->leaf_r_old, p.idx_r_old + (size_t)i * rl, so, NULL);
        bc_pop(&r, s);
        s = bc_push(&r, "challenge_proofs[%u].proof_d_new", i);
        bc_merkle_proof(&r, &td, &p.root_d[i], &ch->leaf_d_new, p.idx_d + (size_t)i * L, sd, &p.node[i]);
        bc_pop(&r, s);
        s = bc_push(&r, "challenge_proofs[%u].proof_r_new", i);
        bc_merkle_proof(&r, &tr, &p.root_r_new[i], &p.leaf_r_new[i], p.idx_r_new + (size_t)i * rl, sn, NULL);
        bc_pop(&r, s);
        ch->path_r_old = so;
        ch->path_r_new = sn;
        ch->path_d = sd;
    }
    bc_end(&r);
    if (r.rc) {
        cuzk_free(p.arena);
        return r.rc;
    }
    *out = p;
    return CUZK_OK;
}

int fil_snap_witness_fill(struct snap_witness *w, const struct snap_config *c,
                          const struct fil_snap_partition_proof *p, unsigned k, unsigned h,
                          const fr_t *comm_r_old, const fr_t *comm_d_new, const fr_t *comm_r_new,
                          struct cuzk_error *err)
{
    if (!w || !c || !p || !p->arena || !comm_r_old || !comm_d_new || !comm_r_new)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_snap_witness_fill: NULL argument");
    struct bc_tree tr;
    bc_tree_init(&tr, "tree R", c->base_arity, c->base_levels, c->sub_arity, c->top_arity);
    if (p->challenges != c->challenges || p->apex_leaves != c->apex_leaves || p->d_levels != c->nodes_log2 ||
        p->r_levels != bc_tree_levels(&tr) || p->r_siblings != c->r_siblings)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "partition proof (K %u, A %u, L %u) does not fit the config "
                         "(K %u, A %u, L %u)", p->challenges, p->apex_leaves, p->d_levels, c->challenges,
                         c->apex_leaves, c->nodes_log2);
    fr_t khs;
    int rc = snap_k_and_h_select(&khs, c, k, h, err);
    if (rc) return rc;
    unsigned L = c->nodes_log2, pb = c->partition_bits;
    /* every challenge carries the same top p tree-D siblings (upstream asserts it) */
    for (unsigned i = 1; i < p->challenges; i++)
        for (unsigned l = L - pb; l < L; l++)
            if (!fr_eq(&p->sib_d[(size_t)i * L + l], &p->sib_d[l]))
                return cuzk_fail(err, CUZK_E_FORMAT,
                                 "PartitionProof (partition %u): challenge_proofs[%u].proof_d_new.data.Single."
                                 "path.path[%u].hashes[0]: partition-path sibling differs from challenge 0's",
                                 k, i, l);
    memset(w, 0, sizeof *w);
    w->k_and_h_select = khs;
    w->comm_r_old = *comm_r_old;
    w->comm_d_new = *comm_d_new;
    w->comm_r_new = *comm_r_new;
    w->comm_c = p->comm_c;
    w->root_r_old = p->root_r_old[0];
    w->root_r_new = p->root_r_new[0];
    w->apex_leaves = p->apex;
    w->partition_path = p->sib_d + (L - pb);
    w->ch = p->ch;
    return CUZK_OK;
}
