/* params.c: the bellperson .params and .vk files: layout walk, chunked parallel read with validation
 * (none / curve / full, multi-threaded, progress), the digest cache, and the writers.
 * See docs/formats.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "cuzk/progress.h"
#include "cuzk/util.h"

#define G1_UNC 96
#define G2_UNC 192
#define VK_FIXED 864                 /* alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 */
#define CHUNK_PTS 8192               /* points per parallel work item (fixed: the digest uses it) */
#define PROGRESS_AUTO_BYTES (1ull << 30)
#define SLICES 8                     /* per section: what the external checker takes at a time */

/* ------------------------------------------------------------------ digest -- */

/* A 4-lane multiply/xorshift hash. Not cryptographic: the cache only has to notice that a
 * file changed by accident (a partial copy, a bit flip, a different file under the same
 * name), not resist someone who crafts a collision; anyone who can write the file can also
 * write its cache. 4 independent lanes keep it at memory speed. */
#define K0 0x9e3779b97f4a7c15ull
#define K1 0xc2b2ae3d27d4eb4full
#define K2 0x165667b19e3779f9ull
#define K3 0xd6e8feb86659fd93ull

static inline uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);   /* little-endian hosts only (x86-64, aarch64), as the whole library */
    return v;
}
static inline uint64_t lane(uint64_t v, uint64_t m, uint64_t k)
{
    v = (v ^ m) * k;    /* odd multiplier: a bijection, so every input word changes the lane */
    return v ^ (v >> 29);
}
static inline uint64_t fmix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

void g16_digest128(uint8_t out[16], const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t v0 = K0, v1 = K1, v2 = K2, v3 = K3;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        v0 = lane(v0, rd64(p + i), K1);
        v1 = lane(v1, rd64(p + i + 8), K2);
        v2 = lane(v2, rd64(p + i + 16), K3);
        v3 = lane(v3, rd64(p + i + 24), K0);
    }
    uint8_t tail[32] = {0};
    memcpy(tail, p + i, n - i);
    v0 = lane(v0, rd64(tail), K1);
    v1 = lane(v1, rd64(tail + 8), K2);
    v2 = lane(v2, rd64(tail + 16), K3);
    v3 = lane(v3, rd64(tail + 24) ^ (uint64_t)n, K0);   /* length: "ab" + 0 != "ab" */
    uint64_t h0 = fmix(v0 ^ ((v2 << 17) | (v2 >> 47)) ^ K2);
    uint64_t h1 = fmix(v1 ^ ((v3 << 41) | (v3 >> 23)) ^ h0);
    h0 = fmix(h0 ^ v3 ^ h1);
    memcpy(out, &h0, 8);
    memcpy(out + 8, &h1, 8);
}

/* ------------------------------------------------------------ point decode -- */

static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* Flag byte of an uncompressed point: must be 0, except the infinity encoding 0x40 + zeros,
 * which keys never contain (bellperson rejects it). */
static int check_flags(const uint8_t *in, size_t len, const char **why)
{
    uint8_t f = in[0] & 0xe0;
    if (!f) return CUZK_OK;
    if (in[0] == 0x40) {
        size_t k = 1;
        while (k < len && !in[k]) k++;
        if (k == len) {
            *why = "point at infinity (not allowed in a key)";
            return CUZK_E_IDENTITY;
        }
        *why = "infinity flag with non-zero coordinate bytes";
        return CUZK_E_BAD_ENCODING;
    }
    *why = (f & 0x80) ? "compressed flag (0x80) set in an uncompressed point"
         : (f & 0x40) ? "infinity flag with non-zero coordinate bytes"
                      : "y-sign flag (0x20) set in an uncompressed point";
    return CUZK_E_BAD_ENCODING;
}

/* Bytes -> Montgomery affine; coordinates must be < p. (0, 0) is our in-memory infinity,
 * so its unflagged encoding is refused here in every mode (it is not on the curve). */
