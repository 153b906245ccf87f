/* snap_vanilla.c: bincode storage_proofs_update PartitionProof (the SnapDeals vanilla proof
 * of one partition) into the SnapDeals witness of snap.h. Layout: docs/formats.md
 * ("Vanilla proofs (bincode)"). */
#include <string.h>

#include "bincode.h"
#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
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

/* ------------------------------------------------------------ registry -- */

int fil_update_proof(uint64_t id, uint64_t *sector_size, const char **name, struct cuzk_error *err)
{
    static const struct { const char *name; uint64_t size; } t[] = {
        {"StackedDrg2KiBV1", 2ull << 10}, {"StackedDrg8MiBV1", 8ull << 20},
        {"StackedDrg512MiBV1", 512ull << 20}, {"StackedDrg32GiBV1", 32ull << 30},
        {"StackedDrg64GiBV1", 64ull << 30},
    };
    if (id >= sizeof t / sizeof t[0])
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "registered_proof %llu is not a registered update proof "
                         "(0-4: StackedDrg2KiBV1, 8MiB, 512MiB, 32GiB, 64GiB)", (unsigned long long)id);
    if (sector_size) *sector_size = t[id].size;
    if (name) *name = t[id].name;
    return CUZK_OK;
}

int fil_snap_commitment(fr_t *out, const uint8_t *b, size_t len, const char *field, struct cuzk_error *err)
{
    if (!b || len != 32)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: expected 32 bytes, got %zu", field, b ? len : 0);
    if (fr_from_bytes_le(out, b) != CUZK_OK)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: not a canonical field element (value >= r; "
                         "32 bytes little-endian expected)", field);
    return CUZK_OK;
}

/* ---------------------------------------------------------- native check -- */

/* Root of a Poseidon path: leaf at position bits of node, siblings level by level. */
static int r_path_root(fr_t *out, const struct bc_tree *t, const fr_t *leaf, const fr_t *sib, uint64_t node,
                       struct cuzk_error *err)
{
    fr_t cur = *leaf;
    unsigned shift = 0;
    for (unsigned l = 0; l < bc_tree_levels(t); l++) {
        unsigned a = bc_tree_arity(t, l), lg = a == 8 ? 3 : a == 4 ? 2 : 1;
        unsigned pos = (unsigned)(node >> shift) & (a - 1);
        const struct poseidon_consts *pc = poseidon_consts_get(a, err);
        if (!pc) return err ? err->code : CUZK_E_INTERNAL;
        fr_t in[8];
        for (unsigned j = 0, s = 0; j < a; j++) in[j] = j == pos ? cur : sib[s++];
        poseidon_hash(&cur, pc, in);
        sib += a - 1;
        shift += lg;
    }
    *out = cur;
    return CUZK_OK;
}

static void d_node(fr_t *out, const fr_t *a, const fr_t *b)
{
    uint8_t in[64], h[32];
    fr_to_bytes_le(in, a);
    fr_to_bytes_le(in + 32, b);
    cuzk_sha256(h, in, sizeof in);
    h[31] &= 0x3f;
    (void)fr_from_bytes_le(out, h);
}

#define PP "PartitionProof (partition %u): "
#define CH PP "challenge_proofs[%u] (node %llu): "

