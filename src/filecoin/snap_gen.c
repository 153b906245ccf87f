/* snap_gen.c: synthetic SnapDeals vanilla proofs (snap_gen.h).
 *
 * The difficulty: the challenges come from comm_r_new, which is the root of the new replica's
 * tree R, whose challenged leaves must satisfy new = old + data * rho(node >> (L - h)); a
 * sparse tree (random values off the touched paths, as gen-vanilla porep uses) would need the
 * challenged leaves before its root exists. The way out: every leaf value depends only on its
 * rho bucket b = node >> (L - h) (2^h buckets): old_b and data_b are pseudo-random per bucket,
 * so tree R old and tree D are complete, real trees whose every node is a function of (level,
 * bucket) below the bucket size and of its children above it. Both spans and buckets are
 * aligned powers of two, so a node either lies inside one bucket or covers whole buckets; each
 * level therefore has at most 2^h distinct values and a tree costs levels x 2^h hashes.
 * comm_c random -> comm_r_old; comm_d_new -> phi -> rho_b -> new_b -> tree R new -> comm_r_new
 * -> challenges -> paths, with no cycle. */
#include <string.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/snap_gen.h"
#include "cuzk/util.h"
#include "stree.h"

/* ------------------------------------------------------------ bucket tree -- */

/* A complete Merkle tree over 2^L leaves whose leaves are constant on buckets of 2^B leaves.
 * Level l's node i has the value tab[l][i >> shift[l]]. */
struct btree {
    unsigned levels;                        /* hashing levels (the root is level `levels`) */
    unsigned lg_arity[SNAP_MAX_LEVELS];     /* level l -> l + 1 */
    unsigned lg_span[SNAP_MAX_LEVELS + 1];  /* leaves under a node of level l (log2) */
    unsigned shift[SNAP_MAX_LEVELS + 1];
    bool sha;                               /* Filecoin's SHA-256 tree D, else Poseidon */
    fr_t *tab[SNAP_MAX_LEVELS + 1];
};

static void bt_free(struct btree *t)
{
    for (unsigned l = 0; l <= t->levels; l++) cuzk_free(t->tab[l]);
    memset(t, 0, sizeof *t);
}

static const fr_t *bt_get(const struct btree *t, unsigned level, uint64_t idx)
{
    return &t->tab[level][idx >> t->shift[level]];
}

static void sha_node(fr_t *out, const fr_t *a, const fr_t *b)
{
    uint8_t in[64], h[32];
    fr_to_bytes_le(in, a);
    fr_to_bytes_le(in + 32, b);
    cuzk_sha256(h, in, sizeof in);
    h[31] &= 0x3f;                          /* Sha256Domain: trimmed to a canonical Fr */
    (void)fr_from_bytes_le(out, h);
}

/* Build from the 2^(L-B) bucket leaves (copied). lg_arity: levels entries summing to L. */
static int bt_build(struct btree *t, const unsigned *lg_arity, unsigned levels, unsigned L, unsigned B,
                    bool sha, const fr_t *leaves, struct cuzk_error *err)
{
    memset(t, 0, sizeof *t);
    t->levels = levels;
    t->sha = sha;
    unsigned span = 0;
    for (unsigned l = 0; l <= levels; l++) {
        t->lg_span[l] = span;
        t->shift[l] = span <= B ? B - span : 0;
        if (l < levels) span += (t->lg_arity[l] = lg_arity[l]);
    }
    if (span != L) return cuzk_fail(err, CUZK_E_INTERNAL, "snap gen: tree of %u bits over %u", span, L);
    for (unsigned l = 0; l <= levels; l++) {
        size_t n = (size_t)1 << (L - t->lg_span[l] - t->shift[l]);
        if (!(t->tab[l] = cuzk_malloc(n * sizeof(fr_t)))) {
            bt_free(t);
            return cuzk_fail(err, CUZK_E_NOMEM, "snap gen: tree level %u (%zu nodes)", l, n);
        }
        if (l == 0) {
            memcpy(t->tab[0], leaves, n * sizeof(fr_t));
            continue;
        }
        unsigned lga = t->lg_arity[l - 1], a = 1u << lga;
        const struct poseidon_consts *pc = sha ? NULL : poseidon_consts_get(a, err);
        if (!sha && !pc) {
            bt_free(t);
            return err ? err->code : CUZK_E_INTERNAL;
        }
        for (size_t e = 0; e < n; e++) {
            uint64_t first = ((uint64_t)e << t->shift[l]) << lga;   /* first child's index */
            fr_t ch[8];
            for (unsigned j = 0; j < a; j++) ch[j] = *bt_get(t, l - 1, first + j);
            if (sha) sha_node(&t->tab[l][e], &ch[0], &ch[1]);
            else poseidon_hash(&t->tab[l][e], pc, ch);
        }
    }
    return CUZK_OK;
}

