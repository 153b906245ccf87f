/* post_vanilla.c: bincode FallbackPoStSectorProof (the PoSt vanilla proof Curio sends) into
 * the FallbackPoSt witness of post.h. Layout: docs/formats.md ("Vanilla proofs (bincode)"). */
#include <stdio.h>
#include <string.h>

#include "bincode.h"
#include "cuzk/util.h"
#include "cuzk/vanilla.h"

static unsigned post_inclusions(const struct post_config *c)
{
    return c->kind == POST_WINNING ? c->sectors * c->challenges : c->challenges;
}

/* Bytes of a bincode MerkleProof path of `levels` levels of arity `arity` (docs/formats.md). */
static size_t path_bytes(unsigned levels, unsigned arity) { return 8 + levels * (16 + 32 * (size_t)(arity - 1)); }

size_t fil_post_sector_proof_size(const struct post_config *c)
{
    size_t mp = 4 + 64 + path_bytes(c->base_levels, c->base_arity);
    if (c->sub_arity) mp += path_bytes(1, c->sub_arity);
    if (c->sub_arity && c->top_arity) mp += path_bytes(1, c->top_arity);
    return 120 + post_inclusions(c) * mp;
}

void fil_post_sector_proof_free(struct fil_post_sector_proof *p)
{
    if (!p) return;
    cuzk_free(p->arena);
    memset(p, 0, sizeof *p);
}

int fil_post_sector_proof_parse(struct fil_post_sector_proof *out, const struct post_config *c,
                                const void *data, size_t len, unsigned sector_index,
                                struct cuzk_error *err)
{
    if (!out || !c || (!data && len))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_sector_proof_parse: NULL argument");
    memset(out, 0, sizeof *out);
    struct bc_tree t;
    bc_tree_init(&t, "tree R", c->base_arity, c->base_levels, c->sub_arity, c->top_arity);
    unsigned n = post_inclusions(c), lv = bc_tree_levels(&t), ns = bc_tree_siblings(&t);
    if (!n || !lv || lv > POREP_MAX_LEVELS || c->base_arity < 2)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_sector_proof_parse: bad post_config");
    size_t sz = 2 * bc_round(n * sizeof(fr_t)) + bc_round(n * sizeof(uint64_t)) +
                bc_round((size_t)n * lv * sizeof(uint32_t)) + bc_round((size_t)n * ns * sizeof(fr_t)) +
                bc_round(n * sizeof(struct porep_path));
    uint8_t *cur = cuzk_malloc(sz);
    if (!cur) return cuzk_fail(err, CUZK_E_NOMEM, "FallbackPoStSectorProof (sector %u): %zu bytes", sector_index, sz);
    struct fil_post_sector_proof p = {.challenges = n, .levels = lv, .siblings = ns, .arena = cur};
    p.leaves = bc_carve(&cur, n * sizeof(fr_t));
    p.roots = bc_carve(&cur, n * sizeof(fr_t));
    p.leaf_index = bc_carve(&cur, n * sizeof(uint64_t));
    p.index = bc_carve(&cur, (size_t)n * lv * sizeof(uint32_t));
    p.sib = bc_carve(&cur, (size_t)n * ns * sizeof(fr_t));
    p.paths = bc_carve(&cur, n * sizeof(struct porep_path));

    struct bc r;
    bc_init(&r, data, len, err, "FallbackPoStSectorProof (sector %u)", sector_index);
    bc_u64(&r, "sector_id", &p.sector_id);
    bc_fr(&r, "comm_r", &p.comm_r);
    bc_push(&r, "vanilla_proof");
    bc_count(&r, "sectors", 1, "SectorProof (generate_single_vanilla_proof writes one)");
    bc_push(&r, ".sectors[0]");
    char unit[64];
    snprintf(unit, sizeof unit, "inclusion proofs (%s)", post_kind_name(c->kind));
    bc_count(&r, "inclusion_proofs", n, unit);
    for (unsigned i = 0; i < n && !r.rc; i++) {
        size_t s = bc_push(&r, ".inclusion_proofs[%u]", i);
        bc_merkle_proof(&r, &t, &p.roots[i], &p.leaves[i], p.index + (size_t)i * lv, p.sib + (size_t)i * ns,
                        &p.leaf_index[i]);
        p.paths[i] = (struct porep_path){p.index + (size_t)i * lv, p.sib + (size_t)i * ns};
        bc_pop(&r, s);
    }
    bc_fr(&r, "comm_c", &p.comm_c);
    bc_fr(&r, "comm_r_last", &p.comm_r_last);
    bc_end(&r);
    if (r.rc) {
        cuzk_free(p.arena);
        return r.rc;
    }
    *out = p;
    return CUZK_OK;
}

