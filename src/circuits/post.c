/* post.c: the FallbackPoSt circuit (storage-proofs-post fallback/circuit.rs: Sector::synthesize
 * and synthesize_default; storage-proofs-core gadgets/por.rs PoRCircuit with a private root),
 * in upstream's allocation and constraint order. The extendable (parallel sub-CS) path of
 * upstream produces the same system as sequential synthesis, which is what is done here. */
#include <string.h>

#include "cuzk/post.h"
#include "cuzk/util.h"

/* ------------------------------------------------------------------ sizes -- */

int post_config_for_size(struct post_config *c, enum post_kind kind, uint64_t sector_size,
                         struct cuzk_error *err)
{
    memset(c, 0, sizeof *c);
    if (kind != POST_WINDOW && kind != POST_WINNING)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "post: unknown kind %d", (int)kind);
    struct porep_config t;       /* tree R has the PoRep tree-R shape */
    if (porep_config_for_size(&t, sector_size, NULL))
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "post: sector size %llu is not a PoSt size "
                         "(2KiB, 8MiB, 512MiB, 32GiB or 64GiB)", (unsigned long long)sector_size);
    c->kind = kind;
    c->sector_size = sector_size;
    c->nodes_log2 = t.nodes_log2;
    c->base_arity = t.base_arity;
    c->base_levels = t.base_levels;
    c->sub_arity = t.sub_arity;
    c->top_arity = t.top_arity;
    if (kind == POST_WINNING) {
        /* PoStConfig {challenge_count 66, sector_count 1} -> 66 sectors of 1 challenge */
        c->sectors = 66;
        c->challenges = 1;
    } else {
        /* filecoin-proofs constants.rs WINDOW_POST_SECTOR_COUNT, WINDOW_POST_CHALLENGE_COUNT */
        c->sectors = sector_size == (32ull << 30) ? 2349 : sector_size == (64ull << 30) ? 2300 : 2;
        c->challenges = 10;
    }
    return CUZK_OK;
}

int post_parse_kind(enum post_kind *out, const char *s, struct cuzk_error *err)
{
    if (s && (!strcmp(s, "window-post") || !strcmp(s, "window"))) {
        *out = POST_WINDOW;
        return CUZK_OK;
    }
    if (s && (!strcmp(s, "winning-post") || !strcmp(s, "winning"))) {
        *out = POST_WINNING;
        return CUZK_OK;
    }
    return cuzk_fail(err, CUZK_E_INVALID_ARG, "post: kind \"%s\" (expected window-post or winning-post)",
                     s ? s : "(null)");
}

const char *post_kind_name(enum post_kind k)
{
    return k == POST_WINDOW ? "window-post" : k == POST_WINNING ? "winning-post" : "unknown";
}

unsigned post_tree_arities(const struct post_config *c, unsigned arity[POREP_MAX_LEVELS])
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->base_levels && n < POREP_MAX_LEVELS; i++) arity[n++] = c->base_arity;
    if (c->sub_arity && n < POREP_MAX_LEVELS) arity[n++] = c->sub_arity;
    if (c->top_arity && n < POREP_MAX_LEVELS) arity[n++] = c->top_arity;
    return n;
}

/* ------------------------------------------------------------- validation -- */

static bool arity_ok(unsigned a) { return a == 2 || a == 4 || a == 8; }

/* The config is usable by the gadgets (a hand-made one may not be). */
static int check_config(const struct post_config *c, struct cuzk_error *err)
{
    if (!c->sectors || !c->challenges)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "post: %u sectors of %u challenges", c->sectors,
                         c->challenges);
    if (!arity_ok(c->base_arity) || (c->sub_arity && !arity_ok(c->sub_arity)) ||
        (c->top_arity && !arity_ok(c->top_arity)) || (c->top_arity && !c->sub_arity))
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "post: tree arities %u-%u-%u", c->base_arity,
                         c->sub_arity, c->top_arity);
    unsigned levels = c->base_levels + !!c->sub_arity + !!c->top_arity;
    if (!levels || levels > POREP_MAX_LEVELS)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "post: %u tree levels (1..%d)", levels, POREP_MAX_LEVELS);
    uint64_t inputs = 1 + (uint64_t)c->sectors * (1 + c->challenges);
    if (inputs >= 0x7fffffffu)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "post: %llu public inputs", (unsigned long long)inputs);
    return CUZK_OK;
}

