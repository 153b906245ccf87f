/* fuzz_c1.c: libFuzzer target for the C1 JSON parsers (fil_c1_parse_phase1 and the Curio
 * wrapper fil_c1_parse_wrapper); a successful parse is written back and re-parsed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/filecoin.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whatever parsed must serialize and parse again to the same shape (a writer that chokes
 * on parser output would be a parser accepting something it should not). */
static void roundtrip(const struct fil_c1 *c)
{
    char *txt = NULL;
    size_t n = 0;
    struct cuzk_error e = {0};
    int rc = fil_c1_write_phase1(&txt, &n, c, &e);
    fuzz_check_err(rc, &e);
    if (rc) return;
    struct fil_c1 d;
    memset(&d, 0, sizeof d);
    rc = fil_c1_parse_phase1(&d, txt, n, &e);
    if (rc || d.partitions != c->partitions || d.challenges != c->challenges || d.proof != c->proof) {
        fprintf(stderr, "C1 round trip failed: %s\n", rc ? e.msg : "shape differs");
        abort();
    }
    fil_c1_free(&d);
    free(txt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fil_c1 c;
    struct cuzk_error e = {0};
    /* the inner SealCommitPhase1Output (where the depth is) ... */
    memset(&c, 0, sizeof c);
    int rc = fil_c1_parse_phase1(&c, data, size, &e);
    fuzz_check_err(rc, &e);
    if (!rc) {
        roundtrip(&c);
        fil_c1_free(&c);
    }
    /* ... and the wrapper (SectorNum, base64 Phase1Out, SectorSize) */
    memset(&c, 0, sizeof c);
    memset(&e, 0, sizeof e);
    rc = fil_c1_parse_wrapper(&c, data, size, &e);
    fuzz_check_err(rc, &e);
    if (!rc) fil_c1_free(&c);
    return 0;
}
