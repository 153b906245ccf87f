/* agg_srs.c: the SnarkPack generic SRS (bellperson src/groth16/aggregate/srs.rs): local
 * generation from a seed (setup_fake_srs; NOT for production), the .srs file layout of
 * "v28-fil-inner-product-v1.srs" (GenericSRS::write / read_mmap), and specialization to n
 * proofs (GenericSRS::specialize). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agg_internal.h"

void agg_srs_free(struct agg_srs *srs)
{
    if (!srs) return;
    cuzk_free(srs->g_alpha);
    cuzk_free(srs->g_beta);
    cuzk_free(srs->h_alpha);
    cuzk_free(srs->h_beta);
    memset(srs, 0, sizeof *srs);
}

void agg_prover_srs_free(struct agg_prover_srs *pk)
{
    if (!pk) return;
    cuzk_free(pk->g_alpha);
    cuzk_free(pk->g_beta);
    cuzk_free(pk->h_alpha);
    cuzk_free(pk->h_beta);
    memset(pk, 0, sizeof *pk);
}

static void rand_fr(fr_t *s, cuzk_rng *rng)
{
    uint8_t b[64];
    do {
        cuzk_rng_bytes(rng, b, sizeof b);
        fr_from_wide_le(s, b);
    } while (fr_is_zero(s) || fr_is_one(s));
}

int agg_srs_generate(struct agg_srs *srs, size_t n_max, uint64_t seed, struct pool *pool,
                     struct cuzk_error *err)
{
    memset(srs, 0, sizeof *srs);
    if (n_max < 1 || n_max > AGG_SRS_MAX_SIZE / 2)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_srs_generate: %zu proofs is outside [1, %zu]", n_max,
                         AGG_SRS_MAX_SIZE / 2);
    size_t m = 2 * n_max;
    cuzk_rng rng;
    cuzk_rng_seed(&rng, seed);
    fr_t alpha, beta;
    rand_fr(&alpha, &rng);
    rand_fr(&beta, &rng);
    fr_t *pa = cuzk_malloc(m * sizeof *pa), *pb = cuzk_malloc(m * sizeof *pb);
    g1_aff_t *g = cuzk_malloc(m * sizeof *g);
    g2_aff_t *h = cuzk_malloc(m * sizeof *h);
    srs->g_alpha = cuzk_malloc(m * sizeof(g1_aff_t));
    srs->g_beta = cuzk_malloc(m * sizeof(g1_aff_t));
    srs->h_alpha = cuzk_malloc(m * sizeof(g2_aff_t));
    srs->h_beta = cuzk_malloc(m * sizeof(g2_aff_t));
    int rc = CUZK_OK;
    if (!pa || !pb || !g || !h || !srs->g_alpha || !srs->g_beta || !srs->h_alpha || !srs->h_beta) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "agg_srs_generate: out of memory for %zu powers", m);
        goto out;
    }
    agg_powers(pa, m, &alpha);
    agg_powers(pb, m, &beta);
    for (size_t i = 0; i < m; i++) {
        g[i] = G1_GENERATOR;
        h[i] = G2_GENERATOR;
    }
    if ((rc = agg_g1_scale(srs->g_alpha, g, pa, NULL, m, pool, err)) ||
        (rc = agg_g1_scale(srs->g_beta, g, pb, NULL, m, pool, err)) ||
        (rc = agg_g2_scale(srs->h_alpha, h, pa, NULL, m, pool, err)) ||
        (rc = agg_g2_scale(srs->h_beta, h, pb, NULL, m, pool, err)))
        goto out;
    srs->n_g_alpha = srs->n_g_beta = srs->n_h_alpha = srs->n_h_beta = m;
out:
    memset(&alpha, 0, sizeof alpha);
    memset(&beta, 0, sizeof beta);
    cuzk_free(pa);
    cuzk_free(pb);
    cuzk_free(g);
    cuzk_free(h);
    if (rc) agg_srs_free(srs);
    return rc;
}

/* ----------------------------------------------------------------- write -- */

