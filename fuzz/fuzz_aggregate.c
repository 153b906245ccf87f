/* fuzz_aggregate.c: libFuzzer target for the SnarkPack parsers (include/cuzk/aggregate.h).
 * Byte 0 selects: 0 agg_proof_from_bytes on the remaining bytes (an accepted proof re-encodes
 * to exactly those bytes: the Gt compression and point encodings are canonical); 1
 * agg_srs_read of the remaining bytes on a memfd (bit 7 of byte 0: subgroup checks; max_len
 * from byte 1 when bit 6 is set); 2 agg_gt_decompress of 288 bytes (an accepted value
 * compresses back to them). */
#include <stdint.h>
#include <string.h>

#include "cuzk/aggregate.h"
#include "cuzk/util.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t sel = data[0];
    const uint8_t *in = data + 1;
    size_t n = size - 1;
    struct cuzk_error e = {0};
    int rc;
    switch (sel & 3) {
    case 0: {
        static struct agg_proof p;       /* ~120 KB: not on the fuzzer's stack */
        rc = agg_proof_from_bytes(&p, in, n, &e);
        fuzz_check_err(rc, &e);
        if (!rc) {
            uint8_t *out = malloc(n);
            if (!out || agg_proof_to_bytes(out, &p, &e) != CUZK_OK || memcmp(out, in, n)) abort();
            free(out);
        }
        break;
    }
    case 1: {
        size_t max_len = 0;
        if ((sel & 0x40) && n) {
            max_len = in[0];
            in++;
            n--;
        }
        struct agg_srs srs;
        rc = agg_srs_read(&srs, fuzz_memfile(in, n), max_len, (sel & 0x80) != 0, NULL, &e);
        fuzz_check_err(rc, &e);
        if (!rc) agg_srs_free(&srs);
        break;
    }
    case 2: {
        if (n < 288) return 0;
        fp12_t f;
        uint8_t back[288];
        rc = agg_gt_decompress(&f, in, &e);
        fuzz_check_err(rc, &e);
        if (!rc && (!agg_gt_compress(back, &f) || memcmp(back, in, 288))) abort();
        break;
    }
    default:
        break;
    }
    return 0;
}
