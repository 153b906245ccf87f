/* post_gen.c: the bincode FallbackPoStSectorProof writer and the synthetic PoSt vanilla
 * generator (post_gen.h). Per sector: a PRF key from (seed, sector id); comm_c pseudo-random;
 * tree R a sparse Poseidon tree of the size's shape over the challenged leaves (the leaves'
 * values are the tree's own pseudo-random ones); comm_r_last its root; comm_r =
 * Poseidon-2(comm_c, comm_r_last). PoSt challenges depend on (randomness, sector id, index),
 * never on comm_r, so the challenged leaves are known before any tree exists and a sparse tree
 * is fully consistent (unlike SnapDeals, see snap_gen.c). */
#include <stdlib.h>
#include <string.h>

#include "cuzk/gadgets.h"
#include "cuzk/post_gen.h"
#include "cuzk/util.h"
#include "stree.h"

enum { TAG_TREE_R = 0x505231, TAG_COMM_C = 0x504343 };

/* ---------------------------------------------------------------- writer -- */

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

static void bw_raw32(struct bw *w, const uint8_t b[32])
{
    if (w->cap - w->off < 32) {
        w->off = w->cap;
        return;
    }
    memcpy(w->p + w->off, b, 32);
    w->off += 32;
}

/* InclusionPath: levels [l0, l0 + n) of m, each PathElement {hashes: arity - 1 siblings,
 * index}; *s is the running sibling offset. */
static void bw_path(struct bw *w, const struct fil_merkle_proof *m, unsigned l0, unsigned n, unsigned *s)
{
    bw_u64(w, n);
    for (unsigned l = l0; l < l0 + n; l++) {
        unsigned a = m->arity[l];
        bw_u64(w, a - 1);
        for (unsigned j = 0; j + 1 < a; j++) bw_raw32(w, m->sib[(*s)++]);
        bw_u64(w, m->index[l]);
    }
}

/* MerkleProof {data: ProofData}: Single (root, leaf, path), Sub (base_proof, sub_proof, root,
 * leaf) or Top (base_proof, sub_proof, top_proof, root, leaf): storage-proofs-core proof.rs. */
static void bw_merkle_proof(struct bw *w, const struct fil_merkle_proof *m)
{
    unsigned s = 0;
    if (!m->n_sub) {
        bw_u32(w, 0);
        bw_raw32(w, m->root);
        bw_raw32(w, m->leaf);
        bw_path(w, m, 0, m->n_base, &s);
        return;
    }
    bw_u32(w, m->n_top ? 2 : 1);
    bw_path(w, m, 0, m->n_base, &s);
    bw_path(w, m, m->n_base, 1, &s);
    if (m->n_top) bw_path(w, m, m->n_base + 1, 1, &s);
    bw_raw32(w, m->root);
    bw_raw32(w, m->leaf);
}

static unsigned post_inclusions(const struct post_config *c)
{
    return c->kind == POST_WINNING ? c->sectors * c->challenges : c->challenges;
}

int fil_post_sector_proof_write(uint8_t *out, size_t cap, const struct post_config *c, uint64_t sector_id,
                                const uint8_t comm_r[32], const struct fil_merkle_proof *incl, unsigned n_incl,
                                const uint8_t comm_c[32], const uint8_t comm_r_last[32], struct cuzk_error *err)
{
    if (!out || !c || !comm_r || (!incl && n_incl) || !comm_c || !comm_r_last)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_sector_proof_write: NULL argument");
    size_t need = fil_post_sector_proof_size(c);
    if (n_incl != post_inclusions(c))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_sector_proof_write: %u inclusion proofs, %s needs %u",
                         n_incl, post_kind_name(c->kind), post_inclusions(c));
    if (cap < need)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_sector_proof_write: %zu bytes of room, %zu needed", cap,
                         need);
    unsigned nsub = c->sub_arity ? 1 : 0, ntop = c->sub_arity && c->top_arity ? 1 : 0;
    for (unsigned i = 0; i < n_incl; i++) {
        const struct fil_merkle_proof *m = &incl[i];
        bool ok = m->n_base == c->base_levels && m->n_sub == nsub && m->n_top == ntop;
        for (unsigned l = 0; ok && l < c->base_levels; l++) ok = m->arity[l] == c->base_arity;
        if (ok && nsub) ok = m->arity[c->base_levels] == c->sub_arity;
        if (ok && ntop) ok = m->arity[c->base_levels + 1] == c->top_arity;
        if (!ok)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_sector_proof_write: inclusion proof %u is not of "
                             "the tree-R shape %u-%u-%u", i, c->base_arity, c->sub_arity, c->top_arity);
    }
    struct bw w = {out, 0, cap};
    bw_u64(&w, sector_id);
    bw_raw32(&w, comm_r);
    bw_u64(&w, 1);                      /* vanilla_proof.sectors: one SectorProof */
    bw_u64(&w, n_incl);
    for (unsigned i = 0; i < n_incl; i++) bw_merkle_proof(&w, &incl[i]);
    bw_raw32(&w, comm_c);
    bw_raw32(&w, comm_r_last);
    if (w.off != need)
        return cuzk_fail(err, CUZK_E_INTERNAL, "fil_post_sector_proof_write: wrote %zu bytes, expected %zu", w.off,
                         need);
    return CUZK_OK;
}