int fil_snap_partition_check(const struct snap_config *c, const struct fil_snap_partition_proof *p,
                             unsigned k, unsigned h, const fr_t *comm_r_old, const fr_t *comm_d_new,
                             const fr_t *comm_r_new, struct cuzk_error *err)
{
    if (!c || !p || !p->arena || !comm_r_old || !comm_d_new || !comm_r_new)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_snap_partition_check: NULL argument");
    struct bc_tree tr;
    bc_tree_init(&tr, "tree R", c->base_arity, c->base_levels, c->sub_arity, c->top_arity);
    unsigned K = c->challenges, A = c->apex_leaves, L = c->nodes_log2, D = c->tree_d_levels;
    unsigned pb = c->partition_bits, rl = bc_tree_levels(&tr), rs = c->r_siblings;
    if (p->challenges != K || p->apex_leaves != A || p->d_levels != L || p->r_levels != rl ||
        p->r_siblings != rs || K > SNAP_MAX_CHALLENGES || A > SNAP_MAX_APEX)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "partition proof does not fit the config");
    if (k >= c->partitions)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "partition %u of %u", k, c->partitions);
    const struct poseidon_consts *p2 = poseidon_consts_get(2, err);
    if (!p2) return err ? err->code : CUZK_E_INTERNAL;

    /* the replica commitments: comm_r = Poseidon(comm_c, comm_r_last), challenge 0's roots */
    fr_t in[2] = {p->comm_c, p->root_r_old[0]}, x;
    poseidon_hash(&x, p2, in);
    if (!fr_eq(&x, comm_r_old))
        return cuzk_fail(err, CUZK_E_FORMAT, PP "comm_c / challenge_proofs[0].proof_r_old.root (comm_r_last): "
                         "Poseidon(comm_c, comm_r_last) is not the request's comm_r_old", k);
    in[1] = p->root_r_new[0];
    poseidon_hash(&x, p2, in);
    if (!fr_eq(&x, comm_r_new))
        return cuzk_fail(err, CUZK_E_FORMAT, PP "comm_c / challenge_proofs[0].proof_r_new.root (comm_r_last): "
                         "Poseidon(comm_c, comm_r_last) is not the request's comm_r_new", k);

    /* the apex tree, then challenge 0's partition path (tree-D levels L-p .. L-1) */
    fr_t row[SNAP_MAX_APEX];
    memcpy(row, p->apex, A * sizeof *row);
    for (unsigned w = A; w > 1; w /= 2)
        for (unsigned i = 0; i < w / 2; i++) d_node(&row[i], &row[2 * i], &row[2 * i + 1]);
    for (unsigned l = 0; l < pb; l++) {
        const fr_t *s = &p->sib_d[L - pb + l];
        if ((k >> l) & 1) d_node(&row[0], s, &row[0]);
        else d_node(&row[0], &row[0], s);
    }
    if (!fr_eq(&row[0], comm_d_new))
        return cuzk_fail(err, CUZK_E_FORMAT, PP "apex_leafs: the apex tree and the partition path "
                         "(challenge_proofs[0].proof_d_new levels %u..%u) do not reach comm_d_new", k, L - pb,
                         L - 1);

    uint64_t want[SNAP_MAX_CHALLENGES];
    int rc = snap_challenges(want, c, comm_r_new, k, err);
    if (rc) return rc;
    fr_t phi;
    if ((rc = snap_hash_gen(&phi, comm_d_new, comm_r_old, err))) return rc;
    for (unsigned i = 0; i < K; i++) {
        unsigned long long n = (unsigned long long)want[i];
        const struct snap_challenge *ch = &p->ch[i];
        /* positions: the tree-D indices (parsed into node) and both tree-R paths' */
        if (p->node[i] != want[i])
            return cuzk_fail(err, CUZK_E_FORMAT, CH "proof_d_new: the path's indices give node %llu, but "
                             "comm_r_new and the partition give this challenge node %llu", k, i, n,
                             (unsigned long long)p->node[i], n);
        for (int which = 0; which < 2; which++) {
            const uint32_t *idx = (which ? p->idx_r_new : p->idx_r_old) + (size_t)i * rl;
            uint64_t pos = 0, mul = 1;
            for (unsigned l = 0; l < rl; l++) {
                pos += idx[l] * mul;
                mul *= bc_tree_arity(&tr, l);
            }
            if (pos != want[i])
                return cuzk_fail(err, CUZK_E_FORMAT, CH "%s: the path's indices give node %llu", k, i, n,
                                 which ? "proof_r_new" : "proof_r_old", (unsigned long long)pos);
        }
        if (!fr_eq(&p->root_r_old[i], &p->root_r_old[0]) || !fr_eq(&p->root_r_new[i], &p->root_r_new[0]))
            return cuzk_fail(err, CUZK_E_FORMAT, CH "%s.root: differs from challenge 0's (comm_r_last)", k, i, n,
                             fr_eq(&p->root_r_old[i], &p->root_r_old[0]) ? "proof_r_new" : "proof_r_old");
        if ((rc = r_path_root(&x, &tr, &ch->leaf_r_old, ch->path_r_old, want[i], err))) return rc;
        if (!fr_eq(&x, &p->root_r_old[0]))
            return cuzk_fail(err, CUZK_E_FORMAT, CH "proof_r_old: the leaf and path do not reach comm_r_last "
                             "(root_r_old)", k, i, n);
        /* tree D: to the apex leaf the circuit selects, then on to comm_d_new */
        fr_t cur = ch->leaf_d_new;
        for (unsigned l = 0; l < L; l++) {
            if (l == D && !fr_eq(&cur, &p->apex[(want[i] >> D) & (A - 1)]))
                return cuzk_fail(err, CUZK_E_FORMAT, CH "proof_d_new: the leaf and path levels 0..%u do not "
                                 "reach apex_leafs[%llu]", k, i, n, D - 1,
                                 (unsigned long long)((want[i] >> D) & (A - 1)));
            const fr_t *s = &ch->path_d[l];
            if ((want[i] >> l) & 1) d_node(&cur, s, &cur);
            else d_node(&cur, &cur, s);
        }
        if (!fr_eq(&cur, comm_d_new) || !fr_eq(&p->root_d[i], comm_d_new))
            return cuzk_fail(err, CUZK_E_FORMAT, CH "proof_d_new: %s", k, i, n,
                             !fr_eq(&cur, comm_d_new) ? "the leaf and path do not reach comm_d_new"
                                                      : "root is not comm_d_new");
        /* the encoding */
        fr_t rho, enc;
        if ((rc = snap_rho(&rho, c, &phi, want[i], h, err))) return rc;
        fr_mul(&enc, &ch->leaf_d_new, &rho);
        fr_add(&enc, &enc, &ch->leaf_r_old);
        if (!fr_eq(&enc, &p->leaf_r_new[i]))
            return cuzk_fail(err, CUZK_E_FORMAT, CH "proof_r_new.leaf: is not leaf_r_old + leaf_d_new * rho "
                             "(the encoding, h = %u)", k, i, n, h);
        if ((rc = r_path_root(&x, &tr, &enc, ch->path_r_new, want[i], err))) return rc;
        if (!fr_eq(&x, &p->root_r_new[0]))
            return cuzk_fail(err, CUZK_E_FORMAT, CH "proof_r_new: the leaf and path do not reach comm_r_last "
                             "(root_r_new)", k, i, n);
    }
    return CUZK_OK;
}

