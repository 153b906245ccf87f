/* fuzz_shape.c: libFuzzer target for shape-file loading (g16_shape_load) on a memfd. The
 * CRC-32C trailer is recomputed over the input first, so mutations reach the structural
 * checks instead of all dying at the checksum (a mismatch path that is trivial). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
uint32_t g16__crc32c(uint32_t crc, const void *data, size_t n);   /* src/groth16/shape.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    if (size >= 4) {
        uint32_t crc = g16__crc32c(0, buf, size - 4);
        for (int i = 0; i < 4; i++) buf[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    }
    const char *path = fuzz_memfile(buf, size);
    struct g16_shape s;
    struct cuzk_error e = {0};
    int rc = g16_shape_load(&s, path, &e);
    fuzz_check_err(rc, &e);
    if (!rc) g16_shape_free(&s);
    free(buf);
    return 0;
}
