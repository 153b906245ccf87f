/* fuzz_params.c: libFuzzer target for the bellperson .params / .vk readers: g16_params_info
 * (layout walk), g16_vk_read and g16_params_read_ex (mmap read + curve checks), on a memfd. */
#include <stdint.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/util.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    struct cuzk_error e = {0};
    struct g16_params_info inf;
    int rc = g16_params_info(&inf, path, &e);
    fuzz_check_err(rc, &e);

    struct g16_vk vk;
    memset(&e, 0, sizeof e);
    rc = g16_vk_read(&vk, path, &e);
    fuzz_check_err(rc, &e);
    if (!rc) g16_vk_free(&vk);

    /* CURVE, not FULL: subgroup checks cost ~1 ms a point and add no parsing paths; no
     * cache (the "<path>.validated" side file) and no progress lines. */
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_CURVE, .use_cache = false, .progress = 0};
    struct g16_pk pk;
    memset(&pk, 0, sizeof pk);
    memset(&e, 0, sizeof e);
    rc = g16_params_read_ex(&pk, path, &o, NULL, NULL, &e);
    fuzz_check_err(rc, &e);
    if (!rc) g16_pk_free(&pk);
    return 0;
}
