/* msm_impl.h: Pippenger multi-scalar multiplication and bitmap sums, written once and
 * included by msm.c for G1 and G2 with PT(name) (prefix), AFF, JAC, XYZZ and the field
 * operations FE, FE_ADD, FE_SUB, FE_MUL, FE_SQR, FE_INV, FE_EQ, FE_IS_ZERO defined.
 * Design (docs/ec.md, "MSM"): scalars leave Montgomery form once; the window width c comes
 * from n (ec_msm_window); signed Booth digits in [-2^(c-1), 2^(c-1)] need only 2^(c-1)
 * buckets per window (a negative digit adds -P: one field negation); windows, and point
 * ranges when there are more threads than windows, are tasks on the pool; each task reduces
 * its buckets (running sums); the caller combines the window sums by Horner's rule.
 * Bucket accumulation has two forms:
 *  - XYZZ buckets with mixed additions (madd-2008-s, 8M + 2S), for c < EC_MSM_AFFINE_MIN_C;
 *  - batch-affine buckets for wider windows: up to B additions into distinct buckets are
 *    collected and done in affine coordinates with one shared inversion (Montgomery's trick:
 *    3M each, then lambda 1M, x3 1S, y3 1M: 5M + 1S per addition plus 1/B inversion). A point
 *    whose bucket is already in the pending batch waits for the next one (once; then, or when
 *    the waiting list is full, and when its x equals the bucket's (P + P, P + (-P)), it goes to
 *    a second, XYZZ, accumulator of that bucket), so no input pattern (all-equal scalars,
 *    repeated points) can stall the batches. For G1 on AVX-512 IFMA CPUs the batches run on 8
 *    lanes (msm_ifma.c). The reduction is batch-affine too (msm_reduce_affine_). */

struct PT(msm_ctx_) {
    const AFF *bases;
    const uint64_t *k;      /* canonical scalars, 4 little-endian limbs each */
    size_t n;
    unsigned c, nwin, nsplit;
    size_t nb;              /* buckets per window: 2^(c-1) */
    size_t batch;           /* batch-affine: additions per shared inversion; 0 = XYZZ path */
    bool ifma;              /* G1 on an AVX-512 IFMA CPU: batches run in msm_ifma.c */
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
    uint32_t *bidx;         /* batch: bucket of each queued addition | MSM_NEG | MSM_SKIP */
    size_t *pidx;           /* batch: index of the base to add */
    FE *den;                /* batch: x(Q) - x(bucket) */
    FE *pref;               /* batch: prefix products of den */
    uint32_t *dbidx;        /* batch / 2: deferred additions (bucket already queued), as bidx */
    size_t *dpidx;          /* batch / 2: their bases */
    AFF *lane;              /* 2 MSM_LANES: the reduction's running sums (run, acc) */
    AFF **pd;               /* MSM_LANES: destinations of msm_pairs_add_ */
    const AFF **ps;         /* MSM_LANES: sources */
    uint8_t *kind;          /* MSM_LANES: what msm_pairs_add_ does with each pair */
    void *vec;              /* scratch of ec_g1_flush_ifma, or NULL */
    size_t nq, nd;          /* queued, deferred */
    uint32_t cur;           /* batch number */
};

/* bidx flags MSM_NEG, MSM_SKIP, MSM_BMASK: ec_internal.h */

/* Independent running sums of the batch-affine reduction (msm_reduce_affine_). */
#define MSM_LANES 256

static size_t PT(msm_ws_size_)(size_t nb, size_t batch, bool ifma)
{
    if (!batch) return nb * sizeof(XYZZ);
    if (ifma) return PT(msm_ws_size_)(nb, batch, false) + ec_ifma_scratch_bytes(batch);
    return nb * (sizeof(AFF) + sizeof(XYZZ) + sizeof(uint32_t) + 1) +
           batch * (sizeof(uint32_t) + sizeof(size_t) + 2 * sizeof(FE)) +
           (batch / 2) * (sizeof(uint32_t) + sizeof(size_t)) +
           MSM_LANES * (2 * sizeof(AFF) + 2 * sizeof(void *) + 1) + 64;
}

