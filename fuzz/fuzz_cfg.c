/* fuzz_cfg.c: libFuzzer target for the daemon's TOML-subset config reader (cfg_parse) and
 * the size / duration value parsers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_warn(void *ctx, const char *msg)
{
    (void)ctx;
    if (!msg || !msg[0]) abort();   /* a warning must say something */
}

/* string fields must stay NUL-terminated whatever the input */
static void check_strings(const struct cuzk_config *c)
{
    if (!memchr(c->listen, 0, sizeof c->listen) || !memchr(c->status_listen, 0, sizeof c->status_listen) ||
        !memchr(c->param_cache, 0, sizeof c->param_cache) || !memchr(c->log_level, 0, sizeof c->log_level) ||
        !memchr(c->srs_validation, 0, sizeof c->srs_validation) || c->n_preload > CFG_MAX_PRELOAD ||
        c->n_devices > CFG_MAX_DEVICES)
        abort();
    for (unsigned i = 0; i < c->n_preload; i++)
        if (!memchr(c->preload[i], 0, sizeof c->preload[i])) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cuzk_config c;
    struct cuzk_error e = {0};
    cfg_defaults(&c);
    /* the exact bytes, no terminator: the parser is given a length and must honour it */
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    memcpy(text, data, size);
    int rc = cfg_parse(&c, text, size, "fuzz.toml", on_warn, NULL, &e);
    fuzz_check_err(rc, &e);
    if (!rc) check_strings(&c);
    free(text);

    /* the value parsers take C strings: the first line, NUL-terminated */
    char v[64];
    size_t n = 0;
    while (n < size && n < sizeof v - 1 && data[n] != '\n') { v[n] = (char)data[n]; n++; }
    v[n] = 0;
    uint64_t x;
    (void)cfg_parse_size(&x, v);
    (void)cfg_parse_duration_ms(&x, v);
    return 0;
}
