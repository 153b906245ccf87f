/* msm_impl.h: Pippenger multi-scalar multiplication and bitmap sums, written once and
 * included by msm.c for G1 and G2 with PT(name) (prefix), AFF, JAC, XYZZ and the field
 * operations FE, FE_SUB, FE_MUL, FE_SQR, FE_INV, FE_EQ defined.
 * Design (docs/ec.md, "MSM"): scalars leave Montgomery form once; the window width c comes
 * from n (ec_msm_window); signed Booth digits in [-2^(c-1), 2^(c-1)] need only 2^(c-1)
 * buckets per window (a negative digit adds -P: one field negation); windows, and point
 * ranges when there are more threads than windows, are tasks on the pool; each task reduces
 * its buckets with the running sum; the caller combines the window sums by Horner's rule.
 * Bucket accumulation has two forms:
 *  - XYZZ buckets with mixed additions (madd-2008-s, 8M + 2S), for c < EC_MSM_AFFINE_MIN_C;
 *  - batch-affine buckets for wider windows: up to B additions into distinct buckets are
 *    collected and done in affine coordinates with one shared inversion (Montgomery's trick:
 *    3M each, then lambda 1M, x3 1S, y3 1M: 5M + 1S per addition plus 1/B inversion). A point
 *    whose bucket is already in the pending batch, or whose x equals the bucket's (P + P,
 *    P + (-P)), goes instead to a second, XYZZ, accumulator of that bucket, so no input
 *    pattern (all-equal scalars, repeated points) can stall the batches. */

struct PT(msm_ctx_) {
    const AFF *bases;
    const uint64_t *k;      /* canonical scalars, 4 little-endian limbs each */
    size_t n;
    unsigned c, nwin, nsplit;
    size_t nb;              /* buckets per window: 2^(c-1) */
    size_t batch;           /* batch-affine: additions per shared inversion; 0 = XYZZ path */
    char *scratch;          /* one block of per_worker bytes per pool worker */
    size_t per_worker;
    JAC *part;              /* nwin * nsplit partial window sums, task t = w * nsplit + s */
};

/* Per-worker scratch of the batch-affine path, carved from one block. */
struct PT(msm_ws_) {
    AFF *abk;               /* nb affine buckets */
    XYZZ *xbk;              /* nb overflow buckets */
    uint8_t *state;         /* nb: bit 0 abk[b] holds a point, bit 1 xbk[b] does */
    uint32_t *stamp;        /* nb: batch number bucket b was last queued in */
    uint32_t *bidx;         /* batch: bucket of each queued addition */
    AFF *bq;                /* batch: point to add */
    FE *den;                /* batch: x(Q) - x(bucket) */
    FE *pref;               /* batch: prefix products of den */
};

static size_t PT(msm_ws_size_)(size_t nb, size_t batch)
{
    if (!batch) return nb * sizeof(XYZZ);
    return nb * (sizeof(AFF) + sizeof(XYZZ) + sizeof(uint32_t) + 1) +
           batch * (sizeof(uint32_t) + sizeof(AFF) + 2 * sizeof(FE)) + 64;
}

static struct PT(msm_ws_) PT(msm_ws_carve_)(char *p, size_t nb, size_t batch)
{
    struct PT(msm_ws_) ws;
    ws.abk = (AFF *)p;               /* element types are 8-byte multiples: order keeps alignment */
    p += nb * sizeof(AFF);
    ws.xbk = (XYZZ *)p;
    p += nb * sizeof(XYZZ);
    ws.bq = (AFF *)p;
    p += batch * sizeof(AFF);
    ws.den = (FE *)p;
    p += batch * sizeof(FE);
    ws.pref = (FE *)p;
    p += batch * sizeof(FE);
    ws.stamp = (uint32_t *)p;
    p += nb * sizeof(uint32_t);
    ws.bidx = (uint32_t *)p;
    p += batch * sizeof(uint32_t);
    ws.state = (uint8_t *)p;
    return ws;
}

