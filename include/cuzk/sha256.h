/* sha256.h: SHA-256 (FIPS 180-4), plain C and incremental: the native hash of the Filecoin
 * derivations (labels, challenges, tree D, replica ids) and of SnarkPack's Fiat-Shamir
 * transcript, and the round constants the in-circuit gadget (gadgets.h) uses. Tests compare
 * it with OpenSSL; no OpenSSL dependency. */
#ifndef CUZK_SHA256_H
#define CUZK_SHA256_H

#include <stddef.h>
#include <stdint.h>

extern const uint32_t CUZK_SHA256_K[64];   /* round constants */
extern const uint32_t CUZK_SHA256_IV[8];   /* initial hash value */

/* The state can be copied (a transcript forks it); final does not consume it, so more data
 * may follow a digest and continue the same message. */
struct cuzk_sha256 {
    uint32_t h[8];
    uint64_t len;           /* bytes absorbed; len % 64 of them wait in buf */
    uint8_t buf[64];
};
void cuzk_sha256_init(struct cuzk_sha256 *s);
void cuzk_sha256_update(struct cuzk_sha256 *s, const void *data, size_t n);
void cuzk_sha256_final(const struct cuzk_sha256 *s, uint8_t out[32]);
void cuzk_sha256(uint8_t out[32], const void *data, size_t n);
/* One compression of a 64-byte block into h (labels hash exactly two blocks). */
void cuzk_sha256_compress(uint32_t h[8], const uint8_t block[64]);

#endif
