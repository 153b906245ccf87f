/* poseidon_params.c: neptune 11 Poseidon constants for BLS12-381 Fr, Strength::Standard:
 * round numbers, Grain-LFSR round constants, the Cauchy MDS matrix, the compressed round
 * constants and the sparse-matrix factorization used by the optimized hash and the circuit
 * (neptune src/round_numbers.rs, round_constants.rs, mds.rs, preprocessing.rs). */
#include <pthread.h>
#include <string.h>

#include "cuzk/gadgets.h"
#include "cuzk/util.h"

#define MAX_ARITY 36

/* Partial rounds by width t (calc_round_numbers.py for a 255-bit prime, 128-bit security,
 * as tabulated by neptune); full rounds are always 8. 0 = unsupported width. */
static unsigned partial_rounds(unsigned t)
{
    if (t == 2 || t == 3) return 55;
    if (t >= 4 && t <= 7) return 56;
    if (t >= 8 && t <= 15) return 57;
    if (t == 16 || t == 17 || t == 25) return 59;
    if (t == 37) return 60;
    return 0;
}

/* ---------------------------------------------------------------- Grain LFSR -- */

struct grain {
    uint8_t s[80];
    unsigned head;      /* index of b_i in s (circular) */
};

static unsigned grain_step(struct grain *g)
{
#define B(k) g->s[(g->head + (k)) % 80]
    unsigned nb = B(62) ^ B(51) ^ B(38) ^ B(23) ^ B(13) ^ B(0);
#undef B
    g->s[g->head] = (uint8_t)nb;        /* b_{i+80} replaces b_i */
    g->head = (g->head + 1) % 80;
    return nb;
}

/* Self-shrinking output: draw pairs until the first bit is 1, output the second. */
static unsigned grain_bit(struct grain *g)
{
    while (!grain_step(g)) grain_step(g);
    return grain_step(g);
}

static void grain_init(struct grain *g, unsigned t, unsigned rf, unsigned rp)
{
    /* field = 1 (2 bits), sbox = 1 (4), n = 255 (12), t (12), R_F (10), R_P (10), 30 ones;
     * each field most significant bit first. */
    const struct { unsigned bits, val; } f[] = {
        {2, 1}, {4, 1}, {12, 255}, {12, t}, {10, rf}, {10, rp}, {30, 0x3fffffffu}};
    unsigned k = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        for (int b = (int)f[i].bits - 1; b >= 0; b--) g->s[k++] = (uint8_t)((f[i].val >> b) & 1u);
    g->head = 0;
    for (int i = 0; i < 160; i++) grain_step(g);
}

/* Next constant: 255 output bits read as a big-endian integer (first byte holds 7 bits),
 * redrawn while >= r. */
static void grain_fr(struct grain *g, fr_t *out)
{
    for (;;) {
        uint8_t be[32];
        for (int i = 0; i < 32; i++) {
            unsigned nbits = i == 0 ? 7 : 8, acc = 0;
            for (unsigned b = 0; b < nbits; b++) acc = (acc << 1) | grain_bit(g);
            be[i] = (uint8_t)acc;
        }
        if (fr_from_bytes_be(out, be) == CUZK_OK) return;
    }
}

/* ------------------------------------------------------------------- matrices -- */

/* Row-major n x n. out = a * b (out must not alias). */
static void mat_mul(fr_t *out, const fr_t *a, const fr_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            fr_t acc = FR_ZERO, t;
            for (unsigned k = 0; k < n; k++) {
                fr_mul(&t, &a[i * n + k], &b[k * n + j]);
                fr_add(&acc, &acc, &t);
            }
            out[i * n + j] = acc;
        }
}

/* out = m * v (column vector), as neptune's apply_matrix. */
static void mat_apply(fr_t *out, const fr_t *m, const fr_t *v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        fr_t acc = FR_ZERO, t;
        for (unsigned k = 0; k < n; k++) {
            fr_mul(&t, &m[i * n + k], &v[k]);
            fr_add(&acc, &acc, &t);
        }
        out[i] = acc;
    }
}

/* Gauss-Jordan inverse. The inverse is unique, so this equals neptune's adjugate method.
 * work: 2 n^2 scratch. Returns false for a singular matrix. */
