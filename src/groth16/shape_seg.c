/* shape_seg.c: g16_builder_segments, repeated sub-circuits recorded in parallel. Each segment
 * is recorded by the caller's function into a segment builder of its own (global variable
 * handles, local rows and coefficient table); after each wave of segments the tables are
 * merged into the main builder in segment order and the rows copied into place, so the main
 * builder ends exactly as if the segments had been recorded into it one after another. */
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/util.h"
#include "shape_internal.h"

/* Segments per thread in a wave: more than one per thread so the pool balances them and the
 * serial merge between waves is paid less often (many small segments: 2349 WindowPoSt
 * sectors); a wave's segment matrices are kept under WAVE_BYTES though, unless one per thread
 * already exceeds it (a 32 GiB PoRep challenge records ~0.4 GB), since they are held in
 * memory until the wave is merged. */
#define WAVE_PER_THREAD 4
#define WAVE_BYTES (1ull << 30)

struct seg_run {
    struct g16_builder *b;
    g16_segment_fn fn;
    void *ctx;
    uint32_t pre_in, pre_aux;       /* b's counts at the call: the prefix */
    uint32_t seg_inputs, seg_aux;
    size_t first;                   /* segment recorded in slot 0 of this wave */
    /* per wave slot (a slot's builder and map are reused from wave to wave) */
    struct g16_builder **sb;
    int *rc;
    struct cuzk_error *err;
    uint16_t **map;                 /* local coefficient index -> b's */
    bool *ident;                    /* map is the identity: copy the indices as they are */
    uint64_t *row0;                 /* b's row of the segment's first row */
    uint64_t (*nnz0)[3];            /* b's nonzero index of its first nonzero, per matrix */
};

static void seg_reset(struct g16_builder *sb, const struct seg_run *x, size_t s)
{
    sb->seg_index = s;
    sb->pre_inputs = x->pre_in;
    sb->pre_aux = x->pre_aux;
    sb->seg_inputs = x->seg_inputs;
    sb->seg_aux = x->seg_aux;
    /* no overflow: g16_builder_segments checked the final counts */
    sb->seg_in0 = sb->n_inputs = x->pre_in + (uint32_t)s * x->seg_inputs;
    sb->seg_aux0 = sb->n_aux = x->pre_aux + (uint32_t)s * x->seg_aux;
    sb->n_rows = 0;
    for (int m = 0; m < 3; m++) {
        sb->m[m].nnz = 0;
        if (sb->m[m].row_ptr) sb->m[m].row_ptr[0] = 0;
    }
    g16__coeffs_clear(sb);
    cuzk_error_clear(&sb->err);
    sb->a_aux = x->b->a_aux;
    sb->b_inp = x->b->b_inp;
    sb->b_aux = x->b->b_aux;
}

static void seg_record(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct seg_run *x = ctx;
    for (size_t j = begin; j < end; j++) {
        size_t s = x->first + j;
        struct cuzk_error *e = &x->err[j];
        cuzk_error_clear(e);
        if (!x->sb[j]) {
            x->sb[j] = g16__builder_alloc(x->b->count_only);
            if (x->sb[j]) x->sb[j]->segment = true;
        }
        struct g16_builder *sb = x->sb[j];
        if (!sb) {
            x->rc[j] = cuzk_fail(e, CUZK_E_NOMEM, "g16 builder: segment %zu: out of memory", s);
            continue;
        }
        seg_reset(sb, x, s);
        int rc = x->fn(x->ctx, s, sb, e);
        if (sb->err.code) {
            /* the builder's message is the precise one; fn's is then a consequence of it
             * (a gcs only says "sink rejected constraint N") */
            *e = sb->err;
            rc = sb->err.code;
        } else if (rc) {
            if (e->code != rc) cuzk_fail(e, rc, "g16 builder: segment %zu: failed (%s)", s, cuzk_errname(rc));
        } else if (sb->n_inputs - sb->seg_in0 != x->seg_inputs || sb->n_aux - sb->seg_aux0 != x->seg_aux) {
            rc = cuzk_fail(e, CUZK_E_INTERNAL, "g16 builder: segment %zu allocated %u inputs and %u aux "
                           "(expected %u and %u)", s, sb->n_inputs - sb->seg_in0, sb->n_aux - sb->seg_aux0,
                           x->seg_inputs, x->seg_aux);
        }
        x->rc[j] = rc;
    }
}