static const fr_t *bt_root(const struct btree *t) { return &t->tab[t->levels][0]; }

/* ---------------------------------------------------------- bincode writer -- */

struct bw {
    uint8_t *p;
    size_t off, cap;
};

static void bw_u32(struct bw *w, uint32_t v)
{
    for (int i = 0; i < 4 && w->off < w->cap; i++) w->p[w->off++] = (uint8_t)(v >> (8 * i));
}

static void bw_u64(struct bw *w, uint64_t v)
{
    for (int i = 0; i < 8 && w->off < w->cap; i++) w->p[w->off++] = (uint8_t)(v >> (8 * i));
}

static void bw_fr(struct bw *w, const fr_t *v)
{
    if (w->cap - w->off < 32) {
        w->off = w->cap;
        return;
    }
    fr_to_bytes_le(w->p + w->off, v);
    w->off += 32;
}

/* InclusionPath of `n` levels starting at tree level l0 for leaf `node` (rust-fil-proofs
 * PathElement: the other arity - 1 children in order, then the proven child's index). */
static void bw_incl_path(struct bw *w, const struct btree *t, unsigned l0, unsigned n, uint64_t node)
{
    bw_u64(w, n);
    for (unsigned l = l0; l < l0 + n; l++) {
        unsigned a = 1u << t->lg_arity[l];
        uint64_t at = node >> t->lg_span[l];
        unsigned pos = (unsigned)(at & (a - 1));
        uint64_t first = at - pos;
        bw_u64(w, a - 1);
        for (unsigned j = 0; j < a; j++)
            if (j != pos) bw_fr(w, bt_get(t, l, first + j));
        bw_u64(w, pos);
    }
}

/* MerkleProof: Single (root, leaf, path) for a tree of base levels only, Sub / Top (paths,
 * root, leaf) for trees with a sub / top level (proof.rs ProofData). */
static void bw_merkle_proof(struct bw *w, const struct btree *t, unsigned nb, unsigned n_sub, unsigned n_top,
                            uint64_t node)
{
    const fr_t *leaf = bt_get(t, 0, node), *root = bt_root(t);
    if (!n_sub) {
        bw_u32(w, 0);
        bw_fr(w, root);
        bw_fr(w, leaf);
        bw_incl_path(w, t, 0, nb, node);
        return;
    }
    bw_u32(w, n_top ? 2 : 1);
    bw_incl_path(w, t, 0, nb, node);
    bw_incl_path(w, t, nb, 1, node);
    if (n_top) bw_incl_path(w, t, nb + 1, 1, node);
    bw_fr(w, root);
    bw_fr(w, leaf);
}

static size_t path_bytes(unsigned levels, unsigned arity) { return 8 + levels * (16 + 32 * (size_t)(arity - 1)); }

static size_t r_proof_bytes(const struct snap_config *c)
{
    size_t n = 4 + 64 + path_bytes(c->base_levels, c->base_arity);
    if (c->sub_arity) n += path_bytes(1, c->sub_arity);
    if (c->top_arity) n += path_bytes(1, c->top_arity);
    return n;
}

size_t fil_snap_partition_proof_size(const struct snap_config *c)
{
    size_t d = 4 + 64 + path_bytes(c->nodes_log2, 2);
    return 48 + 32 * (size_t)c->apex_leaves + c->challenges * (2 * r_proof_bytes(c) + d);
}

/* -------------------------------------------------------------- generator -- */

void fil_snap_gen_free(struct fil_snap_gen *g)
{
    if (!g) return;
    for (unsigned k = 0; k < 16; k++) cuzk_free(g->blob[k]);
    memset(g, 0, sizeof *g);
}

static void prf_fr(fr_t *out, const uint8_t key[32], uint32_t tag, uint64_t a)
{
    uint8_t b[32];
    fil_prf(b, key, tag, a, 0);
    (void)fr_from_bytes_le(out, b);     /* 254 bits: always canonical */
}

int fil_snap_generate(struct fil_snap_gen *out, uint64_t sector_size, uint64_t seed,
                      struct cuzk_error *err)
{
    if (!out) return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_snap_generate: NULL argument");
    memset(out, 0, sizeof *out);
    struct snap_config *c = &out->cfg;
    int rc = snap_config_for_size(c, sector_size, err);
    if (rc) return rc;
    if (c->partitions > 16)
        return cuzk_fail(err, CUZK_E_INTERNAL, "snap gen: %u partitions", c->partitions);
    const unsigned L = c->nodes_log2, h = snap_h_default(c), B = L - h;
    const size_t nb = (size_t)1 << h;
    out->h = h;
    out->partitions = c->partitions;