/* -------------------------------------------------------------- generator -- */

void fil_post_gen_free(struct fil_post_gen *g)
{
    if (!g) return;
    if (g->blob)
        for (size_t i = 0; i < g->n; i++) cuzk_free(g->blob[i]);
    cuzk_free(g->blob);
    cuzk_free(g->sector_id);
    cuzk_free(g->comm_r);
    memset(g, 0, sizeof *g);
}

struct gen_ctx {
    struct fil_post_gen *g;
    const uint8_t *randomness;
    uint64_t seed;
    uint64_t first_index;           /* sector index of blob 0 (partition * S; Winning 0) */
    const struct poseidon_consts *p2;
    int *rc;
    struct cuzk_error *err;
};

/* Blob i: one sector's tree, commitments and FallbackPoStSectorProof. */
static int gen_sector(struct gen_ctx *x, size_t i, struct fil_merkle_proof *m, struct cuzk_error *err)
{
    struct fil_post_gen *g = x->g;
    const struct post_config *c = &g->cfg;
    const unsigned C = g->proof->challenge_count;   /* 10 Window, 66 Winning */
    uint64_t sid = g->sector_id[i];
    uint64_t sector_index = g->proof->kind == POST_WINNING ? 0 : x->first_index + i;
    uint8_t key[32], b[16];
    for (int k = 0; k < 8; k++) {
        b[k] = (uint8_t)(x->seed >> (8 * k));
        b[8 + k] = (uint8_t)(sid >> (8 * k));
    }
    struct cuzk_sha256 s;
    cuzk_sha256_init(&s);
    cuzk_sha256_update(&s, "cuzk post gen v1", 16);
    cuzk_sha256_update(&s, b, 16);
    cuzk_sha256_final(&s, key);

    uint64_t leaf[128];
    if (C > 128) return cuzk_fail(err, CUZK_E_INTERNAL, "post gen: %u challenges", C);
    int rc = fil_post_sector_challenges(leaf, g->proof, x->randomness, sid, sector_index, err);
    if (rc) return rc;
    struct fil_stree_entry *e = cuzk_malloc(C * sizeof *e);
    if (!e) return cuzk_fail(err, CUZK_E_NOMEM, "post gen: sector %zu leaves", i);
    for (unsigned n = 0; n < C; n++) {
        e[n].idx = leaf[n];
        fil_prf(e[n].v, key, TAG_TREE_R, 0, leaf[n]);    /* the value the sparse tree gives it */
    }
    struct fil_stree t;
    fil_stree_init_poseidon(&t, key, TAG_TREE_R, c->base_arity, c->base_levels, c->sub_arity,
                            c->sub_arity ? c->top_arity : 0);
    rc = fil_stree_build(&t, e, C, err);
    uint8_t comm_c[32], comm_r_last[32];
    if (!rc) {
        fil_stree_root(&t, comm_r_last);
        fil_prf(comm_c, key, TAG_COMM_C, 0, 0);
        fr_t in[2], h;
        (void)fr_from_bytes_le(&in[0], comm_c);         /* PRF values are below 2^254: canonical */
        (void)fr_from_bytes_le(&in[1], comm_r_last);
        poseidon_hash(&h, x->p2, in);
        fr_to_bytes_le(g->comm_r[i], &h);
        for (unsigned n = 0; n < C; n++) fil_stree_proof(&t, &m[n], leaf[n]);
        if (!(g->blob[i] = cuzk_malloc(g->len))) rc = cuzk_fail(err, CUZK_E_NOMEM, "post gen: sector %zu", i);
    }
    if (!rc)
        rc = fil_post_sector_proof_write(g->blob[i], g->len, c, sid, g->comm_r[i], m, C, comm_c, comm_r_last, err);
    fil_stree_free(&t);
    return rc;
}

