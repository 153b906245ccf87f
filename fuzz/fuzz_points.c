/* fuzz_points.c: libFuzzer target for G1/G2 point decoding (compressed and uncompressed,
 * with and without the subgroup check) and g16_proofs_from_bytes. Decoded points must
 * re-encode to the input bytes (the encodings are canonical). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/ec.h"
#include "cuzk/groth16.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const uint8_t *a, const uint8_t *b, size_t n, const char *what)
{
    if (memcmp(a, b, n)) {
        fprintf(stderr, "%s: decode/encode round trip differs\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    /* byte 0 picks the decoder; the rest is the encoding (zero-padded when short, so
     * every decoder sees its full width) */
    uint8_t sel = data[0];
    data++, size--;
    uint8_t buf[192 * 4];
    memset(buf, 0, sizeof buf);
    memcpy(buf, data, size < sizeof buf ? size : sizeof buf);
    bool sub = sel & 0x80;
    struct cuzk_error e = {0};
    uint8_t out[192];
    int rc;
    switch (sel & 7) {
    case 0: {
        g1_aff_t p;
        rc = g1_aff_from_compressed(&p, buf, sub, &e);
        if (!rc) { g1_aff_to_compressed(out, &p); same(out, buf, 48, "g1 compressed"); }
        break;
    }
    case 1: {
        g1_aff_t p;
        rc = g1_aff_from_uncompressed(&p, buf, sub, &e);
        if (!rc) { g1_aff_to_uncompressed(out, &p); same(out, buf, 96, "g1 uncompressed"); }
        break;
    }
    case 2: {
        g2_aff_t p;
        rc = g2_aff_from_compressed(&p, buf, sub, &e);
        if (!rc) { g2_aff_to_compressed(out, &p); same(out, buf, 96, "g2 compressed"); }
        break;
    }
    case 3: {
        g2_aff_t p;
        rc = g2_aff_from_uncompressed(&p, buf, sub, &e);
        if (!rc) { g2_aff_to_uncompressed(out, &p); same(out, buf, 192, "g2 uncompressed"); }
        break;
    }
    default: {
        /* n proofs claimed by the selector, the raw (unpadded) bytes as given: exercises
         * the length check as well as each A/B/C decode */
        size_t n = (size_t)((sel >> 3) & 3) + ((sel & 7) - 4);
        struct g16_proof pr[8];
        rc = g16_proofs_from_bytes(pr, n, data, size, &e);
        if (!rc) {
            uint8_t *re = malloc(n * G16_PROOF_BYTES + 1);
            if (!re) abort();
            g16_proofs_to_bytes(re, pr, n);
            same(re, data, n * G16_PROOF_BYTES, "proofs");
            free(re);
        }
        break;
    }
    }
    fuzz_check_err(rc, &e);
    return 0;
}
