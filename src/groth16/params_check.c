/* params_check.c: the points of a .params file: decoding and the curve / subgroup checks, the
 * chunked parallel passes over its sections (read, digest, check, with progress) and the
 * external checker (a FULL validation's subgroup checks on the GPU) beside them. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "params_internal.h"

#define SLICES 8                     /* per section: what the external checker takes at a time */

/* ------------------------------------------------------------ point decode -- */

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
int params_check_dec_g1(g1_aff_t *out, const uint8_t *in, const char **why)
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
int params_check_dec_g2(g2_aff_t *out, const uint8_t *in, const char **why)
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

int params_check_point_g1(const g1_aff_t *p, enum g16_validate mode, const char **why)
{
    if (mode >= G16_VALIDATE_CURVE && !g1_aff_is_on_curve(p)) { *why = "not on the curve"; return CUZK_E_NOT_ON_CURVE; }
    if (mode >= G16_VALIDATE_FULL && !g1_aff_in_subgroup(p)) {
        *why = "not in the prime-order subgroup";
        return CUZK_E_NOT_IN_SUBGROUP;
    }
    return CUZK_OK;
}
int params_check_point_g2(const g2_aff_t *p, enum g16_validate mode, const char **why)
{
    if (mode >= G16_VALIDATE_CURVE && !g2_aff_is_on_curve(p)) { *why = "not on the curve"; return CUZK_E_NOT_ON_CURVE; }
    if (mode >= G16_VALIDATE_FULL && !g2_aff_in_subgroup(p)) {
        *why = "not in the prime-order subgroup";
        return CUZK_E_NOT_IN_SUBGROUP;
    }
    return CUZK_OK;
}

/* -------------------------------------------------------- section passes -- */

struct pass {
    int fd;                           /* the file: each chunk is pread into its worker's buffer */
    uint8_t **wbuf;                   /* per pool worker, CHUNK_PTS * G2_UNC bytes */
    const struct params_sect *s;
    struct params_chunk *res;
    unsigned flags;
    enum g16_validate mode;
    atomic_uint_fast64_t first_bad;   /* lowest bad index seen so far: later chunks stop early */
    struct cuzk_progress *pr;
    size_t c0;                        /* the slice's first chunk in the section */
};

static void pass_chunks(void *ctx, size_t begin, size_t end, unsigned worker)
{
    struct pass *ps = ctx;
    const struct params_sect *s = ps->s;
    size_t psz = s->g2 ? G2_UNC : G1_UNC;
    for (size_t c = ps->c0 + begin; c < ps->c0 + end; c++) {
        uint64_t i0 = (uint64_t)c * CHUNK_PTS, i1 = i0 + CHUNK_PTS;
        if (i1 > s->n) i1 = s->n;
        struct params_chunk *r = &ps->res[s->chunk0 + c];
        r->bad = UINT64_MAX;
        r->code = CUZK_OK;
        if (i0 >= atomic_load_explicit(&ps->first_bad, memory_order_relaxed)) continue;
        /* Read, not mapped: mapped file pages count in the daemon's resident set (a 44 GiB
         * key's first load peaked at twice its size), and per-chunk reads need no page faults. */
        const uint8_t *in = NULL;
        if (ps->flags & (PARAMS_PASS_DECODE | PARAMS_PASS_HASH)) {
            struct params_src f = {ps->fd};
            if (params_src_read(&f, s->off + i0 * psz, ps->wbuf[worker], (size_t)(i1 - i0) * psz)) {
                r->bad = i0;
                r->code = CUZK_E_IO;
                r->why = "read failed (file truncated or I/O error)";
                params_note_bad(&ps->first_bad, i0);
                continue;
            }
            in = ps->wbuf[worker];
        }
        if (ps->flags & PARAMS_PASS_HASH) g16_digest128(r->hash, in, (i1 - i0) * psz);
        for (uint64_t i = i0; i < i1; i++) {
            const char *why = NULL;
            int rc = CUZK_OK;
            if (s->g2) {
                g2_aff_t *p = (g2_aff_t *)s->dst + i;
                if (ps->flags & PARAMS_PASS_DECODE) rc = params_check_dec_g2(p, in + (i - i0) * psz, &why);
                if (!rc && (ps->flags & PARAMS_PASS_CHECK)) rc = params_check_point_g2(p, ps->mode, &why);
            } else {
                g1_aff_t *p = (g1_aff_t *)s->dst + i;
                if (ps->flags & PARAMS_PASS_DECODE) rc = params_check_dec_g1(p, in + (i - i0) * psz, &why);
                if (!rc && (ps->flags & PARAMS_PASS_CHECK)) rc = params_check_point_g1(p, ps->mode, &why);
            }
            if (rc) {
                r->bad = i;
                r->code = rc;
                r->why = why;
                params_note_bad(&ps->first_bad, i);
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
    const struct params_sect *secs;
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
    const struct params_sect *s = &x->secs[k];
    size_t n = (size_t)(i1 - i0), bad = n;
    uint64_t t0 = cuzk_now_ns();
    int rc = s->g2 ? x->c->g2(x->c->self, (const g2_aff_t *)s->dst + i0, n, true, &bad, &x->err)
                   : x->c->g1(x->c->self, (const g1_aff_t *)s->dst + i0, n, true, &bad, &x->err);
    x->ns += cuzk_now_ns() - t0;
    if (rc) return cuzk_fail_prefix(&x->err, rc, "%s: %s: point checker", x->path, params_sect_name[s->id]);
    if (bad >= n) return CUZK_OK;
    uint64_t i = i0 + bad;
    const char *why = "rejected by the point checker (the CPU check passes: checker fault)";
    rc = s->g2 ? params_check_point_g2((const g2_aff_t *)s->dst + i, G16_VALIDATE_FULL, &why)
               : params_check_point_g1((const g1_aff_t *)s->dst + i, G16_VALIDATE_FULL, &why);
    return cuzk_fail(&x->err, rc ? rc : CUZK_E_INTERNAL, "%s: %s[%" PRIu64 "]: %s", x->path,
                     params_sect_name[s->id], i, why);
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
static int run_pass(int fd, struct params_sect *secs, int nsec, struct params_chunk *res,
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
        struct params_sect *s = &secs[k];
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
                const struct params_chunk *r = &res[s->chunk0 + c];
                if (r->bad != UINT64_MAX) {
                    rc = cuzk_fail(err, r->code, "%s: %s[%" PRIu64 "]: %s", path, params_sect_name[s->id], r->bad, r->why);
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
int params_check_run(int fd, struct params_sect *secs, int nsec, struct params_chunk *res,
                     unsigned flags, enum g16_validate mode, struct pool *pool,
                     struct cuzk_progress *pr, const struct g16_point_checker *c,
                     uint64_t *ext_ns, uint64_t *wait_ns, const char *path,
                     struct cuzk_error *err)
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