static int check_witness(const struct post_config *c, const struct post_witness *w,
                         struct cuzk_error *err)
{
    if (!w->sectors) return cuzk_fail(err, CUZK_E_INVALID_ARG, "post: witness without sectors");
    unsigned ar[POREP_MAX_LEVELS], n = post_tree_arities(c, ar);
    for (unsigned s = 0; s < c->sectors; s++) {
        const struct post_sector *sec = &w->sectors[s];
        if (!sec->leaves || !sec->paths)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "post: sector %u has no %s", s,
                             !sec->leaves ? "leaves" : "paths");
        for (unsigned i = 0; i < c->challenges; i++) {
            const struct porep_path *p = &sec->paths[i];
            if (!p->index || !p->siblings)
                return cuzk_fail(err, CUZK_E_INVALID_ARG, "post: sector %u challenge %u: path without %s",
                                 s, i, !p->index ? "indices" : "siblings");
            for (unsigned l = 0; l < n; l++)
                if (p->index[l] >= ar[l])
                    return cuzk_fail(err, CUZK_E_INVALID_ARG,
                                     "post: sector %u challenge %u: level %u index %u is not below its arity %u",
                                     s, i, l, p->index[l], ar[l]);
        }
    }
    return CUZK_OK;
}

/* ---------------------------------------------------------------- circuit -- */

/* Sector::synthesize. */
static void synth_sector(struct gcs *cs, const struct post_config *c, const unsigned *ar,
                         unsigned levels, const struct poseidon_consts *p2,
                         const struct post_sector *w)
{
    gnum comm_r_last = gnum_alloc(cs, w ? &w->comm_r_last : &FR_ZERO);
    gnum comm_c = gnum_alloc(cs, w ? &w->comm_c : &FR_ZERO);
    gnum comm_r = gnum_alloc(cs, w ? &w->comm_r : &FR_ZERO);
    gnum_inputize(cs, &comm_r);
    gnum pre[2] = {comm_c, comm_r_last};
    gnum h = g_poseidon(cs, p2, pre);
    gnum_enforce_equal(cs, &comm_r, &h);            /* comm_r * ONE = H(comm_c, comm_r_last) */
    for (unsigned i = 0; i < c->challenges && !cs->status; i++) {
        gnum leaf = gnum_alloc(cs, w ? &w->leaves[i] : &FR_ZERO);
        /* index bits packed into one input; computed root * ONE = comm_r_last */
        porep_por(cs, ar, levels, &leaf, &comm_r_last, w ? &w->paths[i] : NULL, false);
    }
}

void post_synthesize(struct gcs *cs, const struct post_config *c, const struct post_witness *w)
{
    struct cuzk_error err;
    if (cs->status) return;
    if (check_config(c, &err) || (w && check_witness(c, w, &err))) {
        gcs_fail(cs, err.code, "%s", err.msg);
        return;
    }
    const struct poseidon_consts *p2 = poseidon_consts_get(2, &err);
    if (!p2) {
        gcs_fail(cs, err.code, "%s", err.msg);
        return;
    }
    unsigned ar[POREP_MAX_LEVELS], levels = post_tree_arities(c, ar);
    for (unsigned s = 0; s < c->sectors && !cs->status; s++)
        synth_sector(cs, c, ar, levels, p2, w ? &w->sectors[s] : NULL);
}