/* The wave's rows into b, at the places the merge computed. */
static void seg_copy(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct seg_run *x = ctx;
    for (size_t j = begin; j < end; j++) {
        const struct g16_builder *sb = x->sb[j];
        const uint16_t *map = x->map[j];
        for (int m = 0; m < 3; m++) {
            struct g16_mat_build *d = &x->b->m[m];
            const struct g16_mat_build *s = &sb->m[m];
            uint64_t o = x->nnz0[j][m];
            /* columns are already b's tagged handles (finish turns them into columns) */
            memcpy(d->col + o, s->col, s->nnz * sizeof *s->col);
            if (x->ident[j]) {
                memcpy(d->cidx + o, s->cidx, s->nnz * sizeof *s->cidx);
            } else {
                for (uint64_t k = 0; k < s->nnz; k++) d->cidx[o + k] = map[s->cidx[k]];
            }
            uint64_t *rp = d->row_ptr + x->row0[j] + 1;
            for (uint64_t r = 0; r < sb->n_rows; r++) rp[r] = o + s->row_ptr[r + 1];
        }
    }
}

/* Keep err in b (sticky, as g16_enforce does) and report it. */
static int seg_fail(struct g16_builder *b, const struct cuzk_error *e, struct cuzk_error *err)
{
    if (b->err.code == CUZK_OK) b->err = *e;
    return cuzk_fail(err, b->err.code, "%s", b->err.msg);
}