/* -------------------------------------------------------------- witness -- */

int fil_snap_witness_values(fr_t **inputs, fr_t **aux, uint32_t *n_inputs, uint32_t *n_aux,
                            const struct snap_config *c, const struct fil_snap_partition_proof *p,
                            unsigned k, unsigned h, const fr_t *comm_r_old, const fr_t *comm_d_new,
                            const fr_t *comm_r_new, struct pool *pool, struct cuzk_error *err)
{
    *inputs = *aux = NULL;
    *n_inputs = *n_aux = 0;
    struct snap_witness w;
    struct snap_layout l;
    int rc = fil_snap_witness_fill(&w, c, p, k, h, comm_r_old, comm_d_new, comm_r_new, err);
    if (!rc) rc = snap_layout_get(&l, c, err);
    if (rc) return rc;
    fr_t *in = cuzk_malloc((size_t)l.n_inputs * sizeof(fr_t)), *ax = cuzk_malloc((size_t)l.n_aux * sizeof(fr_t));
    if (!in || !ax) rc = cuzk_fail(err, CUZK_E_NOMEM, "snap witness: %u aux values", l.n_aux);
    if (!rc) cuzk_advise_huge(ax, (size_t)l.n_aux * sizeof(fr_t));
    if (!rc) rc = snap_witness_values(in, ax, c, &w, pool, err);
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