static int dec_g1(g1_aff_t *out, const uint8_t *in, const char **why)
{
    int rc = check_flags(in, G1_UNC, why);
    if (rc) return rc;
    if (fp_from_bytes_be(&out->x, in)) { *why = "x not canonical (>= p)"; return CUZK_E_BAD_ENCODING; }
    if (fp_from_bytes_be(&out->y, in + 48)) { *why = "y not canonical (>= p)"; return CUZK_E_BAD_ENCODING; }
    if (fp_is_zero(&out->x) && fp_is_zero(&out->y)) {
        *why = "not on the curve ((0, 0) without the infinity flag)";
        return CUZK_E_NOT_ON_CURVE;
    }
    return CUZK_OK;
}

/* G2: x.c1 || x.c0 || y.c1 || y.c0 (imaginary part first). */
static int dec_g2(g2_aff_t *out, const uint8_t *in, const char **why)
{
    int rc = check_flags(in, G2_UNC, why);
    if (rc) return rc;
    if (fp_from_bytes_be(&out->x.c1, in)) { *why = "x.c1 not canonical (>= p)"; return CUZK_E_BAD_ENCODING; }
    if (fp_from_bytes_be(&out->x.c0, in + 48)) { *why = "x.c0 not canonical (>= p)"; return CUZK_E_BAD_ENCODING; }
    if (fp_from_bytes_be(&out->y.c1, in + 96)) { *why = "y.c1 not canonical (>= p)"; return CUZK_E_BAD_ENCODING; }
    if (fp_from_bytes_be(&out->y.c0, in + 144)) { *why = "y.c0 not canonical (>= p)"; return CUZK_E_BAD_ENCODING; }
    if (g2_aff_is_inf(out)) {
        *why = "not on the curve ((0, 0) without the infinity flag)";
        return CUZK_E_NOT_ON_CURVE;
    }
    return CUZK_OK;
}

static int chk_g1(const g1_aff_t *p, enum g16_validate mode, const char **why)
{
    if (mode >= G16_VALIDATE_CURVE && !g1_aff_is_on_curve(p)) { *why = "not on the curve"; return CUZK_E_NOT_ON_CURVE; }
    if (mode >= G16_VALIDATE_FULL && !g1_aff_in_subgroup(p)) {
        *why = "not in the prime-order subgroup";
        return CUZK_E_NOT_IN_SUBGROUP;
    }
    return CUZK_OK;
}
static int chk_g2(const g2_aff_t *p, enum g16_validate mode, const char **why)
{
    if (mode >= G16_VALIDATE_CURVE && !g2_aff_is_on_curve(p)) { *why = "not on the curve"; return CUZK_E_NOT_ON_CURVE; }
    if (mode >= G16_VALIDATE_FULL && !g2_aff_in_subgroup(p)) {
        *why = "not in the prime-order subgroup";
        return CUZK_E_NOT_IN_SUBGROUP;
    }
    return CUZK_OK;
}

/* ---------------------------------------------------------------- layout -- */

/* Where the bytes come from: the file, read with pread (never mapped: see pass_chunks). */
struct src {
    int fd;
};
static int src_read(const struct src *s, uint64_t off, void *buf, size_t n)
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

static const char *const SECT_NAME[6] = {"ic", "h", "l", "a", "b_g1", "b_g2"};