int post_counts(struct post_counts *out, const struct post_config *c, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_config(c, err);
    if (rc) return rc;
    /* Every sector is the same sub-circuit: count one and multiply. */
    struct post_config one = *c;
    one.sectors = 1;
    struct gcs cs;
    rc = gcs_init(&cs, 0, NULL, err);
    if (rc) return rc;
    post_synthesize(&cs, &one, NULL);
    rc = gcs_status(&cs, err);
    uint64_t k = c->sectors;
    uint64_t aux = (uint64_t)cs.n_aux * k, inputs = 1 + (uint64_t)(cs.n_inputs - 1) * k;
    out->n_constraints = cs.n_constraints * k;
    gcs_free(&cs);
    if (rc) return rc;
    if (aux >= 0x7fffffffu || inputs >= 0x7fffffffu)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "post: %llu aux, %llu inputs",
                         (unsigned long long)aux, (unsigned long long)inputs);
    out->n_aux = (uint32_t)aux;
    out->n_inputs = (uint32_t)inputs;
    return CUZK_OK;
}

int post_public_inputs(fr_t *out, const struct post_config *c, const fr_t *comm_r,
                       const uint64_t *leaf, struct cuzk_error *err)
{
    int rc = check_config(c, err);
    if (rc) return rc;
    if (!out || !comm_r || !leaf)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "post_public_inputs: no %s",
                         !out ? "output" : !comm_r ? "comm_r" : "leaf indices");
    unsigned lg = 0, ar[POREP_MAX_LEVELS], n = post_tree_arities(c, ar);
    for (unsigned l = 0; l < n; l++)
        for (unsigned a = ar[l]; a > 1; a >>= 1) lg++;
    size_t k = 0;
    out[k++] = FR_ONE;
    for (unsigned s = 0; s < c->sectors; s++) {
        out[k++] = comm_r[s];
        for (unsigned i = 0; i < c->challenges; i++) {
            uint64_t v = leaf[(size_t)s * c->challenges + i];
            if (lg < 64 && v >> lg)
                return cuzk_fail(err, CUZK_E_INVALID_ARG,
                                 "post_public_inputs: sector %u challenge %u: leaf %llu is not below 2^%u",
                                 s, i, (unsigned long long)v, lg);
            fr_from_u64(&out[k++], v);
        }
    }
    return CUZK_OK;
}

/* ------------------------------------------------------- parallel witness -- */

int post_layout_get(struct post_layout *out, const struct post_config *c, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    struct post_config one = *c;
    one.sectors = 1;
    struct post_counts n;
    int rc = post_counts(&n, &one, err);
    if (rc) return rc;
    uint64_t aux = (uint64_t)n.n_aux * c->sectors, in = 1 + (uint64_t)(n.n_inputs - 1) * c->sectors;
    if (aux >= 0x7fffffffu || in >= 0x7fffffffu)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "post: %llu aux, %llu inputs", (unsigned long long)aux,
                         (unsigned long long)in);
    out->sector_aux = n.n_aux;
    out->sector_inputs = n.n_inputs - 1;
    out->n_aux = (uint32_t)aux;
    out->n_inputs = (uint32_t)in;
    return CUZK_OK;
}

struct post_par {
    fr_t *inputs, *aux;
    const struct post_config *c;
    const struct post_witness *w;
    const struct post_layout *l;
    const struct poseidon_consts *p2;
    unsigned ar[POREP_MAX_LEVELS], levels;
    int *rc;                        /* per sector */
    struct cuzk_error *err;         /* the first failing sector's message (under the rc slot) */
};

static void par_sectors(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct post_par *x = ctx;
    for (size_t s = begin; s < end; s++) {
        uint32_t a0 = (uint32_t)s * x->l->sector_aux, i0 = 1 + (uint32_t)s * x->l->sector_inputs;
        struct gcs cs;
        struct cuzk_error e;
        int rc = gcs_init(&cs, GCS_VALUES, NULL, &e);
        if (!rc) {
            /* a values context writing into the caller's vectors at this sector's offsets */
            cuzk_free(cs.inputs);
            cs.inputs = x->inputs;
            cs.inp_cap = i0 + x->l->sector_inputs;
            cs.n_inputs = i0;
            cs.aux = x->aux;
            cs.aux_cap = a0 + x->l->sector_aux;
            cs.n_aux = a0;
            synth_sector(&cs, x->c, x->ar, x->levels, x->p2, &x->w->sectors[s]);
            if (!cs.status && (cs.n_aux != cs.aux_cap || cs.n_inputs != cs.inp_cap))
                gcs_fail(&cs, CUZK_E_INTERNAL, "post: sector %zu ended at aux %u, input %u (layout %zu, %zu)", s,
                         cs.n_aux, cs.n_inputs, cs.aux_cap, cs.inp_cap);
            cs.aux = cs.inputs = NULL;
            rc = gcs_status(&cs, &e);
            gcs_free(&cs);
        }
        x->rc[s] = rc;
        if (rc) x->err[s] = e;
    }
}