static struct PT(msm_ws_) PT(msm_ws_carve_)(char *p, size_t nb, size_t batch, bool ifma)
{
    struct PT(msm_ws_) ws;
    ws.vec = NULL;
    if (ifma && batch) {
        ws.vec = p;
        p += ec_ifma_scratch_bytes(batch);
    }
    ws.abk = (AFF *)p;               /* element types are 8-byte multiples: order keeps alignment */
    p += nb * sizeof(AFF);
    ws.xbk = (XYZZ *)p;
    p += nb * sizeof(XYZZ);
    ws.pidx = (size_t *)p;
    p += batch * sizeof(size_t);
    ws.den = (FE *)p;
    p += batch * sizeof(FE);
    ws.pref = (FE *)p;
    p += batch * sizeof(FE);
    ws.dpidx = (size_t *)p;
    p += (batch / 2) * sizeof(size_t);
    ws.lane = (AFF *)p;
    p += 2 * MSM_LANES * sizeof(AFF);
    ws.pd = (AFF **)p;
    p += MSM_LANES * sizeof(void *);
    ws.ps = (const AFF **)p;
    p += MSM_LANES * sizeof(void *);
    ws.stamp = (uint32_t *)p;
    p += nb * sizeof(uint32_t);
    ws.bidx = (uint32_t *)p;
    p += batch * sizeof(uint32_t);
    ws.dbidx = (uint32_t *)p;
    p += (batch / 2) * sizeof(uint32_t);
    ws.state = (uint8_t *)p;
    p += nb;
    ws.kind = (uint8_t *)p;
    return ws;
}

/* How far ahead the first pass of a flush prefetches buckets and bases: each step costs about
 * one multiplication (~30 ns), a bucket of a wide window is an L3 or DRAM access. */
#define MSM_PF_FLUSH 12

static inline void PT(msm_prefetch_)(const void *p, size_t bytes)
{
    const char *c = (const char *)p;
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(c + o, 1);
    __builtin_prefetch(c + bytes - 1, 1);
}

/* Adds +-bases[i] into the overflow accumulator of bucket bi. */
static void PT(msm_overflow_)(struct PT(msm_ws_) *ws, size_t bi, const AFF *p, bool neg)
{
    AFF q;
    if (neg) PT(aff_neg)(&q, p);
    else q = *p;
    if (!(ws->state[bi] & 2)) {
        PT(xyzz_set_inf)(&ws->xbk[bi]);
        ws->state[bi] |= 2;
    }
    PT(xyzz_add_aff)(&ws->xbk[bi], &ws->xbk[bi], &q);
}

/* Applies the m queued affine additions abk[b_j] += +-bases[i_j] with one inversion. The
 * buckets are first touched here, not when queued: the forward pass (differences of x and
 * their prefix products) prefetches them MSM_PF_FLUSH entries ahead, and the backward pass
 * finds them in cache. An entry whose x equals its bucket's (P + P or P + (-P)) is moved to the
 * bucket's XYZZ overflow instead (its den would be 0). */