    uint8_t key[32], sb[8];
    for (int i = 0; i < 8; i++) sb[i] = (uint8_t)(seed >> (8 * i));
    {
        struct cuzk_sha256 s;
        cuzk_sha256_init(&s);
        cuzk_sha256_update(&s, "cuzk snap gen v1", 16);
        cuzk_sha256_update(&s, sb, 8);
        cuzk_sha256_final(&s, key);
    }
    fr_t *old = cuzk_malloc(3 * nb * sizeof(fr_t));
    if (!old) return cuzk_fail(err, CUZK_E_NOMEM, "snap gen: %zu buckets", nb);
    fr_t *data = old + nb, *neu = data + nb;
    for (size_t b = 0; b < nb; b++) {
        prf_fr(&old[b], key, 1, b);
        prf_fr(&data[b], key, 2, b);
    }
    fr_t comm_c, comm_r_old, comm_r_new, comm_d_new, phi;
    prf_fr(&comm_c, key, 3, 0);

    unsigned lg_r[SNAP_MAX_LEVELS], lg_d[SNAP_MAX_LEVELS], nr = 0;
    for (unsigned l = 0; l < c->base_levels; l++) lg_r[nr++] = 3;
    if (c->sub_arity) lg_r[nr++] = c->sub_arity == 8 ? 3 : c->sub_arity == 4 ? 2 : 1;
    if (c->top_arity) lg_r[nr++] = c->top_arity == 8 ? 3 : c->top_arity == 4 ? 2 : 1;
    for (unsigned l = 0; l < L; l++) lg_d[l] = 1;

    struct btree tro, trn, td;
    memset(&tro, 0, sizeof tro);
    memset(&trn, 0, sizeof trn);
    memset(&td, 0, sizeof td);
    const struct poseidon_consts *p2 = poseidon_consts_get(2, err);
    rc = p2 ? CUZK_OK : err ? err->code : CUZK_E_INTERNAL;
    if (!rc) rc = bt_build(&tro, lg_r, nr, L, B, false, old, err);
    if (!rc) rc = bt_build(&td, lg_d, L, L, B, true, data, err);
    if (!rc) {
        fr_t in[2] = {comm_c, *bt_root(&tro)};
        poseidon_hash(&comm_r_old, p2, in);
        comm_d_new = *bt_root(&td);
        rc = snap_hash_gen(&phi, &comm_d_new, &comm_r_old, err);
    }
    for (size_t b = 0; b < nb && !rc; b++) {
        fr_t rho, t;
        rc = snap_rho(&rho, c, &phi, (uint64_t)b << B, h, err);
        fr_mul(&t, &data[b], &rho);
        fr_add(&neu[b], &old[b], &t);
    }
    if (!rc) rc = bt_build(&trn, lg_r, nr, L, B, false, neu, err);
    if (!rc) {
        fr_t in[2] = {comm_c, *bt_root(&trn)};
        poseidon_hash(&comm_r_new, p2, in);
        fr_to_bytes_le(out->comm_r_old, &comm_r_old);
        fr_to_bytes_le(out->comm_r_new, &comm_r_new);
        fr_to_bytes_le(out->comm_d_new, &comm_d_new);
    }

    const size_t size = fil_snap_partition_proof_size(c);
    const unsigned D = c->tree_d_levels, A = c->apex_leaves;
    unsigned n_sub = c->sub_arity ? 1 : 0, n_top = c->top_arity ? 1 : 0;
    for (unsigned k = 0; k < c->partitions && !rc; k++) {
        uint64_t ch[SNAP_MAX_CHALLENGES];
        if ((rc = snap_challenges(ch, c, &comm_r_new, k, err))) break;
        struct bw w = {cuzk_malloc(size), 0, size};
        if (!w.p) {
            rc = cuzk_fail(err, CUZK_E_NOMEM, "snap gen: partition %u (%zu bytes)", k, size);
            break;
        }
        out->blob[k] = w.p;
        out->len[k] = size;
        bw_fr(&w, &comm_c);
        bw_u64(&w, A);
        for (unsigned i = 0; i < A; i++) bw_fr(&w, bt_get(&td, D, (uint64_t)k * A + i));
        bw_u64(&w, c->challenges);
        for (unsigned i = 0; i < c->challenges; i++) {
            bw_merkle_proof(&w, &tro, c->base_levels, n_sub, n_top, ch[i]);
            bw_merkle_proof(&w, &td, L, 0, 0, ch[i]);
            bw_merkle_proof(&w, &trn, c->base_levels, n_sub, n_top, ch[i]);
        }
        if (w.off != size)
            rc = cuzk_fail(err, CUZK_E_INTERNAL, "snap gen: partition %u wrote %zu bytes, expected %zu", k,
                           w.off, size);
    }
    bt_free(&tro);
    bt_free(&trn);
    bt_free(&td);
    cuzk_free(old);
    if (rc) fil_snap_gen_free(out);
    return rc;
}
