/* proof.c: the 192-byte Groth16 proof encoding (A || B || C, compressed, as bellperson's
 * Proof::write) and its concatenation for multi-partition proofs. See docs/formats.md. */
#include <inttypes.h>
#include <stdio.h>

#include "cuzk/groth16.h"

void g16_proof_to_bytes(uint8_t out[G16_PROOF_BYTES], const struct g16_proof *p)
{
    g1_aff_to_compressed(out, &p->a);
    g2_aff_to_compressed(out + 48, &p->b);
    g1_aff_to_compressed(out + 144, &p->c);
}

/* Decode one proof; `who` prefixes the messages ("proof" or "proof[3]"). */
static int proof_decode(struct g16_proof *p, const uint8_t *in, const char *who,
                        struct cuzk_error *err)
{
    int rc = g1_aff_from_compressed(&p->a, in, true, err);
    if (rc) return cuzk_fail_prefix(err, rc, "%s: A", who);
    rc = g2_aff_from_compressed(&p->b, in + 48, true, err);
    if (rc) return cuzk_fail_prefix(err, rc, "%s: B", who);
    rc = g1_aff_from_compressed(&p->c, in + 144, true, err);
    if (rc) return cuzk_fail_prefix(err, rc, "%s: C", who);
    /* bellperson's read rejects identities: an identity A, B or C only comes from degenerate
     * blinding or a forgery attempt, never from an honest prover. */
    if (g1_aff_is_inf(&p->a)) return cuzk_fail(err, CUZK_E_IDENTITY, "%s: A is the identity", who);
    if (g2_aff_is_inf(&p->b)) return cuzk_fail(err, CUZK_E_IDENTITY, "%s: B is the identity", who);
    if (g1_aff_is_inf(&p->c)) return cuzk_fail(err, CUZK_E_IDENTITY, "%s: C is the identity", who);
    return CUZK_OK;
}

int g16_proof_from_bytes(struct g16_proof *p, const uint8_t in[G16_PROOF_BYTES],
                         struct cuzk_error *err)
{
    return proof_decode(p, in, "proof", err);
}

void g16_proofs_to_bytes(uint8_t *out, const struct g16_proof *p, size_t n)
{
    for (size_t i = 0; i < n; i++) g16_proof_to_bytes(out + i * G16_PROOF_BYTES, &p[i]);
}

int g16_proofs_from_bytes(struct g16_proof *out, size_t n, const uint8_t *in, size_t in_len,
                          struct cuzk_error *err)
{
    if (n > SIZE_MAX / G16_PROOF_BYTES || in_len != n * G16_PROOF_BYTES)
        return cuzk_fail(err, CUZK_E_FORMAT, "proofs: expected %zu bytes (%zu x %d), got %zu",
                         n * G16_PROOF_BYTES, n, G16_PROOF_BYTES, in_len);
    for (size_t i = 0; i < n; i++) {
        char who[40];
        snprintf(who, sizeof who, "proof[%zu]", i);
        int rc = proof_decode(&out[i], in + i * G16_PROOF_BYTES, who, err);
        if (rc) return rc;
    }
    return CUZK_OK;
}
