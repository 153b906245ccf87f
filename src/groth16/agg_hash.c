/* agg_hash.c: SHA-256 and the SnarkPack Fiat-Shamir transcript (bellperson
 * src/groth16/aggregate/transcript.rs). The core library has no SHA-256 of its own (the
 * filecoin layer's is above it), so this is a second small one; the round constants are the
 * gadgets' (G_SHA256_K / G_SHA256_IV), and tests compare it with OpenSSL. */
#include <string.h>

#include "agg_internal.h"
#include "cuzk/gadgets.h"

static inline uint32_t ror(uint32_t x, unsigned r) { return (x >> r) | (x << (32 - r)); }

static void compress(uint32_t h[8], const uint8_t blk[64])
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)blk[4 * i] << 24 | (uint32_t)blk[4 * i + 1] << 16 |
               (uint32_t)blk[4 * i + 2] << 8 | blk[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
                      G_SHA256_K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void agg_sha256_init(struct agg_sha256 *s)
{
    memcpy(s->h, G_SHA256_IV, sizeof s->h);
    s->len = 0;
}

void agg_sha256_update(struct agg_sha256 *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    size_t have = (size_t)(s->len % 64);
    s->len += n;
    if (have) {
        size_t k = 64 - have < n ? 64 - have : n;
        memcpy(s->buf + have, p, k);
        p += k;
        n -= k;
        if (have + k < 64) return;
        compress(s->h, s->buf);
    }
    for (; n >= 64; p += 64, n -= 64) compress(s->h, p);
    memcpy(s->buf, p, n);
}

void agg_sha256_final(const struct agg_sha256 *s0, uint8_t out[32])
{
    struct agg_sha256 s = *s0;     /* the transcript keeps hashing after a digest */
    uint64_t bits = s.len * 8;
    size_t have = (size_t)(s.len % 64);
    uint8_t pad[72] = {0x80};
    size_t padn = (have < 56 ? 56 : 120) - have;
    for (int i = 0; i < 8; i++) pad[padn + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
    agg_sha256_update(&s, pad, padn + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s.h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s.h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s.h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s.h[i];
    }
}

void agg_seal_transcript_include(uint8_t out[32], const uint8_t (*comm_rs)[32],
                                 const uint8_t (*seeds)[32], size_t n)
{
    struct agg_sha256 s;
    agg_sha256_init(&s);
    for (size_t i = 0; i < n; i++) {
        if (seeds) agg_sha256_update(&s, seeds[i], 32);
        agg_sha256_update(&s, comm_rs[i], 32);
    }
    agg_sha256_final(&s, out);
}

/* ------------------------------------------------------------- transcript -- */

void agg_tr_new(struct agg_tr *t, const char *tag)
{
    agg_sha256_init(&t->h);
    agg_sha256_update(&t->h, "snarkpack-v1", 12);
    agg_sha256_update(&t->h, tag, strlen(tag));
}

/* blstrs serializes Scalar and Fp as [u64; N] of the canonical little-endian bytes, which
 * bincode writes as those same bytes. */
void agg_tr_fr(struct agg_tr *t, const fr_t *x)
{
    uint8_t b[32];
    fr_to_bytes_le(b, x);
    agg_sha256_update(&t->h, b, 32);
}

static void fp_le(uint8_t out[48], const fp_t *a)
{
    uint8_t be[48];
    fp_to_bytes_be(be, a);
    for (int i = 0; i < 48; i++) out[i] = be[47 - i];
}

/* Fp12 as the struct (c0: Fp6, c1: Fp6), Fp6 (c0, c1, c2: Fp2), Fp2 (c0, c1): field order. */
void agg_tr_gt(struct agg_tr *t, const fp12_t *f)
{
    const fp6_t *s[2] = {&f->c0, &f->c1};
    uint8_t b[48];
    for (int i = 0; i < 2; i++) {
        const fp2_t *e[3] = {&s[i]->c0, &s[i]->c1, &s[i]->c2};
        for (int j = 0; j < 3; j++) {
            fp_le(b, &e[j]->c0);
            agg_sha256_update(&t->h, b, 48);
            fp_le(b, &e[j]->c1);
            agg_sha256_update(&t->h, b, 48);
        }
    }
}

void agg_tr_g1(struct agg_tr *t, const g1_aff_t *p)
{
    uint8_t b[48];
    g1_aff_to_compressed(b, p);
    agg_sha256_update(&t->h, b, 48);
}

void agg_tr_g2(struct agg_tr *t, const g2_aff_t *p)
{
    uint8_t b[96];
    g2_aff_to_compressed(b, p);
    agg_sha256_update(&t->h, b, 96);
}

/* &[u8] is a serde sequence: bincode writes its length as u64 little-endian first. */
void agg_tr_bytes(struct agg_tr *t, const uint8_t *b, size_t n)
{
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)n >> (8 * i));
    agg_sha256_update(&t->h, len, 8);
    if (n) agg_sha256_update(&t->h, b, n);
}

void agg_tr_challenge(struct agg_tr *t, fr_t *out)
{
    for (uint64_t ctr = 1;; ctr++) {
        uint8_t c[8], d[32];
        for (int i = 0; i < 8; i++) c[i] = (uint8_t)(ctr >> (56 - 8 * i));
        agg_sha256_update(&t->h, c, 8);
        agg_sha256_final(&t->h, d);
        d[31] &= 0x7f;                 /* 256 - 255 bits shaved */
        if (fr_from_bytes_le(out, d) != CUZK_OK) continue;     /* >= r */
        if (fr_is_zero(out) || fr_is_one(out)) continue;
        return;
    }
}
