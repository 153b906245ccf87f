/* err.h: one error vocabulary for the whole library (codes for programs, messages for people).
 * See docs/decisions.md ("Errors"). */
#ifndef CUZK_ERR_H
#define CUZK_ERR_H

#include <stddef.h>

/* X(NAME, "sentence") — the single list that generates the enum, cuzk_errname and cuzk_strerror. */
#define CUZK_ERR_MAP(X)                                                        \
    X(OK, "success")                                                           \
    X(INVALID_ARG, "invalid argument")                                         \
    X(BAD_ENCODING, "bad encoding")                                            \
    X(NOT_ON_CURVE, "point is not on the curve")                               \
    X(NOT_IN_SUBGROUP, "point is not in the prime-order subgroup")             \
    X(IDENTITY, "point is the identity where it is not allowed")               \
    X(NOMEM, "out of memory")                                                  \
    X(IO, "input/output error")                                                \
    X(FORMAT, "malformed file or message")                                     \
    X(TRUNCATED, "input is truncated")                                         \
    X(CHECKSUM, "checksum mismatch")                                           \
    X(UNSATISFIED, "constraint system is not satisfied")                       \
    X(VERIFY_FAILED, "proof did not verify")                                   \
    X(GPU, "GPU error")                                                        \
    X(GPU_NOMEM, "not enough GPU memory")                                      \
    X(NO_GPU, "no GPU support")                                                \
    X(CANCELLED, "cancelled")                                                  \
    X(BUSY, "resource busy")                                                   \
    X(TIMEOUT, "timed out")                                                    \
    X(NOT_FOUND, "not found")                                                  \
    X(UNSUPPORTED, "not supported")                                            \
    X(INTERNAL, "internal error")

enum cuzk_err {
#define CUZK__ERR_ENUM(name, msg) CUZK_E_##name,
    CUZK_ERR_MAP(CUZK__ERR_ENUM)
#undef CUZK__ERR_ENUM
    CUZK_E__COUNT
};
#define CUZK_OK CUZK_E_OK

#define CUZK_ERR_MSG_MAX 512

/* Caller-supplied error detail (curl's error buffer): code + a sentence for people.
 * Every API that can fail takes a `struct cuzk_error *err` that may be NULL. */
struct cuzk_error {
    int code;                     /* enum cuzk_err */
    char msg[CUZK_ERR_MSG_MAX];   /* "source: location: problem (expected X, got Y)" */
};

/* Stable name ("CUZK_E_BAD_ENCODING") and generic sentence for a code. Any thread. */
const char *cuzk_errname(int code);
const char *cuzk_strerror(int code);

/* Fill err (if non-NULL) with code and a printf-style message; returns code so callers can
 * write `return cuzk_fail(err, CUZK_E_FORMAT, "%s: h[%zu]: x not canonical", path, i);` */
int cuzk_fail(struct cuzk_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepend context to an existing message: "ctx: old message". Returns err->code (or code). */
int cuzk_fail_prefix(struct cuzk_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reset err to CUZK_OK with an empty message. */
void cuzk_error_clear(struct cuzk_error *err);

/* Invariant / programmer-misuse check (lua's api_check): on in debug and test builds only.
 * Never use it on data that comes from outside the process. */
#ifdef CUZK_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define CUZK_ASSERT(c)                                                              \
    do {                                                                            \
        if (!(c)) {                                                                 \
            fprintf(stderr, "%s:%d: CUZK_ASSERT(%s) failed\n", __FILE__, __LINE__, #c); \
            abort();                                                                \
        }                                                                           \
    } while (0)
#else
#define CUZK_ASSERT(c) ((void)0)
#endif

#endif