static void PT(msm_flush_)(const AFF *bases, struct PT(msm_ws_) *ws, size_t m)
{
    size_t first = m;   /* first entry still in the batch */
    for (size_t j = 0; j < m; j++) {
        if (j + MSM_PF_FLUSH < m) {
            PT(msm_prefetch_)(&ws->abk[ws->bidx[j + MSM_PF_FLUSH] & MSM_BMASK], sizeof(AFF));
            PT(msm_prefetch_)(&bases[ws->pidx[j + MSM_PF_FLUSH]], sizeof(AFF));
        }
        uint32_t e = ws->bidx[j];
        const AFF *q = &bases[ws->pidx[j]];
        FE_SUB(&ws->den[j], &q->x, &ws->abk[e & MSM_BMASK].x);
        if (FE_IS_ZERO(&ws->den[j])) {
            PT(msm_overflow_)(ws, e & MSM_BMASK, q, (e & MSM_NEG) != 0);
            ws->bidx[j] = e | MSM_SKIP;
            if (first < m) ws->pref[j] = ws->pref[j - 1];   /* carry the product over the gap */
            continue;
        }
        if (first == m) {
            first = j;
            ws->pref[j] = ws->den[j];
        } else {
            FE_MUL(&ws->pref[j], &ws->pref[j - 1], &ws->den[j]);
        }
    }
    if (first == m) return;
    FE inv, ij, lam, x3, t;
    FE_INV(&inv, &ws->pref[m - 1]);            /* 1 / (product of every den in the batch) */
    for (size_t j = m; j-- > first;) {
        uint32_t e = ws->bidx[j];
        if (e & MSM_SKIP) continue;
        if (j > first) {
            FE_MUL(&ij, &inv, &ws->pref[j - 1]);  /* 1 / den_j */
            FE_MUL(&inv, &inv, &ws->den[j]);      /* 1 / (den_first ... den_{j-1}) */
        } else {
            ij = inv;
        }
        AFF *a = &ws->abk[e & MSM_BMASK];
        const AFF *q = &bases[ws->pidx[j]];
        if (!(e & MSM_NEG)) {
            FE_SUB(&t, &q->y, &a->y);
            FE_MUL(&lam, &t, &ij);              /* lambda = (y2 - y1) / (x2 - x1) */
            FE_SQR(&x3, &lam);
            FE_SUB(&x3, &x3, &a->x);
            FE_SUB(&x3, &x3, &q->x);            /* x3 = lambda^2 - x1 - x2 */
            FE_SUB(&t, &a->x, &x3);
        } else {                                /* Q = -P: lambda = -lam, with lam below */
            FE_ADD(&t, &q->y, &a->y);
            FE_MUL(&lam, &t, &ij);              /* lam = (y(P) + y1) / (x2 - x1) */
            FE_SQR(&x3, &lam);
            FE_SUB(&x3, &x3, &a->x);
            FE_SUB(&x3, &x3, &q->x);
            FE_SUB(&t, &x3, &a->x);             /* lambda (x1 - x3) = lam (x3 - x1) */
        }
        FE_MUL(&t, &t, &lam);
        FE_SUB(&a->y, &t, &a->y);               /* y3 = lambda (x1 - x3) - y1 */
        a->x = x3;
    }
}

/* m independent affine additions *pd[i] += *ps[i] sharing one inversion (Montgomery's trick in
 * den / pref, as msm_flush_). Complete: either side may be infinity (0, 0); equal x is a
 * doubling (slope 3x^2 / 2y; y != 0 since neither curve group has points of order 2) or
 * P + (-P) = O. The pd[i] must be distinct and not among the ps. */
static void PT(msm_pairs_add_)(struct PT(msm_ws_) *ws, size_t m)
{
    enum { SKIP, ADD, DBL };
    FE *den = ws->den, *pref = ws->pref;
    size_t first = m;
    for (size_t i = 0; i < m; i++) {
        AFF *d = ws->pd[i];
        const AFF *q = ws->ps[i];
        ws->kind[i] = SKIP;
        if (PT(aff_is_inf)(q)) {
        } else if (PT(aff_is_inf)(d)) {
            *d = *q;
        } else {
            FE_SUB(&den[i], &q->x, &d->x);
            ws->kind[i] = ADD;
            if (FE_IS_ZERO(&den[i])) {
                if (FE_EQ(&q->y, &d->y)) {
                    FE_ADD(&den[i], &d->y, &d->y);   /* 2y */
                    ws->kind[i] = DBL;
                } else {
                    memset(d, 0, sizeof *d);          /* P + (-P) = O */
                    ws->kind[i] = SKIP;
                }
            }
        }
        if (ws->kind[i] == SKIP) {
            if (first < m) pref[i] = pref[i - 1];
        } else if (first == m) {
            first = i;
            pref[i] = den[i];
        } else {
            FE_MUL(&pref[i], &pref[i - 1], &den[i]);
        }
    }
    if (first == m) return;
    FE inv, ij, lam, x3, t;
    FE_INV(&inv, &pref[m - 1]);
    for (size_t i = m; i-- > first;) {
        if (ws->kind[i] == SKIP) continue;
        if (i > first) {
            FE_MUL(&ij, &inv, &pref[i - 1]);
            FE_MUL(&inv, &inv, &den[i]);
        } else {
            ij = inv;
        }
        AFF *d = ws->pd[i];
        const AFF *q = ws->ps[i];
        if (ws->kind[i] == ADD) {
            FE_SUB(&t, &q->y, &d->y);
        } else {
            FE_SQR(&t, &d->x);
            FE_ADD(&x3, &t, &t);
            FE_ADD(&t, &x3, &t);                      /* 3x^2 */
        }
        FE_MUL(&lam, &t, &ij);
        FE_SQR(&x3, &lam);
        FE_SUB(&x3, &x3, &d->x);
        FE_SUB(&x3, &x3, &q->x);
        FE_SUB(&t, &d->x, &x3);
        FE_MUL(&t, &t, &lam);
        FE_SUB(&d->y, &t, &d->y);
        d->x = x3;
    }
}

