/* params_write.c: the .params and .vk writers (g16_params_write, g16_vk_write) and the vk
 * digest; a write replaces the file atomically and drops a stale digest cache, or writes a new one
 * when the caller says the points were validated. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "params_internal.h"

/* --------------------------------------------------------------- writers -- */

static void enc_g1(uint8_t *out, const g1_aff_t *p)
{
    fp_to_bytes_be(out, &p->x);
    fp_to_bytes_be(out + 48, &p->y);
}
static void enc_g2(uint8_t *out, const g2_aff_t *p)
{
    fp_to_bytes_be(out, &p->x.c1);
    fp_to_bytes_be(out + 48, &p->x.c0);
    fp_to_bytes_be(out + 96, &p->y.c1);
    fp_to_bytes_be(out + 144, &p->y.c0);
}

/* Serialize the vk into buf (VK_FIXED + 4 + 96 n_ic bytes). Keys hold no identities; writing
 * one would only produce a file that every reader (ours, bellperson's) refuses. */
static int vk_encode(uint8_t *buf, const struct g16_vk *vk, const char *what, struct cuzk_error *err)
{
    const g1_aff_t *g1s[3] = {&vk->alpha_g1, &vk->beta_g1, &vk->delta_g1};
    const g2_aff_t *g2s[3] = {&vk->beta_g2, &vk->gamma_g2, &vk->delta_g2};
    static const char *const n1[3] = {"alpha_g1", "beta_g1", "delta_g1"};
    static const char *const n2[3] = {"beta_g2", "gamma_g2", "delta_g2"};
    for (int k = 0; k < 3; k++) {
        if (g1_aff_is_inf(g1s[k])) return cuzk_fail(err, CUZK_E_IDENTITY, "%s: vk.%s is the identity", what, n1[k]);
        if (g2_aff_is_inf(g2s[k])) return cuzk_fail(err, CUZK_E_IDENTITY, "%s: vk.%s is the identity", what, n2[k]);
    }
    if (!vk->n_ic || !vk->ic) return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: vk has no ic points", what);
    enc_g1(buf, &vk->alpha_g1);
    enc_g1(buf + 96, &vk->beta_g1);
    enc_g2(buf + 192, &vk->beta_g2);
    enc_g2(buf + 384, &vk->gamma_g2);
    enc_g1(buf + 576, &vk->delta_g1);
    enc_g2(buf + 672, &vk->delta_g2);
    params_put_be32(buf + VK_FIXED, vk->n_ic);
    for (uint32_t i = 0; i < vk->n_ic; i++) {
        if (g1_aff_is_inf(&vk->ic[i])) return cuzk_fail(err, CUZK_E_IDENTITY, "%s: ic[%" PRIu32 "] is the identity", what, i);
        enc_g1(buf + VK_FIXED + 4 + (size_t)i * G1_UNC, &vk->ic[i]);
    }
    return CUZK_OK;
}

static size_t vk_bytes(const struct g16_vk *vk) { return VK_FIXED + 4 + (size_t)vk->n_ic * G1_UNC; }

int g16_vk_digest(uint8_t out[16], const struct g16_vk *vk, struct cuzk_error *err)
{
    size_t n = vk_bytes(vk);
    uint8_t *buf = cuzk_malloc(n);
    if (!buf) return cuzk_fail(err, CUZK_E_NOMEM, "vk digest: cannot allocate %zu bytes", n);
    int rc = vk_encode(buf, vk, "vk digest", err);
    if (!rc) g16_digest128(out, buf, n);
    cuzk_free(buf);
    return rc;
}

/* Output file written as "<path>.tmp<pid>" and renamed into place, so readers never see
 * a half-written key and a stale digest cache never matches the new file. */
struct wfile {
    FILE *f;
    char *tmp;
    const char *path;
};

