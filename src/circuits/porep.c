/* porep.c: the StackedDrg PoRep partition circuit (storage-proofs-porep stacked/circuit
 * proof.rs, params.rs, column.rs, hash.rs, create_label.rs) and the storage-proofs-core
 * gadgets it uses (por.rs, insertion.rs, constraint.rs, encode.rs, uint64.rs), in upstream's
 * allocation and constraint order. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/porep.h"
#include "cuzk/util.h"

/* ------------------------------------------------------------------ sizes -- */

int porep_config_for_size(struct porep_config *c, uint64_t sector_size, struct cuzk_error *err)
{
    memset(c, 0, sizeof *c);
    c->sector_size = sector_size;
    c->base_arity = 8;
    switch (sector_size) {
    case 2048ull:                   c->nodes_log2 = 6;  break;
    case 8ull << 20:                c->nodes_log2 = 18; break;
    case 512ull << 20:              c->nodes_log2 = 24; break;
    case 32ull << 30:               c->nodes_log2 = 30; c->sub_arity = 8; break;
    case 64ull << 30:               c->nodes_log2 = 31; c->sub_arity = 8; c->top_arity = 2; break;
    default:
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "porep: sector size %llu is not a PoRep size",
                         (unsigned long long)sector_size);
    }
    bool big = sector_size >= (32ull << 30);
    c->layers = big ? 11 : 2;
    c->challenges = big ? 18 : 2;
    c->partitions = big ? 10 : 1;
    c->tree_d_depth = c->nodes_log2;
    unsigned rest = c->nodes_log2 - (c->sub_arity ? 3 : 0) - (c->top_arity ? 1 : 0);
    c->base_levels = rest / 3;
    return CUZK_OK;
}

int porep_parse_sector_size(uint64_t *out, const char *s, struct cuzk_error *err)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = 1;
    if (end == s) goto bad;
    if (!strcmp(end, "KiB")) mul = 1ull << 10;
    else if (!strcmp(end, "MiB")) mul = 1ull << 20;
    else if (!strcmp(end, "GiB")) mul = 1ull << 30;
    else if (*end) goto bad;
    *out = (uint64_t)v * mul;
    return CUZK_OK;
bad:
    return cuzk_fail(err, CUZK_E_INVALID_ARG,
                     "porep: sector size \"%s\" (expected 2KiB, 8MiB, 512MiB, 32GiB or 64GiB)", s);
}

/* ---------------------------------------------------------- small gadgets -- */

gnum g_pick(struct gcs *cs, gbool cond, const gnum *a, const gnum *b)
{
    gnum c = gnum_alloc(cs, (cond.val & 1) ? &a->val : &b->val);
    if (!gcs_shape(cs)) {
        cs->n_constraints++;
        return c;
    }
    struct glc *la = &cs->tmp[0], *lb = &cs->tmp[1], *lc = &cs->tmp[2];
    glc_clear(la);
    glc_clear(lb);
    glc_clear(lc);
    glc_add_one(cs, la, b->var);                    /* (b - a) * cond = b - c */
    glc_add(cs, la, a->var, &cs->neg_one);
    glc_add_bool(cs, lb, cond, &FR_ONE);
    glc_add_one(cs, lc, b->var);
    glc_add(cs, lc, c.var, &cs->neg_one);
    gcs_enforce(cs, la, lb, lc);
    return c;
}

/* insertion.rs: insert_2, insert_4 and insert_8 (the hand-made pick networks, in their
 * declaration order); each pick is "cond ? x : y". */