/* sum_j (j+1) (abk[j] + xbk[j]) over the nb buckets, mostly in batch-affine additions:
 * 1. overflow buckets (state bit 1) are converted to affine (one shared inversion per
 *    MSM_LANES) and folded into abk; empty buckets become (0, 0);
 * 2. the buckets are cut into K segments of s = nb / K, segment g holding [g s, (g+1) s); K
 *    running sums advance together from the top of their segments, each step being two
 *    batches of K affine additions (run_g += bucket, acc_g += run_g), ~12 M per bucket
 *    against ~24 M for the XYZZ running sum. Then acc_g = sum (j - g s + 1) bucket_j, run_g =
 *    sum bucket_j over the segment, and
 *        sum_j (j+1) bucket_j = sum_g acc_g + s sum_g g run_g,
 *    the last sum by one short XYZZ running sum over g and log2(s) doublings. */
static void PT(msm_reduce_affine_)(struct PT(msm_ws_) *ws, size_t nb, size_t batch, JAC *out)
{
    size_t K = batch < MSM_LANES ? batch : MSM_LANES;   /* powers of two, K <= batch */
    size_t s = nb / K;
    AFF *run = ws->lane, *acc = ws->lane + K;
    /* 1: overflow buckets to affine, K at a time, and into abk */
    size_t j = 0;
    while (j < nb) {
        size_t m = 0;
        for (; j < nb && m < K; j++) {
            if (!(ws->state[j] & 1)) memset(&ws->abk[j], 0, sizeof(AFF));
            if (!(ws->state[j] & 2)) continue;
            const XYZZ *x = &ws->xbk[j];
            if (FE_IS_ZERO(&x->zzz)) continue;           /* the overflow summed to O */
            ws->den[m] = x->zzz;
            if (m) FE_MUL(&ws->pref[m], &ws->pref[m - 1], &x->zzz);
            else ws->pref[m] = x->zzz;
            ws->pd[m] = &ws->abk[j];
            m++;
        }
        if (!m) continue;
        FE inv, izzz, iz;
        FE_INV(&inv, &ws->pref[m - 1]);
        for (size_t i = m; i-- > 0;) {
            const XYZZ *x = &ws->xbk[ws->pd[i] - ws->abk];
            if (i) {
                FE_MUL(&izzz, &inv, &ws->pref[i - 1]);
                FE_MUL(&inv, &inv, &ws->den[i]);
            } else {
                izzz = inv;
            }
            FE_MUL(&iz, &izzz, &x->zz);                 /* ZZ / ZZZ = 1 / z */
            FE_SQR(&iz, &iz);                           /* 1 / ZZ */
            FE_MUL(&run[i].x, &x->x, &iz);             /* run[] is free until step 2 */
            FE_MUL(&run[i].y, &x->y, &izzz);
            ws->ps[i] = &run[i];
        }
        PT(msm_pairs_add_)(ws, m);
    }
    /* 2: K running sums */
    memset(run, 0, 2 * K * sizeof(AFF));
    for (size_t t = s; t-- > 0;) {
        for (size_t g = 0; g < K; g++) {
            ws->pd[g] = &run[g];
            ws->ps[g] = &ws->abk[g * s + t];
        }
        PT(msm_pairs_add_)(ws, K);
        for (size_t g = 0; g < K; g++) {
            ws->pd[g] = &acc[g];
            ws->ps[g] = &run[g];
        }
        PT(msm_pairs_add_)(ws, K);
    }
    /* 3: sum_g acc_g + s sum_g g run_g */
    XYZZ sum, r, tt;
    PT(xyzz_set_inf)(&sum);
    PT(xyzz_set_inf)(&r);
    PT(xyzz_set_inf)(&tt);
    for (size_t g = K; g-- > 0;) {
        PT(xyzz_add_aff)(&sum, &sum, &acc[g]);
        if (!g) break;
        PT(xyzz_add_aff)(&r, &r, &run[g]);
        PT(xyzz_add)(&tt, &tt, &r);
    }
    for (size_t d = 1; d < s; d *= 2) PT(xyzz_dbl)(&tt, &tt);
    PT(xyzz_add)(&sum, &sum, &tt);
    PT(xyzz_to_jac)(out, &sum);
}