/* Applies the m queued affine additions abk[bidx[j]] += bq[j] with one inversion. */
static void PT(msm_flush_)(struct PT(msm_ws_) *ws, size_t m)
{
    if (!m) return;
    ws->pref[0] = ws->den[0];
    for (size_t j = 1; j < m; j++) FE_MUL(&ws->pref[j], &ws->pref[j - 1], &ws->den[j]);
    FE inv, ij, lam, x3, t;
    FE_INV(&inv, &ws->pref[m - 1]);            /* 1 / (den_0 ... den_{m-1}) */
    for (size_t j = m; j-- > 0;) {
        if (j) {
            FE_MUL(&ij, &inv, &ws->pref[j - 1]);  /* 1 / den_j */
            FE_MUL(&inv, &inv, &ws->den[j]);      /* 1 / (den_0 ... den_{j-1}) */
        } else {
            ij = inv;
        }
        AFF *a = &ws->abk[ws->bidx[j]];
        const AFF *q = &ws->bq[j];
        FE_SUB(&t, &q->y, &a->y);
        FE_MUL(&lam, &t, &ij);                  /* lambda = (y2 - y1) / (x2 - x1) */
        FE_SQR(&x3, &lam);
        FE_SUB(&x3, &x3, &a->x);
        FE_SUB(&x3, &x3, &q->x);                /* x3 = lambda^2 - x1 - x2 */
        FE_SUB(&t, &a->x, &x3);
        FE_MUL(&t, &t, &lam);
        FE_SUB(&a->y, &t, &a->y);               /* y3 = lambda (x1 - x3) - y1 */
        a->x = x3;
    }
}

/* Digits are computed for a block of points first, so the bucket of a later point can be
 * prefetched while the current addition runs (the buckets of one wide window, 3 MiB of
 * affine G1 points at c = 16, do not fit in L2). */
#define MSM_BLOCK 64
#define MSM_PREFETCH 6

/* Task body, XYZZ buckets. */
static void PT(msm_window_xyzz_)(struct PT(msm_ctx_) *m, XYZZ *b, unsigned w, size_t lo,
                                 size_t hi, JAC *out)
{
    int32_t dig[MSM_BLOCK];
    for (size_t j = 0; j < m->nb; j++) PT(xyzz_set_inf)(&b[j]);
    for (size_t i0 = lo; i0 < hi; i0 += MSM_BLOCK) {
        size_t cnt = hi - i0 < MSM_BLOCK ? hi - i0 : MSM_BLOCK;
        for (size_t j = 0; j < cnt; j++) dig[j] = ec_booth_digit(m->k + 4 * (i0 + j), w, m->c);
        for (size_t j = 0; j < cnt; j++) {
            if (j + MSM_PREFETCH < cnt && dig[j + MSM_PREFETCH]) {
                int32_t dn = dig[j + MSM_PREFETCH];
                const char *pb = (const char *)&b[(dn < 0 ? -dn : dn) - 1];
                for (size_t o = 0; o < sizeof(XYZZ); o += 64) __builtin_prefetch(pb + o, 1);
            }
            int32_t d = dig[j];
            const AFF *q = &m->bases[i0 + j];
            if (d > 0) {
                PT(xyzz_add_aff)(&b[d - 1], &b[d - 1], q);
            } else if (d < 0) {
                AFF nq;
                PT(aff_neg)(&nq, q);
                PT(xyzz_add_aff)(&b[-d - 1], &b[-d - 1], &nq);
            }
        }
    }
    /* sum_j (j+1) b[j] by the running sum: run = b[top] + ... + b[j], acc += run. */
    XYZZ run, acc;
    PT(xyzz_set_inf)(&run);
    PT(xyzz_set_inf)(&acc);
    for (size_t j = m->nb; j-- > 0;) {
        PT(xyzz_add)(&run, &run, &b[j]);
        PT(xyzz_add)(&acc, &acc, &run);
    }
    PT(xyzz_to_jac)(out, &acc);
}