/* vk_file: the file must end right after ic (a .vk); otherwise either layout is accepted. */
static int walk_layout(struct g16_params_info *out, const struct src *s, uint64_t size,
                       bool vk_file, const char *path, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    out->file_bytes = size;
    uint8_t w[4];
    if (size < VK_FIXED + 4)
        return cuzk_fail(err, CUZK_E_TRUNCATED,
                         "%s: vk: truncated: the fixed vk points and the ic count need %d bytes, "
                         "the file has %" PRIu64, path, VK_FIXED + 4, size);
    if (src_read(s, VK_FIXED, w, 4)) return cuzk_fail(err, CUZK_E_IO, "%s: read failed: %s", path, strerror(errno));
    out->n_ic = be32(w);
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
        const char *name = SECT_NAME[k + 1];
        unsigned pt = k == 4 ? G2_UNC : G1_UNC;
        if (size - off < 4)
            return cuzk_fail(err, CUZK_E_TRUNCATED,
                             "%s: %s: truncated: the count needs 4 bytes at offset %" PRIu64
                             ", only %" PRIu64 " available", path, name, off, size - off);
        if (src_read(s, off, w, 4)) return cuzk_fail(err, CUZK_E_IO, "%s: read failed: %s", path, strerror(errno));
        *counts[k] = be32(w);
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
        struct src s = {fd};
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
        int rc = g1s[k] ? dec_g1(g1s[k], buf + offs[k], &why) : dec_g2(g2s[k], buf + offs[k], &why);
        if (!rc) rc = g1s[k] ? chk_g1(g1s[k], G16_VALIDATE_FULL, &why) : chk_g2(g2s[k], G16_VALIDATE_FULL, &why);
        if (rc) return vk_point_fail(err, rc, path, names[k], -1, why);
    }
    vk->ic = cuzk_malloc((size_t)inf->n_ic * sizeof(g1_aff_t));
    if (!vk->ic) return cuzk_fail(err, CUZK_E_NOMEM, "%s: ic: cannot allocate %" PRIu32 " points", path, inf->n_ic);
    vk->n_ic = inf->n_ic;
    for (uint32_t i = 0; i < inf->n_ic; i++) {
        int rc = dec_g1(&vk->ic[i], buf + inf->off_ic + (uint64_t)i * G1_UNC, &why);
        if (!rc) rc = chk_g1(&vk->ic[i], G16_VALIDATE_FULL, &why);
        if (rc) {
            g16_vk_free(vk);
            return vk_point_fail(err, rc, path, "ic", i, why);
        }
    }
    return CUZK_OK;
}

/* -------------------------------------------------------- section passes -- */

struct sect {
    int id;                  /* index into SECT_NAME */
    bool g2;
    uint64_t n, off;         /* points, file offset of the first */
    void *dst;               /* g1_aff_t[n] or g2_aff_t[n] */
    uint64_t chunk0;         /* index of this section's first chunk in the pass's chunk array */
};

struct chunk_res {
    uint8_t hash[16];
    uint64_t bad;            /* first bad point index in this chunk, UINT64_MAX if none */
    int code;
    const char *why;
};

enum { PASS_DECODE = 1, PASS_HASH = 2, PASS_CHECK = 4 };

struct pass {
    int fd;                           /* the file: each chunk is pread into its worker's buffer */
    uint8_t **wbuf;                   /* per pool worker, CHUNK_PTS * G2_UNC bytes */
    const struct sect *s;
    struct chunk_res *res;
    unsigned flags;
    enum g16_validate mode;
    atomic_uint_fast64_t first_bad;   /* lowest bad index seen so far: later chunks stop early */
    struct cuzk_progress *pr;
    size_t c0;                        /* the slice's first chunk in the section */
};

static void note_bad(atomic_uint_fast64_t *bad, uint64_t i)
{
    uint_fast64_t cur = atomic_load(bad);
    while (i < cur && !atomic_compare_exchange_weak(bad, &cur, i)) {}
}