static int check_fits(const struct post_config *c, const struct fil_post_sector_proof *p, struct cuzk_error *err)
{
    struct bc_tree t;
    bc_tree_init(&t, "tree R", c->base_arity, c->base_levels, c->sub_arity, c->top_arity);
    if (!p->arena || p->challenges != post_inclusions(c) || p->levels != bc_tree_levels(&t) ||
        p->siblings != bc_tree_siblings(&t))
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "sector proof of %u challenges x %u levels does not fit the %s config (%u x %u)",
                         p->challenges, p->levels, post_kind_name(c->kind), post_inclusions(c),
                         bc_tree_levels(&t));
    return CUZK_OK;
}

int fil_post_sector_fill(struct post_sector *out, const struct post_config *c,
                         const struct fil_post_sector_proof *p, unsigned j, struct cuzk_error *err)
{
    if (!out || !c || !p) return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_sector_fill: NULL argument");
    int rc = check_fits(c, p, err);
    if (rc) return rc;
    unsigned first;
    if (c->kind == POST_WINNING) {
        if (j >= c->sectors)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "winning-post circuit sector %u: expected < %u", j, c->sectors);
        first = j * c->challenges;
    } else {
        if (j != 0) return cuzk_fail(err, CUZK_E_INVALID_ARG, "window-post sector proof: circuit sector %u of 1", j);
        first = 0;
    }
    out->comm_r = p->comm_r;
    out->comm_c = p->comm_c;
    out->comm_r_last = p->comm_r_last;
    out->leaves = p->leaves + first;
    out->paths = p->paths + first;
    return CUZK_OK;
}

void fil_post_partition_free(struct fil_post_partition *p)
{
    if (!p) return;
    cuzk_free(p->sectors);
    cuzk_free(p->comm_r);
    cuzk_free(p->leaf_index);
    memset(p, 0, sizeof *p);
}

int fil_post_partition_build(struct fil_post_partition *out, const struct post_config *c,
                             const struct fil_post_sector_proof *proofs, size_t n,
                             struct cuzk_error *err)
{
    if (!out || !c || (!proofs && n))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "fil_post_partition_build: NULL argument");
    memset(out, 0, sizeof *out);
    unsigned S = c->sectors, C = c->challenges;
    if (n == 0) return cuzk_fail(err, CUZK_E_FORMAT, "%s partition: no sector proofs", post_kind_name(c->kind));
    if (c->kind == POST_WINNING && n != 1)
        return cuzk_fail(err, CUZK_E_FORMAT, "winning-post: expected exactly 1 sector proof, got %zu (more sectors "
                         "than the proof holds)", n);
    if (n > S)
        return cuzk_fail(err, CUZK_E_FORMAT,
                         "window-post partition: %zu sector proofs, more than the partition holds (%u); "
                         "sector %u is the first extra",
                         n, S, S);
    for (size_t i = 0; i < n; i++) {
        int rc = check_fits(c, &proofs[i], err);
        if (rc) return cuzk_fail_prefix(err, rc, "sector %zu", i);
    }
    out->sectors = cuzk_calloc(S, sizeof *out->sectors);
    out->comm_r = cuzk_calloc(S, sizeof *out->comm_r);
    out->leaf_index = cuzk_calloc((size_t)S * C, sizeof *out->leaf_index);
    if (!out->sectors || !out->comm_r || !out->leaf_index) {
        fil_post_partition_free(out);
        return cuzk_fail(err, CUZK_E_NOMEM, "PoSt partition of %u sectors", S);
    }
    for (unsigned s = 0; s < S; s++) {
        const struct fil_post_sector_proof *p;
        unsigned j;
        if (c->kind == POST_WINNING) {
            p = &proofs[0];
            j = s;
        } else {
            p = &proofs[s < n ? s : n - 1];     /* padding: the last real sector again */
            j = 0;
        }
        int rc = fil_post_sector_fill(&out->sectors[s], c, p, j, err);
        if (rc) {
            fil_post_partition_free(out);
            return rc;
        }
        out->comm_r[s] = p->comm_r;
        memcpy(out->leaf_index + (size_t)s * C, p->leaf_index + (size_t)j * C, C * sizeof(uint64_t));
    }
    out->real = (unsigned)n;
    out->w.sectors = out->sectors;
    return CUZK_OK;
}