/* Task body, batch-affine buckets (see the top of this file). */
static void PT(msm_window_affine_)(struct PT(msm_ctx_) *m, struct PT(msm_ws_) *ws, unsigned w,
                                   size_t lo, size_t hi, JAC *out)
{
    int32_t dig[MSM_BLOCK];
    memset(ws->state, 0, m->nb);
    memset(ws->stamp, 0, m->nb * sizeof *ws->stamp);
    uint32_t cur = 1;
    size_t nq = 0;
    for (size_t i0 = lo; i0 < hi; i0 += MSM_BLOCK) {
        size_t cnt = hi - i0 < MSM_BLOCK ? hi - i0 : MSM_BLOCK;
        for (size_t j = 0; j < cnt; j++) dig[j] = ec_booth_digit(m->k + 4 * (i0 + j), w, m->c);
        for (size_t j = 0; j < cnt; j++) {
            if (j + MSM_PREFETCH < cnt && dig[j + MSM_PREFETCH]) {
                int32_t dn = dig[j + MSM_PREFETCH];
                const char *pb = (const char *)&ws->abk[(dn < 0 ? -dn : dn) - 1];
                for (size_t o = 0; o < sizeof(AFF); o += 64) __builtin_prefetch(pb + o, 1);
            }
            int32_t d = dig[j];
            const AFF *p = &m->bases[i0 + j];
            if (!d) continue;   /* also every infinity base (scalar zeroed in conv_task_) */
            size_t bi = (size_t)(d < 0 ? -d : d) - 1;
            AFF q;
            if (d > 0) q = *p;
            else PT(aff_neg)(&q, p);
            if (!(ws->state[bi] & 1)) {             /* empty bucket: take the point */
                ws->abk[bi] = q;
                ws->state[bi] |= 1;
                continue;
            }
            if (ws->stamp[bi] == cur || FE_EQ(&q.x, &ws->abk[bi].x)) {   /* overflow */
                if (!(ws->state[bi] & 2)) {
                    PT(xyzz_set_inf)(&ws->xbk[bi]);
                    ws->state[bi] |= 2;
                }
                PT(xyzz_add_aff)(&ws->xbk[bi], &ws->xbk[bi], &q);
                continue;
            }
            ws->stamp[bi] = cur;
            ws->bidx[nq] = (uint32_t)bi;
            ws->bq[nq] = q;
            FE_SUB(&ws->den[nq], &q.x, &ws->abk[bi].x);
            if (++nq == m->batch) {
                PT(msm_flush_)(ws, nq);
                nq = 0;
                cur++;
            }
        }
    }
    PT(msm_flush_)(ws, nq);
    /* running sum over bucket = abk[b] + xbk[b] */
    XYZZ run, acc;
    PT(xyzz_set_inf)(&run);
    PT(xyzz_set_inf)(&acc);
    for (size_t j = m->nb; j-- > 0;) {
        if (ws->state[j] & 1) PT(xyzz_add_aff)(&run, &run, &ws->abk[j]);
        if (ws->state[j] & 2) PT(xyzz_add)(&run, &run, &ws->xbk[j]);
        PT(xyzz_add)(&acc, &acc, &run);
    }
    PT(xyzz_to_jac)(out, &acc);
}

static void PT(msm_task_)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct PT(msm_ctx_) *m = vctx;
    char *scratch = m->scratch + (size_t)worker * m->per_worker;
    struct PT(msm_ws_) ws = PT(msm_ws_carve_)(scratch, m->nb, m->batch);
    for (size_t t = begin; t < end; t++) {
        unsigned w = (unsigned)(t / m->nsplit), s = (unsigned)(t % m->nsplit);
        size_t lo = m->n * s / m->nsplit, hi = m->n * (s + 1) / m->nsplit;
        if (m->batch) PT(msm_window_affine_)(m, &ws, w, lo, hi, &m->part[t]);
        else PT(msm_window_xyzz_)(m, (XYZZ *)scratch, w, lo, hi, &m->part[t]);
    }
}

struct PT(conv_ctx_) {
    const AFF *bases;
    const fr_t *s;
    uint64_t *k;
};

/* Scalars out of Montgomery form; an infinity base gets scalar 0, so the windows skip it
 * without testing the point again (the batch-affine buckets must never see (0, 0)). */
static void PT(conv_task_)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct PT(conv_ctx_) *c = vctx;
    for (size_t i = begin; i < end; i++) {
        if (PT(aff_is_inf)(&c->bases[i])) memset(c->k + 4 * i, 0, 4 * sizeof(uint64_t));
        else fr_from_mont(c->k + 4 * i, &c->s[i]);
    }
}