void g_insert(struct gcs *cs, gnum *out, const gnum *cur, const gbool *bits, const gnum *sib,
              unsigned arity)
{
    const gnum *a = cur;
    if (arity == 2) {
        out[0] = g_pick(cs, bits[0], &sib[0], a);
        out[1] = g_pick(cs, bits[0], a, &sib[0]);
        return;
    }
    if (arity == 4) {
        gbool b0 = bits[0], b1 = bits[1];
        const gnum *b = &sib[0], *c = &sib[1], *d = &sib[2];
        gnum p0_x0 = g_pick(cs, b0, b, a);
        out[0] = g_pick(cs, b1, b, &p0_x0);
        gnum p1_x0 = g_pick(cs, b0, a, b);
        out[1] = g_pick(cs, b1, c, &p1_x0);
        gnum p2_x1 = g_pick(cs, b0, d, a);
        out[2] = g_pick(cs, b1, &p2_x1, c);
        gnum p3_x1 = g_pick(cs, b0, a, d);
        out[3] = g_pick(cs, b1, &p3_x1, d);
        return;
    }
    if (arity != 8) {
        gcs_fail(cs, CUZK_E_UNSUPPORTED, "insert: arity %u", arity);
        return;
    }
    gbool b0 = bits[0], b1 = bits[1], b2 = bits[2];
    const gnum *b = &sib[0], *c = &sib[1], *d = &sib[2], *e = &sib[3], *f = &sib[4],
               *g = &sib[5], *h = &sib[6];
    gbool nor01 = gb_alloc_nor(cs, b0, b1);
    gbool and01 = gb_alloc_and(cs, b0, b1);
    gnum t, u;
    t = g_pick(cs, nor01, a, b);            out[0] = g_pick(cs, b2, b, &t);
    t = g_pick(cs, b0, a, b);
    u = g_pick(cs, b1, c, &t);              out[1] = g_pick(cs, b2, c, &u);
    t = g_pick(cs, b0, d, a);
    u = g_pick(cs, b1, &t, c);              out[2] = g_pick(cs, b2, d, &u);
    t = g_pick(cs, and01, a, d);            out[3] = g_pick(cs, b2, e, &t);
    t = g_pick(cs, nor01, a, f);            out[4] = g_pick(cs, b2, &t, e);
    t = g_pick(cs, b0, a, f);
    u = g_pick(cs, b1, g, &t);              out[5] = g_pick(cs, b2, &u, f);
    t = g_pick(cs, b0, h, a);
    u = g_pick(cs, b1, &t, g);              out[6] = g_pick(cs, b2, &u, g);
    t = g_pick(cs, and01, a, h);            out[7] = g_pick(cs, b2, &t, h);
}

static unsigned log2u(unsigned a) { unsigned k = 0; while ((1u << k) < a) k++; return k; }

void porep_por(struct gcs *cs, const unsigned *arity, unsigned levels, const gnum *leaf,
               const gnum *root, const struct porep_path *path, bool sha_tree)
{
    gbool bits[POREP_MAX_LEVELS * 3];
    unsigned nbits = 0;
    size_t sib_off = 0;
    gnum cur = *leaf;
    struct cuzk_error err;
    for (unsigned l = 0; l < levels; l++) {
        unsigned a = arity[l], k = log2u(a);
        uint32_t idx = path ? path->index[l] : 0;
        gbool *lb = &bits[nbits];
        for (unsigned i = 0; i < k; i++) bits[nbits++] = gb_alloc(cs, (idx >> i) & 1u);
        gnum sib[7], ins[8];
        for (unsigned i = 0; i + 1 < a; i++)
            sib[i] = gnum_alloc(cs, path ? &path->siblings[sib_off + i] : &FR_ZERO);
        sib_off += a - 1;
        g_insert(cs, ins, &cur, lb, sib, a);
        if (sha_tree) {
            cur = g_sha256_node(cs, &ins[0], &ins[1]);
        } else {
            const struct poseidon_consts *pc = poseidon_consts_get(a, &err);
            if (!pc) {
                gcs_fail(cs, err.code, "%s", err.msg);
                return;
            }
            cur = g_poseidon(cs, pc, ins);
        }
    }
    g_pack_into_inputs(cs, bits, nbits);
    gnum_enforce_equal(cs, &cur, root);              /* computed * ONE = root */
}

