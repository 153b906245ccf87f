/* hash.c: BLAKE2b (RFC 7693) and the ChaCha block function (djb and
 * RFC 8439 layouts) used by the Filecoin derivations: challenges, graph seeds, Feistel and
 * DRG randomness. Plain C; tests compare with OpenSSL. SHA-256 is the core's (sha256.h). */
#include <string.h>

#include "cuzk/filecoin.h"

/* ---------------------------------------------------------------- BLAKE2b -- */

static const uint64_t B2B_IV[8] = {
    0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull, 0xa54ff53a5f1d36f1ull,
    0x510e527fade682d1ull, 0x9b05688c2b3e6c1full, 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull,
};
static const uint8_t B2B_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static inline uint64_t ror64(uint64_t x, unsigned r) { return (x >> r) | (x << (64 - r)); }

static void b2b_compress(uint64_t h[8], const uint8_t block[128], uint64_t t, bool last)
{
    uint64_t m[16], v[16];
    for (int i = 0; i < 16; i++) {
        uint64_t x = 0;
        for (int j = 7; j >= 0; j--) x = x << 8 | block[8 * i + j];
        m[i] = x;
    }
    for (int i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = B2B_IV[i];
    }
    v[12] ^= t;
    if (last) v[14] = ~v[14];
#define B2B_G(a, b, c, d, x, y)                          \
    do {                                                 \
        v[a] = v[a] + v[b] + (x); v[d] = ror64(v[d] ^ v[a], 32); \
        v[c] = v[c] + v[d];       v[b] = ror64(v[b] ^ v[c], 24); \
        v[a] = v[a] + v[b] + (y); v[d] = ror64(v[d] ^ v[a], 16); \
        v[c] = v[c] + v[d];       v[b] = ror64(v[b] ^ v[c], 63); \
    } while (0)
    for (int r = 0; r < 12; r++) {
        const uint8_t *s = B2B_SIGMA[r];
        B2B_G(0, 4, 8, 12, m[s[0]], m[s[1]]);
        B2B_G(1, 5, 9, 13, m[s[2]], m[s[3]]);
        B2B_G(2, 6, 10, 14, m[s[4]], m[s[5]]);
        B2B_G(3, 7, 11, 15, m[s[6]], m[s[7]]);
        B2B_G(0, 5, 10, 15, m[s[8]], m[s[9]]);
        B2B_G(1, 6, 11, 12, m[s[10]], m[s[11]]);
        B2B_G(2, 7, 8, 13, m[s[12]], m[s[13]]);
        B2B_G(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
#undef B2B_G
    for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

void fil_blake2b(uint8_t *out, size_t out_len, const void *key, size_t key_len,
                 const void *data, size_t n)
{
    uint64_t h[8];
    memcpy(h, B2B_IV, sizeof h);
    h[0] ^= 0x01010000ull ^ ((uint64_t)key_len << 8) ^ (uint64_t)out_len;
    uint8_t block[128];
    uint64_t t = 0;
    const uint8_t *p = data;
    if (key_len) {
        memset(block, 0, sizeof block);
        memcpy(block, key, key_len);
        t = 128;
        if (n == 0) {
            b2b_compress(h, block, t, true);
            goto done;
        }
        b2b_compress(h, block, t, false);
    }
    /* every full block but the last one; the last (possibly partial, maybe empty) is final */
    while (n > 128) {
        t += 128;
        b2b_compress(h, p, t, false);
        p += 128;
        n -= 128;
    }
    memset(block, 0, sizeof block);
    memcpy(block, p, n);
    t += n;
    b2b_compress(h, block, t, true);
done:
    for (size_t i = 0; i < out_len; i++) out[i] = (uint8_t)(h[i / 8] >> (8 * (i % 8)));
}

/* ----------------------------------------------------------------- ChaCha -- */

static inline uint32_t rol32(uint32_t x, unsigned r) { return (x << r) | (x >> (32 - r)); }
static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void fil_chacha_blocks(uint8_t *out, const uint8_t key[32], const uint8_t *nonce, bool ietf,
                       uint64_t counter, size_t n_blocks, unsigned rounds)
{
    uint32_t st[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
    for (int i = 0; i < 8; i++) st[4 + i] = le32(key + 4 * i);
    for (size_t b = 0; b < n_blocks; b++, counter++) {
        if (ietf) {
            st[12] = (uint32_t)counter;
            for (int i = 0; i < 3; i++) st[13 + i] = nonce ? le32(nonce + 4 * i) : 0;
        } else {
            st[12] = (uint32_t)counter;
            st[13] = (uint32_t)(counter >> 32);
            for (int i = 0; i < 2; i++) st[14 + i] = nonce ? le32(nonce + 4 * i) : 0;
        }
        uint32_t x[16];
        memcpy(x, st, sizeof x);
#define QR(a, b, c, d)                                  \
    do {                                                \
        x[a] += x[b]; x[d] = rol32(x[d] ^ x[a], 16);    \
        x[c] += x[d]; x[b] = rol32(x[b] ^ x[c], 12);    \
        x[a] += x[b]; x[d] = rol32(x[d] ^ x[a], 8);     \
        x[c] += x[d]; x[b] = rol32(x[b] ^ x[c], 7);     \
    } while (0)
        for (unsigned r = 0; r < rounds; r += 2) {
            QR(0, 4, 8, 12); QR(1, 5, 9, 13); QR(2, 6, 10, 14); QR(3, 7, 11, 15);
            QR(0, 5, 10, 15); QR(1, 6, 11, 12); QR(2, 7, 8, 13); QR(3, 4, 9, 14);
        }
#undef QR
        for (int i = 0; i < 16; i++) {
            uint32_t v = x[i] + st[i];
            uint8_t *o = out + 64 * b + 4 * i;
            o[0] = (uint8_t)v;
            o[1] = (uint8_t)(v >> 8);
            o[2] = (uint8_t)(v >> 16);
            o[3] = (uint8_t)(v >> 24);
        }
    }
}