static int put_len(FILE *f, size_t n)
{
    uint8_t b[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    return fwrite(b, 1, 4, f) == 4 ? 0 : -1;
}

int agg_srs_write(const struct agg_srs *srs, const char *path, struct cuzk_error *err)
{
    size_t lens[4] = {srs->n_g_alpha, srs->n_g_beta, srs->n_h_alpha, srs->n_h_beta};
    for (int v = 0; v < 4; v++)
        if (lens[v] > AGG_SRS_MAX_SIZE)
            return cuzk_fail(err, CUZK_E_INVALID_ARG,
                             "%s: vector %d has %zu points, over the format's %zu", path, v,
                             lens[v], AGG_SRS_MAX_SIZE);
    FILE *f = fopen(path, "wb");
    if (!f) return cuzk_fail(err, CUZK_E_IO, "%s: %s", path, strerror(errno));
    bool bad = false;
    uint8_t b[96];
    bad |= put_len(f, srs->n_g_alpha) != 0;
    for (size_t i = 0; i < srs->n_g_alpha && !bad; i++) {
        g1_aff_to_compressed(b, &srs->g_alpha[i]);
        bad |= fwrite(b, 1, 48, f) != 48;
    }
    bad |= put_len(f, srs->n_g_beta) != 0;
    for (size_t i = 0; i < srs->n_g_beta && !bad; i++) {
        g1_aff_to_compressed(b, &srs->g_beta[i]);
        bad |= fwrite(b, 1, 48, f) != 48;
    }
    bad |= put_len(f, srs->n_h_alpha) != 0;
    for (size_t i = 0; i < srs->n_h_alpha && !bad; i++) {
        g2_aff_to_compressed(b, &srs->h_alpha[i]);
        bad |= fwrite(b, 1, 96, f) != 96;
    }
    bad |= put_len(f, srs->n_h_beta) != 0;
    for (size_t i = 0; i < srs->n_h_beta && !bad; i++) {
        g2_aff_to_compressed(b, &srs->h_beta[i]);
        bad |= fwrite(b, 1, 96, f) != 96;
    }
    if (fclose(f) != 0) bad = true;
    if (bad) {
        unlink(path);
        return cuzk_fail(err, CUZK_E_IO, "%s: write failed", path);
    }
    return CUZK_OK;
}

/* ------------------------------------------------------------------ read -- */

static const char *const VEC_NAME[4] = {"g_alpha_powers", "g_beta_powers", "h_alpha_powers",
                                        "h_beta_powers"};

struct dec_ctx {
    const uint8_t *in;
    void *out;
    bool g2, subgroup;
    atomic_size_t bad;         /* lowest failing index, or SIZE_MAX */
};

static void dec_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct dec_ctx *c = ctx;
    for (size_t i = begin; i < end; i++) {
        int rc = c->g2 ? g2_aff_from_compressed((g2_aff_t *)c->out + i, c->in + 96 * i,
                                                c->subgroup, NULL)
                       : g1_aff_from_compressed((g1_aff_t *)c->out + i, c->in + 48 * i,
                                                c->subgroup, NULL);
        if (rc) {
            size_t cur = atomic_load(&c->bad);
            while (i < cur && !atomic_compare_exchange_weak(&c->bad, &cur, i)) {
            }
            return;
        }
    }
}

int agg_srs_read(struct agg_srs *srs, const char *path, size_t max_len, bool check_subgroup,
                 struct pool *pool, struct cuzk_error *err)
{
    memset(srs, 0, sizeof *srs);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cuzk_fail(err, errno == ENOENT ? CUZK_E_NOT_FOUND : CUZK_E_IO, "%s: %s", path,
                         strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = cuzk_fail(err, CUZK_E_IO, "%s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    size_t size = (size_t)st.st_size;
    const uint8_t *m = NULL;
    if (size) {
        void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int rc = cuzk_fail(err, CUZK_E_IO, "%s: mmap: %s", path, strerror(errno));
            close(fd);
            return rc;
        }
        m = p;
    }
    close(fd);
    int rc = CUZK_OK;
    size_t off = 0;
    void **outs[4] = {(void **)&srs->g_alpha, (void **)&srs->g_beta, (void **)&srs->h_alpha,
                      (void **)&srs->h_beta};
    size_t *counts[4] = {&srs->n_g_alpha, &srs->n_g_beta, &srs->n_h_alpha, &srs->n_h_beta};
    for (int v = 0; v < 4 && !rc; v++) {
        size_t ps = v < 2 ? 48 : 96;
        if (size - off < 4) {
            rc = cuzk_fail(err, CUZK_E_TRUNCATED, "%s: %s: length missing at byte %zu", path,
                           VEC_NAME[v], off);
            break;
        }
        size_t len = (size_t)m[off] << 24 | (size_t)m[off + 1] << 16 | (size_t)m[off + 2] << 8 |
                     m[off + 3];
        off += 4;
        if (len > AGG_SRS_MAX_SIZE) {
            rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: %s: invalid SRS vector length %zu (max %zu)",
                           path, VEC_NAME[v], len, AGG_SRS_MAX_SIZE);
            break;
        }
        if ((size - off) / ps < len) {
            rc = cuzk_fail(err, CUZK_E_TRUNCATED,
                           "%s: %s: %zu points announced, %zu bytes left", path, VEC_NAME[v],
                           len, size - off);
            break;
        }
        size_t take = max_len && max_len < len ? max_len : len;
        void *out = cuzk_malloc((take ? take : 1) * (v < 2 ? sizeof(g1_aff_t) : sizeof(g2_aff_t)));
        if (!out) {
            rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: %s: out of memory for %zu points", path,
                           VEC_NAME[v], take);
            break;
        }
        *outs[v] = out;
        *counts[v] = take;
        struct dec_ctx c = {m + off, out, v >= 2, check_subgroup, SIZE_MAX};
        pool_parallel_for(agg_pool(pool), take, 64, dec_range, &c);
        size_t bad = atomic_load(&c.bad);
        if (bad != SIZE_MAX) {
            struct cuzk_error e;
            int code = v < 2 ? g1_aff_from_compressed(out, m + off + ps * bad, check_subgroup, &e)
                             : g2_aff_from_compressed(out, m + off + ps * bad, check_subgroup, &e);
            rc = cuzk_fail(err, code ? code : CUZK_E_INTERNAL, "%s: %s[%zu]: %s", path,
                           VEC_NAME[v], bad, code ? e.msg : "decoding is not deterministic");
            break;
        }
        off += len * ps;
    }
    if (!rc && off != size)
        rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: %zu trailing bytes after h_beta_powers", path,
                       size - off);
    if (m) munmap((void *)m, size);
    if (rc) agg_srs_free(srs);
    return rc;
}