gnum porep_create_label(struct gcs *cs, const gbool replica_id[256], const gbool *const parents[37],
                        uint32_t layer, const gbool node_le[64])
{
    /* replica_id (32 bytes) | layer u32 BE | node u64 BE | zero pad to 64 bytes | 37 parents */
    enum { NBITS = 39 * 256 };
    gbool *msg = cuzk_malloc(NBITS * sizeof *msg);
    gnum out = {0, FR_ZERO};
    if (!msg) {
        gcs_fail(cs, CUZK_E_NOMEM, "create_label: preimage");
        return out;
    }
    memcpy(msg, replica_id, 256 * sizeof *msg);
    for (int i = 0; i < 32; i++) msg[256 + i] = gb_const((layer >> (31 - i)) & 1u);
    for (int i = 0; i < 64; i++) msg[288 + i] = node_le[63 - i];
    for (int i = 352; i < 512; i++) msg[i] = gb_const(false);
    for (int p = 0; p < 37; p++) memcpy(&msg[512 + 256 * p], parents[p], 256 * sizeof *msg);
    gbool dig[256], rev[256];
    g_sha256(cs, dig, msg, NBITS);
    cuzk_free(msg);
    for (int i = 0; i < 256; i++) rev[i] = dig[(i & ~7) + 7 - (i & 7)];
    return g_pack_bits(cs, rev, 254);
}

/* --------------------------------------------------------------- partition -- */

static unsigned tree_rc_arities(const struct porep_config *c, unsigned *ar)
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->base_levels; i++) ar[n++] = c->base_arity;
    if (c->sub_arity) ar[n++] = c->sub_arity;
    if (c->top_arity) ar[n++] = c->top_arity;
    return n;
}

/* hash_single_column: Poseidon with arity = number of layers (2 or 11). */
static gnum column_hash(struct gcs *cs, const gnum *rows, unsigned layers)
{
    struct cuzk_error err;
    const struct poseidon_consts *pc = poseidon_consts_get(layers, &err);
    if (!pc) {
        gcs_fail(cs, err.code, "%s", err.msg);
        return rows[0];
    }
    return g_poseidon(cs, pc, rows);
}

static void synth_challenge(struct gcs *cs, const struct porep_config *c,
                            const struct porep_challenge *w, const gnum *comm_d,
                            const gnum *comm_c, const gnum *comm_r_last,
                            const gbool replica_bits[256])
{
    unsigned L = c->layers, ard[POREP_MAX_LEVELS], arc[POREP_MAX_LEVELS];
    for (unsigned i = 0; i < c->tree_d_depth; i++) ard[i] = 2;
    unsigned nrc = tree_rc_arities(c, arc);

    gnum data_leaf = gnum_alloc(cs, w ? &w->data_leaf : &FR_ZERO);
    porep_por(cs, ard, c->tree_d_depth, &data_leaf, comm_d, w ? &w->comm_d_path : NULL, true);

    /* DRG parents, then expander parents: rows, column hash, inclusion in tree C. */
    gnum cols[POREP_DRG_PARENTS + POREP_EXP_PARENTS][POREP_MAX_LAYERS];
    for (unsigned p = 0; p < POREP_DRG_PARENTS + POREP_EXP_PARENTS; p++) {
        const struct porep_column *col = !w ? NULL
            : p < POREP_DRG_PARENTS ? &w->drg[p] : &w->exp[p - POREP_DRG_PARENTS];
        for (unsigned r = 0; r < L; r++) cols[p][r] = gnum_alloc(cs, col ? &col->rows[r] : &FR_ZERO);
        gnum h = column_hash(cs, cols[p], L);
        porep_por(cs, arc, nrc, &h, comm_c, col ? &col->path : NULL, false);
    }

    gbool node[64];
    gb_alloc_u64_le(cs, node, w ? w->node : 0);
    g_pack_into_inputs(cs, node, 64);

    gbool (*pbits)[256] = cuzk_malloc(14 * sizeof *pbits);
    if (!pbits) {
        gcs_fail(cs, CUZK_E_NOMEM, "porep: parent bits");
        return;
    }
    gnum labels[POREP_MAX_LAYERS];
    for (unsigned layer = 1; layer <= L; layer++) {
        unsigned np = 0;
        for (unsigned p = 0; p < POREP_DRG_PARENTS; p++)
            gnum_to_bits_byte_reversed(cs, pbits[np++], &cols[p][layer - 1]);
        if (layer > 1)
            for (unsigned p = 0; p < POREP_EXP_PARENTS; p++)
                gnum_to_bits_byte_reversed(cs, pbits[np++], &cols[POREP_DRG_PARENTS + p][layer - 2]);
        /* 37 parents: layer 1 repeats the 6 DRG parents 6 times then p0; later layers list
         * the 14 twice then the first 9. The same bits are reused, none reallocated. */
        const gbool *par[37];
        unsigned k = 0;
        if (layer == 1) {
            for (unsigned rep = 0; rep < 6; rep++)
                for (unsigned p = 0; p < 6; p++) par[k++] = pbits[p];
            par[k++] = pbits[0];
        } else {
            for (unsigned rep = 0; rep < 2; rep++)
                for (unsigned p = 0; p < 14; p++) par[k++] = pbits[p];
            for (unsigned p = 0; p < 9; p++) par[k++] = pbits[p];
        }
        labels[layer - 1] = porep_create_label(cs, replica_bits, par, layer, node);
    }
    cuzk_free(pbits);

    gnum encoded = gnum_add(cs, &labels[L - 1], &data_leaf);     /* encode: key + value */
    porep_por(cs, arc, nrc, &encoded, comm_r_last, w ? &w->comm_r_last_path : NULL, false);
    gnum ch = column_hash(cs, labels, L);
    porep_por(cs, arc, nrc, &ch, comm_c, w ? &w->comm_c_path : NULL, false);
}