static int wfile_open(struct wfile *w, const char *path, struct cuzk_error *err)
{
    size_t n = strlen(path) + 32;
    w->path = path;
    w->tmp = malloc(n);
    if (!w->tmp) return cuzk_fail(err, CUZK_E_NOMEM, "%s: out of memory", path);
    snprintf(w->tmp, n, "%s.tmp%ld", path, (long)getpid());
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        int rc = cuzk_fail(err, CUZK_E_IO, "%s: %s", w->tmp, strerror(errno));
        free(w->tmp);
        return rc;
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    return CUZK_OK;
}

static int wfile_close(struct wfile *w, int rc, struct cuzk_error *err)
{
    if (fclose(w->f) && !rc) rc = cuzk_fail(err, CUZK_E_IO, "%s: write failed: %s", w->tmp, strerror(errno));
    if (!rc && rename(w->tmp, w->path)) rc = cuzk_fail(err, CUZK_E_IO, "%s: rename: %s", w->path, strerror(errno));
    if (rc) {
        unlink(w->tmp);
    } else {
        char *cp = params_cache_path(w->path);
        if (cp) unlink(cp);
        free(cp);
    }
    free(w->tmp);
    return rc;
}

static int wfile_put(struct wfile *w, const void *p, size_t n, struct cuzk_error *err)
{
    if (fwrite(p, 1, n, w->f) != n) return cuzk_fail(err, CUZK_E_IO, "%s: write failed: %s", w->tmp, strerror(errno));
    return CUZK_OK;
}

int g16_vk_write(const struct g16_vk *vk, const char *path, struct cuzk_error *err)
{
    size_t n = vk_bytes(vk);
    uint8_t *buf = cuzk_malloc(n);
    if (!buf) return cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate %zu bytes", path, n);
    int rc = vk_encode(buf, vk, path, err);
    if (!rc) {
        struct wfile w;
        rc = wfile_open(&w, path, err);
        if (!rc) rc = wfile_close(&w, wfile_put(&w, buf, n, err), err);
    }
    cuzk_free(buf);
    return rc;
}

/* Encoding runs on the pool in blocks; the writer thread then appends each block in order. */
struct enc_job {
    const void *src;
    bool g2;
    uint64_t base;          /* first point of this block */
    uint8_t *out;
    atomic_uint_fast64_t bad;
};

static void enc_chunks(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct enc_job *j = ctx;
    for (size_t i = begin; i < end; i++) {
        if (j->g2) {
            const g2_aff_t *p = (const g2_aff_t *)j->src + j->base + i;
            if (g2_aff_is_inf(p)) { params_note_bad(&j->bad, j->base + i); continue; }
            enc_g2(j->out + i * G2_UNC, p);
        } else {
            const g1_aff_t *p = (const g1_aff_t *)j->src + j->base + i;
            if (g1_aff_is_inf(p)) { params_note_bad(&j->bad, j->base + i); continue; }
            enc_g1(j->out + i * G1_UNC, p);
        }
    }
}

/* The chunk hashes of one encoded block (whole digest chunks, the last one short). */
struct hash_job {
    const uint8_t *buf;
    uint64_t m;         /* points in the block */
    size_t psz;
    uint8_t *out;       /* 16 bytes per chunk */
};

static void hash_chunks(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const struct hash_job *j = ctx;
    for (size_t c = begin; c < end; c++) {
        uint64_t i0 = (uint64_t)c * CHUNK_PTS, i1 = i0 + CHUNK_PTS < j->m ? i0 + CHUNK_PTS : j->m;
        g16_digest128(j->out + 16 * c, j->buf + i0 * j->psz, (size_t)(i1 - i0) * j->psz);
    }
}

int g16_params_write(const struct g16_pk *pk, const char *path, struct cuzk_error *err)
{
    return g16_params_write_ex(pk, path, false, err);
}

