/* err.c: error names, sentences and the message setters. See include/cuzk/err.h. */
#include "cuzk/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const err_names[] = {
#define X(name, msg) "CUZK_E_" #name,
    CUZK_ERR_MAP(X)
#undef X
};
static const char *const err_msgs[] = {
#define X(name, msg) msg,
    CUZK_ERR_MAP(X)
#undef X
};

const char *cuzk_errname(int code)
{
    if (code < 0 || code >= CUZK_E__COUNT) return "CUZK_E_UNKNOWN";
    return err_names[code];
}

const char *cuzk_strerror(int code)
{
    if (code < 0 || code >= CUZK_E__COUNT) return "unknown error";
    return err_msgs[code];
}

int cuzk_fail(struct cuzk_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int cuzk_fail_prefix(struct cuzk_error *err, int code, const char *fmt, ...)
{
    if (err) {
        char prefix[CUZK_ERR_MSG_MAX], old[CUZK_ERR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof old);
        old[sizeof old - 1] = 0;
        if (err->code == CUZK_OK) err->code = code;
        size_t n = strlen(prefix);
        if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
        memcpy(err->msg, prefix, n);
        memcpy(err->msg + n, ": ", 2);
        size_t rest = sizeof err->msg - n - 3;
        size_t m = strnlen(old, rest);
        memcpy(err->msg + n + 2, old, m);
        err->msg[n + 2 + m] = 0;
        return err->code;
    }
    return code;
}

void cuzk_error_clear(struct cuzk_error *err)
{
    if (err) {
        err->code = CUZK_OK;
        err->msg[0] = 0;
    }
}