static void pass_chunks(void *ctx, size_t begin, size_t end, unsigned worker)
{
    struct pass *ps = ctx;
    const struct sect *s = ps->s;
    size_t psz = s->g2 ? G2_UNC : G1_UNC;
    for (size_t c = ps->c0 + begin; c < ps->c0 + end; c++) {
        uint64_t i0 = (uint64_t)c * CHUNK_PTS, i1 = i0 + CHUNK_PTS;
        if (i1 > s->n) i1 = s->n;
        struct chunk_res *r = &ps->res[s->chunk0 + c];
        r->bad = UINT64_MAX;
        r->code = CUZK_OK;
        if (i0 >= atomic_load_explicit(&ps->first_bad, memory_order_relaxed)) continue;
        /* Read, not mapped: mapped file pages count in the daemon's resident set (a 44 GiB
         * key's first load peaked at twice its size), and per-chunk reads need no page faults. */
        const uint8_t *in = NULL;
        if (ps->flags & (PASS_DECODE | PASS_HASH)) {
            struct src f = {ps->fd};
            if (src_read(&f, s->off + i0 * psz, ps->wbuf[worker], (size_t)(i1 - i0) * psz)) {
                r->bad = i0;
                r->code = CUZK_E_IO;
                r->why = "read failed (file truncated or I/O error)";
                note_bad(&ps->first_bad, i0);
                continue;
            }
            in = ps->wbuf[worker];
        }
        if (ps->flags & PASS_HASH) g16_digest128(r->hash, in, (i1 - i0) * psz);
        for (uint64_t i = i0; i < i1; i++) {
            const char *why = NULL;
            int rc = CUZK_OK;
            if (s->g2) {
                g2_aff_t *p = (g2_aff_t *)s->dst + i;
                if (ps->flags & PASS_DECODE) rc = dec_g2(p, in + (i - i0) * psz, &why);
                if (!rc && (ps->flags & PASS_CHECK)) rc = chk_g2(p, ps->mode, &why);
            } else {
                g1_aff_t *p = (g1_aff_t *)s->dst + i;
                if (ps->flags & PASS_DECODE) rc = dec_g1(p, in + (i - i0) * psz, &why);
                if (!rc && (ps->flags & PASS_CHECK)) rc = chk_g1(p, ps->mode, &why);
            }
            if (rc) {
                r->bad = i;
                r->code = rc;
                r->why = why;
                note_bad(&ps->first_bad, i);
                break;
            }
        }
        cuzk_progress_add(ps->pr, (i1 - i0) * psz);
    }
}

/* The external checker (a FULL validation's subgroup checks on the GPU) runs on its own thread
 * beside the CPU pass: the pass publishes each slice of a section once its points are decoded
 * and on the curve, and the checker takes what is published, in file order. A load then costs
 * the slower of the two instead of their sum. */
struct ext_run {
    const struct g16_point_checker *c;
    const struct sect *secs;
    int nsec;
    const char *path;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int sec;                 /* published: sections [0, sec) whole and points [0, pts) of sec */
    uint64_t pts;
    bool end;                /* the pass is over: nothing more will be published */
    atomic_bool failed;      /* the checker failed or found a bad point: the pass may stop */
    int rc;
    struct cuzk_error err;
    uint64_t ns;             /* time inside the checker */
};

/* The points of one slice of a section of n points (the last slice may be shorter). */
static uint64_t slice_pts(uint64_t n)
{
    uint64_t nchunks = (n + CHUNK_PTS - 1) / CHUNK_PTS;
    return (nchunks + SLICES - 1) / SLICES * CHUNK_PTS;
}