/* Digits are computed for a block of points first, so the bucket of a later point can be
 * prefetched while the current addition runs (XYZZ path). */
#define MSM_BLOCK 64
#define MSM_PREFETCH 6

/* Task body, XYZZ buckets. */
static void PT(msm_window_xyzz_)(struct PT(msm_ctx_) *m, XYZZ *b, size_t nb, unsigned w,
                                 size_t lo, size_t hi, JAC *out)
{
    int32_t dig[MSM_BLOCK];
    for (size_t j = 0; j < nb; j++) PT(xyzz_set_inf)(&b[j]);
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
    for (size_t j = nb; j-- > 0;) {
        PT(xyzz_add)(&run, &run, &b[j]);
        PT(xyzz_add)(&acc, &acc, &run);
    }
    PT(xyzz_to_jac)(out, &acc);
}

/* Queues abk[e & MSM_BMASK] += +-bases[i] (e as in bidx). A bucket is queued at most once per
 * batch; a second addition into it waits in the deferred list for the next batch (up to
 * batch / 2 of them; may_defer is false for entries that already waited once) and otherwise
 * goes to the bucket's XYZZ overflow. Deferring keeps these additions affine (~6 M instead of
 * 10 M) and keeps the overflow buckets, each costing a 14 M addition in the reduction, rare. */
static void PT(msm_queue_)(const AFF *bases, struct PT(msm_ws_) *ws, size_t batch, uint32_t e,
                           size_t i, bool may_defer);

/* Runs the batch, then queues the deferred additions into the next one (at most batch / 2, so
 * that cannot fill it). */
static void PT(msm_flush_requeue_)(const AFF *bases, struct PT(msm_ws_) *ws, size_t batch)
{
#ifdef MSM_IFMA_FLUSH
    if (ws->vec) {
        MSM_IFMA_FLUSH(ws->abk, bases, ws->bidx, ws->pidx, ws->nq, ws->vec);
        for (size_t j = 0; j < ws->nq; j++)
            if (ws->bidx[j] & MSM_SKIP)
                PT(msm_overflow_)(ws, ws->bidx[j] & MSM_BMASK, &bases[ws->pidx[j]],
                                  (ws->bidx[j] & MSM_NEG) != 0);
    } else
#endif
        PT(msm_flush_)(bases, ws, ws->nq);
    ws->nq = 0;
    ws->cur++;
    size_t nd = ws->nd;
    ws->nd = 0;
    for (size_t k = 0; k < nd; k++) PT(msm_queue_)(bases, ws, batch, ws->dbidx[k], ws->dpidx[k], false);
}