int g16_params_write_ex(const struct g16_pk *pk, const char *path, bool validated, struct cuzk_error *err)
{
    struct { const char *name; const void *p; uint64_t n; bool g2; } secs[5] = {
        {"h", pk->h, pk->n_h, false}, {"l", pk->l, pk->n_l, false}, {"a", pk->a, pk->n_a, false},
        {"b_g1", pk->b_g1, pk->n_b, false}, {"b_g2", pk->b_g2, pk->n_b, true},
    };
    for (int k = 0; k < 5; k++) {
        if (secs[k].n > UINT32_MAX)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: %s: %" PRIu64 " points do not fit the u32 count",
                             path, secs[k].name, secs[k].n);
        if (secs[k].n && !secs[k].p)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: %s: NULL array", path, secs[k].name);
    }
    size_t vkn = vk_bytes(&pk->vk);
    /* a whole number of digest chunks per block, so the chunk hashes are the reader's */
    const size_t block_pts = (size_t)CHUNK_PTS * 8;
    uint8_t *buf = cuzk_malloc(vkn > block_pts * G2_UNC ? vkn : block_pts * G2_UNC);
    if (!buf) return cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate the write buffer", path);
    /* the digest's input (formats.md "Digest cache"): H(vk bytes), then per section its
     * count word and its chunk hashes */
    uint8_t *dig = NULL;
    size_t dlen = 0;
    if (validated) {
        uint64_t nchunks = 0;
        for (int k = 0; k < 5; k++) nchunks += (secs[k].n + CHUNK_PTS - 1) / CHUNK_PTS;
        if (!(dig = cuzk_malloc(16 + 5 * 4 + (size_t)nchunks * 16))) {
            cuzk_free(buf);
            return cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate the digest buffer", path);
        }
    }
    int rc = vk_encode(buf, &pk->vk, path, err);
    if (rc) {
        cuzk_free(buf);
        cuzk_free(dig);
        return rc;
    }
    if (dig) g16_digest128(dig, buf, vkn), dlen = 16;
    struct wfile w;
    rc = wfile_open(&w, path, err);
    if (rc) {
        cuzk_free(buf);
        cuzk_free(dig);
        return rc;
    }
    rc = wfile_put(&w, buf, vkn, err);
    struct pool *pool = pool_default();
    for (int k = 0; k < 5 && !rc; k++) {
        uint8_t cnt[4];
        params_put_be32(cnt, (uint32_t)secs[k].n);
        rc = wfile_put(&w, cnt, 4, err);
        if (dig) memcpy(dig + dlen, cnt, 4), dlen += 4;
        size_t psz = secs[k].g2 ? G2_UNC : G1_UNC;
        for (uint64_t b = 0; b < secs[k].n && !rc; b += block_pts) {
            uint64_t m = secs[k].n - b < block_pts ? secs[k].n - b : block_pts;
            struct enc_job j = {.src = secs[k].p, .g2 = secs[k].g2, .base = b, .out = buf};
            atomic_init(&j.bad, UINT64_MAX);
            pool_parallel_for(pool, (size_t)m, 256, enc_chunks, &j);
            uint64_t bad = atomic_load(&j.bad);
            if (bad != UINT64_MAX)
                rc = cuzk_fail(err, CUZK_E_IDENTITY, "%s: %s[%" PRIu64 "] is the identity (keys never hold it)",
                               path, secs[k].name, bad);
            else
                rc = wfile_put(&w, buf, (size_t)m * psz, err);
            if (!rc && dig) {
                struct hash_job h = {buf, m, psz, dig + dlen};
                const size_t nc = (size_t)((m + CHUNK_PTS - 1) / CHUNK_PTS);
                pool_parallel_for(pool, nc, 1, hash_chunks, &h);
                dlen += 16 * nc;
            }
        }
    }
    cuzk_free(buf);
    rc = wfile_close(&w, rc, err);   /* deletes a stale cache */
    if (!rc && dig) {
        struct stat st;
        uint8_t d[16];
        char hex[33];
        g16_digest128(d, dig, dlen);
        params_cache_hex(hex, d);
        if (stat(path, &st) == 0) {   /* best effort, as after a validation */
            const struct params_cache_key key = {(uint64_t)st.st_size, (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
            params_cache_store(path, &key, hex);
        }
    }
    cuzk_free(dig);
    return rc;
}