/* What every challenge shares: the header's variables (their values matter in values mode;
 * their handles in shape mode). */
struct head {
    gnum comm_d, comm_c, comm_r_last;
    gbool replica_bits[256];
};

/* proof.rs before the challenge loop: replica_id, comm_d, comm_r (each inputized),
 * comm_r_last, comm_c, then comm_r = H(comm_c, comm_r_last). */
static void synth_head(struct gcs *cs, struct head *h, const struct porep_witness *w)
{
    struct cuzk_error err;
    gnum replica_id = gnum_alloc(cs, w ? &w->replica_id : &FR_ZERO);
    gnum_inputize(cs, &replica_id);
    gnum_to_bits_byte_reversed(cs, h->replica_bits, &replica_id);

    h->comm_d = gnum_alloc(cs, w ? &w->comm_d : &FR_ZERO);
    gnum_inputize(cs, &h->comm_d);
    gnum comm_r = gnum_alloc(cs, w ? &w->comm_r : &FR_ZERO);
    gnum_inputize(cs, &comm_r);
    h->comm_r_last = gnum_alloc(cs, w ? &w->comm_r_last : &FR_ZERO);
    h->comm_c = gnum_alloc(cs, w ? &w->comm_c : &FR_ZERO);

    const struct poseidon_consts *p2 = poseidon_consts_get(2, &err);
    if (!p2) {
        gcs_fail(cs, err.code, "%s", err.msg);
        return;
    }
    gnum pre[2] = {h->comm_c, h->comm_r_last};
    gnum hc = g_poseidon(cs, p2, pre);
    gnum_enforce_equal(cs, &comm_r, &hc);             /* comm_r * ONE = H(comm_c, comm_r_last) */
}

void porep_synthesize(struct gcs *cs, const struct porep_config *c, const struct porep_witness *w)
{
    struct head h;
    synth_head(cs, &h, w);
    for (unsigned i = 0; i < c->challenges && !cs->status; i++)
        synth_challenge(cs, c, w ? &w->ch[i] : NULL, &h.comm_d, &h.comm_c, &h.comm_r_last,
                        h.replica_bits);
}

/* ---------------------------------------------------- parallel witness -- */

/* Layouts are counted once per sector size and kept for the process (a few KB). */
static struct {
    pthread_mutex_t lock;
    bool done[8];
    struct porep_layout l[8];
} g_layouts = {PTHREAD_MUTEX_INITIALIZER, {false}, {{0}}};

static int layout_slot(uint64_t sector_size)
{
    switch (sector_size) {
    case 2048ull: return 0;
    case 8ull << 20: return 1;
    case 512ull << 20: return 2;
    case 32ull << 30: return 3;
    case 64ull << 30: return 4;
    default: return -1;
    }
}

/* Count the header and one blank challenge. Every challenge is the same sub-circuit (its
 * control flow depends only on the config, never on values or on its index), so challenge
 * i starts at head + i * per-challenge counts. */
