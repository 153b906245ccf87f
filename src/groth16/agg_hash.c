/* agg_hash.c: the SnarkPack Fiat-Shamir transcript (bellperson
 * src/groth16/aggregate/transcript.rs) and the seal transcript include, over the core's
 * SHA-256 (sha256.h). */
#include <string.h>

#include "agg_internal.h"
#include "cuzk/sha256.h"

void agg_seal_transcript_include(uint8_t out[32], const uint8_t (*comm_rs)[32],
                                 const uint8_t (*seeds)[32], size_t n)
{
    struct cuzk_sha256 s;
    cuzk_sha256_init(&s);
    for (size_t i = 0; i < n; i++) {
        if (seeds) cuzk_sha256_update(&s, seeds[i], 32);
        cuzk_sha256_update(&s, comm_rs[i], 32);
    }
    cuzk_sha256_final(&s, out);
}

/* ------------------------------------------------------------- transcript -- */

void agg_tr_new(struct agg_tr *t, const char *tag)
{
    cuzk_sha256_init(&t->h);
    cuzk_sha256_update(&t->h, "snarkpack-v1", 12);
    cuzk_sha256_update(&t->h, tag, strlen(tag));
}

/* blstrs serializes Scalar and Fp as [u64; N] of the canonical little-endian bytes, which
 * bincode writes as those same bytes. */
void agg_tr_fr(struct agg_tr *t, const fr_t *x)
{
    uint8_t b[32];
    fr_to_bytes_le(b, x);
    cuzk_sha256_update(&t->h, b, 32);
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
            cuzk_sha256_update(&t->h, b, 48);
            fp_le(b, &e[j]->c1);
            cuzk_sha256_update(&t->h, b, 48);
        }
    }
}

void agg_tr_g1(struct agg_tr *t, const g1_aff_t *p)
{
    uint8_t b[48];
    g1_aff_to_compressed(b, p);
    cuzk_sha256_update(&t->h, b, 48);
}

void agg_tr_g2(struct agg_tr *t, const g2_aff_t *p)
{
    uint8_t b[96];
    g2_aff_to_compressed(b, p);
    cuzk_sha256_update(&t->h, b, 96);
}

/* &[u8] is a serde sequence: bincode writes its length as u64 little-endian first. */
void agg_tr_bytes(struct agg_tr *t, const uint8_t *b, size_t n)
{
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)n >> (8 * i));
    cuzk_sha256_update(&t->h, len, 8);
    if (n) cuzk_sha256_update(&t->h, b, n);
}

void agg_tr_challenge(struct agg_tr *t, fr_t *out)
{
    for (uint64_t ctr = 1;; ctr++) {
        uint8_t c[8], d[32];
        for (int i = 0; i < 8; i++) c[i] = (uint8_t)(ctr >> (56 - 8 * i));
        cuzk_sha256_update(&t->h, c, 8);
        cuzk_sha256_final(&t->h, d);
        d[31] &= 0x7f;                 /* 256 - 255 bits shaved */
        if (fr_from_bytes_le(out, d) != CUZK_OK) continue;     /* >= r */
        if (fr_is_zero(out) || fr_is_one(out)) continue;
        return;
    }
}
