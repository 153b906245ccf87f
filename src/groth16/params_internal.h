/* params_internal.h: what the four files of the .params / .vk code share (not installed):
 * params.c (layout walk and the read), params_check.c (point decoding and checks, the parallel
 * section passes, the external checker), params_cache.c (the digest and its cache file) and
 * params_write.c (the writers). See docs/formats.md. */
#ifndef CUZK_GROTH16_PARAMS_INTERNAL_H
#define CUZK_GROTH16_PARAMS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuzk/groth16.h"
#include "cuzk/progress.h"
#include "cuzk/util.h"

#define G1_UNC 96
#define G2_UNC 192
#define VK_FIXED 864                 /* alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 */
#define CHUNK_PTS 8192               /* points per parallel work item (fixed: the digest uses it) */

static inline uint32_t params_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void params_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* Lower *bad to i unless it is already lower (the first bad point of a parallel pass). */
static inline void params_note_bad(atomic_uint_fast64_t *bad, uint64_t i)
{
    uint_fast64_t cur = atomic_load(bad);
    while (i < cur && !atomic_compare_exchange_weak(bad, &cur, i)) {}
}

/* ---- params.c: layout ---- */

/* Where the bytes come from: the file, read with pread (never mapped: see params_check.c). */
struct params_src {
    int fd;
};
/* n bytes at off, whole; -1 when the file ends first or on an I/O error (errno set). */
int params_src_read(const struct params_src *s, uint64_t off, void *buf, size_t n);
/* The section names of messages: ic, h, l, a, b_g1, b_g2. */
extern const char *const params_sect_name[6];

/* ---- params_check.c: points and the section passes ---- */

/* Bytes -> Montgomery affine (coordinates < p, flags); *why says what failed. */
int params_check_dec_g1(g1_aff_t *out, const uint8_t *in, const char **why);
int params_check_dec_g2(g2_aff_t *out, const uint8_t *in, const char **why);
/* On the curve (mode >= CURVE) and in the subgroup (mode FULL). */
int params_check_point_g1(const g1_aff_t *p, enum g16_validate mode, const char **why);
int params_check_point_g2(const g2_aff_t *p, enum g16_validate mode, const char **why);

struct params_sect {
    int id;                  /* index into params_sect_name */
    bool g2;
    uint64_t n, off;         /* points, file offset of the first */
    void *dst;               /* g1_aff_t[n] or g2_aff_t[n] */
    uint64_t chunk0;         /* index of this section's first chunk in the pass's chunk array */
};

struct params_chunk {
    uint8_t hash[16];
    uint64_t bad;            /* first bad point index in this chunk, UINT64_MAX if none */
    int code;
    const char *why;
};

enum { PARAMS_PASS_DECODE = 1, PARAMS_PASS_HASH = 2, PARAMS_PASS_CHECK = 4 };

/* One pass (flags: PARAMS_PASS_*) over nsec sections of the file fd on the pool, res holding
 * one params_chunk per CHUNK_PTS points; the first bad point of the first bad section fails it.
 * With c non-NULL the external checker runs beside it (its error comes first); *ext_ns gets the
 * checker's time, *wait_ns the time the read waited for it after the CPU pass. */
int params_check_run(int fd, struct params_sect *secs, int nsec, struct params_chunk *res,
                     unsigned flags, enum g16_validate mode, struct pool *pool,
                     struct cuzk_progress *pr, const struct g16_point_checker *c,
                     uint64_t *ext_ns, uint64_t *wait_ns, const char *path,
                     struct cuzk_error *err);

/* ---- params_cache.c: the digest cache ("<path>.validated", docs/formats.md) ---- */

struct params_cache_key {
    uint64_t size;
    int64_t mtime_s, mtime_ns;
};
/* "<path>.validated", malloc'd; NULL when out of memory. */
char *params_cache_path(const char *path);
/* 16 bytes as 32 lowercase hex digits. */
void params_cache_hex(char out[33], const uint8_t d[16]);
/* true iff "<path>.validated" exists and records this size and mtime; *digest gets its digest. */
bool params_cache_lookup(const char *path, const struct params_cache_key *k, char digest[33]);
/* Best effort: a read-only directory just means the next load validates again. */
bool params_cache_store(const char *path, const struct params_cache_key *k, const char digest[33]);

#endif