/* The MSM with a given window width c in [1, 16] (0: choose from n). */
int PT(_msm_window)(JAC *out, const AFF *bases, const fr_t *scalars, size_t n, unsigned c,
                    struct pool *pool, struct cuzk_error *err)
{
    PT(jac_set_inf)(out);
    if (n == 0) return CUZK_OK;
    if (c > 16)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: window %u out of range (expected 1..16)",
                         STR_(PT(msm)), c);
    unsigned threads = pool_size(pool);
    struct PT(msm_ctx_) m;
    m.bases = bases;
    m.n = n;
    m.c = c ? c : ec_msm_window(n);
    m.nwin = (256 + m.c - 1) / m.c;
    m.nb = (size_t)1 << (m.c - 1);
    m.nsplit = ec_msm_splits(n, m.nwin, threads);
    m.batch = ec_msm_batch(m.c);
    m.per_worker = (PT(msm_ws_size_)(m.nb, m.batch) + 63) & ~(size_t)63;

    size_t kbytes = n * 4 * sizeof(uint64_t);
    size_t bbytes = (size_t)threads * m.per_worker;
    size_t pbytes = (size_t)m.nwin * m.nsplit * sizeof(JAC);
    uint64_t *k = cuzk_malloc(kbytes);
    m.scratch = cuzk_malloc(bbytes);
    m.part = cuzk_malloc(pbytes);
    if (!k || !m.scratch || !m.part) {
        cuzk_free(k);
        cuzk_free(m.scratch);
        cuzk_free(m.part);
        return cuzk_fail(err, CUZK_E_NOMEM,
                         "%s: n = %zu: cannot allocate %zu bytes of scalars, buckets and sums",
                         STR_(PT(msm)), n, kbytes + bbytes + pbytes);
    }
    m.k = k;

    struct PT(conv_ctx_) cv = {bases, scalars, k};
    pool_parallel_for(pool, n, 4096, PT(conv_task_), &cv);
    pool_parallel_for(pool, (size_t)m.nwin * m.nsplit, 1, PT(msm_task_), &m);

    /* Horner over the windows, most significant first: acc = acc * 2^c + window_w. */
    JAC acc;
    PT(jac_set_inf)(&acc);
    for (unsigned w = m.nwin; w-- > 0;) {
        for (unsigned d = 0; d < m.c && !PT(jac_is_inf)(&acc); d++) PT(jac_dbl)(&acc, &acc);
        for (unsigned s = 0; s < m.nsplit; s++)
            PT(jac_add)(&acc, &acc, &m.part[(size_t)w * m.nsplit + s]);
    }
    *out = acc;
    cuzk_free(k);
    cuzk_free(m.scratch);
    cuzk_free(m.part);
    return CUZK_OK;
}

/* ---- bitmap sums ---- */

#define BITMAP_MAX_PARTS 64

struct PT(bm_ctx_) {
    const AFF *bases;
    const uint64_t *bm;
    size_t n, chunk;        /* chunk is a multiple of 64: tasks own whole bitmap words */
    XYZZ *part;
};

static void PT(bm_task_)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct PT(bm_ctx_) *c = vctx;
    for (size_t t = begin; t < end; t++) {
        size_t lo = t * c->chunk, hi = lo + c->chunk < c->n ? lo + c->chunk : c->n;
        XYZZ acc;
        PT(xyzz_set_inf)(&acc);
        for (size_t wi = lo / 64; wi * 64 < hi; wi++) {
            uint64_t bits = c->bm[wi];
            if (hi - wi * 64 < 64) bits &= ((uint64_t)1 << (hi - wi * 64)) - 1;
            while (bits) {
                size_t i = wi * 64 + (size_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                PT(xyzz_add_aff)(&acc, &acc, &c->bases[i]);
            }
        }
        c->part[t] = acc;
    }
}

void PT(sum_bitmap)(JAC *out, const AFF *bases, const uint64_t *bitmap, size_t n,
                    struct pool *pool)
{
    XYZZ part[BITMAP_MAX_PARTS];
    size_t chunk = (n + BITMAP_MAX_PARTS - 1) / BITMAP_MAX_PARTS;
    if (chunk < 4096) chunk = 4096;
    chunk = (chunk + 63) & ~(size_t)63;
    size_t nparts = (n + chunk - 1) / chunk;
    struct PT(bm_ctx_) c = {bases, bitmap, n, chunk, part};
    pool_parallel_for(pool, nparts, 1, PT(bm_task_), &c);
    XYZZ acc;
    PT(xyzz_set_inf)(&acc);
    for (size_t t = 0; t < nparts; t++) PT(xyzz_add)(&acc, &acc, &part[t]);
    PT(xyzz_to_jac)(out, &acc);
}

int PT(msm)(JAC *out, const AFF *bases, const fr_t *scalars, size_t n, struct pool *pool,
            struct cuzk_error *err)
{
    return PT(_msm_window)(out, bases, scalars, n, 0, pool, err);
}