int g16_builder_segments(struct g16_builder *b, size_t n_seg, uint32_t seg_inputs, uint32_t seg_aux,
                         g16_segment_fn fn, void *ctx, struct pool *pool, struct cuzk_error *err)
{
    if (!b || (n_seg && !fn))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "g16_builder_segments: no %s", !b ? "builder" : "segment function");
    if (b->segment)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "g16_builder_segments: called on segment %zu's builder "
                         "(segments do not nest)", b->seg_index);
    if (b->err.code) return cuzk_fail(err, b->err.code, "%s", b->err.msg);
    if (n_seg == 0) return CUZK_OK;
    uint64_t fin_in = b->n_inputs + (uint64_t)n_seg * seg_inputs, fin_aux = b->n_aux + (uint64_t)n_seg * seg_aux;
    if (n_seg > UINT32_MAX || fin_in > G16_VAR_AUX_BIT - 1 || fin_aux > G16_VAR_AUX_BIT - 1)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "g16_builder_segments: %zu segments of %u inputs and %u aux "
                         "exceed 2^31 - 1 variables", n_seg, seg_inputs, seg_aux);

    /* The densities are set in place by the segments: b's bitmaps get their final size now
     * (the aux pair grows in lockstep, as in g16_alloc_aux). */
    size_t cap = b->inp_words, cap2;
    if (!g16__bitmap_reserve(&b->b_inp, &cap, fin_in - 1)) goto oom_early;
    b->inp_words = cap;
    if (fin_aux) {
        cap = cap2 = b->aux_words;
        if (!g16__bitmap_reserve(&b->a_aux, &cap, fin_aux - 1) || !g16__bitmap_reserve(&b->b_aux, &cap2, fin_aux - 1))
            goto oom_early;
        b->aux_words = cap;
    }

    size_t threads = pool ? pool_size(pool) : 1, w_max = WAVE_PER_THREAD * threads;
    if (w_max > n_seg) w_max = n_seg;
    struct seg_run x = {.b = b, .fn = fn, .ctx = ctx, .pre_in = b->n_inputs, .pre_aux = b->n_aux,
                        .seg_inputs = seg_inputs, .seg_aux = seg_aux};
    x.sb = cuzk_calloc(w_max, sizeof *x.sb);
    x.rc = cuzk_calloc(w_max, sizeof *x.rc);
    x.err = cuzk_calloc(w_max, sizeof *x.err);
    x.map = cuzk_calloc(w_max, sizeof *x.map);
    x.ident = cuzk_calloc(w_max, sizeof *x.ident);
    x.row0 = cuzk_calloc(w_max, sizeof *x.row0);
    x.nnz0 = cuzk_calloc(w_max, sizeof *x.nnz0);
    int rc = CUZK_OK;
    struct cuzk_error e;
    if (!x.sb || !x.rc || !x.err || !x.map || !x.ident || !x.row0 || !x.nnz0) {
        rc = cuzk_fail(&e, CUZK_E_NOMEM, "g16 builder: out of memory for %zu segment slots", w_max);
        goto out;
    }

    uint64_t seg_bytes = 0;     /* the largest segment's matrices so far */
    bool reserved = false;
    for (size_t done = 0; done < n_seg;) {
        /* the first wave: one segment per thread, to learn a segment's size */
        size_t w = threads;
        if (done) {
            w = seg_bytes ? (size_t)(WAVE_BYTES / seg_bytes) : w_max;
            if (w < threads) w = threads;
            if (w > w_max) w = w_max;
        }
        if (w > n_seg - done) w = n_seg - done;
        x.first = done;
        pool_parallel_for(pool, w, 1, seg_record, &x);

        /* Serially, in segment order: the first failure wins; coefficient tables merge into
         * b's; each segment's place in b. Merging local tables in order reproduces the
         * sequential table: sequentially a coefficient is numbered where it first appears in
         * row order, and segment i's rows follow all earlier rows, so what segment i adds is
         * its local coefficients absent from b's table, in its local first-appearance order,
         * which is the order this loop appends them in. */
        uint64_t rows = 0, nnz[3] = {0, 0, 0}, max_rows = 0, max_nnz[3] = {0, 0, 0};
        for (size_t j = 0; j < w && !rc; j++) {
            const struct g16_builder *sb = x.sb[j];
            if (x.rc[j]) {
                rc = x.rc[j];
                e = x.err[j];
                break;
            }
            if (!x.map[j] && !(x.map[j] = cuzk_malloc(G16_MAX_COEFFS * sizeof **x.map))) {
                rc = cuzk_fail(&e, CUZK_E_NOMEM, "g16 builder: segment %zu: out of memory", x.first + j);
                break;
            }
            const struct g16_builder *prev = j ? x.sb[j - 1] : NULL;
            if (prev && prev->n_coeffs == sb->n_coeffs &&
                !memcmp(prev->coeffs, sb->coeffs, sb->n_coeffs * sizeof *sb->coeffs)) {
                /* identical sub-circuits usually have identical tables: the same map */
                memcpy(x.map[j], x.map[j - 1], sb->n_coeffs * sizeof **x.map);
                x.ident[j] = x.ident[j - 1];
            } else {
                x.ident[j] = true;
                for (uint32_t k = 0; k < sb->n_coeffs; k++) {
                    long g = g16__coeff_index(b, &sb->coeffs[k]);
                    if (g < 0) {
                        rc = cuzk_fail(&e, CUZK_E_UNSUPPORTED, "g16 builder: more than 65536 distinct coefficients");
                        break;
                    }
                    x.map[j][k] = (uint16_t)g;
                    x.ident[j] &= g == (long)k;
                }
            }
            x.row0[j] = b->n_rows + rows;
            rows += sb->n_rows;
            if (sb->n_rows > max_rows) max_rows = sb->n_rows;
            uint64_t bytes = (sb->n_rows + 1) * 3 * sizeof(uint64_t);
            for (int m = 0; m < 3; m++) {
                x.nnz0[j][m] = b->m[m].nnz + nnz[m];
                nnz[m] += sb->m[m].nnz;
                if (sb->m[m].nnz > max_nnz[m]) max_nnz[m] = sb->m[m].nnz;
                bytes += sb->m[m].nnz * (sizeof(uint32_t) + sizeof(uint16_t));
            }
            if (!b->count_only && bytes > seg_bytes) seg_bytes = bytes;
        }
        if (rc) break;

        if (!b->count_only) {
            uint64_t want_rows = b->n_rows + rows, want_nnz[3];
            for (int m = 0; m < 3; m++) want_nnz[m] = b->m[m].nnz + nnz[m];
            if (!reserved) {
                /* Room for every remaining segment at this wave's largest, plus the input rows
                 * finish appends (one A nonzero each): the multi-GB arrays are allocated once.
                 * A later, larger segment falls back to the doubling growth. */
                uint64_t rest = n_seg - done - w;
                want_rows += rest * max_rows + fin_in;
                for (int m = 0; m < 3; m++) want_nnz[m] += rest * max_nnz[m];
                want_nnz[0] += fin_in;
            }
            for (int m = 0; m < 3 && !rc; m++)
                if (!g16__mat_reserve(&b->m[m], want_rows, want_nnz[m], !reserved))
                    rc = cuzk_fail(&e, CUZK_E_NOMEM, "g16 builder: out of memory growing the matrices to %llu rows",
                                   (unsigned long long)want_rows);
            if (rc) break;
            reserved = true;
            pool_parallel_for(pool, w, 1, seg_copy, &x);
        }
        b->n_rows += rows;
        for (int m = 0; m < 3; m++) b->m[m].nnz += nnz[m];
        done += w;
    }
    if (!rc) {
        b->n_inputs = (uint32_t)fin_in;
        b->n_aux = (uint32_t)fin_aux;
    }
out:
    for (size_t j = 0; x.sb && j < w_max; j++) g16_builder_free(x.sb[j]);
    for (size_t j = 0; x.map && j < w_max; j++) cuzk_free(x.map[j]);
    cuzk_free(x.sb);
    cuzk_free(x.rc);
    cuzk_free(x.err);
    cuzk_free(x.map);
    cuzk_free(x.ident);
    cuzk_free(x.row0);
    cuzk_free(x.nnz0);
    return rc ? seg_fail(b, &e, err) : CUZK_OK;
oom_early:
    cuzk_fail(&e, CUZK_E_NOMEM, "g16 builder: out of memory growing the densities to %llu inputs, %llu aux",
              (unsigned long long)fin_in, (unsigned long long)fin_aux);
    return seg_fail(b, &e, err);
}