static bool mat_inv(fr_t *out, const fr_t *m, unsigned n, fr_t *work)
{
    fr_t *a = work, *b = work + n * n;
    memcpy(a, m, (size_t)n * n * sizeof *a);
    for (unsigned i = 0; i < n * n; i++) b[i] = FR_ZERO;
    for (unsigned i = 0; i < n; i++) b[i * n + i] = FR_ONE;
    for (unsigned col = 0; col < n; col++) {
        unsigned piv = col;
        while (piv < n && fr_is_zero(&a[piv * n + col])) piv++;
        if (piv == n) return false;
        if (piv != col)
            for (unsigned k = 0; k < n; k++) {
                fr_t t = a[col * n + k]; a[col * n + k] = a[piv * n + k]; a[piv * n + k] = t;
                t = b[col * n + k]; b[col * n + k] = b[piv * n + k]; b[piv * n + k] = t;
            }
        fr_t inv;
        fr_inv(&inv, &a[col * n + col]);
        for (unsigned k = 0; k < n; k++) {
            fr_mul(&a[col * n + k], &a[col * n + k], &inv);
            fr_mul(&b[col * n + k], &b[col * n + k], &inv);
        }
        for (unsigned r = 0; r < n; r++) {
            if (r == col || fr_is_zero(&a[r * n + col])) continue;
            fr_t f = a[r * n + col], t;
            for (unsigned k = 0; k < n; k++) {
                fr_mul(&t, &f, &a[col * n + k]);
                fr_sub(&a[r * n + k], &a[r * n + k], &t);
                fr_mul(&t, &f, &b[col * n + k]);
                fr_sub(&b[r * n + k], &b[r * n + k], &t);
            }
        }
    }
    memcpy(out, b, (size_t)n * n * sizeof *out);
    return true;
}

/* One factorization step of neptune's derive_mds_matrices for a t x t matrix m:
 * m = m' * m'' with m' = [1 0; 0 m_hat] and m'' = [m00 v; w_hat I], w_hat = m_hat^-1 w.
 * Writes m' (t x t) and m'' (t x t). work: 3 t^2 scratch. */
static bool factor_step(fr_t *mp, fr_t *mpp, const fr_t *m, unsigned t, fr_t *work)
{
    unsigned h = t - 1;
    fr_t *hat = work, *hat_inv = work + t * t;   /* h x h each; mat_inv needs 2 h^2 more */
    for (unsigned i = 0; i < h; i++)
        for (unsigned j = 0; j < h; j++) hat[i * h + j] = m[(i + 1) * t + (j + 1)];
    if (!mat_inv(hat_inv, hat, h, work + 2 * t * t)) return false;
    fr_t w[MAX_ARITY + 1], w_hat[MAX_ARITY + 1];
    for (unsigned i = 0; i < h; i++) w[i] = m[(i + 1) * t];
    mat_apply(w_hat, hat_inv, w, h);
    for (unsigned i = 0; i < t * t; i++) mp[i] = mpp[i] = FR_ZERO;
    mp[0] = FR_ONE;
    for (unsigned i = 1; i < t; i++)
        for (unsigned j = 1; j < t; j++) mp[i * t + j] = m[i * t + j];
    mpp[0] = m[0];
    for (unsigned j = 1; j < t; j++) mpp[j] = m[j];
    for (unsigned i = 1; i < t; i++) {
        mpp[i * t] = w_hat[i - 1];
        mpp[i * t + i] = FR_ONE;
    }
    return true;
}

void poseidon_consts_free(struct poseidon_consts *pc)
{
    cuzk_free(pc->rc);
    cuzk_free(pc->m);
    cuzk_free(pc->m_inv);
    cuzk_free(pc->crc);
    cuzk_free(pc->pre_sparse);
    cuzk_free(pc->w_hat);
    cuzk_free(pc->v_rest);
    memset(pc, 0, sizeof *pc);
}