static int layout_count(struct porep_layout *l, const struct porep_config *c, struct cuzk_error *err)
{
    struct gcs cs;
    int rc = gcs_init(&cs, 0, NULL, err);
    if (rc) return rc;
    struct head h;
    synth_head(&cs, &h, NULL);
    l->head_aux = cs.n_aux;
    l->head_inputs = cs.n_inputs;
    l->head_constraints = cs.n_constraints;
    if (!cs.status)
        synth_challenge(&cs, c, NULL, &h.comm_d, &h.comm_c, &h.comm_r_last, h.replica_bits);
    l->ch_aux = cs.n_aux - l->head_aux;
    l->ch_inputs = cs.n_inputs - l->head_inputs;
    l->ch_constraints = cs.n_constraints - l->head_constraints;
    l->challenges = c->challenges;
    rc = gcs_status(&cs, err);
    gcs_free(&cs);
    if (rc) return rc;
    uint64_t na = l->head_aux + (uint64_t)l->ch_aux * c->challenges;
    uint64_t ni = l->head_inputs + (uint64_t)l->ch_inputs * c->challenges;
    if (na >= 0x7fffffffu || ni >= 0x7fffffffu || c->challenges > POREP_MAX_CHALLENGES)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "porep: layout of %llu aux, %llu inputs, %u challenges",
                         (unsigned long long)na, (unsigned long long)ni, c->challenges);
    l->n_aux = (uint32_t)na;
    l->n_inputs = (uint32_t)ni;
    l->n_constraints = l->head_constraints + l->ch_constraints * c->challenges;
    return CUZK_OK;
}

int porep_layout_get(struct porep_layout *out, const struct porep_config *c, struct cuzk_error *err)
{
    int slot = layout_slot(c->sector_size);
    struct porep_config r;
    /* only the canonical configs are cached (a hand-made config is counted each time) */
    if (slot >= 0 && !porep_config_for_size(&r, c->sector_size, NULL) && r.nodes_log2 == c->nodes_log2 &&
        r.layers == c->layers && r.challenges == c->challenges && r.tree_d_depth == c->tree_d_depth &&
        r.base_arity == c->base_arity && r.base_levels == c->base_levels && r.sub_arity == c->sub_arity &&
        r.top_arity == c->top_arity) {
        pthread_mutex_lock(&g_layouts.lock);
        int rc = CUZK_OK;
        if (!g_layouts.done[slot]) {
            rc = layout_count(&g_layouts.l[slot], c, err);
            g_layouts.done[slot] = rc == CUZK_OK;
        }
        if (!rc) *out = g_layouts.l[slot];
        pthread_mutex_unlock(&g_layouts.lock);
        return rc;
    }
    return layout_count(out, c, err);
}

/* A values-mode context that writes into the caller's vectors at [aux_at, aux_end) and
 * [inp_at, inp_end), numbering variables globally exactly as the sequential run does. The
 * caps equal the slice ends; the gadgets' contract (counters advance identically in every
 * mode, checked by tests) keeps the run inside its slice, and the end is checked after. */
static int slice_init(struct gcs *cs, fr_t *aux, fr_t *inputs, uint32_t aux_at, uint32_t aux_end,
                      uint32_t inp_at, uint32_t inp_end, struct cuzk_error *err)
{
    int rc = gcs_init(cs, GCS_VALUES, NULL, err);
    if (rc) return rc;
    cuzk_free(cs->inputs);
    cs->inputs = inputs;
    cs->inp_cap = inp_end;
    cs->n_inputs = inp_at;
    cs->aux = aux;
    cs->aux_cap = aux_end;
    cs->n_aux = aux_at;
    return CUZK_OK;
}

/* Detach the borrowed vectors, check the run ended where the layout says, free. */
static int slice_finish(struct gcs *cs, uint32_t aux_end, uint32_t inp_end, const char *what,
                        unsigned idx, struct cuzk_error *err)
{
    cs->aux = cs->inputs = NULL;
    cs->aux_cap = cs->inp_cap = 0;
    if (!cs->status && (cs->n_aux != aux_end || cs->n_inputs != inp_end))
        gcs_fail(cs, CUZK_E_INTERNAL, "porep: %s %u ended at aux %u, input %u (layout: %u, %u)", what,
                 idx, cs->n_aux, cs->n_inputs, aux_end, inp_end);
    int rc = gcs_status(cs, err);
    gcs_free(cs);
    return rc;
}

struct par_ctx {
    fr_t *aux, *inputs;
    const struct porep_config *c;
    const struct porep_witness *w;
    const struct porep_layout *l;
    const struct head *h;
    int rc[POREP_MAX_CHALLENGES];
    struct cuzk_error err[POREP_MAX_CHALLENGES];
};

