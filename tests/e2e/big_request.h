/* big_request.h: one large request on its own connection, for the daemon tests of the limits on
 * large requests (test_limits.c, test_security.c). A thread runs send_big on a struct big_ctx;
 * st gets the call's gRPC status (-1 stays when no connection could be made). Header-only. */
#ifndef CUZK_E2E_BIG_REQUEST_H
#define CUZK_E2E_BIG_REQUEST_H

#include <stdint.h>
#include <stdlib.h>

#include "client.h"

struct big_ctx {
    const char *addr;
    const uint8_t *msg;
    size_t len;
    int st;
    const char *method;   /* NULL: SubmitProof */
};

static inline void *send_big(void *arg)
{
    struct big_ctx *b = (struct big_ctx *)arg;
    struct cz_client *c = NULL;
    if (cz_connect(&c, b->addr, NULL)) return NULL;
    char det[512];
    uint8_t *resp = NULL;
    size_t rl = 0;
    b->st = cz_call_raw(c, b->method ? b->method : CZ_METHOD("SubmitProof"), b->msg, b->len, &resp, &rl,
                        120000, det, sizeof det);
    free(resp);
    cz_close(c);
    return NULL;
}

#endif