int poseidon_consts_build(struct poseidon_consts *pc, unsigned arity, struct cuzk_error *err)
{
    memset(pc, 0, sizeof *pc);
    unsigned t = arity + 1, rp = arity >= 1 && arity <= MAX_ARITY ? partial_rounds(t) : 0;
    if (!rp)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "poseidon: arity %u has no round numbers", arity);
    unsigned rf = 8, half = rf / 2, nrc = (rf + rp) * t;
    pc->arity = arity;
    pc->t = t;
    pc->rf = rf;
    pc->rp = rp;
    fr_from_u64(&pc->domain_tag, arity >= 64 ? 0 : ((uint64_t)1 << arity) - 1);

    size_t tt = (size_t)t * t;
    pc->rc = cuzk_malloc(nrc * sizeof(fr_t));
    pc->m = cuzk_malloc(tt * sizeof(fr_t));
    pc->m_inv = cuzk_malloc(tt * sizeof(fr_t));
    pc->crc = cuzk_malloc((8 * t + rp) * sizeof(fr_t));
    pc->pre_sparse = cuzk_malloc(tt * sizeof(fr_t));
    pc->w_hat = cuzk_malloc((size_t)rp * t * sizeof(fr_t));
    pc->v_rest = cuzk_malloc((size_t)rp * (t - 1) * sizeof(fr_t));
    fr_t *work = cuzk_malloc((8 * tt + 2 * t + rp) * sizeof(fr_t));
    if (!pc->rc || !pc->m || !pc->m_inv || !pc->crc || !pc->pre_sparse || !pc->w_hat ||
        !pc->v_rest || !work) {
        cuzk_free(work);
        poseidon_consts_free(pc);
        return cuzk_fail(err, CUZK_E_NOMEM, "poseidon: constants for arity %u", arity);
    }

    /* Round constants. */
    struct grain g;
    grain_init(&g, t, rf, rp);
    for (unsigned i = 0; i < nrc; i++) grain_fr(&g, &pc->rc[i]);

    /* Cauchy MDS: M[i][j] = 1 / (x_i + y_j), x_i = i, y_j = t + j. */
    for (unsigned i = 0; i < t; i++)
        for (unsigned j = 0; j < t; j++) {
            fr_from_u64(&pc->m[i * t + j], (uint64_t)i + t + j);
            fr_inv(&pc->m[i * t + j], &pc->m[i * t + j]);
        }
    int rc = CUZK_OK;
    if (!mat_inv(pc->m_inv, pc->m, t, work)) {
        rc = cuzk_fail(err, CUZK_E_INTERNAL, "poseidon: singular MDS for t = %u", t);
        goto out;
    }

    /* Compressed round constants (preprocessing.rs with every partial round compressed):
     * rk(0); M^-1 rk(r) for r = 1..half-1; M^-1 of the accumulator folded back through the
     * partial rounds; one scalar per partial round; M^-1 rk(r) for the last half-1 rounds. */
    {
        fr_t *crc = pc->crc, *acc = work, *inv = work + t;
        unsigned o = 0;
        const fr_t *rk = pc->rc;
        for (unsigned i = 0; i < t; i++) crc[o++] = rk[i];
        for (unsigned r = 1; r < half; r++, o += t) mat_apply(&crc[o], pc->m_inv, &rk[r * t], t);
        unsigned final_round = half + rp;
        memcpy(acc, &rk[final_round * t], t * sizeof(fr_t));
        fr_t *pk = work + 2 * t;                       /* partial keys, in fold order */
        for (unsigned i = 0; i < rp; i++) {
            const fr_t *prev = &rk[(final_round - i - 1) * t];
            mat_apply(inv, pc->m_inv, acc, t);
            pk[i] = inv[0];
            inv[0] = FR_ZERO;
            for (unsigned k = 0; k < t; k++) fr_add(&acc[k], &prev[k], &inv[k]);
        }
        mat_apply(&crc[o], pc->m_inv, acc, t);
        o += t;
        for (unsigned i = rp; i-- > 0;) crc[o++] = pk[i];
        for (unsigned r = 1; r < half; r++, o += t)
            mat_apply(&crc[o], pc->m_inv, &rk[(final_round + r) * t], t);
    }

    /* Sparse factorization (mds.rs factor_to_sparse_matrices): repeatedly split the current
     * matrix into M' M'', keep M'', continue with M * M'; the last M'' is used first. */
    {
        fr_t *cur = work, *mp = work + tt, *mpp = work + 2 * tt, *next = work + 3 * tt;
        memcpy(cur, pc->m, tt * sizeof(fr_t));
        for (unsigned k = 0; k < rp; k++) {
            if (!factor_step(mp, mpp, cur, t, work + 4 * tt)) {
                rc = cuzk_fail(err, CUZK_E_INTERNAL, "poseidon: singular minor at step %u", k);
                goto out;
            }
            unsigned slot = rp - 1 - k;                /* reversed order */
            for (unsigned i = 0; i < t; i++) pc->w_hat[slot * t + i] = mpp[i * t];
            for (unsigned j = 1; j < t; j++) pc->v_rest[slot * (t - 1) + j - 1] = mpp[j];
            mat_mul(next, pc->m, mp, t);
            memcpy(cur, next, tt * sizeof(fr_t));
        }
        memcpy(pc->pre_sparse, cur, tt * sizeof(fr_t));
    }
out:
    cuzk_free(work);
    if (rc) poseidon_consts_free(pc);
    return rc;
}

/* --------------------------------------------------------- shared instances -- */

static struct poseidon_consts g_consts[MAX_ARITY + 1];
static int g_state[MAX_ARITY + 1];          /* 0 = not built, 1 = ready, <0 = failed */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

const struct poseidon_consts *poseidon_consts_get(unsigned arity, struct cuzk_error *err)
{
    if (arity < 1 || arity > MAX_ARITY || !partial_rounds(arity + 1)) {
        cuzk_fail(err, CUZK_E_UNSUPPORTED, "poseidon: arity %u is not supported", arity);
        return NULL;
    }
    const struct poseidon_consts *r = NULL;
    pthread_mutex_lock(&g_lock);
    if (g_state[arity] != 1) {
        if (poseidon_consts_build(&g_consts[arity], arity, err) == CUZK_OK) g_state[arity] = 1;
    }
    if (g_state[arity] == 1) r = &g_consts[arity];
    pthread_mutex_unlock(&g_lock);
    return r;
}