static void ext_publish(struct ext_run *x, int sec, uint64_t pts)
{
    pthread_mutex_lock(&x->mu);
    x->sec = sec, x->pts = pts;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

static void ext_end(struct ext_run *x)
{
    pthread_mutex_lock(&x->mu);
    x->end = true;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

/* Points [i0, i1) of section k; a point the checker reports is checked again on the CPU for the
 * message. */
static int ext_check(struct ext_run *x, int k, uint64_t i0, uint64_t i1)
{
    const struct sect *s = &x->secs[k];
    size_t n = (size_t)(i1 - i0), bad = n;
    uint64_t t0 = cuzk_now_ns();
    int rc = s->g2 ? x->c->g2(x->c->self, (const g2_aff_t *)s->dst + i0, n, true, &bad, &x->err)
                   : x->c->g1(x->c->self, (const g1_aff_t *)s->dst + i0, n, true, &bad, &x->err);
    x->ns += cuzk_now_ns() - t0;
    if (rc) return cuzk_fail_prefix(&x->err, rc, "%s: %s: point checker", x->path, SECT_NAME[s->id]);
    if (bad >= n) return CUZK_OK;
    uint64_t i = i0 + bad;
    const char *why = "rejected by the point checker (the CPU check passes: checker fault)";
    rc = s->g2 ? chk_g2((const g2_aff_t *)s->dst + i, G16_VALIDATE_FULL, &why)
               : chk_g1((const g1_aff_t *)s->dst + i, G16_VALIDATE_FULL, &why);
    return cuzk_fail(&x->err, rc ? rc : CUZK_E_INTERNAL, "%s: %s[%" PRIu64 "]: %s", x->path,
                     SECT_NAME[s->id], i, why);
}

static void *ext_main(void *arg)
{
    struct ext_run *x = arg;
    uint64_t at = 0;   /* checked: points [0, at) of section k */
    for (int k = 0; k < x->nsec;) {
        pthread_mutex_lock(&x->mu);
        while (!x->end && x->sec == k && x->pts <= at) pthread_cond_wait(&x->cv, &x->mu);
        bool whole = x->sec > k;   /* else x->sec == k: the checker never runs ahead */
        uint64_t upto = whole ? x->secs[k].n : x->pts;
        pthread_mutex_unlock(&x->mu);
        /* one slice per call: the GPU checker holds the device lock for one slice at a time,
         * so proofs on that device wait at most that long during a load */
        const uint64_t sp = slice_pts(x->secs[k].n);
        if (upto > at + sp) upto = at + sp;
        if (upto > at) {
            if ((x->rc = ext_check(x, k, at, upto))) {
                atomic_store(&x->failed, true);
                break;
            }
            at = upto;
        } else if (whole) {
            k++, at = 0;
        } else {
            break;   /* the pass ended before this point */
        }
    }
    return NULL;
}

/* Run one pass over every section; reports the first bad point of the first bad section. With
 * x, each good slice is published to the checker, and the pass stops once the checker fails. */
static int run_pass(int fd, struct sect *secs, int nsec, struct chunk_res *res,
                    unsigned flags, enum g16_validate mode, struct pool *pool, struct cuzk_progress *pr,
                    struct ext_run *x, const char *path, struct cuzk_error *err)
{
    unsigned nw = pool_size(pool);
    uint8_t **wbuf = cuzk_calloc(nw ? nw : 1, sizeof *wbuf);
    int rc = wbuf ? CUZK_OK : cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate read buffers", path);
    for (unsigned w = 0; !rc && w < nw; w++)
        if (!(wbuf[w] = cuzk_malloc((size_t)CHUNK_PTS * G2_UNC)))
            rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate read buffers", path);
    for (int k = 0; !rc && k < nsec; k++) {
        struct sect *s = &secs[k];
        size_t nchunks = (size_t)((s->n + CHUNK_PTS - 1) / CHUNK_PTS);
        size_t per = x ? (size_t)(slice_pts(s->n) / CHUNK_PTS) : nchunks;
        struct pass ps = {.fd = fd, .wbuf = wbuf, .s = s, .res = res, .flags = flags, .mode = mode, .pr = pr};
        atomic_init(&ps.first_bad, UINT64_MAX);
        for (size_t c0 = 0; !rc && c0 < nchunks; c0 += per) {
            if (x && atomic_load(&x->failed)) goto out;   /* the caller reports the checker's error */
            size_t c1 = nchunks - c0 < per ? nchunks : c0 + per;
            ps.c0 = c0;
            /* G2 checks cost ~3x G1; one chunk per item is already coarse enough either way. */
            pool_parallel_for(pool, c1 - c0, 1, pass_chunks, &ps);
            for (size_t c = c0; c < c1; c++) {
                const struct chunk_res *r = &res[s->chunk0 + c];
                if (r->bad != UINT64_MAX) {
                    rc = cuzk_fail(err, r->code, "%s: %s[%" PRIu64 "]: %s", path, SECT_NAME[s->id], r->bad, r->why);
                    break;
                }
            }
            if (!rc && x && c1 < nchunks) ext_publish(x, k, (uint64_t)c1 * CHUNK_PTS);
        }
        if (!rc && x) ext_publish(x, k + 1, 0);
    }
out:
    for (unsigned w = 0; wbuf && w < nw; w++) cuzk_free(wbuf[w]);
    cuzk_free(wbuf);
    return rc;
}

/* run_pass with the external checker beside it (c non-NULL). The checker's error comes first:
 * it only checks points the CPU passed, so its bad point precedes the CPU's. *ext_ns gets the
 * checker's time, *wait_ns the time the read waited for it after the CPU pass. */
static int run_pass_ext(int fd, struct sect *secs, int nsec, struct chunk_res *res, unsigned flags,
                        enum g16_validate mode, struct pool *pool, struct cuzk_progress *pr,
                        const struct g16_point_checker *c, uint64_t *ext_ns, uint64_t *wait_ns,
                        const char *path, struct cuzk_error *err)
{
    if (!c) return run_pass(fd, secs, nsec, res, flags, mode, pool, pr, NULL, path, err);
    struct ext_run x = {.c = c, .secs = secs, .nsec = nsec, .path = path};
    atomic_init(&x.failed, false);
    pthread_mutex_init(&x.mu, NULL);
    pthread_cond_init(&x.cv, NULL);
    pthread_t th;
    bool beside = pthread_create(&th, NULL, ext_main, &x) == 0;
    int rc = run_pass(fd, secs, nsec, res, flags, mode, pool, pr, &x, path, err);
    uint64_t t0 = cuzk_now_ns();
    ext_end(&x);
    if (beside) pthread_join(th, NULL);
    else ext_main(&x);   /* no thread: check after the pass */
    *wait_ns += cuzk_now_ns() - t0;
    *ext_ns += x.ns;
    pthread_cond_destroy(&x.cv);
    pthread_mutex_destroy(&x.mu);
    if (x.rc) {
        if (err) *err = x.err;
        return x.rc;
    }
    return rc;
}

/* ------------------------------------------------------------ digest cache -- */

struct cache_key {
    uint64_t size;
    int64_t mtime_s, mtime_ns;
};

static char *cache_path(const char *path)
{
    size_t n = strlen(path);
    char *p = malloc(n + sizeof ".validated");
    if (p) {
        memcpy(p, path, n);
        memcpy(p + n, ".validated", sizeof ".validated");
    }
    return p;
}

static void hex16(char out[33], const uint8_t d[16])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[32] = 0;
}

/* true iff "<path>.validated" exists and records this size and mtime; *digest gets its digest. */
static bool cache_lookup(const char *path, const struct cache_key *k, char digest[33])
{
    char *cp = cache_path(path);
    if (!cp) return false;
    FILE *f = fopen(cp, "r");
    free(cp);
    if (!f) return false;
    char magic[64] = {0};
    unsigned long long size = 0;
    long long ms = 0, mns = 0;
    char dg[33] = {0};
    bool ok = fgets(magic, sizeof magic, f) && !strcmp(magic, "cuzk params validated v1\n") &&
              fscanf(f, "size %llu\nmtime %lld.%lld\ndigest %32s\n", &size, &ms, &mns, dg) == 4 &&
              size == k->size && ms == k->mtime_s && mns == k->mtime_ns && strlen(dg) == 32;
    fclose(f);
    if (ok) memcpy(digest, dg, 33);
    return ok;
}

/* Best effort: a read-only directory just means the next load validates again. */
static bool cache_store(const char *path, const struct cache_key *k, const char digest[33])
{
    char *cp = cache_path(path);
    if (!cp) return false;
    size_t n = strlen(cp) + 32;
    char *tmp = malloc(n);
    bool ok = false;
    if (tmp) {
        snprintf(tmp, n, "%s.tmp%ld", cp, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (f) {
            ok = fprintf(f, "cuzk params validated v1\nsize %llu\nmtime %lld.%09lld\ndigest %s\n",
                         (unsigned long long)k->size, (long long)k->mtime_s, (long long)k->mtime_ns,
                         digest) > 0;
            ok = (fclose(f) == 0) && ok;
            ok = ok && rename(tmp, cp) == 0;
            if (!ok) unlink(tmp);
        }
        free(tmp);
    }
    free(cp);
    return ok;
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
    struct cache_key key = {size, (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

    int rc;
    struct chunk_res *res = NULL;
    uint8_t *hdr = NULL;   /* vk and ic: everything before the h count word */
    struct g16_params_info inf;
    struct src s = {fd};
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
    if (src_read(&s, 0, hdr, inf.off_h - 4)) {
        rc = cuzk_fail(err, CUZK_E_IO, "%s: read failed: %s", path, strerror(errno));
        goto out;
    }
    rc = parse_vk(&pk->vk, hdr, &inf, path, err);
    if (rc) goto out;

    struct sect secs[5] = {
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
                           SECT_NAME[secs[k].id], secs[k].n);
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
    bool maybe_hit = want_digest && o->use_cache && cache_lookup(path, &key, cached);
    unsigned flags = PASS_DECODE | (want_digest ? PASS_HASH : 0) |
                     (want_digest && !maybe_hit ? PASS_CHECK : 0);
    cuzk_progress_phase(pr, (flags & PASS_CHECK) ? "reading and checking" : "reading", body);
    rc = run_pass_ext(fd, secs, 5, res, flags, cpu_mode, pool, pr,
                      ext && (flags & PASS_CHECK) ? o->checker : NULL, &rep->ext_check_ns,
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
            put_be32(buf + at, (uint32_t)secs[k].n);
            at += 4;
            for (uint64_t c = 0; c < (secs[k].n + CHUNK_PTS - 1) / CHUNK_PTS; c++, at += 16)
                memcpy(buf + at, res[secs[k].chunk0 + c].hash, 16);
        }
        g16_digest128(rep->digest, buf, at);
        cuzk_free(buf);
        rep->digest_valid = true;
        char hex[33];
        hex16(hex, rep->digest);
        uint64_t t1 = cuzk_now_ns();
        if (maybe_hit && !strcmp(hex, cached)) {
            rep->cache_hit = true;
        } else {
            if (!(flags & PASS_CHECK)) {
                cuzk_progress_phase(pr, "checking", body);
                rc = run_pass_ext(fd, secs, 5, res, PASS_CHECK, cpu_mode, pool, pr,
                                  ext ? o->checker : NULL, &rep->ext_check_ns, &rep->ext_wait_ns,
                                  path, err);
                if (rc) goto out;
                cuzk_progress_end(pr);
            }
            if (o->mode == G16_VALIDATE_FULL && o->use_cache) rep->cache_written = cache_store(path, &key, hex);
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
    struct src s = {fd};
    rc = walk_layout(&inf, &s, (uint64_t)st.st_size, true, path, err);
    if (rc) goto out;
    buf = cuzk_malloc((size_t)st.st_size);
    if (!buf) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: cannot allocate %lld bytes", path, (long long)st.st_size);
        goto out;
    }
    if (src_read(&s, 0, buf, (size_t)st.st_size)) {
        rc = cuzk_fail(err, CUZK_E_IO, "%s: read failed", path);
        goto out;
    }
    rc = parse_vk(vk, buf, &inf, path, err);
out:
    cuzk_free(buf);
    close(fd);
    return rc;
}

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
    put_be32(buf + VK_FIXED, vk->n_ic);
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
        char *cp = cache_path(w->path);
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
            if (g2_aff_is_inf(p)) { note_bad(&j->bad, j->base + i); continue; }
            enc_g2(j->out + i * G2_UNC, p);
        } else {
            const g1_aff_t *p = (const g1_aff_t *)j->src + j->base + i;
            if (g1_aff_is_inf(p)) { note_bad(&j->bad, j->base + i); continue; }
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
        put_be32(cnt, (uint32_t)secs[k].n);
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
        hex16(hex, d);
        if (stat(path, &st) == 0) {   /* best effort, as after a validation */
            const struct cache_key key = {(uint64_t)st.st_size, (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
            cache_store(path, &key, hex);
        }
    }
    cuzk_free(dig);
    return rc;
}