int agg_srs_load_v28(struct agg_srs *srs, const char *dir, struct pool *pool,
                     struct cuzk_error *err)
{
    char path[4096];
    int k = snprintf(path, sizeof path, "%s/%s", dir, AGG_SRS_V28_NAME);
    if (k < 0 || (size_t)k >= sizeof path)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "agg_srs_load_v28: directory name too long");
    return agg_srs_read(srs, path, AGG_SRS_FIL_MAX_LEN, true, pool, err);
}

/* --------------------------------------------------------------- specialize -- */

int agg_srs_specialize(struct agg_prover_srs *pk, struct agg_verifier_srs *vk,
                       const struct agg_srs *srs, size_t n, struct cuzk_error *err)
{
    if (pk) memset(pk, 0, sizeof *pk);
    if (n < 2 || (n & (n - 1)))
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_srs_specialize: %zu proofs is not a power of two >= 2", n);
    size_t tn = 2 * n;
    /* the verifier key alone needs the first two points of each vector (a verifier may read
     * only those: agg_srs_read with max_len 2); the prover key needs 2n */
    size_t need = pk ? tn : 2;
    if (srs->n_g_alpha < need || srs->n_g_beta < need || srs->n_h_alpha < need ||
        srs->n_h_beta < need)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_srs_specialize: %zu proofs need %zu powers of each kind, the SRS "
                         "has %zu/%zu/%zu/%zu",
                         n, need, srs->n_g_alpha, srs->n_g_beta, srs->n_h_alpha, srs->n_h_beta);
    if (vk) {
        vk->n = n;
        vk->g = srs->g_alpha[0];
        vk->h = srs->h_alpha[0];
        vk->g_alpha = srs->g_alpha[1];
        vk->g_beta = srs->g_beta[1];
        vk->h_alpha = srs->h_alpha[1];
        vk->h_beta = srs->h_beta[1];
        /* bellperson indexes h_alpha by g_alpha's length (they are equal in every file); only
         * meaningful when the SRS was read whole (or to the same max_len as upstream) */
        size_t d = srs->n_g_alpha >= n ? srs->n_g_alpha - n : 0;
        vk->h_alpha_d = srs->h_alpha[d < srs->n_h_alpha ? d : 0];
    }
    if (!pk) return CUZK_OK;
    pk->n = n;
    pk->g_alpha = cuzk_malloc(tn * sizeof(g1_aff_t));
    pk->g_beta = cuzk_malloc(tn * sizeof(g1_aff_t));
    pk->h_alpha = cuzk_malloc(n * sizeof(g2_aff_t));
    pk->h_beta = cuzk_malloc(n * sizeof(g2_aff_t));
    if (!pk->g_alpha || !pk->g_beta || !pk->h_alpha || !pk->h_beta) {
        agg_prover_srs_free(pk);
        return cuzk_fail(err, CUZK_E_NOMEM, "agg_srs_specialize: out of memory for n = %zu", n);
    }
    memcpy(pk->g_alpha, srs->g_alpha, tn * sizeof(g1_aff_t));
    memcpy(pk->g_beta, srs->g_beta, tn * sizeof(g1_aff_t));
    memcpy(pk->h_alpha, srs->h_alpha, n * sizeof(g2_aff_t));
    memcpy(pk->h_beta, srs->h_beta, n * sizeof(g2_aff_t));
    return CUZK_OK;
}
