/* params.c: the bellperson .params and .vk files: the layout walk (g16_params_info) and the
 * reads (g16_params_read, g16_vk_read), which run the section passes of params_check.c and
 * consult the digest cache of params_cache.c. The writers are params_write.c.
 * See docs/formats.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "params_internal.h"

#define PROGRESS_AUTO_BYTES (1ull << 30)

/* ---------------------------------------------------------------- layout -- */

int params_src_read(const struct params_src *s, uint64_t off, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(s->fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

const char *const params_sect_name[6] = {"ic", "h", "l", "a", "b_g1", "b_g2"};

/* vk_file: the file must end right after ic (a .vk); otherwise either layout is accepted. */
static int walk_layout(struct g16_params_info *out, const struct params_src *s, uint64_t size,
                       bool vk_file, const char *path, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    out->file_bytes = size;
    uint8_t w[4];
    if (size < VK_FIXED + 4)
        return cuzk_fail(err, CUZK_E_TRUNCATED,
                         "%s: vk: truncated: the fixed vk points and the ic count need %d bytes, "
                         "the file has %" PRIu64, path, VK_FIXED + 4, size);
    if (params_src_read(s, VK_FIXED, w, 4)) return cuzk_fail(err, CUZK_E_IO, "%s: read failed: %s", path, strerror(errno));
    out->n_ic = params_be32(w);
    if (out->n_ic == 0)
        return cuzk_fail(err, CUZK_E_FORMAT, "%s: ic: count is 0 (expected >= 1: ic[0] belongs to ONE)", path);
    uint64_t off = VK_FIXED + 4;
    out->off_ic = off;
    uint64_t need = (uint64_t)out->n_ic * G1_UNC;
    if (need > size - off)
        return cuzk_fail(err, CUZK_E_TRUNCATED,
                         "%s: ic: truncated: %" PRIu32 " points need %" PRIu64 " bytes at offset %" PRIu64
                         ", only %" PRIu64 " available (ic[%" PRIu64 "] is cut)",
                         path, out->n_ic, need, off, size - off, (size - off) / G1_UNC);
    off += need;
    if (off == size) {
        out->vk_only = true;
        return CUZK_OK;
    }
    if (vk_file)
        return cuzk_fail(err, CUZK_E_FORMAT,
                         "%s: trailing garbage: %" PRIu64 " bytes after ic (ic ends at offset %" PRIu64
                         ", the file has %" PRIu64 " bytes; a .params file is not a .vk)",
                         path, size - off, off, size);
    uint64_t *counts[5] = {&out->n_h, &out->n_l, &out->n_a, &out->n_b_g1, &out->n_b_g2};
    uint64_t *offs[5] = {&out->off_h, &out->off_l, &out->off_a, &out->off_b_g1, &out->off_b_g2};
    for (int k = 0; k < 5; k++) {
        const char *name = params_sect_name[k + 1];
        unsigned pt = k == 4 ? G2_UNC : G1_UNC;
        if (size - off < 4)
            return cuzk_fail(err, CUZK_E_TRUNCATED,
                             "%s: %s: truncated: the count needs 4 bytes at offset %" PRIu64
                             ", only %" PRIu64 " available", path, name, off, size - off);
        if (params_src_read(s, off, w, 4)) return cuzk_fail(err, CUZK_E_IO, "%s: read failed: %s", path, strerror(errno));
        *counts[k] = params_be32(w);
        off += 4;
        *offs[k] = off;
        need = *counts[k] * pt;
        if (need > size - off)
            return cuzk_fail(err, CUZK_E_TRUNCATED,
                             "%s: %s: truncated: %" PRIu64 " points need %" PRIu64 " bytes at offset %" PRIu64
                             ", only %" PRIu64 " available (%s[%" PRIu64 "] is cut)",
                             path, name, *counts[k], need, off, size - off, name, (size - off) / pt);
        off += need;
    }
    if (off != size)
        return cuzk_fail(err, CUZK_E_FORMAT,
                         "%s: trailing garbage: %" PRIu64 " bytes after the last section "
                         "(b_g2 ends at offset %" PRIu64 ", the file has %" PRIu64 " bytes)",
                         path, size - off, off, size);
    /* Counts a bellperson setup cannot produce: h holds N - 1 points for a power-of-two
     * domain N; a has every input plus A-dense aux; b_g1 and b_g2 share their indices. */
    if ((out->n_h + 1) & out->n_h)
        return cuzk_fail(err, CUZK_E_FORMAT, "%s: h: count %" PRIu64 " is not 2^k - 1 (the domain is a power of two)",
                         path, out->n_h);
    if (out->n_b_g2 != out->n_b_g1)
        return cuzk_fail(err, CUZK_E_FORMAT, "%s: b_g2: count %" PRIu64 " differs from the b_g1 count %" PRIu64,
                         path, out->n_b_g2, out->n_b_g1);
    if (out->n_a < out->n_ic || out->n_a > out->n_ic + out->n_l)
        return cuzk_fail(err, CUZK_E_FORMAT,
                         "%s: a: count %" PRIu64 " outside [n_ic, n_ic + n_l] = [%" PRIu32 ", %" PRIu64 "]",
                         path, out->n_a, out->n_ic, out->n_ic + out->n_l);
    if (out->n_b_g1 > out->n_ic + out->n_l)
        return cuzk_fail(err, CUZK_E_FORMAT, "%s: b_g1: count %" PRIu64 " exceeds n_ic + n_l = %" PRIu64,
                         path, out->n_b_g1, out->n_ic + out->n_l);
    return CUZK_OK;
}

int g16_params_info(struct g16_params_info *out, const char *path, struct cuzk_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cuzk_fail(err, errno == ENOENT ? CUZK_E_NOT_FOUND : CUZK_E_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    int rc;
    if (fstat(fd, &st)) {
        rc = cuzk_fail(err, CUZK_E_IO, "%s: %s", path, strerror(errno));
    } else {
        struct params_src s = {fd};
        rc = walk_layout(out, &s, (uint64_t)st.st_size, false, path, err);
    }
    close(fd);
    return rc;
}

/* --------------------------------------------------------------- vk parse -- */

/* The vk is small: decode and fully validate it whatever the mode; every point must be a
 * non-identity subgroup element (bellperson's VerifyingKey::read rejects infinity too). */
static int vk_point_fail(struct cuzk_error *err, int rc, const char *path, const char *name,
                         int64_t idx, const char *why)
{
    if (idx >= 0) return cuzk_fail(err, rc, "%s: %s[%" PRId64 "]: %s", path, name, idx, why);
    return cuzk_fail(err, rc, "%s: vk.%s: %s", path, name, why);
}

static int parse_vk(struct g16_vk *vk, const uint8_t *buf, const struct g16_params_info *inf,
                    const char *path, struct cuzk_error *err)
{
    static const char *const names[6] = {"alpha_g1", "beta_g1", "beta_g2", "gamma_g2", "delta_g1", "delta_g2"};
    static const unsigned offs[6] = {0, 96, 192, 384, 576, 672};
    g1_aff_t *g1s[6] = {&vk->alpha_g1, &vk->beta_g1, NULL, NULL, &vk->delta_g1, NULL};
    g2_aff_t *g2s[6] = {NULL, NULL, &vk->beta_g2, &vk->gamma_g2, NULL, &vk->delta_g2};
    memset(vk, 0, sizeof *vk);
    const char *why = NULL;
    for (int k = 0; k < 6; k++) {
        int rc = g1s[k] ? params_check_dec_g1(g1s[k], buf + offs[k], &why) : params_check_dec_g2(g2s[k], buf + offs[k], &why);
        if (!rc) rc = g1s[k] ? params_check_point_g1(g1s[k], G16_VALIDATE_FULL, &why) : params_check_point_g2(g2s[k], G16_VALIDATE_FULL, &why);
        if (rc) return vk_point_fail(err, rc, path, names[k], -1, why);
    }
    vk->ic = cuzk_malloc((size_t)inf->n_ic * sizeof(g1_aff_t));
    if (!vk->ic) return cuzk_fail(err, CUZK_E_NOMEM, "%s: ic: cannot allocate %" PRIu32 " points", path, inf->n_ic);
    vk->n_ic = inf->n_ic;
    for (uint32_t i = 0; i < inf->n_ic; i++) {
        int rc = params_check_dec_g1(&vk->ic[i], buf + inf->off_ic + (uint64_t)i * G1_UNC, &why);
        if (!rc) rc = params_check_point_g1(&vk->ic[i], G16_VALIDATE_FULL, &why);
        if (rc) {
            g16_vk_free(vk);
            return vk_point_fail(err, rc, path, "ic", i, why);
        }
    }
    return CUZK_OK;
}

/* ------------------------------------------------------------------- read -- */

int g16_params_read(struct g16_pk *pk, const char *path, enum g16_validate mode,
                    struct pool *pool, struct cuzk_error *err)
{
    struct g16_params_read_opts o = {.mode = mode, .use_cache = true, .progress = -1};
    return g16_params_read_ex(pk, path, &o, pool, NULL, err);
}

int g16_params_read_ex(struct g16_pk *pk, const char *path, const struct g16_params_read_opts *o,
                       struct pool *pool, struct g16_params_read_report *report,
                       struct cuzk_error *err)
{
    struct g16_params_read_report rep_local;
    struct g16_params_read_report *rep = report ? report : &rep_local;
    memset(rep, 0, sizeof *rep);
    memset(pk, 0, sizeof *pk);
    if (!path || !o || o->mode > G16_VALIDATE_FULL)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "g16_params_read: bad arguments");
    if (!pool) pool = pool_default();
    uint64_t t0 = cuzk_now_ns();

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cuzk_fail(err, errno == ENOENT ? CUZK_E_NOT_FOUND : CUZK_E_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int rc = cuzk_fail(err, CUZK_E_IO, "%s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    uint64_t size = (uint64_t)st.st_size;
    struct params_cache_key key = {size, (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

    int rc;
    struct params_chunk *res = NULL;
    uint8_t *hdr = NULL;   /* vk and ic: everything before the h count word */
    struct g16_params_info inf;
    struct params_src s = {fd};
    if (!size) {
        rc = cuzk_fail(err, CUZK_E_TRUNCATED, "%s: vk: truncated: the file is empty", path);
        goto out;
    }
    rc = walk_layout(&inf, &s, size, false, path, err);
    if (rc) goto out;
    if (inf.vk_only) {
        rc = cuzk_fail(err, CUZK_E_TRUNCATED,
                       "%s: h: truncated: the file ends after ic (offset %" PRIu64 "); is this a .vk file?",
                       path, size);
        goto out;
    }
    if (!(hdr = cuzk_malloc(inf.off_h - 4))) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate the vk buffer", path);
        goto out;
    }
    if (params_src_read(&s, 0, hdr, inf.off_h - 4)) {
        rc = cuzk_fail(err, CUZK_E_IO, "%s: read failed: %s", path, strerror(errno));
        goto out;
    }
    rc = parse_vk(&pk->vk, hdr, &inf, path, err);
    if (rc) goto out;

    struct params_sect secs[5] = {
        {1, false, inf.n_h, inf.off_h, NULL, 0},
        {2, false, inf.n_l, inf.off_l, NULL, 0},
        {3, false, inf.n_a, inf.off_a, NULL, 0},
        {4, false, inf.n_b_g1, inf.off_b_g1, NULL, 0},
        {5, true, inf.n_b_g2, inf.off_b_g2, NULL, 0},
    };
    pk->n_h = inf.n_h;
    pk->n_l = inf.n_l;
    pk->n_a = inf.n_a;
    pk->n_b = inf.n_b_g1;
    void **dst[5] = {(void **)&pk->h, (void **)&pk->l, (void **)&pk->a, (void **)&pk->b_g1, (void **)&pk->b_g2};
    uint64_t nchunks = 0;
    for (int k = 0; k < 5; k++) {
        size_t psz = secs[k].g2 ? sizeof(g2_aff_t) : sizeof(g1_aff_t);
        if (secs[k].n > SIZE_MAX / psz || !(*dst[k] = cuzk_malloc((size_t)secs[k].n * psz))) {
            rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: %s: cannot allocate %" PRIu64 " points", path,
                           params_sect_name[secs[k].id], secs[k].n);
            goto out;
        }
        secs[k].dst = *dst[k];
        secs[k].chunk0 = nchunks;
        nchunks += (secs[k].n + CHUNK_PTS - 1) / CHUNK_PTS;
    }
    res = cuzk_calloc(nchunks ? nchunks : 1, sizeof *res);
    if (!res) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate validation state", path);
        goto out;
    }

    bool progress = o->progress > 0 || (o->progress < 0 && size > PROGRESS_AUTO_BYTES);
    uint64_t body = 0;   /* point bytes after ic: what the passes report progress on */
    for (int k = 0; k < 5; k++) body += secs[k].n * (secs[k].g2 ? G2_UNC : G1_UNC);
    /* the caller's tracker (a status page reads it), else our own; either prints to stderr
     * only when progress is asked */
    struct cuzk_progress own;
    struct cuzk_progress *pr = o->tracker ? o->tracker : &own;
    cuzk_progress_init(pr, progress ? stderr : NULL, path, "MiB", 1.0 / (1u << 20));
    char cached[33] = {0};
    bool want_digest = o->mode != G16_VALIDATE_NONE;
    /* with a checker, the CPU passes check the curve and the checker the subgroups */
    bool ext = o->checker && o->mode == G16_VALIDATE_FULL;
    enum g16_validate cpu_mode = ext ? G16_VALIDATE_CURVE : o->mode;
    /* Check inline with the decode unless a cache entry could let us skip the checks. */
    bool maybe_hit = want_digest && o->use_cache && params_cache_lookup(path, &key, cached);
    unsigned flags = PARAMS_PASS_DECODE | (want_digest ? PARAMS_PASS_HASH : 0) |
                     (want_digest && !maybe_hit ? PARAMS_PASS_CHECK : 0);
    cuzk_progress_phase(pr, (flags & PARAMS_PASS_CHECK) ? "reading and checking" : "reading", body);
    rc = params_check_run(fd, secs, 5, res, flags, cpu_mode, pool, pr,
                          ext && (flags & PARAMS_PASS_CHECK) ? o->checker : NULL, &rep->ext_check_ns,
                          &rep->ext_wait_ns, path, err);
    if (rc) goto out;
    cuzk_progress_end(pr);
    rep->read_ns = cuzk_now_ns() - t0;

    if (want_digest) {
        /* digest = H(vk and ic bytes || per section: count word, chunk hashes in order). */
        size_t blen = 16 + 5 * 4 + (size_t)nchunks * 16;
        uint8_t *buf = cuzk_malloc(blen);
        if (!buf) {
            rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate the digest buffer", path);
            goto out;
        }
        size_t at = 0;
        g16_digest128(buf, hdr, inf.off_h - 4);
        at += 16;
        for (int k = 0; k < 5; k++) {
            params_put_be32(buf + at, (uint32_t)secs[k].n);
            at += 4;
            for (uint64_t c = 0; c < (secs[k].n + CHUNK_PTS - 1) / CHUNK_PTS; c++, at += 16)
                memcpy(buf + at, res[secs[k].chunk0 + c].hash, 16);
        }
        g16_digest128(rep->digest, buf, at);
        cuzk_free(buf);
        rep->digest_valid = true;
        char hex[33];
        params_cache_hex(hex, rep->digest);
        uint64_t t1 = cuzk_now_ns();
        if (maybe_hit && !strcmp(hex, cached)) {
            rep->cache_hit = true;
        } else {
            if (!(flags & PARAMS_PASS_CHECK)) {
                cuzk_progress_phase(pr, "checking", body);
                rc = params_check_run(fd, secs, 5, res, PARAMS_PASS_CHECK, cpu_mode, pool, pr,
                                      ext ? o->checker : NULL, &rep->ext_check_ns,
                                      &rep->ext_wait_ns, path, err);
                if (rc) goto out;
                cuzk_progress_end(pr);
            }
            if (o->mode == G16_VALIDATE_FULL && o->use_cache) rep->cache_written = params_cache_store(path, &key, hex);
        }
        rep->check_ns = cuzk_now_ns() - t1;
    }

out:
    cuzk_free(res);
    cuzk_free(hdr);
    close(fd);
    if (rc) g16_pk_free(pk);
    return rc;
}

/* ------------------------------------------------------------------ vk I/O -- */

int g16_vk_read(struct g16_vk *vk, const char *path, struct cuzk_error *err)
{
    memset(vk, 0, sizeof *vk);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cuzk_fail(err, errno == ENOENT ? CUZK_E_NOT_FOUND : CUZK_E_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    struct g16_params_info inf;
    uint8_t *buf = NULL;
    int rc;
    if (fstat(fd, &st)) {
        rc = cuzk_fail(err, CUZK_E_IO, "%s: %s", path, strerror(errno));
        goto out;
    }
    struct params_src s = {fd};
    rc = walk_layout(&inf, &s, (uint64_t)st.st_size, true, path, err);
    if (rc) goto out;
    buf = cuzk_malloc((size_t)st.st_size);
    if (!buf) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate %lld bytes", path, (long long)st.st_size);
        goto out;
    }
    if (params_src_read(&s, 0, buf, (size_t)st.st_size)) {
        rc = cuzk_fail(err, CUZK_E_IO, "%s: read failed", path);
        goto out;
    }
    rc = parse_vk(vk, buf, &inf, path, err);
out:
    cuzk_free(buf);
    close(fd);
    return rc;
}