static void par_challenges(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct par_ctx *x = ctx;
    const struct porep_layout *l = x->l;
    for (size_t i = begin; i < end; i++) {
        uint32_t a0 = l->head_aux + (uint32_t)i * l->ch_aux, i0 = l->head_inputs + (uint32_t)i * l->ch_inputs;
        struct gcs cs;
        x->rc[i] = slice_init(&cs, x->aux, x->inputs, a0, a0 + l->ch_aux, i0, i0 + l->ch_inputs, &x->err[i]);
        if (x->rc[i]) continue;
        synth_challenge(&cs, x->c, &x->w->ch[i], &x->h->comm_d, &x->h->comm_c, &x->h->comm_r_last,
                        x->h->replica_bits);
        x->rc[i] = slice_finish(&cs, a0 + l->ch_aux, i0 + l->ch_inputs, "challenge", (unsigned)i, &x->err[i]);
    }
}

int porep_witness_values(fr_t *inputs, fr_t *aux, const struct porep_config *c,
                         const struct porep_witness *w, struct pool *pool, struct cuzk_error *err)
{
    struct porep_layout l;
    if (!w || !w->ch || !inputs || !aux)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "porep_witness_values: no %s",
                         !w || !w->ch ? "witness" : "output vectors");
    int rc = porep_layout_get(&l, c, err);
    if (rc) return rc;
    struct par_ctx *x = cuzk_calloc(1, sizeof *x);
    if (!x) return cuzk_fail(err, CUZK_E_NOMEM, "porep_witness_values: context");
    /* header first (its values are shared by every challenge), in the caller's thread */
    struct gcs cs;
    struct head h;
    inputs[0] = FR_ONE;
    rc = slice_init(&cs, aux, inputs, 0, l.head_aux, 1, l.head_inputs, err);
    if (!rc) {
        synth_head(&cs, &h, w);
        rc = slice_finish(&cs, l.head_aux, l.head_inputs, "header", 0, err);
    }
    if (!rc) {
        *x = (struct par_ctx){.aux = aux, .inputs = inputs, .c = c, .w = w, .l = &l, .h = &h};
        if (pool) pool_parallel_for(pool, c->challenges, 1, par_challenges, x);
        else par_challenges(x, 0, c->challenges, 0);
        for (unsigned i = 0; i < c->challenges && !rc; i++)
            if ((rc = x->rc[i]) && err) *err = x->err[i];
    }
    cuzk_free(x);
    return rc;
}

/* ------------------------------------------------------------ parallel shape -- */

/* Head synthesis writes h; every challenge then only reads it (segments run concurrently). */
static void head_synth(struct gcs *cs, void *h) { synth_head(cs, h, NULL); }

struct porep_shape_ctx {
    const struct porep_config *c;
    const struct head *h;       /* the header's variables, read by every challenge */
};
static void challenge_synth(struct gcs *cs, void *ctx)
{
    const struct porep_shape_ctx *x = ctx;
    synth_challenge(cs, x->c, NULL, &x->h->comm_d, &x->h->comm_c, &x->h->comm_r_last, x->h->replica_bits);
}

/* Challenge i into its segment builder, numbered from the segment's first global handles. */
static int porep_shape_challenge(void *ctx, size_t i, struct g16_builder *sb, struct cuzk_error *err)
{
    (void)i;
    return gcs_record(sb, challenge_synth, ctx, err);
}

int porep_shape(struct g16_builder *b, const struct porep_config *c, struct pool *pool, struct cuzk_error *err)
{
    if (!b || !c) return cuzk_fail(err, CUZK_E_INVALID_ARG, "porep_shape: NULL argument");
    struct porep_layout l;
    int rc = porep_layout_get(&l, c, err);
    if (rc) return rc;
    /* the header into b itself (the prefix every challenge references) */
    struct head h;
    if ((rc = gcs_record(b, head_synth, &h, err))) return rc;
    struct porep_shape_ctx x = {.c = c, .h = &h};
    return g16_builder_segments(b, c->challenges, l.ch_inputs, l.ch_aux, porep_shape_challenge, &x, pool, err);
}