static void PT(msm_queue_)(const AFF *bases, struct PT(msm_ws_) *ws, size_t batch, uint32_t e,
                           size_t i, bool may_defer)
{
    size_t bi = e & MSM_BMASK;
    if (ws->stamp[bi] == ws->cur) {
        if (may_defer && ws->nd < batch / 2) {
            ws->dbidx[ws->nd] = e;
            ws->dpidx[ws->nd++] = i;
        } else {
            PT(msm_overflow_)(ws, bi, &bases[i], (e & MSM_NEG) != 0);
        }
        return;
    }
    ws->stamp[bi] = ws->cur;
    ws->bidx[ws->nq] = e;
    ws->pidx[ws->nq] = i;
    if (++ws->nq == batch) PT(msm_flush_requeue_)(bases, ws, batch);
}

/* Task body, batch-affine buckets (see the top of this file). Queueing touches only the small
 * per-bucket state and stamp arrays (L2-resident); the buckets themselves are read in the
 * flush, prefetched. */
static void PT(msm_window_affine_)(struct PT(msm_ctx_) *m, struct PT(msm_ws_) *ws, size_t nb,
                                   size_t batch, unsigned w, size_t lo, size_t hi, JAC *out)
{
    int32_t dig[MSM_BLOCK];
    memset(ws->state, 0, nb);
    memset(ws->stamp, 0, nb * sizeof *ws->stamp);
    ws->cur = 1;
    ws->nq = ws->nd = 0;
    for (size_t i0 = lo; i0 < hi; i0 += MSM_BLOCK) {
        size_t cnt = hi - i0 < MSM_BLOCK ? hi - i0 : MSM_BLOCK;
        for (size_t j = 0; j < cnt; j++) dig[j] = ec_booth_digit(m->k + 4 * (i0 + j), w, m->c);
        for (size_t j = 0; j < cnt; j++) {
            int32_t d = dig[j];
            if (!d) continue;   /* also every infinity base (scalar zeroed in conv_task_) */
            size_t bi = (size_t)(d < 0 ? -d : d) - 1;
            const AFF *p = &m->bases[i0 + j];
            if (!(ws->state[bi] & 1)) {             /* empty bucket: take the point */
                if (d > 0) ws->abk[bi] = *p;
                else PT(aff_neg)(&ws->abk[bi], p);
                ws->state[bi] |= 1;
                continue;
            }
            PT(msm_queue_)(m->bases, ws, batch, (uint32_t)bi | (d < 0 ? MSM_NEG : 0), i0 + j,
                           true);
        }
    }
    while (ws->nq || ws->nd) PT(msm_flush_requeue_)(m->bases, ws, batch);
    PT(msm_reduce_affine_)(ws, nb, batch, out);
}

static void PT(msm_task_)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct PT(msm_ctx_) *m = vctx;
    char *scratch = m->scratch + (size_t)worker * m->per_worker;
    struct PT(msm_ws_) ws = PT(msm_ws_carve_)(scratch, m->nb, m->batch, m->ifma);
    for (size_t t = begin; t < end; t++) {
        unsigned w = (unsigned)(t / m->nsplit), s = (unsigned)(t % m->nsplit);
        size_t lo = m->n * s / m->nsplit, hi = m->n * (s + 1) / m->nsplit;
        /* the top window may reach only a few buckets (ec_msm_live): those alone are cleared
         * and reduced, and with too few for batches it takes the XYZZ path (into the overflow
         * buckets, when the scratch is laid out for batch-affine) */
        size_t live = ec_msm_live(w, m->c), batch = ec_msm_batch(m->c, live);
        if (batch) PT(msm_window_affine_)(m, &ws, live, batch, w, lo, hi, &m->part[t]);
        else PT(msm_window_xyzz_)(m, m->batch ? ws.xbk : (XYZZ *)scratch, live, w, lo, hi,
                                  &m->part[t]);
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
    m.batch = ec_msm_batch(m.c, m.nb);   /* the widest window's: sizes the scratch */
#ifdef MSM_IFMA_FLUSH
    m.ifma = m.batch && ec_ifma_usable();
#else
    m.ifma = false;
#endif
    m.per_worker = (PT(msm_ws_size_)(m.nb, m.batch, m.ifma) + 63) & ~(size_t)63;

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
