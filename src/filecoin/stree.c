/* stree.c: sparse Merkle trees for the vanilla-proof generators (stree.h). */
#include <stdlib.h>
#include <string.h>

#include "cuzk/gadgets.h"
#include "cuzk/util.h"
#include "stree.h"

void fil_prf(uint8_t out[32], const uint8_t key[32], uint32_t tag, uint64_t a, uint64_t b)
{
    uint8_t in[52];
    memcpy(in, key, 32);
    for (int i = 0; i < 4; i++) in[32 + i] = (uint8_t)(tag >> (8 * i));
    for (int i = 0; i < 8; i++) {
        in[36 + i] = (uint8_t)(a >> (8 * i));
        in[44 + i] = (uint8_t)(b >> (8 * i));
    }
    cuzk_sha256(out, in, sizeof in);
    out[31] &= 0x3f;
}

void fil_stree_init_poseidon(struct fil_stree *t, const uint8_t key[32], unsigned tag, unsigned base,
                             unsigned nb, unsigned sub, unsigned top)
{
    memset(t, 0, sizeof *t);
    t->key = key;
    t->tag = tag;
    for (unsigned l = 0; l < nb; l++) t->arity[t->levels++] = base;
    if (sub) t->arity[t->levels++] = sub;
    if (top) t->arity[t->levels++] = top;
    t->n_base = nb;
    t->n_sub = sub ? 1 : 0;
    t->n_top = top ? 1 : 0;
}

void fil_stree_init_sha(struct fil_stree *t, const uint8_t key[32], unsigned tag, unsigned levels)
{
    memset(t, 0, sizeof *t);
    t->key = key;
    t->tag = tag;
    t->sha = true;
    t->levels = t->n_base = levels;
    for (unsigned l = 0; l < levels; l++) t->arity[l] = 2;
}

void fil_stree_init_sha_zeros(struct fil_stree *t, unsigned levels)
{
    fil_stree_init_sha(t, NULL, 0, levels);
    t->zeros = true;
    memset(t->zero[0], 0, 32);
    for (unsigned l = 0; l < levels && l < FIL_MAX_LEVELS; l++) {
        uint8_t two[64];
        memcpy(two, t->zero[l], 32);
        memcpy(two + 32, t->zero[l], 32);
        cuzk_sha256(t->zero[l + 1], two, 64);
        t->zero[l + 1][31] &= 0x3f;
    }
}

static int cmp_entry(const void *a, const void *b)
{
    uint64_t x = ((const struct fil_stree_entry *)a)->idx, y = ((const struct fil_stree_entry *)b)->idx;
    return x < y ? -1 : x > y;
}

void fil_stree_get(const struct fil_stree *t, uint8_t out[32], unsigned level, uint64_t idx)
{
    size_t lo = 0, hi = t->n[level];
    const struct fil_stree_entry *e = t->lv[level];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e[mid].idx < idx) lo = mid + 1;
        else hi = mid;
    }
    if (lo < t->n[level] && e[lo].idx == idx) memcpy(out, e[lo].v, 32);
    else if (t->zeros) memcpy(out, t->zero[level], 32);
    else fil_prf(out, t->key, t->tag, level, idx);
}

/* One level's parents, hashed in parallel: a full tree (the dense synthetic / NI generator,
 * 2^24 leaves at 512 MiB) spends most of its time here. */
struct level_ctx {
    const struct fil_stree *t;
    unsigned l;
    struct fil_stree_entry *up;
    const struct poseidon_consts *pc;   /* NULL for SHA-256 */
};

static void level_range(void *ctx, size_t b, size_t e, unsigned w)
{
    (void)w;
    const struct level_ctx *c = ctx;
    unsigned a = c->t->arity[c->l];
    for (size_t k = b; k < e; k++) {
        uint8_t ch[8][32];
        uint8_t *out = c->up[k].v;
        for (unsigned j = 0; j < a; j++) fil_stree_get(c->t, ch[j], c->l, c->up[k].idx * a + j);
        if (!c->pc) {
            cuzk_sha256(out, ch, 64);
            out[31] &= 0x3f;
            continue;
        }
        fr_t in[8], h;
        for (unsigned j = 0; j < a; j++) (void)fr_from_bytes_le(&in[j], ch[j]);
        poseidon_hash(&h, c->pc, in);
        fr_to_bytes_le(out, &h);
    }
}

int fil_stree_build(struct fil_stree *t, struct fil_stree_entry *leaves, size_t n,
                    struct cuzk_error *err)
{
    qsort(leaves, n, sizeof *leaves, cmp_entry);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || leaves[m - 1].idx != leaves[i].idx) leaves[m++] = leaves[i];
    t->lv[0] = leaves;
    t->n[0] = m;
    for (unsigned l = 0; l < t->levels; l++) {
        unsigned a = t->arity[l];
        const struct poseidon_consts *pc = t->sha ? NULL : poseidon_consts_get(a, err);
        if (!t->sha && !pc) return err ? err->code : CUZK_E_INTERNAL;
        struct fil_stree_entry *up = cuzk_malloc((t->n[l] ? t->n[l] : 1) * sizeof *up);
        if (!up) return cuzk_fail(err, CUZK_E_NOMEM, "gen: sparse tree level %u", l);
        size_t k = 0;
        for (size_t i = 0; i < t->n[l]; i++) {
            uint64_t grp = t->lv[l][i].idx / a;
            if (!k || up[k - 1].idx != grp) up[k++].idx = grp;
        }
        struct level_ctx c = {t, l, up, pc};
        if (k >= 4096) pool_parallel_for(pool_default(), k, 256, level_range, &c);
        else level_range(&c, 0, k, 0);
        t->lv[l + 1] = up;
        t->n[l + 1] = k;
    }
    return CUZK_OK;
}

void fil_stree_free(struct fil_stree *t)
{
    for (unsigned l = 0; l <= t->levels; l++) {
        cuzk_free(t->lv[l]);
        t->lv[l] = NULL;
        t->n[l] = 0;
    }
}

void fil_stree_root(const struct fil_stree *t, uint8_t out[32]) { fil_stree_get(t, out, t->levels, 0); }

void fil_stree_proof(const struct fil_stree *t, struct fil_merkle_proof *m, uint64_t idx)
{
    memset(m, 0, sizeof *m);
    fil_stree_get(t, m->leaf, 0, idx);
    fil_stree_root(t, m->root);
    m->n_base = (uint8_t)t->n_base;
    m->n_sub = (uint8_t)t->n_sub;
    m->n_top = (uint8_t)t->n_top;
    unsigned s = 0;
    for (unsigned l = 0; l < t->levels; l++) {
        unsigned a = t->arity[l];
        uint64_t grp = idx / a;
        m->arity[l] = (uint8_t)a;
        m->index[l] = (uint32_t)(idx % a);
        for (unsigned j = 0; j < a; j++)
            if (j != idx % a) fil_stree_get(t, m->sib[s++], l, grp * a + j);
        idx = grp;
    }
}