static void gen_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct gen_ctx *x = ctx;
    struct fil_merkle_proof *m = cuzk_malloc(128 * sizeof *m);
    for (size_t i = begin; i < end; i++) {
        if (!m) x->rc[i] = cuzk_fail(&x->err[i], CUZK_E_NOMEM, "post gen: inclusion proofs");
        else x->rc[i] = gen_sector(x, i, m, &x->err[i]);
    }
    cuzk_free(m);
}

int fil_post_generate(struct fil_post_gen *out, const struct fil_post_proof *p, const uint8_t randomness[32],
                      uint64_t miner_id, size_t n_sectors, unsigned partition, uint64_t seed,
                      struct pool *pool, struct cuzk_error *err)
{
    if (!out || !p || !randomness) return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_generate: NULL argument");
    memset(out, 0, sizeof *out);
    int rc = fil_post_check_randomness(randomness, 32, err);
    if (!rc) rc = fil_post_circuit_config(&out->cfg, p, err);
    if (rc) return rc;
    out->proof = p;
    if (!n_sectors) return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: no sectors", p->name);
    size_t n = 1;
    uint64_t first_id;
    if (p->kind == POST_WINNING) {
        uint8_t prover_id[32];
        fil_prover_id(prover_id, miner_id);
        uint64_t pos[1];
        if (p->sector_count != 1)
            return cuzk_fail(err, CUZK_E_INTERNAL, "%s: %u challenged sectors", p->name, p->sector_count);
        rc = fil_winning_post_sector_challenge(pos, p, randomness, prover_id, n_sectors, err);
        if (rc) return rc;
        out->set_len = n_sectors;
        out->selected = pos[0];
        first_id = pos[0] + 1;
        if (partition)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: WinningPoSt has one partition (got %u)", p->name,
                             partition);
    } else {
        if (n_sectors > p->sector_count)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: %zu sectors, but a partition holds %u (a request "
                             "proves one partition)", p->name, n_sectors, p->sector_count);
        n = n_sectors;
        first_id = (uint64_t)partition * p->sector_count + 1;
    }
    out->n = n;
    out->len = fil_post_sector_proof_size(&out->cfg);
    out->blob = cuzk_calloc(n, sizeof *out->blob);
    out->sector_id = cuzk_calloc(n, sizeof *out->sector_id);
    out->comm_r = cuzk_calloc(n, sizeof *out->comm_r);
    struct gen_ctx x = {.g = out, .randomness = randomness, .seed = seed,
                        .first_index = (uint64_t)partition * p->sector_count};
    x.rc = cuzk_calloc(n, sizeof *x.rc);
    x.err = cuzk_calloc(n, sizeof *x.err);
    if (!out->blob || !out->sector_id || !out->comm_r || !x.rc || !x.err) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "post gen: %zu sectors", n);
    } else if (!(x.p2 = poseidon_consts_get(2, err))) {
        rc = err ? err->code : CUZK_E_INTERNAL;
    } else {
        for (size_t i = 0; i < n; i++) out->sector_id[i] = first_id + i;
        if (pool) pool_parallel_for(pool, n, 1, gen_range, &x);
        else gen_range(&x, 0, n, 0);
        for (size_t i = 0; i < n && !rc; i++)
            if ((rc = x.rc[i]) && err) *err = x.err[i];
    }
    cuzk_free(x.rc);
    cuzk_free(x.err);
    if (rc) fil_post_gen_free(out);
    return rc;
}
