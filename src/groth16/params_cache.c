/* params_cache.c: the digest of a key file (g16_digest128) and its cache file
 * "<path>.validated", which lets a later load of the unchanged file skip the point checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params_internal.h"

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

/* ------------------------------------------------------------ digest cache -- */

char *params_cache_path(const char *path)
{
    size_t n = strlen(path);
    char *p = malloc(n + sizeof ".validated");
    if (p) {
        memcpy(p, path, n);
        memcpy(p + n, ".validated", sizeof ".validated");
    }
    return p;
}

void params_cache_hex(char out[33], const uint8_t d[16])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[32] = 0;
}

/* true iff "<path>.validated" exists and records this size and mtime; *digest gets its digest. */
bool params_cache_lookup(const char *path, const struct params_cache_key *k, char digest[33])
{
    char *cp = params_cache_path(path);
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
bool params_cache_store(const char *path, const struct params_cache_key *k, const char digest[33])
{
    char *cp = params_cache_path(path);
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