int post_witness_values(fr_t *inputs, fr_t *aux, const struct post_config *c, const struct post_witness *w,
                        struct pool *pool, struct cuzk_error *err)
{
    if (!inputs || !aux || !c || !w) return cuzk_fail(err, CUZK_E_INVALID_ARG, "post_witness_values: NULL argument");
    int rc = check_config(c, err);
    if (!rc) rc = check_witness(c, w, err);
    struct post_layout l;
    if (!rc) rc = post_layout_get(&l, c, err);
    if (rc) return rc;
    struct post_par x = {.inputs = inputs, .aux = aux, .c = c, .w = w, .l = &l};
    x.p2 = poseidon_consts_get(2, err);
    if (!x.p2) return err ? err->code : CUZK_E_INTERNAL;
    x.levels = post_tree_arities(c, x.ar);
    x.rc = cuzk_calloc(c->sectors, sizeof *x.rc);
    x.err = cuzk_calloc(c->sectors, sizeof *x.err);
    if (!x.rc || !x.err) {
        cuzk_free(x.rc);
        cuzk_free(x.err);
        return cuzk_fail(err, CUZK_E_NOMEM, "post_witness_values: %u sectors", c->sectors);
    }
    inputs[0] = FR_ONE;
    /* grain 4: a sector is ~50k constraints at 32 GiB, so chunks stay small next to 2349 */
    if (pool) pool_parallel_for(pool, c->sectors, 4, par_sectors, &x);
    else par_sectors(&x, 0, c->sectors, 0);
    for (unsigned s = 0; s < c->sectors && !rc; s++)
        if ((rc = x.rc[s]) && err) *err = x.err[s];
    cuzk_free(x.rc);
    cuzk_free(x.err);
    return rc;
}

/* ------------------------------------------------------------ parallel shape -- */

struct post_shape_ctx {
    const struct post_config *c;
    const struct poseidon_consts *p2;
    unsigned ar[POREP_MAX_LEVELS], levels;
};

/* Sector s into its segment builder: a shape context numbering from the segment's first
 * global handles, so the sector's rows carry the handles the sequential run gives them. */
static void sector_synth(struct gcs *cs, void *arg)
{
    const struct post_shape_ctx *x = arg;
    synth_sector(cs, x->c, x->ar, x->levels, x->p2, NULL);
}
static int post_shape_sector(void *ctx, size_t s, struct g16_builder *sb, struct cuzk_error *err)
{
    (void)s;
    return gcs_record(sb, sector_synth, ctx, err);
}

int post_shape(struct g16_builder *b, const struct post_config *c, struct pool *pool, struct cuzk_error *err)
{
    if (!b || !c) return cuzk_fail(err, CUZK_E_INVALID_ARG, "post_shape: NULL argument");
    struct post_layout l;
    int rc = check_config(c, err);
    if (!rc) rc = post_layout_get(&l, c, err);
    if (rc) return rc;
    struct post_shape_ctx x = {.c = c};
    struct cuzk_error e;
    if (!(x.p2 = poseidon_consts_get(2, &e))) return cuzk_fail(err, e.code, "%s", e.msg);
    x.levels = post_tree_arities(c, x.ar);
    /* no prefix: the sectors follow ONE */
    return g16_builder_segments(b, c->sectors, l.sector_inputs, l.sector_aux, post_shape_sector, &x, pool, err);
}
